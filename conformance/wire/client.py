"""A small blocking Kafka-protocol client: one connection per node, one request in flight.

Every socket operation has a deadline, so a silent or trickling server cannot hang the suite; every
failure is a `WireError` that names the node and its address."""

from __future__ import annotations

import itertools
import select
import socket
import time
from dataclasses import dataclass
from typing import Any

from conformance.targets.errors import NotRun, TargetError

from . import codec
from .framing import MAX_FRAME, ConnectionClosed, FrameError, frame, recv_frame

_READ_ONLY = frozenset({codec.API_VERSIONS, codec.METADATA, codec.DESCRIBE_CLUSTER})


class WireError(TargetError):
    """The node could not be reached or answered something that is not a Kafka response."""


class BudgetExhausted(WireError, NotRun):
    """The run's request budget is spent: nothing more is sent."""


class Budget:
    """The run's request budget and rate limit (`?max_requests=`, `?rate=`), shared by every node."""

    def __init__(self, max_requests: int | None = None, rate: float | None = None):
        self.max_requests, self.rate = max_requests, rate
        self.spent = 0
        self._next = 0.0

    def spend(self, where: str, what: str) -> None:
        if self.max_requests is not None and self.spent >= self.max_requests:
            raise BudgetExhausted(f"{where}: {what} not sent: the request budget of {self.max_requests} is "
                                  "spent (max_requests=)")
        if self.rate:
            now = time.monotonic()
            if now < self._next:
                time.sleep(self._next - now)
            self._next = max(now, self._next) + 1.0 / self.rate
        self.spent += 1


@dataclass(frozen=True)
class Anomaly:
    """An answer that was not the message asked for: malformed (the request failed), trailing bytes
    or an ApiVersions version other than the one asked (the body read was kept)."""

    api_key: int
    version: int
    kind: str  # "malformed" | "trailing" | "version"
    text: str


class NodeClient:
    def __init__(self, host: str, port: int, label: str, *, timeout: float = 5.0, client_id: str = "kfc",
                 max_frame: int = MAX_FRAME, budget: Budget | None = None):
        self.host, self.port, self.label = host, port, label
        self.timeout, self.client_id, self.max_frame = timeout, client_id, max_frame
        self.budget = budget
        self.silent: str | None = None  # set when the node stopped answering: later requests fail at once
        self.anomalies: list[Anomaly] = []  # answers that were not the message asked for, in order
        self._sock: socket.socket | None = None
        self._ids = itertools.count(1)

    @property
    def where(self) -> str:
        return f"{self.label} ({self.host}:{self.port})"

    def _connect(self) -> socket.socket:
        if self._sock is not None and select.select([self._sock], [], [], 0)[0]:
            # Readable while idle: the server closed it (idle timeout, node stopped). Start afresh
            # rather than lose the next request to a dead socket.
            self.close()
        if self._sock is None:
            try:
                self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            except ConnectionRefusedError:
                raise WireError(f"{self.where}: connection refused") from None
            except TimeoutError:
                raise WireError(f"{self.where}: connect timed out after {self.timeout:g} s") from None
            except OSError as e:
                raise WireError(f"{self.where}: cannot connect: {e.strerror or e}") from None
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._sock

    def request(self, body: Any) -> Any:
        """Send a kio request payload and return the decoded response payload."""
        schema = type(body)
        corr = next(self._ids) & 0x7FFFFFFF
        what = f"{codec.API_NAMES.get(schema.__api_key__, schema.__api_key__)} v{schema.__version__}"
        data = codec.encode_request(body, corr, self.client_id)
        return self._roundtrip(data, schema.__api_key__, schema.__version__, corr, what)

    def control(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send one request of serve-broker's control extension (docs/wire.md)."""
        corr = next(self._ids) & 0x7FFFFFFF
        data = codec.encode_control_request(command, corr, self.client_id)
        reply: dict[str, Any] = self._roundtrip(data, codec.CONTROL_API_KEY, 0, corr,
                                                f"control {command.get('op')}")
        return reply

    def _roundtrip(self, data: bytes, api_key: int, version: int, corr: int, what: str) -> Any:
        if self.silent is not None:
            raise WireError(f"{self.where}: {what} not sent: the node stopped answering earlier ({self.silent})")
        if self.budget is not None:
            self.budget.spend(self.where, what)
        deadline = time.monotonic() + self.timeout
        try:
            reused = self._sock is not None
            try:
                raw = self._exchange(data, deadline)
            except (FrameError, ConnectionError) as e:
                # A server may close an idle connection just as a request goes out (no byte answered):
                # a read-only request is sent once more on a fresh connection, as Kafka clients do.
                unanswered = isinstance(e, ConnectionClosed) or not isinstance(e, FrameError)
                if not (reused and api_key in _READ_ONLY and unanswered):
                    raise
                self.close()
                raw = self._exchange(data, deadline)
            return codec.decode_response(raw, api_key, version, corr)
        except (codec.TrailingBytes, codec.WrongVersion) as e:
            # The body could be read: keep it, and keep what was wrong with it for the findings.
            kind = "trailing" if isinstance(e, codec.TrailingBytes) else "version"
            self.anomalies.append(Anomaly(api_key, version, kind, f"{what}: {e}"))
            if kind == "trailing":
                self.close()  # whatever followed may belong to no frame: start the next request afresh
            return e.body
        except WireError:
            self.close()
            raise
        except TimeoutError:
            self.close()
            # Bounded runs: a node that let one request time out is not waited for again.
            self.silent = f"no {what} response within {self.timeout:g} s"
            raise WireError(f"{self.where}: {self.silent}") from None
        except FrameError as e:
            self.close()
            raise WireError(f"{self.where}: {what}: {e}") from None
        except codec.CodecError as e:
            self.close()
            self.anomalies.append(Anomaly(api_key, version, "malformed", f"malformed {what} response: {e}"))
            raise WireError(f"{self.where}: malformed {what} response: {e}") from None
        except OSError as e:
            self.close()
            raise WireError(f"{self.where}: {what}: {e.strerror or e}") from None

    def _exchange(self, data: bytes, deadline: float) -> bytes:
        sock = self._connect()
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(frame(data))
        return recv_frame(sock, deadline, self.max_frame)

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
