"""The subprocess target and `kfc target serve`: the JSON-lines target protocol end to end, and a
target program that crashes, hangs, garbles or floods stderr never hangs or ends the run."""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pluggy
import pytest

from conformance.serving.jsonlines import serve
from conformance.targets import TargetError, hookspecs, jsonlines
from conformance.targets.jsonlines import SubprocessTarget, parse_spec
from conformance.targets.reference import ReferenceTarget
from reference_impl import OPS
from reference_impl.coordinator import load_command
from reference_impl.data import fixtures

SERVE = [sys.executable, "-m", "kfc", "target", "serve"]
SCHEMA = json.loads((fixtures() / "schema" / "target-protocol.schema.json").read_text())


def validator(part: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{part}"})


REQUEST, RESPONSE = validator("request"), validator("response")
ANY = jsonschema.Draft202012Validator(SCHEMA)


class Recorder:
    """A trace callback that keeps every message in both directions."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        self.messages.append((direction, message))


@pytest.fixture
def served() -> Iterator[tuple[SubprocessTarget, Recorder]]:
    rec = Recorder()
    target = SubprocessTarget([*SERVE, "--target", "reference:kafka-4.1"], trace=rec)
    yield target, rec
    target.close()


# A multi-step scenario touching most ops: a rolling upgrade, refusals, tools, payload and snapshots.
SCENARIO: list[dict[str, Any]] = [
    {"op": "state"},
    {"op": "register", "role": "broker", "node": 1},  # INVALID_COMMAND: not formatted yet
    {"op": "format", "release_version": "3.7-IV4", "controllers": [{"id": 3000}, {"id": 3001}]},
    {"op": "register", "role": "controller", "node": 3001},
    {"op": "register", "role": "broker", "node": 1},
    {"op": "register", "role": "broker", "node": 2, "software": "kafka-3.7"},
    {"op": "update_features", "updates": [{"feature": "metadata.version", "level": 21}]},
    {"op": "register", "role": "broker", "node": 2, "software": "kafka-4.1"},
    {"op": "update_features", "updates": [{"feature": "metadata.version", "level": 21}]},
    {"op": "update_features", "version": 1, "updates": [{"feature": "metadata.version", "level": 19}]},
    {"op": "features_tool", "action": "upgrade", "features": ["group.version=1"], "dry_run": True},
    {"op": "add_metadata", "kind": "delegation_token"},
    {"op": "snapshot", "metadata_version": 7},
    {"op": "describe", "node": 1},
    {"op": "api_versions", "node": 2, "version": 3},
    {"op": "api_versions", "node": 99},
    {"op": "version_mapping", "release_version": "3.9-IV0"},
    {"op": "feature_dependencies", "features": ["kraft.version=1"]},
    {"op": "format", "release_version": "9.9-IV9"},  # TOOL_ERROR
    {"op": "unregister", "node": 1},
    {"op": "unregister", "node": 1},
    load_command("group", [{"key_type": 1, "key": {"group": "g", "topic": "t", "partition": 0}, "version": 3,
                            "value": {"offset": 5, "leaderEpoch": 1, "metadata": "m", "commitTimestamp": 9}}]),
    {"op": "no_such_op"},
    {"op": "state"},
]


def test_outcomes_identical_to_the_in_process_reference(served: tuple[SubprocessTarget, Recorder]) -> None:
    target, _ = served
    for profile in ("kafka-4.1", "kafka-3.9"):
        target.reset(profile)
        assert target.profile == profile
        reference = ReferenceTarget(profile)
        errors = set()
        for command in SCENARIO:
            expected = reference.apply(command)
            assert target.apply(command) == json.loads(json.dumps(expected)), command
            errors.add(expected["error"])
        assert {"NONE", "INVALID_COMMAND", "TOOL_ERROR", "INVALID_UPDATE_VERSION"} <= errors
    assert target.starts == 1


def test_handshake_fields(served: tuple[SubprocessTarget, Recorder]) -> None:
    target, rec = served
    assert target.hello() == {"name": "reference:kafka-4.1", "profile": "kafka-4.1", "capabilities": sorted(OPS),
                              "protocol_version": 1}
    assert target.capabilities == frozenset(OPS)
    assert rec.messages[0] == ("send", {"id": 0, "type": "hello", "protocol_version": 1})
    assert rec.messages[1][1] | {"capabilities": None} == {
        "id": 0, "type": "hello", "protocol_version": 1, "name": "reference:kafka-4.1", "profile": "kafka-4.1",
        "capabilities": None}


def test_every_message_validates_against_the_schema(served: tuple[SubprocessTarget, Recorder]) -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    target, rec = served
    target.reset(None)
    for command in SCENARIO:
        target.apply(command)
    with pytest.raises(TargetError, match="could not handle reset"):
        target.reset("no-such-profile")  # answered with a type "error" response
    kinds = {(d, m["type"]) for d, m in rec.messages}
    assert kinds == {("send", "hello"), ("send", "reset"), ("send", "apply"),
                     ("recv", "hello"), ("recv", "reset"), ("recv", "outcome"), ("recv", "error")}
    for direction, message in rec.messages:
        (REQUEST if direction == "send" else RESPONSE).validate(message)
        ANY.validate(message)
    # The schema does reject what the client rejects.
    assert not RESPONSE.is_valid({"id": 1, "type": "outcome", "outcome": {"error": "NONE", "message": None}})
    assert not REQUEST.is_valid({"id": 1, "type": "apply", "command": {"node": 1}})
    assert not RESPONSE.is_valid({"id": 1, "type": "reset", "profile": 3})


def test_the_plugin_resolves_subprocess_specs_with_options() -> None:
    pm = pluggy.PluginManager("kfc")
    pm.add_hookspecs(hookspecs)
    pm.register(jsonlines, "kfc-subprocess")
    assert pm.hook.kfc_make_target(spec="reference") is None
    spec = f"subprocess[timeout=2.5, start_timeout=20]:{shlex.join(SERVE)} --target reference:kafka-4.0"
    target = pm.hook.kfc_make_target(spec=spec)
    try:
        assert isinstance(target, SubprocessTarget)
        assert (target.timeout, target.start_timeout) == (2.5, 20.0)
        assert target.hello()["profile"] == "kafka-4.0"
    finally:
        target.close()
    assert pm.hook.kfc_target_kinds() == [["subprocess[timeout=S,start_timeout=S]:COMMAND LINE"]]


@pytest.mark.parametrize(("spec", "fragment"), [
    ("subprocess:", "expected subprocess:COMMAND LINE"),
    ("subprocess[speed=3]:prog", "unknown option 'speed=3'"),
    ("subprocess[timeout=soon]:prog", "needs a number of seconds"),
    ("subprocess[timeout=0]:prog", "must be > 0"),
    ("subprocess:prog 'unclosed", "cannot split"),
])
def test_bad_specs_name_the_spec(spec: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment) as e:
        parse_spec(spec)
    assert spec in str(e.value)


def test_a_missing_program_is_a_target_error() -> None:
    with pytest.raises(TargetError, match="cannot start '/no/such/kfc-target'"):
        SubprocessTarget("/no/such/kfc-target --flag")


# -- fault targets: tiny protocol servers in tmp_path ------------------------------------------------

PRELUDE = '''\
import json, sys, time
from pathlib import Path

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n")
    sys.stdout.flush()

def answer(req):
    if req["type"] == "hello":
        send({"id": req["id"], "type": "hello", "protocol_version": 1, "name": "fault", "profile": None,
              "capabilities": ["state"]})
    elif req["type"] == "reset":
        send({"id": req["id"], "type": "reset", "profile": req["profile"]})
    else:
        send({"id": req["id"], "type": "outcome",
              "outcome": {"op": "state", "error": "NONE", "error_code": 0, "message": None}})

def requests():
    """Requests after the handshake (which is answered here)."""
    for line in sys.stdin:
        req = json.loads(line)
        if req["type"] == "hello":
            answer(req)
        else:
            yield req
'''


def script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "target.py"
    path.write_text(PRELUDE + textwrap.dedent(body))
    return [sys.executable, str(path)]


def test_crash_reports_exit_code_and_stderr_tail_then_reset_restarts(tmp_path: Path) -> None:
    argv = script(tmp_path, f'''
        counter = Path({str(tmp_path / "runs")!r})
        runs = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(runs))
        for req in requests():
            if req["type"] == "apply" and runs == 1:
                for i in range(30):
                    print(f"log line {{i}}", file=sys.stderr)
                print("fatal: the broker caught fire", file=sys.stderr)
                sys.exit(3)
            answer(req)
    ''')
    with SubprocessTarget(argv) as target:
        target.reset()
        with pytest.raises(TargetError) as e:
            target.apply({"op": "state"})
        text = str(e.value)
        assert "exited with code 3 while handling apply op 'state'" in text
        assert "fatal: the broker caught fire" in text and "log line 29" in text
        assert "log line 5\n" not in text  # only the tail (the last ~20 lines)
        with pytest.raises(TargetError, match="not running"):
            target.apply({"op": "state"})
        target.reset()  # restarts: the second run behaves
        assert target.starts == 2
        assert target.apply({"op": "state"})["error"] == "NONE"


def test_hang_times_out_fast_and_reset_restarts(tmp_path: Path) -> None:
    argv = script(tmp_path, '''
        for req in requests():
            if req["type"] == "apply":
                print("thinking very hard", file=sys.stderr, flush=True)
                time.sleep(60)
            answer(req)
    ''')
    with SubprocessTarget(argv, timeout=0.5) as target:
        target.reset()
        start = time.monotonic()
        with pytest.raises(TargetError, match=r"no response to apply op 'state' \(request id 2\) within 0.5 s") as e:
            target.apply({"op": "state"})
        assert time.monotonic() - start < 3
        assert "thinking very hard" in str(e.value)
        target.reset()
        assert target.starts == 2


@pytest.mark.parametrize(("body", "fragment"), [
    ('print("Starting broker... {oops", flush=True)',
     r"malformed JSON in response to apply .*: Starting broker\.\.\. \{oops"),
    ('send({"id": req["id"] + 7, "type": "outcome", "outcome": {"error": "NONE", "error_code": 0, "message": None}})',
     r"carries id 9, expected 2"),
    ('send({"id": req["id"], "type": "outcome", "outcome": {"error": "NONE", "message": None}})',
     r"must contain \['error_code'\] properties"),
    ('send({"id": req["id"], "type": "reset", "profile": None})', r"has type 'reset', expected 'outcome'"),
    ('send([req["id"]])', r"is not a JSON object: \[2\]"),
])
def test_garbled_responses_are_target_errors_naming_the_line(tmp_path: Path, body: str, fragment: str) -> None:
    argv = script(tmp_path, f'''
        for req in requests():
            if req["type"] == "apply":
                {body}
            else:
                answer(req)
    ''')
    with SubprocessTarget(argv, timeout=5) as target:
        target.reset()
        with pytest.raises(TargetError, match=fragment):
            target.apply({"op": "state"})
        target.reset()  # a fresh process after the failure
        assert target.starts == 2


def test_overlong_bad_lines_are_truncated_in_the_message(tmp_path: Path) -> None:
    argv = script(tmp_path, '''
        for req in requests():
            if req["type"] == "apply":
                print("x" * 100000, flush=True)
            else:
                answer(req)
    ''')
    with SubprocessTarget(argv) as target:
        target.reset()
        with pytest.raises(TargetError, match=r"\(100000 chars\)") as e:
            target.apply({"op": "state"})
        assert len(str(e.value)) < 1000


def test_a_stderr_flood_does_not_block(tmp_path: Path) -> None:
    argv = script(tmp_path, '''
        for req in requests():
            if req["type"] == "apply":
                sys.stderr.write("".join(f"debug line {i} of a very chatty target\\n" for i in range(100000)))
                sys.stderr.flush()
            answer(req)
    ''')
    with SubprocessTarget(argv, timeout=5) as target:
        target.reset()
        assert target.apply({"op": "state"})["error"] == "NONE"
        deadline = time.monotonic() + 5  # stderr is drained concurrently: the tail may lag the answer
        while target.stderr_tail()[-1:] != ["debug line 99999 of a very chatty target"]:
            assert time.monotonic() < deadline, target.stderr_tail()[-1:]
            time.sleep(0.01)


def test_a_version_mismatch_fails_the_handshake(tmp_path: Path) -> None:
    argv = script(tmp_path, '''
        for line in sys.stdin:
            send({"id": 0, "type": "hello", "protocol_version": 2, "name": "x", "profile": None, "capabilities": []})
    ''')
    with pytest.raises(TargetError, match="speaks protocol version 2; this suite speaks 1"):
        SubprocessTarget(argv)


def test_close_terminates_then_kills(tmp_path: Path) -> None:
    argv = script(tmp_path, '''
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for req in requests():
            answer(req)
        time.sleep(60)  # ignores EOF and SIGTERM
    ''')
    target = SubprocessTarget(argv)
    target.eof_grace = target.term_grace = 0.2
    proc = target._proc
    assert proc is not None
    start = time.monotonic()
    target.close()
    assert time.monotonic() - start < 3
    assert proc.popen.returncode is not None and proc.popen.returncode < 0


# -- the server -------------------------------------------------------------------------------------

GARBAGE = [
    "garbage",
    "[1, 2, 3]",
    '{"type": "apply", "command": {"op": "state"}}',
    '{"id": "7", "type": "apply", "command": {"op": "state"}}',
    '{"id": 5, "type": "nope"}',
    '{"id": 6, "type": "apply", "command": "state"}',
    '{"id": 7, "type": "apply", "command": {"node": 1}}',
    '{"id": 8, "type": "hello", "protocol_version": 99}',
    '{"id": 9, "type": "reset", "profile": 4.1}',
    '{"id": 10, "type": "reset", "profile": "kafka-9.9"}',
    "\x00\x01\x02 {",
]


def test_serve_answers_garbage_with_errors_and_keeps_going() -> None:
    lines = GARBAGE + [
        "",
        '{"id": 0, "type": "hello", "protocol_version": 1}',
        '{"id": 1, "type": "reset", "profile": "kafka-4.2"}',
        '{"id": 2, "type": "apply", "command": {"op": "format"}}',
    ]
    out = io.StringIO()
    assert serve(ReferenceTarget("kafka-4.1"), io.StringIO("\n".join(lines) + "\n"), out) == 0
    responses = [json.loads(line) for line in out.getvalue().splitlines()]
    for r in responses:
        RESPONSE.validate(r)
    assert [r["type"] for r in responses] == ["error"] * len(GARBAGE) + ["hello", "reset", "outcome"]
    assert [r["id"] for r in responses[:len(GARBAGE)]] == [None] * 4 + [5, 6, 7, 8, 9, 10, None]
    assert "unknown request type 'nope'" in responses[4]["message"]
    assert "Unknown profile 'kafka-9.9'" in responses[9]["message"]
    assert responses[-2]["profile"] == "kafka-4.2"
    assert responses[-1]["outcome"]["error"] == "NONE"


class _Unserialisable(ReferenceTarget):
    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        return {"error": "NONE", "error_code": 0, "message": None, "bad": object()}


def test_serve_reports_a_failing_target_as_an_error_response() -> None:
    out = io.StringIO()
    serve(_Unserialisable(), io.StringIO('{"id": 3, "type": "apply", "command": {"op": "state"}}\n'), out)
    resp = json.loads(out.getvalue())
    assert resp["type"] == "error" and resp["id"] == 3 and "not JSON-able" in resp["message"]


def test_serve_process_survives_garbage_and_ends_with_0_on_eof() -> None:
    requests = GARBAGE + ['{"id": 0, "type": "hello", "protocol_version": 1}',
                          '{"id": 1, "type": "apply", "command": {"op": "version_mapping"}}']
    proc = subprocess.run([*SERVE, "--target", "reference:kafka-4.1"], check=False,
                          input="\n".join(requests) + "\n",
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    responses = [json.loads(line) for line in proc.stdout.splitlines()]  # stdout: protocol lines only
    assert [r["type"] for r in responses] == ["error"] * len(GARBAGE) + ["hello", "outcome"]
    for r in responses:
        RESPONSE.validate(r)
    assert "answered request None with an error: not valid JSON" in proc.stderr


def test_serve_command_bad_target_is_one_line_exit_1() -> None:
    proc = subprocess.run([*SERVE, "--target", "nonsense:x"], check=False, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: --target nonsense:x: unknown target 'nonsense:x'")
    assert len(proc.stderr.splitlines()) == 1


class _Chatty(ReferenceTarget):
    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        print("a stray print from the target")
        return super().apply(command)


def test_serve_command_keeps_stdout_for_protocol_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    import click
    from click.testing import CliRunner

    from conformance import targets
    from kfc.commands.serve import serve_command

    monkeypatch.setattr(targets, "make_target", lambda spec: _Chatty())
    group = click.Group("target", commands=[serve_command])  # as `kfc target serve`
    result = CliRunner().invoke(group, ["serve", "--target", "chatty"],
                                input='{"id": 0, "type": "apply", "command": {"op": "state"}}\n')
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()] == ["outcome"]
    assert "a stray print from the target" in result.stderr


def test_a_command_that_is_not_json_is_the_callers_error(served: tuple[SubprocessTarget, Recorder]) -> None:
    target, _ = served
    target.reset()
    with pytest.raises(TypeError, match="not plain JSON data .*bytes"):
        target.apply({"op": "load_coordinator", "coordinator": "group", "records": [{"key": b"\x00"}]})
    assert target.apply({"op": "state"})["error"] == "NONE"  # nothing was sent: still in step
    assert target.starts == 1


def test_a_target_that_stops_reading_stdin_cannot_block_a_large_write(tmp_path: Path) -> None:
    argv = script(tmp_path, '''
        for req in requests():
            answer(req)
            time.sleep(60)  # after the reset: never reads stdin again
    ''')
    with SubprocessTarget(argv, timeout=0.5) as target:
        target.reset()
        start = time.monotonic()
        with pytest.raises(TargetError, match="did not read its stdin within 0.5 s"):
            target.apply({"op": "state", "padding": "x" * 4_000_000})  # far beyond a pipe's buffer
        assert time.monotonic() - start < 3
