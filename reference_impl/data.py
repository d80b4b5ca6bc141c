"""Where the project's data is: the repository's `fixtures/` folder (catalogs, schemas, examples,
corpora), which the wheel ships inside this package as `reference_impl/fixtures` -- never as a
top-level `fixtures` package, a name another PyPI distribution owns."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

PACKAGE = "reference_impl.fixtures"  # in a wheel (and an editable install): the fixtures folder, mapped


def fixtures() -> Traversable:
    """The fixtures folder: the installed `reference_impl/fixtures`; in a checkout (run from it or
    installed editable) its own `fixtures/`, not another checkout's an editable finder may map;
    else (a zip shipped to Spark executors) the package, through importlib.resources."""
    here = Path(__file__).resolve().parent
    if (here / "fixtures" / "catalogs").is_dir():
        return here / "fixtures"
    checkout = here.parent / "fixtures"
    if (checkout / "catalogs").is_dir():
        return checkout
    return resources.files(PACKAGE)
