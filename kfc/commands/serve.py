"""`kfc target serve` (any target over the JSON-lines protocol) and `kfc serve-broker` (the reference
over the Kafka protocol; its option table lives with the server, conformance.serving.command)."""

from __future__ import annotations

import io
import logging
import sys

import click

from conformance.serving.command import serve_broker_command
from conformance.serving.jsonlines import serve

__all__ = ["serve_broker_command", "serve_command"]


@click.command("serve", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--target", "spec", default="reference", show_default=True, metavar="SPEC",
              help="The target to expose, e.g. reference:kafka-4.1 or a plugin's spec.")
@click.option("-v", "--verbose", is_flag=True, help="Log every failed request with its traceback on stderr.")
def serve_command(spec: str, verbose: bool) -> None:
    """Serve a target over the JSON-lines target protocol on stdin/stdout (docs/target-protocol.md)."""
    from conformance.targets import TargetError, make_target

    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if verbose else logging.WARNING,
                        format="kfc target serve: %(message)s")
    try:
        target = make_target(spec)
    except (ValueError, TargetError, OSError) as e:
        raise click.ClickException(f"--target {spec}: {e}") from None
    # Protocol lines go to the real stdout; a target's own prints must not corrupt the stream.
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n", write_through=True)
    inp = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        code = serve(target, inp, out)
    except BrokenPipeError:
        raise click.ClickException("the client closed the connection (stdout)") from None
    except KeyboardInterrupt:
        code = 130
    finally:
        sys.stdout = saved
        target.close()
        try:
            out.detach()  # leave sys.stdout.buffer usable for click's own exit handling
        except (ValueError, OSError):
            pass
    sys.exit(code)
