"""Run a click command the kfc way: usage and tool errors are one line on stderr and exit code 1;
Ctrl-C is one line, "interrupted", and exit code 130."""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import os
import signal
import sys
import threading
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
        from conformance.interrupts import Trap

        trap = Trap()  # the handler takes no locks; an interrupt a gc callback would swallow comes again
        try:
            with trap.armed():
                return f(*args, **kwargs)
        except KeyboardInterrupt:
            raise Interrupted() from None
        except BaseException:
            # Whatever an interrupt turned into on its way up (pytest's reporter failing on it, a Spark
            # job failing because its JVM was killed) is still the interrupt.
            if trap.pressed:
                raise Interrupted() from None
            raise

    return wrapper  # type: ignore[return-value]


def _interrupted() -> int:
    # On a terminal the ^C echo is still on the current line: start a new one.
    click.echo(("\n" if sys.stderr.isatty() else "") + "interrupted", err=True)
    return INTERRUPTED


def run_one_line(command: Any, *args: Any, **kwargs: Any) -> NoReturn:
    kwargs["standalone_mode"] = False
    from . import PROGRAM, _interrupted_at_once

    if signal.getsignal(signal.SIGINT) is _interrupted_at_once:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # started: interrupts are the command's
    try:
        rv = command.main(*args, **kwargs)
        code = rv if isinstance(rv, int) else 0
    except SystemExit as e:
        code = _exit_code(e)
    except Interrupted:
        code = _interrupted()
    except click.ClickException as e:
        click.echo(f"error: {e.format_message()}", err=True)
        code = 1
    except (click.exceptions.Abort, KeyboardInterrupt):
        code = _interrupted()
    except Exception as e:
        from reference_impl import InputError  # lazily: `kfc --help` loads no reference

        if not isinstance(e, InputError):
            raise
        # Bad input that reached the reference (a broken profile file, …): one line, not a traceback.
        click.echo(f"error: {e}", err=True)
        code = 1
    finally:
        if PROGRAM:
            _ending()
    _leave(code, fast=PROGRAM)


def _exit_code(e: SystemExit) -> int:
    if e.code is None or isinstance(e.code, int):
        return int(e.code or 0)
    click.echo(str(e.code), err=True)  # as the interpreter does with sys.exit("text")
    return 1


def _leave(code: int, *, fast: bool) -> NoReturn:
    """Exit with `code`.  The kfc program (`fast`) runs the exit handlers, flushes its streams and
    leaves without the interpreter's finalization: a Ctrl-C landing there was lost (exit 0) or, once
    Python had put the default handler back, killed the process without a word (-2), and it took up
    to half a second after a big run.  Until the exit the handler says "interrupted", exit 130.
    Imported as a library (click's test runner), with threads still to join, or under a profiler or
    tracer (cProfile, coverage: they write their data after the program returns): SystemExit."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    watched = sys.getprofile() is not None or sys.gettrace() is not None
    if fast and not others and not watched and threading.current_thread() is threading.main_thread():
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
                stream.flush()
        os._exit(code)
    sys.exit(code)


def _ending() -> None:
    """The command has ended (its exit code is on its way): a Ctrl-C from here on is one line and 130
    at once, and the interpreter's last garbage collection does not walk what the run built (frozen
    objects are not collected; that collection took seconds after a suite run)."""
    from . import _interrupted_at_once

    gc.freeze()
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, _interrupted_at_once)
    forget_caught_interrupts()


def forget_caught_interrupts() -> None:
    """CPython notes a KeyboardInterrupt that ends a string exec/eval (dataclasses, namedtuple and
    pytest's conditions run code so) as unhandled, even when the command caught it; under
    `python -m` the exit then becomes death by SIGINT (-2) instead of our 130.  Every string eval
    starts by clearing that note: one that ends normally leaves it clear."""
    eval("0")  # a constant: the point is the eval itself
