"""A proxy in front of `kfc serve-broker` that bends its answers the way other servers do -- a test peer.

One listener per backend listener; Metadata and DescribeCluster answers are rewritten to name the
proxy's ports (so every later request goes through it too).  Faults (any combination):
  tags      an unknown tagged field (tag 9) in every flexible response body and flexible response header
  trailing  one extra 0x00 byte after every flexible Metadata answer (as librdkafka's mock does)
  v0-as-v3  ApiVersions v0 answered with a v3 body
  roles     DescribeCluster endpoint type 2 answered with the brokers (and the first one as the controller)
  no-mv     metadata.version left out of ApiVersions' finalized features
"""

from __future__ import annotations

import dataclasses
import socket
import struct
import threading
import time
from typing import Any, Self

from conformance.wire import codec
from conformance.wire.framing import FrameError, frame, recv_frame
from conformance.wire.tagged import _put_uvarint, _uvarint, _Walk

_PEEK = struct.Struct(">hhi")
TAG = 9
PAYLOAD = b"\x01\x02\x03"


def add_unknown_tag(schema: Any, body: bytes, header: bool = False) -> bytes:
    """`body` (one `schema` entity) with tagged field TAG appended to its top-level tagged section
    (`header`: a request header, whose client_id is a legacy string)."""
    w = _Walk(body, 0)
    for f in dataclasses.fields(schema):
        if f.metadata.get("tag") is None:
            w.field(f, True, header)
    count, after = _uvarint(body, w.pos)
    return body[:w.pos] + _put_uvarint(count + 1) + body[after:] + _put_uvarint(TAG) + _put_uvarint(len(PAYLOAD)) + PAYLOAD


def _brokers_for_controllers(req: bytes) -> bytes:
    """A DescribeCluster request for controllers (endpoint type 2) turned into one for brokers."""
    r = codec.decode_request(req)
    if getattr(r.body, "endpoint_type", 1) != 2:
        return req
    return codec.encode_request(dataclasses.replace(r.body, endpoint_type=1), r.correlation_id, r.client_id)


class WireProxy:
    def __init__(self, backends: dict[int, int], faults: set[str], host: str = "127.0.0.1"):
        self.faults, self.host = faults, host
        self.backend_of: dict[int, int] = {}  # proxy port -> backend port
        self.front_of: dict[int, int] = {}  # backend port -> proxy port
        self._servers: list[socket.socket] = []
        self._stop = threading.Event()
        for port in sorted(set(backends.values())):
            srv = socket.socket()
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind((host, 0))
            srv.listen(16)
            srv.settimeout(0.2)
            front = srv.getsockname()[1]
            self.backend_of[front], self.front_of[port] = port, front
            self._servers.append(srv)
            threading.Thread(target=self._accept, args=(srv, port), daemon=True).start()

    def front(self, backend_port: int) -> int:
        return self.front_of[backend_port]

    def _accept(self, srv: socket.socket, backend: int) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn, backend), daemon=True).start()

    def _serve(self, conn: socket.socket, backend: int) -> None:
        up: socket.socket | None = None
        try:
            while not self._stop.is_set():
                try:
                    req = recv_frame(conn, time.monotonic() + 3600)
                except (OSError, FrameError):
                    return  # the client went away
                api_key, version, corr = _PEEK.unpack_from(req)
                if "roles" in self.faults and api_key == codec.DESCRIBE_CLUSTER:
                    req = _brokers_for_controllers(req)
                for attempt in range(2):  # the server may have closed an idle connection: open a new one once
                    try:
                        if up is None:
                            up = socket.create_connection((self.host, backend), timeout=30)
                        up.sendall(frame(req))
                        raw = recv_frame(up, time.monotonic() + 30)
                        break
                    except (OSError, FrameError):
                        if up is not None:
                            up.close()
                        up = None
                        if attempt:
                            return
                conn.sendall(frame(self.bend(api_key, version, corr, raw)))
        except OSError:
            return
        finally:
            conn.close()
            if up is not None:
                up.close()

    def bend(self, api_key: int, version: int, corr: int, raw: bytes) -> bytes:
        try:
            body = codec.decode_response(raw, api_key, version, corr)
        except codec.CodecError:
            return raw
        if api_key == codec.METADATA or api_key == codec.DESCRIBE_CLUSTER and body.error_code == 0:
            body = dataclasses.replace(body, brokers=tuple(
                dataclasses.replace(b, port=self.front_of.get(int(b.port), int(b.port))) for b in body.brokers))
        elif api_key == codec.API_VERSIONS and version >= 3 and "no-mv" in self.faults:
            body = dataclasses.replace(body, finalized_features=tuple(
                f for f in body.finalized_features if f.name != "metadata.version"))
        if api_key == codec.API_VERSIONS and version == 0 and "v0-as-v3" in self.faults and body.error_code == 0:
            v3 = codec.response_schema(codec.API_VERSIONS, 3)
            key = codec.entity_type(v3, "api_keys")
            body = v3(error_code=body.error_code, throttle_time=body.throttle_time if hasattr(body, "throttle_time")
                      else __import__("datetime").timedelta(0),
                      api_keys=tuple(key(api_key=k.api_key, min_version=k.min_version, max_version=k.max_version)
                                     for k in body.api_keys))
        out = codec.encode_response(corr, body)
        schema = type(body)
        header_schema = schema.__header_schema__
        if "tags" in self.faults and schema.__flexible__:
            head = len(codec._write(header_schema, header_schema(correlation_id=corr)))
            header, rest = out[:head], out[head:]
            if header_schema.__flexible__:
                header = add_unknown_tag(header_schema, header)
            out = header + add_unknown_tag(schema, rest)
        if "trailing" in self.faults and api_key == codec.METADATA and schema.__flexible__:
            out += b"\x00"
        return out

    def close(self) -> None:
        self._stop.set()
        for s in self._servers:
            s.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
