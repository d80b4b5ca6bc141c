"""Run a click command the kfc way: usage and tool errors are one line on stderr and exit code 1;
Ctrl-C is one line and exit code 130."""

from __future__ import annotations

import sys
from typing import Any

import click

INTERRUPTED = 130


def run_one_line(command: Any, *args: Any, **kwargs: Any) -> None:
    kwargs["standalone_mode"] = False
    try:
        rv = command.main(*args, **kwargs)
    except click.ClickException as e:
        click.echo(f"error: {e.format_message()}", err=True)
        sys.exit(1)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        sys.exit(INTERRUPTED)
    sys.exit(rv if isinstance(rv, int) else 0)
