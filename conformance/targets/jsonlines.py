"""`subprocess:COMMAND LINE`: a target in any language, spoken to over JSON lines on stdin/stdout.

The protocol (v1) is documented in docs/target-protocol.md and fixtures/schema/target-protocol.schema.json.
This client must never hang and never lose the rest of a run: every request has a deadline, stdout
and stderr are read by daemon threads (a chatty target cannot block on a full pipe), and any
protocol failure stops the process so that the next reset() starts a fresh one.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any, NoReturn, Self

from ..model import hello_problem, outcome_problem
from .base import PROTOCOL_VERSION, Target, TargetError
from .hookspecs import hookimpl

log = logging.getLogger("kfc.target")

DEFAULT_TIMEOUT = 10.0  # seconds per reset/apply
DEFAULT_START_TIMEOUT = 30.0  # seconds for start + handshake (a JVM target starts slowly)
BATCH_SECONDS_PER_COMMAND = 2.0  # an apply_batch request's deadline: the timeout plus this per command
MAX_LINE = 64 * 1024 * 1024  # a longer response line is a failure, not an unbounded buffer
STDERR_TAIL = 20
_SHOW = 200  # characters of a bad line (or stderr line) quoted in an error message

Trace = Callable[[str, dict[str, Any]], None]


def _clip(text: str | bytes, n: int = _SHOW) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = text.rstrip("\r\n")
    return text if len(text) <= n else f"{text[:n]}… ({len(text)} chars)"


class _Process:
    """One run of the target program, with its reader threads."""

    def __init__(self, argv: list[str], env: Mapping[str, str] | None, cwd: str | None):
        posix = os.name == "posix"
        # Own session: close() can stop a wrapper script together with what it started (e.g. a JVM).
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=posix)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.stderr_lines = 0
        self.timed_out = False
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self._out = threading.Thread(target=self._pump_stdout, args=(self.popen.stdout,), daemon=True)
        self._err = threading.Thread(target=self._pump_stderr, args=(self.popen.stderr,), daemon=True)
        # One watchdog per process, not a Timer per request (a Timer costs a thread start, ~0.5 ms).
        self._cond = threading.Condition()
        self._write_deadline: float | None = None
        self._stopped = False
        self._dog = threading.Thread(target=self._watch, daemon=True)
        self._out.start()
        self._err.start()
        self._dog.start()
        self._finalizer = weakref.finalize(self, _kill_group, self.popen)

    def _pump_stdout(self, stream: IO[bytes]) -> None:
        try:
            while line := stream.readline(MAX_LINE + 1):
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self.lines.put(None)  # EOF: the process exited or closed its stdout

    def _pump_stderr(self, stream: IO[bytes]) -> None:
        try:
            while line := stream.readline(8192):
                self.stderr_lines += 1
                text = _clip(line, 300)
                self.tail.append(text)
                log.debug("target stderr: %s", text)
        except (OSError, ValueError):
            pass

    def _watch(self) -> None:
        with self._cond:
            while not self._stopped:
                if self._write_deadline is None:
                    self._cond.wait()
                elif time.monotonic() >= self._write_deadline:
                    self._write_deadline = None
                    self.expire()
                else:
                    self._cond.wait(self._write_deadline - time.monotonic())

    def write(self, data: bytes, timeout: float) -> None:
        """Write one request; a target that stops reading stdin could block this on a full pipe,
        so the watchdog kills it after `timeout` (the write then fails with BrokenPipeError)."""
        stdin = self.popen.stdin
        assert stdin is not None
        with self._cond:
            self._write_deadline = time.monotonic() + timeout
            self._cond.notify()
        try:
            stdin.write(data)
            stdin.flush()
        finally:
            with self._cond:
                self._write_deadline = None

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        _kill_group(self.popen)

    def expire(self) -> None:
        self.timed_out = True
        self.kill()

    def exit_code(self, wait: float) -> int | None:
        try:
            code = self.popen.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None
        self._err.join(timeout=1.0)  # let the last stderr lines arrive for the report
        return code

    def stop(self, eof_grace: float, term_grace: float) -> None:
        """EOF first (the protocol's way to end), then SIGTERM, then SIGKILL."""
        p = self.popen
        with self._cond:
            self._stopped = True
            self._cond.notify()
        try:
            if p.stdin is not None:
                p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(timeout=eof_grace)
        except subprocess.TimeoutExpired:
            _signal_group(p, signal.SIGTERM)
            try:
                p.wait(timeout=term_grace)
            except subprocess.TimeoutExpired:
                self.kill()
                p.wait()
        for thread, stream in ((self._out, p.stdout), (self._err, p.stderr)):
            thread.join(timeout=1.0)
            # A grandchild may still hold the pipe; closing it under a blocked reader would block too.
            if stream is not None and not thread.is_alive():
                try:
                    stream.close()
                except OSError:
                    pass
        self._finalizer.detach()


def _signal_group(p: subprocess.Popen[bytes], sig: int) -> None:
    if p.poll() is not None:
        return
    try:
        if os.name == "posix":
            os.killpg(p.pid, sig)
        else:
            p.terminate() if sig == signal.SIGTERM else p.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _kill_group(p: subprocess.Popen[bytes]) -> None:
    _signal_group(p, signal.SIGKILL if os.name == "posix" else signal.SIGTERM)


class SubprocessTarget(Target):
    """A target program speaking the JSON-lines protocol v1 on stdin/stdout.

    `command` is an argv list or a command line (shlex-split).  `timeout` bounds each reset/apply,
    `start_timeout` the start and handshake.  `trace(direction, message)` sees every message
    ("send" / "recv"), e.g. to log or validate them.  Not thread-safe: one caller at a time."""

    starts_a_process = True
    eof_grace = 1.0  # seconds close() waits after EOF before SIGTERM
    term_grace = 2.0  # ... and after SIGTERM before SIGKILL

    def __init__(self, command: str | Sequence[str], *, timeout: float = DEFAULT_TIMEOUT,
                 start_timeout: float = DEFAULT_START_TIMEOUT, env: Mapping[str, str] | None = None,
                 cwd: str | None = None, trace: Trace | None = None):
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not argv:
            raise ValueError("subprocess target: empty command line")
        for what, value in (("timeout", timeout), ("start_timeout", start_timeout)):
            if not value > 0:
                raise ValueError(f"subprocess target: {what} must be > 0 seconds, not {value!r}")
        self.argv = argv
        self.timeout = float(timeout)
        self.start_timeout = float(start_timeout)
        self.env, self.cwd, self.trace = env, cwd, trace
        self.label = f"subprocess target '{_clip(shlex.join(argv), 160)}'"
        self.name = "subprocess"
        self.profile = None
        self.capabilities = None
        self.extensions: frozenset[str] = frozenset()  # protocol extensions its hello declared
        self.batch = True  # use apply_batch when the hello offers it (False: one apply per command)
        self.protocol_version = PROTOCOL_VERSION
        self.starts = 0  # processes started so far (restarts after failures included)
        self._proc: _Process | None = None
        self._last_tail: collections.deque[str] = collections.deque()
        self._next_id = 0
        self._start()

    # -- the Target contract ------------------------------------------------------------------
    def hello(self) -> dict[str, Any]:
        caps = sorted(self.capabilities) if self.capabilities is not None else []
        tiers = getattr(self, "tiers", None)
        extra = {"tiers": list(tiers)} if isinstance(tiers, list) else {}
        if self.unreported:
            extra["unreported"] = sorted(self.unreported)
        if self.extensions:
            extra["extensions"] = sorted(self.extensions)
        return {**extra, "name": self.name, "profile": self.profile, "capabilities": caps,
                "protocol_version": self.protocol_version}

    def reset(self, profile: str | None = None) -> None:
        if self._proc is None or not self._proc.alive():
            self._start()  # after a failure (or a crash between tests): a fresh process
        resp = self._request({"type": "reset", "profile": profile}, "reset", self.timeout,
                             f"reset to profile {profile!r}")
        got = resp.get("profile")
        if got is not None and not isinstance(got, str):
            self._broken(f"reset response has a non-string 'profile': {_clip(json.dumps(resp))}")
        self.profile = got
        state = resp.get("state")
        if state is not None and not (isinstance(state, dict) and state.get("op") == "restore_state"):
            self._broken(f"reset response's 'state' is not a restore_state command: {_clip(json.dumps(resp))}")
        self._state = state

    def observed_state(self) -> dict[str, Any] | None:
        return getattr(self, "_state", None)

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(command, dict):
            raise TypeError(f"a command must be a dict, not {_clip(repr(command))}")
        if not isinstance(command.get("op"), str):
            raise TypeError(f"a command needs a string 'op': {_clip(repr(command))}")
        if self._proc is None:
            raise TargetError(f"{self.label} is not running (a previous failure stopped it; call reset())")
        what = f"apply op {command['op']!r}"
        resp = self._request({"type": "apply", "command": command}, "outcome", self.timeout, what)
        outcome = resp.get("outcome")
        problem = outcome_problem(outcome, "outcome")
        if problem:
            self._broken(f"bad outcome for {what}: {problem}: {_clip(json.dumps(resp))}")
        assert isinstance(outcome, dict)
        return outcome

    @property
    def pid(self) -> int | None:
        """The running target process's id (None when none runs)."""
        return self._proc.popen.pid if self._proc is not None else None

    @property
    def batching(self) -> bool:
        """The target declared the `apply_batch` extension in its hello (docs/target-protocol.md)."""
        return self.batch and "apply_batch" in self.extensions

    def apply_batch(self, commands: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Apply `commands` in order in one request (the `apply_batch` extension), one outcome each, as
        if each were sent alone; a target without the extension gets them one `apply` at a time.  Any
        failure raises (which command failed is then unknown: replay them one by one to find it)."""
        if not self.batching:
            return [self.apply(c) for c in commands]
        if self._proc is None:
            raise TargetError(f"{self.label} is not running (a previous failure stopped it; call reset())")
        what = f"apply_batch of {len(commands)} commands"
        resp = self._request({"type": "apply_batch", "commands": list(commands)}, "outcomes",
                             self.timeout + BATCH_SECONDS_PER_COMMAND * len(commands), what)
        outcomes = resp.get("outcomes")
        if not isinstance(outcomes, list) or len(outcomes) != len(commands):
            self._broken(f"bad response to {what}: expected a list of {len(commands)} outcomes: {_clip(json.dumps(resp))}")
        for i, outcome in enumerate(outcomes):
            problem = outcome_problem(outcome, "outcome")
            if problem:
                self._broken(f"bad outcome {i} of {what}: {problem}: {_clip(json.dumps(outcome))}")
        return outcomes

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop(self.eof_grace, self.term_grace)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stderr_tail(self) -> list[str]:
        """The last lines the current (or last failed) process wrote on stderr."""
        return list(self._last_tail)

    # -- plumbing -----------------------------------------------------------------------------
    def _start(self) -> None:
        self.close()
        try:
            self._proc = _Process(self.argv, self.env, self.cwd)
        except OSError as e:
            raise TargetError(f"{self.label}: cannot start {self.argv[0]!r}: {e}") from None
        self._last_tail = self._proc.tail
        self._next_id = 0  # ids count per process: the handshake is always request 0
        self.starts += 1
        resp = self._request({"type": "hello", "protocol_version": PROTOCOL_VERSION}, "hello",
                             self.start_timeout, "the handshake")
        if resp.get("protocol_version") != PROTOCOL_VERSION:
            self._broken(f"speaks protocol version {resp.get('protocol_version')!r}; this suite speaks "
                         f"{PROTOCOL_VERSION}")
        problem = hello_problem({k: v for k, v in resp.items() if k not in ("id", "type")}, "hello response")
        if problem is not None:
            self._broken(f"bad {problem} (needs name: string, profile: string|null, capabilities: [op, …]): "
                         f"{_clip(json.dumps(resp))}")
        name, profile, caps = resp["name"], resp["profile"], resp["capabilities"]
        self.name, self.profile, self.capabilities = name, profile, frozenset(caps)
        self.tiers = resp.get("tiers")  # a live target names its tiers (docs/target-protocol.md)
        self.unreported = frozenset(resp.get("unreported") or ())  # fields it cannot report: not compared
        self.extensions = frozenset(resp.get("extensions") or ())

    def _request(self, body: dict[str, Any], expect: str, timeout: float, what: str) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None
        rid = self._next_id
        self._next_id += 1
        msg = {"id": rid, **body}
        what = f"{what} (request id {rid})"
        deadline = time.monotonic() + timeout
        self._send(proc, msg, timeout, what)
        while True:
            try:
                raw = proc.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                proc.timed_out = True
                self._broken(f"no response to {what} within {timeout:g} s; the process was stopped",
                             with_tail=True)
            if raw is None:
                self._crashed(what)
            if raw.strip():
                break  # blank lines are ignored
        assert raw is not None
        resp = self._parse(raw, what)
        if self.trace is not None:
            self.trace("recv", resp)
        if resp.get("id") != rid or isinstance(resp.get("id"), bool):
            self._broken(f"response to {what} carries id {resp.get('id')!r}, expected {rid}: {_clip(raw)}")
        kind = resp.get("type")
        if kind == "error":
            message = resp.get("message")
            # The target is alive and in step: no restart needed, but the request has no result.
            raise TargetError(f"{self.label} could not handle {what}: "
                              f"{message if isinstance(message, str) else _clip(raw)}")
        if kind != expect:
            self._broken(f"response to {what} has type {kind!r}, expected {expect!r}: {_clip(raw)}")
        return resp

    def _send(self, proc: _Process, msg: dict[str, Any], timeout: float, what: str) -> None:
        try:
            data = (json.dumps(msg, separators=(",", ":"), allow_nan=False) + "\n").encode()
        except (TypeError, ValueError) as e:  # a caller's bug, not the target's: nothing was sent
            raise TypeError(f"{what}: the message is not plain JSON data ({e}): {_clip(repr(msg))}") from None
        if self.trace is not None:
            self.trace("send", msg)
        try:
            proc.write(data, timeout)
        except (OSError, ValueError):
            if proc.timed_out:
                self._broken(f"{what}: the target did not read its stdin within {timeout:g} s; the process "
                             "was stopped", with_tail=True)
            self._crashed(what)

    def _parse(self, raw: bytes, what: str) -> dict[str, Any]:
        if len(raw) > MAX_LINE:
            self._broken(f"response to {what} is longer than {MAX_LINE} bytes: {_clip(raw)}")
        try:
            resp = json.loads(raw)
        except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
            self._broken(f"malformed JSON in response to {what} ({e}): {_clip(raw)}")
        if not isinstance(resp, dict):
            self._broken(f"response to {what} is not a JSON object: {_clip(raw)}")
        return resp

    def _crashed(self, what: str) -> NoReturn:
        proc = self._proc
        assert proc is not None
        code = proc.exit_code(wait=2.0)
        if code is None:
            status = "closed its stdout"
        elif code < 0:
            status = f"was killed by signal {-code}"
        else:
            status = f"exited with code {code}"
        self._broken(f"{status} while handling {what}", with_tail=True)

    def _broken(self, problem: str, with_tail: bool = False) -> NoReturn:
        """Stop the process (its stream is no longer trustworthy) and report; reset() restarts."""
        proc = self._proc
        tail = list(proc.tail) if proc is not None else []
        if proc is not None:
            self._proc = None
            proc.kill()
            proc.stop(0.0, 0.0)
        text = f"{self.label} {problem}"
        if with_tail:
            text += ("\nlast stderr lines:\n" + "\n".join(f"  {t}" for t in tail)) if tail else "\n(no stderr output)"
        raise TargetError(text)


# -- spec parsing and the plugin ---------------------------------------------------------------

_KIND = re.compile(r"subprocess(?:\[(?P<opts>[^\]]*)\])?")
_OPTIONS = {"timeout": "timeout", "start_timeout": "start_timeout", "start-timeout": "start_timeout"}


def parse_spec(spec: str) -> tuple[list[str], dict[str, float]] | None:
    """`subprocess[timeout=S,start_timeout=S]:COMMAND LINE` -> (argv, options); None if not ours."""
    kind, sep, rest = spec.partition(":")
    m = _KIND.fullmatch(kind.strip())
    if m is None:
        return None
    options: dict[str, float] = {}
    for item in filter(None, (x.strip() for x in (m.group("opts") or "").split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if key not in _OPTIONS or not eq:
            raise ValueError(f"target '{spec}': unknown option '{item}'; known: timeout=SECONDS, "
                             "start_timeout=SECONDS")
        try:
            seconds = float(value)
        except ValueError:
            raise ValueError(f"target '{spec}': option {key} needs a number of seconds, not '{value}'") from None
        if not seconds > 0:
            raise ValueError(f"target '{spec}': option {key} must be > 0 seconds")
        options[_OPTIONS[key]] = seconds
    try:
        argv = shlex.split(rest)
    except ValueError as e:
        raise ValueError(f"target '{spec}': cannot split the command line: {e}") from None
    if not sep or not argv:
        raise ValueError(f"target '{spec}': expected subprocess:COMMAND LINE (e.g. 'subprocess:kfc target "
                         "serve --target reference')")
    return argv, options


@hookimpl
def kfc_make_target(spec: str) -> Target | None:
    parsed = parse_spec(spec)
    if parsed is None:
        return None
    argv, options = parsed
    return SubprocessTarget(argv, timeout=options.get("timeout", DEFAULT_TIMEOUT),
                            start_timeout=options.get("start_timeout", DEFAULT_START_TIMEOUT))


@hookimpl
def kfc_target_kinds() -> list[str]:
    return ["subprocess[timeout=S,start_timeout=S]:COMMAND LINE"]


__all__ = ["DEFAULT_START_TIMEOUT", "DEFAULT_TIMEOUT", "SubprocessTarget", "parse_spec"]
