"""Kafka's framing: every request and response is a 4-byte big-endian length, then that many bytes.

The only hand-written layer of the wire package (kio has the message types, not the transport)."""

from __future__ import annotations

import asyncio
import socket
import struct
import time

MAX_FRAME = 1 << 20  # 1 MiB: far above any feature-API message, small enough that garbage cannot exhaust memory
_LEN = struct.Struct(">i")


class FrameError(Exception):
    """The peer sent a length we refuse (negative, zero or above the limit) or closed mid-frame."""


class ConnectionClosed(FrameError):
    """The peer closed the connection while we waited for bytes of its answer."""


def frame(payload: bytes) -> bytes:
    return _LEN.pack(len(payload)) + payload


def check_length(size: int, limit: int = MAX_FRAME) -> None:
    # A zero-length frame cannot even hold a request header: refuse it like an oversized one.
    if size <= 0 or size > limit:
        raise FrameError(f"frame length {size} outside 1..{limit}")


async def read_frame(reader: asyncio.StreamReader, limit: int = MAX_FRAME) -> bytes | None:
    """One frame's payload, or None on a clean EOF between frames."""
    try:
        head = await reader.readexactly(4)
    except asyncio.IncompleteReadError as e:
        if not e.partial:
            return None
        raise FrameError("connection closed inside a frame length") from None
    (size,) = _LEN.unpack(head)
    check_length(size, limit)
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise FrameError(f"connection closed inside a {size}-byte frame") from None


def recv_exactly(sock: socket.socket, n: int, deadline: float) -> bytes:
    """Blocking read of exactly n bytes before `deadline` (time.monotonic()): a server that
    trickles bytes cannot stretch one request past its timeout."""
    chunks = []
    while n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        sock.settimeout(left)
        chunk = sock.recv(min(n, 65536))
        if not chunk:
            raise ConnectionClosed("connection closed by the server")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket, deadline: float, limit: int = MAX_FRAME) -> bytes:
    (size,) = _LEN.unpack(recv_exactly(sock, 4, deadline))
    check_length(size, limit)
    return recv_exactly(sock, size, deadline)
