"""The reference's own commands: profiles, version-mapping, feature-dependencies, format, tour, apply."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from reference_impl import DEFAULT_PROFILE, Cluster, InputError, load_profile, profile_names

PROFILE_OPT = click.option("--profile", "profile", default=None,
                           help=f"Behaviour profile (release); default {DEFAULT_PROFILE}.")


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def _run_tool(profile: str | None, command: dict[str, Any]) -> dict[str, Any]:
    try:
        cluster = Cluster(profile)
    except InputError as e:
        _fail(str(e))
    out = cluster.apply(command)
    if out["error"] != "NONE":
        for line in out.get("lines") or []:  # what the tool printed before it failed
            click.echo(line)
        _fail(out["message"])
    return out


COMMANDS: list[click.Command] = []


@click.command("profiles")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def profiles_cmd(as_json: bool) -> None:
    """List behaviour profiles: the Kafka releases behind each, its metadata.version range and latest production level."""
    rows: list[dict[str, Any]] = []
    names = profile_names()
    for name in names:
        p = load_profile(name)
        patches = [n for n in names if n.startswith(name + ".")]
        shown = ", ".join(p.releases) if p.releases else p.release
        release = shown + (f" (patch profiles: {', '.join(patches)})" if patches else "")
        rows.append({
            "profile": name, "release": release, "releases": list(p.releases), "patches": patches,
            "verified": p.verified, "metadata_version": [p.mv_minimum, p.mv_latest_testing],
            "latest_production": f"{p.mv_latest_production} ({p.mv_name(p.mv_latest_production)})",
            "features": p.production_features, "default": name == DEFAULT_PROFILE,
        })
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    w = max(len(r["release"]) for r in rows)
    click.echo(f"{'profile':<12} {'releases':<{w}} {'metadata.version':<17} {'latest production':<18} features")
    for r in rows:
        lo, hi = r["metadata_version"]
        mark = " (default)" if r["default"] else ("" if r["verified"] else " (unverified)")
        click.echo(f"{r['profile']:<12} {r['release']:<{w}} {f'{lo}-{hi}':<17} {r['latest_production']:<18} "
                   f"{', '.join(r['features']) or '-'}{mark}")


@click.command("version-mapping")
@click.option("--release-version", default=None, help="metadata.version string, e.g. 3.9-IV0 or 3.9.")
@click.option("--unstable", is_flag=True, help="unstable.feature.versions.enable=true")
@PROFILE_OPT
def version_mapping_cmd(release_version: str | None, unstable: bool, profile: str | None) -> None:
    """Print the metadata.version and the default feature levels it maps to."""
    out = _run_tool(profile, {"op": "version_mapping", "release_version": release_version, "unstable": unstable,
                              "profile": profile})
    click.echo("\n".join(out["lines"]))


@click.command("feature-dependencies")
@click.option("--feature", "features", multiple=True, required=True, help="name=level (repeatable).")
@PROFILE_OPT
def feature_dependencies_cmd(features: tuple[str, ...], profile: str | None) -> None:
    """Print what each feature level depends on."""
    out = _run_tool(profile, {"op": "feature_dependencies", "features": list(features), "profile": profile})
    click.echo("\n".join(out["lines"]))


@click.command("format")
@click.option("--release-version", default=None)
@click.option("--feature", "features", multiple=True, help="name=level (repeatable).")
@click.option("--unstable", is_flag=True, help="unstable.feature.versions.enable=true")
@click.option("--standalone", is_flag=True, help="Dynamic quorum with this node as the only voter.")
@click.option("--initial-controllers", "initial_controllers", default=None, help="Dynamic quorum voters.")
@click.option("--no-initial-controllers", "no_initial_controllers", is_flag=True)
@PROFILE_OPT
def format_cmd(release_version: str | None, features: tuple[str, ...], unstable: bool, standalone: bool,
               initial_controllers: str | None, no_initial_controllers: bool, profile: str | None) -> None:
    """Print the bootstrap levels kafka-storage format would write, or its error."""
    cmd = {"op": "format", "release_version": release_version, "features": list(features), "unstable": unstable,
           "standalone": standalone, "initial_controllers": bool(initial_controllers),
           "no_initial_controllers": no_initial_controllers, "profile": profile}
    out = _run_tool(profile, cmd)
    click.echo("\n".join(out["lines"]))
    click.echo(f"# {len(out['records'])} bootstrap record(s): " +
               ", ".join(f"{r['name']}={r['level']}" for r in out["records"]))


@click.command("tour")
def tour_cmd() -> None:
    """Replay the bundled tours on every profile and check each step (the main job for now)."""
    from reference_impl.tour import run_tour

    failures = run_tour(click.echo)
    click.echo(f"tour: {'all steps as expected' if not failures else f'{failures} step(s) differ'}")
    sys.exit(1 if failures else 0)


@click.command("apply")
@click.argument("commands", type=click.File("r"), default="-")
@PROFILE_OPT
def apply_cmd(commands: Any, profile: str | None) -> None:
    """Apply JSON-lines commands to one reference cluster; print one outcome per line."""
    try:
        cluster = Cluster(profile)
    except InputError as e:
        _fail(str(e))
    for n, line in enumerate(commands, 1):
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
        except json.JSONDecodeError as e:
            _fail(f"{getattr(commands, 'name', 'input')}:{n}: not valid JSON: {e}")
        click.echo(json.dumps(cluster.apply(cmd), sort_keys=True))


COMMANDS += [profiles_cmd, version_mapping_cmd, feature_dependencies_cmd, format_cmd, tour_cmd, apply_cmd]
