"""fixtures/mutants/catalogue.json: the seeded mutants as data, read and checked here.

{"mutants": [entry, ...], "neutral_scenarios": [{"profiles": glob, "commands": [...]}, ...]}

An entry:
  name, rule   the mutant and the one rule of reference_impl.rules.RULES it breaks
  profile      its default profile
  description  the bug, in a line
  seam         what the bug replaces (see _build): "update_features", "UpdateContext.check", "Cluster.epoch"
  edit         {"old": ..., "new": ...}: the seam's source with `old` replaced by `new`; or
  variant      the name of a hand-written replacement (_build.VARIANTS)
  witness      commands on which the mutant's outcome differs from the reference's
  wire         "reachable": a cluster served with this bug (`kfc serve-broker --mutant NAME
               --no-control`) shows it to a client through ApiVersions, UpdateFeatures, DescribeCluster or
               broker registration, so the live tiers must kill it over kafka://; or
               {"reachable_with": [serve-broker options]}: the same, on a cluster started so (the state
               a client needs to see it: --release-version MV, --standalone); or
               {"unreachable": why}: no such RPC can see it (a format behaviour, a tool's output, ...)
  diverges_on  optional: the outcome field that differs there.  "rule" (the default): the reference's
               outcome carries the rule (a refusal the mutant misses or misattributes)

In a witness, a load_coordinator record's key or value is hex, or a recipe expanded on load:
{"header": n, "schema": S, "fields": {...}[, "version": v]} is the int16 n (key type or value
version) then S encoded at version v (default n); {"header": n, "body": hex} is n then raw bytes.

A profile's neutral scenario is the first one whose `profiles` glob matches it: commands that touch
none of the mutants' rules.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

from reference_impl import profile_names
from reference_impl.coordinator import encode
from reference_impl.data import fixtures
from reference_impl.rules import RULES

from . import _build

SOURCE = "fixtures/mutants/catalogue.json"
_REQUIRED = ("name", "rule", "profile", "description", "seam", "wire", "witness")
_OPTIONAL = ("edit", "variant", "diverges_on")


class CatalogueError(ValueError):
    """The catalogue does not say what a mutant is (the message names the mutant)."""


def read() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((fixtures() / "mutants" / "catalogue.json").read_text())
    return doc


def entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The mutants of `doc`, checked, witnesses expanded: one dict of Mutant fields each."""
    profiles = set(profile_names())
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(doc["mutants"]):
        name = raw.get("name", f"#{i}")

        def bad(why: str, name: str = name) -> CatalogueError:
            return CatalogueError(f"{SOURCE}: mutant {name!r}: {why}")

        missing = [k for k in _REQUIRED if k not in raw]
        unknown = sorted(set(raw) - set(_REQUIRED) - set(_OPTIONAL))
        if missing or unknown:
            raise bad(f"missing {missing}, unknown {unknown}")
        if any(e["name"] == name for e in out):
            raise bad("declared twice")
        if raw["rule"] not in RULES:
            raise bad(f"rule {raw['rule']!r} is not in reference_impl.rules.RULES")
        if raw["profile"] not in profiles:
            raise bad(f"unknown profile {raw['profile']!r}")
        if ("edit" in raw) == ("variant" in raw):
            raise bad("needs exactly one of 'edit' and 'variant'")
        wire = raw["wire"]
        if wire != "reachable" and not _wire_ok(wire):
            raise bad("wire must be \"reachable\", {\"reachable_with\": [serve-broker options]} or "
                      f"{{\"unreachable\": why}}, not {wire!r}")
        edit = raw.get("edit")
        if edit is not None and (set(edit) != {"old", "new"} or not all(isinstance(v, str) for v in edit.values())):
            raise bad(f"edit must be {{'old': text, 'new': text}}, not {edit!r}")
        try:
            _build.check_change(raw["seam"], raw.get("variant"))
            witness = tuple(_expand(cmd) for cmd in raw["witness"])
        except (KeyError, TypeError, ValueError) as e:
            raise bad(f"{type(e).__name__}: {e}") from None
        if not witness:
            raise bad("empty witness")
        out.append({"name": name, "rule": raw["rule"], "profile": raw["profile"], "description": raw["description"],
                    "seam": raw["seam"], "wire_unreachable": wire.get("unreachable") if isinstance(wire, dict) else None,
                    "wire_serve": tuple(wire.get("reachable_with", ())) if isinstance(wire, dict) else (),
                    "edit": (edit["old"], edit["new"]) if edit else None,
                    "variant": raw.get("variant"), "witness": witness,
                    "diverges_on": raw.get("diverges_on", "rule")})
    return out


# serve-broker options a wire-reachable mutant may need (each value-taking one with its value)
SERVE_OPTIONS = {"--release-version": 1, "--standalone": 0}


def _wire_ok(wire: Any) -> bool:
    if not isinstance(wire, dict) or len(wire) != 1:
        return False
    if "unreachable" in wire:
        return isinstance(wire["unreachable"], str) and bool(wire["unreachable"].strip())
    args = wire.get("reachable_with")
    if not isinstance(args, list) or not args or not all(isinstance(a, str) for a in args):
        return False
    i = 0
    while i < len(args):  # options we know, each with its value
        if args[i] not in SERVE_OPTIONS:
            return False
        i += 1 + SERVE_OPTIONS[args[i]]
    return i == len(args)


def neutral_commands(doc: dict[str, Any], profile: str) -> list[dict[str, Any]]:
    for scenario in doc["neutral_scenarios"]:
        if fnmatch.fnmatchcase(profile, scenario["profiles"]):
            return list(scenario["commands"])
    raise CatalogueError(f"{SOURCE}: no neutral scenario for profile {profile!r}")


def _expand(cmd: dict[str, Any]) -> dict[str, Any]:
    if cmd["op"] != "load_coordinator":
        return cmd
    return {**cmd, "records": [{"key": _record_bytes(r["key"]), "value": _record_bytes(r["value"])}
                               for r in cmd["records"]]}


def _record_bytes(part: str | dict[str, Any] | None) -> str | None:
    """Hex of a record key or value: as given, or built from its recipe."""
    if part is None or isinstance(part, str):
        return part
    header = int(part["header"])
    if "body" in part:
        body = bytes.fromhex(part["body"])
    else:
        body = encode(part["schema"], int(part.get("version", header)), part["fields"])
    return (header.to_bytes(2, "big", signed=True) + body).hex()
