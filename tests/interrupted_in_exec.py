"""`python -m tests.interrupted_in_exec`: a kfc command whose Ctrl-C lands in code run by a string
exec (as in a method a dataclass or namedtuple builds), run the way `python -m kfc` runs commands."""

from __future__ import annotations

import click

import kfc
from kfc._errors import interruptible, run_one_line


@click.command()
@interruptible
def command() -> None:
    exec("raise KeyboardInterrupt", {})  # noqa: S102 - the interrupt, where CPython notes it as unhandled


if __name__ == "__main__":
    kfc.PROGRAM = True  # as under `python -m kfc` (this module's name is not kfc)
    run_one_line(command, args=[])
