"""The `kafka://` spec: its options and their parser, in one place.

The parser's known options and the usage line that `kfc` prints for an unknown target both come
from OPTIONS, so the usage cannot fall behind the parser.  Light on purpose: the plugin imports it
without loading kio.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

# What a live run may do to a running cluster (docs/wire.md): observe reads, probe sends
# UpdateFeatures with validate_only, mutate changes levels, register adds synthetic nodes.
TIERS = ("observe", "probe", "mutate", "register")
DEFAULT_TIERS = ("observe", "probe")
# option -> the placeholder the usage line shows
OPTIONS = {
    "controller": "H:P",
    "tiers": ",".join(TIERS),
    "timeout": "S",
    "max_requests": "N",
    "rate": "PER_S",
    "client_id": "ID",
    "profile": "NAME",
    "allow_register": "1",
    "control": "1",
}


def usage() -> str:
    """The spec's form with every option the parser accepts."""
    return "kafka://HOST:PORT[,HOST:PORT…][?" + "&".join(f"{k}={v}" for k, v in OPTIONS.items()) + "]"


def parse_address(text: str, what: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what}: expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def parse_spec(spec: str) -> dict[str, Any]:
    """`kafka://h:p,h:p?k=v&…` -> bootstrap addresses and options (ValueError with the reason)."""
    if not spec.startswith("kafka://"):
        raise ValueError(f"not a kafka:// spec: {spec!r}")
    rest = spec[len("kafka://"):]
    where, _, query = rest.partition("?")
    bootstrap = [parse_address(a, "kafka:// bootstrap") for a in where.split(",") if a.strip()]
    if not bootstrap:
        raise ValueError("kafka:// needs at least one HOST:PORT")
    opts = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise ValueError(f"kafka:// unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(OPTIONS))}")
    try:
        timeout = float(opts.get("timeout", "5"))
    except ValueError:
        raise ValueError(f"kafka:// timeout must be a number of seconds, got {opts['timeout']!r}") from None
    if not 0 < timeout <= 600:
        raise ValueError("kafka:// timeout must be in (0, 600] seconds")
    flag = {"1", "true", "yes", "on"}
    tiers = [t.strip() for t in opts.get("tiers", ",".join(DEFAULT_TIERS)).split(",") if t.strip()]
    bad = [t for t in tiers if t not in TIERS]
    if bad or not tiers:
        raise ValueError(f"kafka:// tiers: unknown tier(s) {', '.join(bad) or '(none given)'}; known: {', '.join(TIERS)}")
    allow_register = opts.get("allow_register", "0").lower() in flag
    if allow_register and "register" not in tiers:
        tiers.append("register")  # allow_register=1 is the older name of the register tier
    return {"bootstrap": bootstrap, "timeout": timeout, "client_id": opts.get("client_id", "kfc"),
            "controller": parse_address(opts["controller"], "kafka:// controller") if opts.get("controller") else None,
            "allow_register": "register" in tiers, "tiers": tuple(t for t in TIERS if t in tiers),
            "control": opts.get("control", "0").lower() in flag, "profile": opts.get("profile") or None,
            "max_requests": _positive(opts, "max_requests", int), "rate": _positive(opts, "rate", float)}


def _positive(opts: dict[str, str], name: str, kind: Any) -> Any:
    if not opts.get(name):
        return None
    try:
        value = kind(opts[name])
    except ValueError:
        raise ValueError(f"kafka:// {name} must be a {'whole ' if kind is int else ''}number, got {opts[name]!r}") from None
    if value <= 0:
        raise ValueError(f"kafka:// {name} must be above 0, got {opts[name]!r}")
    return value
