"""`kfc kafka fetch VERSION` / `kfc kafka list`: Apache Kafka releases in the per-user cache."""

from __future__ import annotations

import json

import click

from .._errors import interruptible


@click.group("kafka")
def kafka_group() -> None:
    """Apache Kafka releases: their jars from Maven Central in the per-user cache."""


@kafka_group.command("fetch")
@click.argument("version", required=False)
@click.option("--kafka-home", type=click.Path(file_okay=False), default=None,
              help="Use an existing Kafka installation (the binary tarball's layout: DIR/libs) instead.")
@interruptible
def fetch_command(version: str | None, kafka_home: str | None) -> None:
    """Resolve release VERSION's jars from Maven Central (through Maven) into the cache, once.

    Prints the release's folder (its libs/ holds the classpath)."""
    from conformance.realkafka.releases import FetchError, fetch, from_home

    try:
        if kafka_home is not None:
            rel = from_home(kafka_home)
            if version is not None and version != rel.version:
                raise click.ClickException(f"VERSION {version} but --kafka-home {kafka_home} holds Kafka {rel.version}")
        elif version is None:
            raise click.ClickException("give VERSION (like 4.1.1) or --kafka-home DIR")
        else:
            rel = fetch(version)
    except FetchError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{rel.version}\t{rel.home}")


@kafka_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(as_json: bool) -> None:
    """The releases in the cache (`kfc kafka fetch` puts them there)."""
    from conformance.realkafka.releases import cache_root, list_cached

    found = list_cached()
    if as_json:
        click.echo(json.dumps([{"version": r.version, "home": str(r.home), "jars": len(r.classpath)}
                               for r in found]))
        return
    if not found:
        click.echo(f"no Kafka release in {cache_root()} (`kfc kafka fetch VERSION` gets one)", err=True)
    for r in found:
        click.echo(f"{r.version}\t{r.home}")
