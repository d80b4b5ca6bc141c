"""`kfc target serve`: expose any target over the JSON-lines target protocol v1 on stdin/stdout.

Used to test a `subprocess:` client against the reference, to put a Python target behind the
protocol, and as a model for implementers (docs/target-protocol.md).  Stdout carries protocol
messages only; anything else (logs, a target's stray prints) goes to stderr.
"""

from __future__ import annotations

import json
import logging
from typing import IO, Any

from ..targets.base import PROTOCOL_VERSION, Target

log = logging.getLogger("kfc.serve")

REQUEST_TYPES = ("hello", "reset", "apply")


class BadRequest(Exception):
    """A request line the server cannot handle; answered with a type "error" message."""


def _clip(text: str, n: int = 200) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= n else f"{text[:n]}… ({len(text)} chars)"


def handle(target: Target, line: str) -> dict[str, Any]:
    """One request line -> its response message (never raises for bad input)."""
    rid: int | None = None
    try:
        try:
            req = json.loads(line)
        except ValueError as e:
            raise BadRequest(f"not valid JSON ({e}): {_clip(line)}") from None
        if not isinstance(req, dict):
            raise BadRequest(f"a request must be a JSON object: {_clip(line)}")
        if isinstance(req.get("id"), int) and not isinstance(req.get("id"), bool) and req["id"] >= 0:
            rid = req["id"]
        else:
            raise BadRequest(f"a request needs an integer 'id' >= 0: {_clip(line)}")
        kind = req.get("type")
        if kind == "hello":
            return {"id": rid, "type": "hello", **_hello(target, req)}
        if kind == "reset":
            profile = req.get("profile")
            if profile is not None and not isinstance(profile, str):
                raise BadRequest(f"reset: 'profile' must be a string or null, not {profile!r}")
            target.reset(profile)
            got = getattr(target, "profile", None)
            return {"id": rid, "type": "reset", "profile": got if isinstance(got, str) else None}
        if kind == "apply":
            command = req.get("command")
            if not isinstance(command, dict) or not isinstance(command.get("op"), str):
                raise BadRequest(f"apply: 'command' must be an object with a string 'op': {_clip(line)}")
            outcome = target.apply(command)
            if not isinstance(outcome, dict):
                raise BadRequest(f"the target returned a {type(outcome).__name__}, not an outcome object")
            return {"id": rid, "type": "outcome", "outcome": outcome}
        raise BadRequest(f"unknown request type {kind!r}; expected one of {', '.join(REQUEST_TYPES)}")
    except BadRequest as e:
        return _error(rid, str(e))
    except Exception as e:  # the target failed on a valid request: report it and go on serving
        log.debug("request failed", exc_info=True)
        return _error(rid, f"{type(e).__name__}: {e}")


def _hello(target: Target, req: dict[str, Any]) -> dict[str, Any]:
    version = req.get("protocol_version")
    if version != PROTOCOL_VERSION or isinstance(version, bool):
        raise BadRequest(f"unsupported protocol_version {version!r}; this server speaks {PROTOCOL_VERSION}")
    info = target.hello()
    caps = info.get("capabilities")
    return {"protocol_version": PROTOCOL_VERSION, "name": str(info.get("name") or "target"),
            "profile": info.get("profile") if isinstance(info.get("profile"), str) else None,
            "capabilities": [str(c) for c in caps] if isinstance(caps, list | tuple | set | frozenset) else []}


def _error(rid: int | None, message: str) -> dict[str, Any]:
    log.warning("answered request %s with an error: %s", rid, message)
    return {"id": rid, "type": "error", "message": message}


def serve(target: Target, stdin: IO[str], stdout: IO[str]) -> int:
    """Answer one response line per request line until EOF on stdin; returns the exit code (0)."""
    while True:
        try:
            line = stdin.readline()
        except (UnicodeDecodeError, ValueError) as e:  # undecodable bytes: skip them, keep serving
            stdout.write(json.dumps(_error(None, f"unreadable request line: {e}")) + "\n")
            stdout.flush()
            continue
        if not line:
            return 0
        if not line.strip():
            continue  # blank lines are ignored, as on the client side
        resp = handle(target, line)
        try:
            text = json.dumps(resp, allow_nan=False)
        except (TypeError, ValueError) as e:  # an outcome that is not JSON: an error, not a bad line
            text = json.dumps(_error(resp.get("id"), f"the target's response is not JSON-able: {e}"))
        stdout.write(text + "\n")
        stdout.flush()
