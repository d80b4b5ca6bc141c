"""Where the project's data is: the repository's `fixtures/` folder (catalogs, schemas, examples,
corpora), which the wheel ships inside this package as `reference_impl/fixtures` -- never as a
top-level `fixtures` package, a name another PyPI distribution owns."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

PACKAGE = "reference_impl.fixtures"  # in a wheel (and an editable install): the fixtures folder, mapped


def fixtures() -> Traversable:
    """The fixtures folder: the installed `reference_impl/fixtures`, else the checkout's `fixtures/`."""
    try:
        return resources.files(PACKAGE)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parent.parent / "fixtures"
