"""`serve-broker` as a command: the option table and start-up, one definition for both entry points
(`kfc serve-broker` and `python -m conformance.serving`, which the suite's own children use, so no
library shells out to `kfc`)."""

from __future__ import annotations

import asyncio
import sys

import click

from reference_impl import InputError

from ..wire.framing import MAX_FRAME


@click.command("serve-broker")
@click.option("--profile", default=None, help="Behaviour profile (default: the reference's default).")
@click.option("--nodes", default=3, show_default=True, type=click.IntRange(1, 32), help="Brokers (ids 1..N).")
@click.option("--port", "port", default=9092, show_default=True, type=click.IntRange(0, 65535),
              help="Base port: brokers on BASE..BASE+N-1, the controller on BASE+N; 0 picks free ports.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback unless told).")
@click.option("--release-version", default=None, help="metadata.version to format with (default: latest production).")
@click.option("--standalone", is_flag=True, help="Format a dynamic quorum of the one controller (kafka-storage "
              "format --standalone: kraft.version 1), not static voters.")
@click.option("--idle-timeout", default=30.0, show_default=True, type=click.FloatRange(0.1, 3600),
              help="Close a connection idle this many seconds.")
@click.option("--max-frame", default=MAX_FRAME, show_default=True, type=click.IntRange(64, 64 << 20),
              help="Largest request frame accepted (bytes); larger ones close the connection.")
@click.option("--control/--no-control", default=True, show_default=True,
              help="Answer the kfc control extension (reset/format of the reference; docs/wire.md).")
@click.option("--broker", "brokers", multiple=True, metavar="ID[=RELEASE]",
              help="A broker registered at start, with its own release (mixed software); repeat it. "
                   "Replaces --nodes.")
@click.option("--controller", "controllers", multiple=True, metavar="ID[=RELEASE]",
              help="A controller of the quorum (the first is active; default: one, id 3000); repeat it.")
@click.option("--mutant", default=None, metavar="NAME",
              help="Serve a seeded mutant of the reference instead (kfc mutants lists them).")
def serve_broker_command(profile: str | None, nodes: int, port: int, host: str, release_version: str | None,
                         idle_timeout: float, max_frame: int, control: bool, brokers: tuple[str, ...],
                         controllers: tuple[str, ...], mutant: str | None, standalone: bool) -> None:
    """Serve the reference model over the Kafka protocol (feature APIs) until SIGINT/SIGTERM.

    The first stdout line is JSON with the listeners' ports; one log line per request goes to stderr.
    """
    from .broker import BrokerServer, run_server  # kio: loaded only to serve

    broker_specs = [_node_spec(b, "--broker") for b in brokers] or None
    controller_specs = [_node_spec(c, "--controller") for c in controllers] or None
    factory = None
    if mutant is not None:
        from ..mutants import MUTANTS

        if mutant not in MUTANTS:
            raise click.ClickException(f"--mutant {mutant}: unknown mutant; `kfc mutants --list` names them")
        m = MUTANTS[mutant]
        profile = profile or m.profile
        factory = m.cluster
    count = len(broker_specs) if broker_specs else nodes
    if port and port + count + len(controller_specs or [0]) > 65536:
        raise click.ClickException(f"--port {port} leaves no room for {count} broker(s) and the controller(s)")
    try:
        server = BrokerServer(profile, nodes, host, port, release_version, idle_timeout, max_frame, control,
                              brokers=broker_specs, controllers=controller_specs, cluster_factory=factory,
                              standalone=standalone)
        server.bootstrap()
    except InputError as e:
        raise click.ClickException(str(e)) from None

    def announce(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    try:
        asyncio.run(run_server(server, announce))
    except OSError as e:
        raise click.ClickException(f"cannot listen on {host} (base port {port}): {e.strerror or e}") from None
    except KeyboardInterrupt:
        pass


def _node_spec(text: str, flag: str) -> tuple[int, str | None]:
    node, _, release = text.partition("=")
    try:
        node_id = int(node)
    except ValueError:
        raise click.ClickException(f"{flag} {text}: expected ID or ID=RELEASE, e.g. 0=kafka-4.1") from None
    if not 0 <= node_id <= 2**31 - 1:
        raise click.ClickException(f"{flag} {text}: a node id is 0..2147483647")
    if release:
        from reference_impl import load_profile

        try:
            release = load_profile(release).name
        except InputError as e:
            raise click.ClickException(f"{flag} {text}: {e}") from None
    return node_id, release or None
