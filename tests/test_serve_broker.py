"""`kfc serve-broker` seen by real clients (kafka-python) and by garbage: a subprocess on loopback."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.serving.process import ServeBroker
from conformance.wire import codec
from conformance.wire.client import NodeClient
from reference_impl import Cluster

SERVE = [sys.executable, "-m", "kfc", "serve-broker"]


class Served(ServeBroker):
    def __init__(self, *args: str):
        super().__init__(*args)
        self.brokers = {int(k): v for k, v in self.info["brokers"].items()}
        self.controller_port = self.port(self.info["active_controller"])

    def client(self, node: int = 1, timeout: float = 5.0) -> NodeClient:
        port = self.controller_port if node >= 3000 else self.brokers[node]
        return NodeClient("127.0.0.1", port, f"node {node}", timeout=timeout)


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    s = Served("--profile", "kafka-4.2", "--nodes", "3", "--idle-timeout", "2")
    yield s
    code, err = s.stop()
    assert code == 0, err[-2000:]
    assert "Traceback" not in err, err[-3000:]


def _api_versions(version: int) -> Any:
    schema = codec.request_schema(codec.API_VERSIONS, version)
    return schema(client_software_name="kfc-test", client_software_version="1") if version >= 3 else schema()


def _reference() -> Cluster:
    ref = Cluster("kafka-4.2")
    ref.apply({"op": "format"})
    for n in (1, 2, 3):
        ref.apply({"op": "register", "node": n})
    return ref


def test_announces_ports_and_logs_each_request(served: Served) -> None:
    assert set(served.brokers) == {1, 2, 3}
    assert served.info["active_controller"] == 3000 and served.info["profile"] == "kafka-4.2"
    resp = served.client(2).request(_api_versions(4))
    assert resp.error_code == 0


def test_kafka_python_admin_agrees_with_reference(served: Served) -> None:
    from kafka.admin import KafkaAdminClient

    served.client(1).control({"op": "bootstrap"})  # the start-up state, whatever ran before
    ref = _reference()
    admin = KafkaAdminClient(bootstrap_servers=served.info["bootstrap"], request_timeout_ms=5000,
                             client_id="kfc-test")
    try:
        features = admin.describe_features()
        want = ref.apply({"op": "describe", "node": 1})
        assert {k: tuple(v) for k, v in want["supported"].items()} == {k: v["supported"] for k, v in features.items()}
        assert {k: (lv, lv) for k, lv in want["finalized"].items()} == {
            k: v["finalized"] for k, v in features.items() if "finalized" in v}
        assert {v.get("finalized_epoch") for v in features.values() if "finalized" in v} == {want["epoch"]}

        # validate_only changes nothing; the real update does, exactly as in the reference
        assert admin.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}, validate_only=True) == {
            "group.version": "OK"}
        assert admin.update_features({"group.version": ("SAFE_DOWNGRADE", 0)}) == {"group.version": "OK"}
        ref.apply({"op": "update_features", "updates": [
            {"feature": "group.version", "level": 0, "upgrade_type": "SAFE_DOWNGRADE"}]})
        after = admin.describe_features()
        want = ref.apply({"op": "describe", "node": 1})
        assert "finalized" not in after["group.version"]
        assert {k: v["finalized"][0] for k, v in after.items() if "finalized" in v} == want["finalized"]

        # a refused downgrade: kafka-python raises the controller's error (v2: top-level, fail-fast)
        from kafka.errors import KafkaError

        with pytest.raises(KafkaError) as info:
            admin.update_features({"metadata.version": 7})
        assert "INVALID_UPDATE_VERSION" in type(info.value).__name__.upper() or "95" in str(info.value) \
            or "InvalidUpdateVersion" in repr(info.value)
    finally:
        admin.close()


def test_per_node_api_versions_v3_vs_v4(served: Served) -> None:
    """kafka-python speaks ApiVersions v4; the v3 view (min-0 ranges left out) through our client."""
    from kafka.admin import KafkaAdminClient

    served.client(1).control({"op": "bootstrap"})
    ref = _reference()
    admin = KafkaAdminClient(bootstrap_servers=served.info["bootstrap"], request_timeout_ms=5000)
    try:
        seen = admin.describe_features()  # negotiated: v4, so min-0 ranges are listed
        assert seen["kraft.version"]["supported"] == (0, 1)
    finally:
        admin.close()
    for node in (1, 2, 3000):
        c = served.client(node)
        v4, v3 = c.request(_api_versions(4)), c.request(_api_versions(3))
        c.close()
        r4 = ref.apply({"op": "api_versions", "node": node, "version": 4})
        r3 = ref.apply({"op": "api_versions", "node": node, "version": 3})
        assert {f.name: [f.min_version, f.max_version] for f in v4.supported_features} == r4["supported"]
        assert {f.name: [f.min_version, f.max_version] for f in v3.supported_features} == r3["supported"]
        assert all(f.min_version != 0 for f in v3.supported_features)
        assert any(f.min_version == 0 for f in v4.supported_features)


def test_per_node_software_differs(served: Served) -> None:
    """A broker of an older release gets its own listener, ranges and ApiVersions maximum."""
    import uuid

    from reference_impl import load_profile

    ctl = served.client(3000)
    try:
        ctl.control({"op": "reset", "profile": "kafka-4.2"})
        assert ctl.control({"op": "format", "command": {"release_version": "3.8-IV0"}})["outcome"]["error"] == "NONE"
        ctl.control({"op": "expect_register", "role": "broker", "node": 7, "software": "kafka-3.8"})
        schema = codec.request_schema(codec.BROKER_REGISTRATION, 3)
        feat = schema.__dataclass_fields__["features"].type.__args__[0]
        sent = {k: v for k, v in load_profile("kafka-3.8").supported("broker").items() if v[0] != 0}
        resp = ctl.request(schema(
            broker_id=7, cluster_id=served.info["cluster_id"], incarnation_id=uuid.uuid4(), listeners=(),
            features=tuple(feat(name=k, min_supported_version=a, max_supported_version=b) for k, (a, b) in sent.items()),
            rack=None, is_migrating_zk_broker=False, log_dirs=(), previous_broker_epoch=-1))
        assert codec.error_name(resp.error_code) == "NONE"
        port = ctl.control({"op": "hello"})["brokers"]["7"]
        node7 = NodeClient("127.0.0.1", port, "node 7")
        v4 = node7.request(_api_versions(4))  # 3.8 speaks ApiVersions up to v3: a v0 refusal
        assert codec.error_name(v4.error_code) == "UNSUPPORTED_VERSION"
        assert {k.api_key: k.max_version for k in v4.api_keys}[codec.API_VERSIONS] == 3
        v3 = node7.request(_api_versions(3))
        assert {f.name: (f.min_version, f.max_version) for f in v3.supported_features} == sent
        node7.close()
    finally:
        ctl.control({"op": "bootstrap"})
        ctl.close()


def _raw_exchange(port: int, data: bytes, timeout: float = 3.0) -> bytes:
    """Send raw bytes; return what came back before the server closed (or b'' on a close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)  # a truncated frame then ends: the server sees EOF, never waits forever
        chunks = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        else:
            raise AssertionError("server kept the connection open past the timeout")
        return b"".join(chunks)


def _healthy(served: Served) -> None:
    c = served.client(1, timeout=5)
    try:
        assert c.request(_api_versions(3)).error_code == 0
    finally:
        c.close()


_header = st.builds(lambda k, v, c: struct.pack(">hhi", k, v, c), st.sampled_from([18, 3, 57, 60, 62, 64, 70, 0, 999,
                                                                                 codec.CONTROL_API_KEY]),
                    st.integers(-2, 20), st.integers(-(2**31), 2**31 - 1))


@st.composite
def _frames(draw: st.DrawFn) -> bytes:
    body = draw(st.binary(max_size=200))
    kind = draw(st.sampled_from(["framed", "framed-header", "truncated", "raw", "bad-length"]))
    if kind == "raw":
        return body
    if kind == "bad-length":
        return struct.pack(">i", draw(st.sampled_from([-1, 0, -(2**31), 2**31 - 1, (1 << 20) + 1]))) + body
    payload = draw(_header) + body if kind == "framed-header" else body
    framed = struct.pack(">i", len(payload)) + payload
    if kind == "truncated":
        return framed[: draw(st.integers(0, max(len(framed) - 1, 0)))]
    return framed


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          database=None)
@given(data=_frames())
def test_garbage_frames_get_an_error_or_a_close(served: Served, data: bytes) -> None:
    back = _raw_exchange(served.brokers[1], data)
    if back:
        # Whatever came back is whole Kafka frames (error responses), never half a frame.
        i = 0
        while i < len(back):
            (size,) = struct.unpack_from(">i", back, i)
            assert 0 < size <= len(back) - i - 4
            i += 4 + size
    assert served.proc.poll() is None, "serve-broker died"


def test_survives_garbage_then_answers(served: Served) -> None:
    for data in (b"\x00\x00\x00\x05hello", b"\xff" * 64, struct.pack(">i", 12) + struct.pack(">hhi", 57, 1, 9) + b"\x01\x02"):
        _raw_exchange(served.brokers[2], data)
    _healthy(served)


def test_parseable_garbage_gets_an_error_response(served: Served) -> None:
    # UpdateFeatures v1 header, then a body that is not one: INVALID_REQUEST for correlation id 77
    hdr = struct.pack(">hhi", 57, 1, 77) + struct.pack(">h", 3) + b"kfc" + b"\x00"
    back = _raw_exchange(served.brokers[1], struct.pack(">i", len(hdr) + 3) + hdr + b"\xff\xff\xff")
    assert back, "expected an error response"
    body = codec.decode_response(back[4:], 57, 1, 77)
    assert codec.error_name(body.error_code) == "INVALID_REQUEST"
    # an ApiVersions version this node cannot read: a v0 answer with UNSUPPORTED_VERSION (KIP-511)
    hdr = struct.pack(">hhi", 18, 9, 5) + struct.pack(">h", -1)
    back = _raw_exchange(served.brokers[1], struct.pack(">i", len(hdr)) + hdr)
    v0 = codec.decode_response(back[4:], 18, 0, 5)
    assert codec.error_name(v0.error_code) == "UNSUPPORTED_VERSION" and v0.api_keys
    _healthy(served)


def test_oversized_frame_is_closed(served: Served) -> None:
    back = _raw_exchange(served.brokers[1], struct.pack(">i", (1 << 20) + 1) + b"x" * 1000)
    assert back == b""
    _healthy(served)


def test_idle_connection_times_out(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.brokers[3]), timeout=10) as s:
        start = time.monotonic()
        assert s.recv(1) == b""  # served with --idle-timeout 2
        assert 1.5 < time.monotonic() - start < 8


def test_sigint_exits_cleanly() -> None:
    s = Served("--nodes", "1")
    s.proc.send_signal(2)
    s.proc.wait(timeout=20)  # let it shut down by itself: stop() would otherwise race it with SIGTERM
    code, err = s.stop()
    assert code == 0 and "Traceback" not in err


def test_bad_options_are_one_line_errors() -> None:
    out = subprocess.run([*SERVE, "--port", "0", "--profile", "kafka-0.1"], check=False, capture_output=True, text=True,
                         timeout=60, env={**os.environ})
    assert out.returncode != 0 and "Traceback" not in out.stderr and "kafka-0.1" in out.stderr
    out = subprocess.run([*SERVE, "--port", "0", "--release-version", "9.9-IV9"], check=False, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0 and "Traceback" not in out.stderr and "9.9-IV9" in out.stderr


def test_standalone_formats_a_dynamic_quorum_at_kraft_version_1() -> None:
    """--standalone: kafka-storage format --standalone (the state kraft.version downgrades need)."""
    from conformance.serving.broker import BrokerServer

    dynamic, static = BrokerServer("kafka-4.2", standalone=True), BrokerServer("kafka-4.2")
    dynamic.bootstrap()
    static.bootstrap()
    assert dynamic.cluster.finalized_view().get("kraft.version") == 1 and not dynamic.cluster.static_quorum
    assert "kraft.version" not in static.cluster.finalized_view() and static.cluster.static_quorum
