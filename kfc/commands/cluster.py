"""`kfc cluster up` / `kfc cluster roll`: a real KRaft cluster from a Kafka release's jars, in the
foreground until Ctrl-C or SIGTERM (then every JVM is stopped)."""

from __future__ import annotations

import json
import signal
import sys
import time
from types import FrameType

import click

from .._errors import Interrupted, interruptible


@click.group("cluster")
def cluster_group() -> None:
    """Real Apache Kafka KRaft clusters on 127.0.0.1 (Kafka's own StorageTool and kafka.Kafka)."""


def _say(line: str) -> None:
    click.echo(line, err=True)


class _Terminated(Exception):
    """SIGTERM arrived: stop the cluster and end with "stopped"."""


@cluster_group.command("up")
@click.option("--kafka", "version", metavar="VERSION", default=None,
              help="The release to run (fetched into the cache on first use), like 4.1.1.")
@click.option("--kafka-home", type=click.Path(file_okay=False), default=None,
              help="Run an existing Kafka installation (the binary tarball's layout) instead.")
@click.option("--brokers", default=1, show_default=True, type=click.IntRange(1, 16),
              help="Brokers (with --combined: combined nodes).")
@click.option("--controllers", default=None, type=click.IntRange(1, 9),
              help="Separate controllers (default: combined broker+controller nodes).")
@click.option("--combined", is_flag=True, help="Combined broker+controller nodes (the default).")
@click.option("--release-version", default=None, metavar="MV",
              help="metadata.version to format with, like 3.9-IV0 (default: the release's).")
@click.option("--feature", "features", multiple=True, metavar="F=L", help="A feature level to format with (repeat).")
@click.option("--standalone", "quorum", flag_value="dynamic",
              help="Dynamic quorum (KIP-853, 3.9+): --standalone or --initial-controllers at format. "
                   "Default from 4.0.")
@click.option("--static-voters", "quorum", flag_value="static",
              help="Static voters (controller.quorum.voters). Default before 4.0; 3.7/3.8 have only these.")
@click.option("--config", "configs", multiple=True, metavar="KEY=VALUE",
              help="An extra line for every node.properties (repeat).")
@click.option("--dir", "run_dir", type=click.Path(file_okay=False), default=None,
              help="Run folder for data, logs and state (default: a temporary one, removed at the end).")
@click.option("--timeout", default=180.0, show_default=True, type=click.FloatRange(1, 3600),
              help="Seconds to wait for formatting and for every node to be ready.")
def up_command(version: str | None, kafka_home: str | None, brokers: int, controllers: int | None, combined: bool,
               release_version: str | None, features: tuple[str, ...], quorum: str | None,
               configs: tuple[str, ...], run_dir: str | None, timeout: float) -> None:
    """Format and start a cluster; print one JSON line (bootstrap, controllers, nodes) on stdout and
    stay in the foreground until Ctrl-C or SIGTERM."""
    from conformance.realkafka import jvm
    from conformance.realkafka.cluster import ClusterError, KafkaCluster, check_input, explain, release_of

    if combined and controllers is not None:
        raise click.ClickException("--combined and --controllers exclude each other")
    try:
        check_input(version, quorum, features)  # before a first use fetches the release
    except ClusterError as e:
        raise click.ClickException(str(e)) from None
    extra = {}
    for c in configs:
        key, eq, value = c.partition("=")
        if not eq or not key.strip():
            raise click.ClickException(f"--config {c}: expected KEY=VALUE")
        extra[key.strip()] = value.strip()

    terminating = [False]

    def on_term(signum: int, frame: FrameType | None) -> None:
        # No locks here: a flag, then an exception in the main thread (or SIGKILL on the second one).
        if terminating[0]:
            jvm.kill_all()
            return
        terminating[0] = True
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    # Started in the background by a shell, SIGINT arrives ignored: this command stops on it anyway.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    cluster = None
    try:
        try:
            release = release_of(version, kafka_home, _say)
            cluster = KafkaCluster(release, brokers=brokers, controllers=controllers or 1,
                                   combined=controllers is None, release_version=release_version,
                                   features=features, quorum=quorum, run_dir=run_dir, config=extra,
                                   timeout=timeout, progress=_say)
            started = time.monotonic()
            cluster.start()
            first_controller = cluster.controller_bootstrap.split(",")[0]
            _say(f"ready in {time.monotonic() - started:.1f} s; Ctrl-C stops it. Check it with: kfc check --no-spark "
                 f'--target "kafka://{cluster.bootstrap}?controller={first_controller}"')
            click.echo(json.dumps(cluster.summary()))
            sys.stdout.flush()
            reported: set[int] = set()
            while True:
                time.sleep(0.5)
                cluster.serve_control()
                for n in cluster.dead_nodes():
                    if n.id not in reported:
                        reported.add(n.id)
                        _say(f"warning: node {n.id} exited (code {n.proc.returncode if n.proc else '?'}): "
                             f"{explain(n)}")
        except ClusterError as e:
            raise click.ClickException(str(e)) from None
        except _Terminated:
            if cluster is not None:
                cluster.stop()
            click.echo("stopped", err=True)
            return
        except KeyboardInterrupt:
            if cluster is not None:
                cluster.stop()
            raise Interrupted() from None
    finally:
        if cluster is not None:
            cluster.stop(grace=0)
        jvm.kill_all()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


@cluster_group.command("roll")
@click.argument("node", type=int)
@click.option("--kafka", "version", metavar="VERSION", default=None, help="The release to restart the node on.")
@click.option("--kafka-home", type=click.Path(file_okay=False), default=None,
              help="An existing Kafka installation to restart the node on instead.")
@click.option("--dir", "run_dir", required=True, type=click.Path(file_okay=False),
              help="The run folder of the cluster (`kfc cluster up --dir`; its JSON line names it).")
@click.option("--timeout", default=180.0, show_default=True, type=click.FloatRange(1, 3600),
              help="Seconds to wait for the node to be back.")
@interruptible
def roll_command(node: int, version: str | None, kafka_home: str | None, run_dir: str, timeout: float) -> None:
    """Restart NODE of a running cluster on another release with the same data (rolling upgrade or
    binary downgrade); prints the node as one JSON line once it is ready."""
    from conformance.realkafka.cluster import ClusterError, read_state, release_of, request_roll

    try:
        read_state(run_dir)  # a wrong folder fails before any download
        release_of(version, kafka_home, _say)  # fetched here, with its progress line
        started = time.monotonic()
        answer = request_roll(run_dir, node, version, kafka_home, timeout)
    except ClusterError as e:
        raise click.ClickException(str(e)) from None
    _say(f"node {node} back on Kafka {answer.get('kafka')} in {time.monotonic() - started:.1f} s")
    click.echo(json.dumps(answer))
