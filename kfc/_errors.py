"""Run a click command the kfc way: usage and tool errors are one line on stderr and exit code 1;
Ctrl-C is one line, "interrupted", and exit code 130."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

INTERRUPTED = 130

F = TypeVar("F", bound=Callable[..., Any])


class Interrupted(click.ClickException):
    """Ctrl-C inside a command, turned into this before click sees the KeyboardInterrupt (click would
    turn it into Abort after writing a blank line to stderr)."""

    exit_code = INTERRUPTED

    def __init__(self) -> None:
        super().__init__("interrupted")


def interruptible(f: F) -> F:
    """Decorate a command's function: Ctrl-C anywhere in it ends the command with Interrupted."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted() from None

    return wrapper  # type: ignore[return-value]


def _interrupted() -> NoReturn:
    # On a terminal the ^C echo is still on the current line: start a new one.
    click.echo(("\n" if sys.stderr.isatty() else "") + "interrupted", err=True)
    sys.exit(INTERRUPTED)


def run_one_line(command: Any, *args: Any, **kwargs: Any) -> None:
    kwargs["standalone_mode"] = False
    try:
        rv = command.main(*args, **kwargs)
    except Interrupted:
        _interrupted()
    except click.ClickException as e:
        click.echo(f"error: {e.format_message()}", err=True)
        sys.exit(1)
    except (click.exceptions.Abort, KeyboardInterrupt):
        _interrupted()
    except Exception as e:
        from reference_impl import InputError  # lazily: `kfc --help` loads no reference

        if not isinstance(e, InputError):
            raise
        # Bad input that reached the reference (a broken profile file, …): one line, not a traceback.
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)
