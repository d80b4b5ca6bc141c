"""KIP-1312 over the wire: UnregisterController v0 (API key 94) in the codec (conformance/wire/kio_ext),
answered by `kfc serve-broker` where the node's release has it (4.4+) and sent by the kafka:// target
for `unregister` with role controller; the same outcomes as the in-process reference."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from kio.serial import entity_writer

from conformance.live.target import KafkaTarget
from conformance.serving.process import ServeBroker
from conformance.session import Session
from conformance.wire import codec

STALE = {"metadata.version": [7, 33], "share.version": [0, 1], "kraft.version": [0, 1], "group.version": [0, 1],
         "transaction.version": [0, 2], "eligible.leader.replicas.version": [0, 1], "streams.version": [0, 1]}


@pytest.fixture(scope="module")
def broker() -> Iterator[ServeBroker]:
    with ServeBroker("--profile", "kafka-4.4", "--nodes", "1") as sb:
        yield sb
        _, err = sb.stop()
        assert "Traceback" not in err, err[-3000:]


def test_the_codec_writes_unregister_controller_as_kafkas_json_defines_it() -> None:
    # UnregisterControllerRequest.json (4.4.0): ControllerId int32, flexible from v0 (empty tagged fields).
    schema = codec.request_schema(codec.UNREGISTER_CONTROLLER, 0)
    buf = io.BytesIO()
    entity_writer(schema)(buf, schema(controller_id=3007))
    assert buf.getvalue().hex() == "00000bbf" "00"
    # The response: ThrottleTimeMs, ErrorCode 136 (kio's ErrorCode lacks it), compact nullable ErrorMessage.
    resp = codec.error_response(codec.UNREGISTER_CONTROLLER, 0, 136, "x")
    out = io.BytesIO()
    entity_writer(codec.response_schema(codec.UNREGISTER_CONTROLLER, 0))(out, resp)
    assert out.getvalue().hex() == "00000000" "0088" "0278" "00"
    back, _ = codec.read_entity(codec.response_schema(codec.UNREGISTER_CONTROLLER, 0), out.getvalue(), 0)
    assert int(back.error_code) == 136 and codec.error_name(136) == "CONTROLLER_ID_NOT_REGISTERED"


SCENARIO: list[dict[str, Any]] = [
    {"op": "format", "release_version": "4.4-IV2", "features": {"share.version": 1}},
    {"op": "unregister", "role": "controller", "node": 3000},
    {"op": "unregister", "role": "controller", "node": 3007},
    {"op": "register", "role": "controller", "node": 3007, "ranges": STALE},
    {"op": "update_features", "updates": [{"feature": "share.version", "level": 2}]},
    {"op": "unregister", "role": "controller", "node": 3007},
    {"op": "unregister", "role": "controller", "node": 3007},
    {"op": "update_features", "updates": [{"feature": "share.version", "level": 2}]},
    {"op": "format", "release_version": "4.4-IV1"},
    {"op": "register", "role": "controller", "node": 3007},
    {"op": "unregister", "role": "controller", "node": 3007},
    {"op": "register", "node": 1},
]


def test_unregister_controller_over_the_wire_matches_the_reference(broker: ServeBroker) -> None:
    target = KafkaTarget(broker.spec("control=1&allow_register=1&timeout=5"))
    try:
        session = Session(target, "kafka-4.4", allure_steps=False)
        seen = [session.step(cmd) for cmd in SCENARIO]  # raises Divergence on any difference
        assert [o["error"] for o in seen if o["op"] == "unregister"] == [
            "INVALID_REQUEST", "CONTROLLER_ID_NOT_REGISTERED", "NONE", "CONTROLLER_ID_NOT_REGISTERED",
            "UNSUPPORTED_VERSION"]
        assert target.keys_of(target.address(3000))[codec.UNREGISTER_CONTROLLER] == (0, 0)
        assert codec.UNREGISTER_CONTROLLER in target.keys_of(target.address(1))  # a broker forwards it
    finally:
        target.close()


def test_a_release_before_4_4_does_not_advertise_it(broker: ServeBroker) -> None:
    target = KafkaTarget(broker.spec("control=1&allow_register=1&timeout=5"))
    try:
        session = Session(target, "kafka-4.3", allure_steps=False)
        session.step({"op": "format"})
        session.step({"op": "register", "role": "controller", "node": 3007})
        out = session.step({"op": "unregister", "role": "controller", "node": 3007})
        assert out["error"] == "UNSUPPORTED_VERSION"
        assert codec.UNREGISTER_CONTROLLER not in target.keys_of(target.address(3000))
    finally:
        target.close()
