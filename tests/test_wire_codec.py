"""The codec on bytes other servers send: unknown tagged fields are skipped on both sides (KIP-482),
a malformed answer names the byte where it stops being the message, a trailing byte keeps the body,
and an ApiVersions v0 request answered with a v3 body is told apart (KIP-511)."""

from __future__ import annotations

import dataclasses
import datetime

import pytest
from kio.schema.errors import ErrorCode

from conformance.wire import codec
from conformance.wire.tagged import strip_unknown_tags
from tests.peers.wire_proxy import TAG, add_unknown_tag


def _api_versions(version: int) -> object:
    schema = codec.response_schema(codec.API_VERSIONS, version)
    key = codec.entity_type(schema, "api_keys")
    fields = {"error_code": ErrorCode.none, "throttle_time": datetime.timedelta(0),
              "api_keys": (key(api_key=18, min_version=0, max_version=4), key(api_key=57, min_version=0, max_version=2))}
    if version >= 3:
        sup = codec.entity_type(schema, "supported_features")
        fields.update(supported_features=(sup(name="group.version", min_version=0, max_version=1),),
                      finalized_features_epoch=7, finalized_features=())
    names = {f.name for f in dataclasses.fields(schema)}
    return schema(**{k: v for k, v in fields.items() if k in names})


def test_unknown_tagged_fields_in_an_answer_are_skipped() -> None:
    body = _api_versions(4)
    raw = codec.encode_response(5, body)
    bent = raw[:4] + add_unknown_tag(type(body), raw[4:])
    assert bent != raw and strip_unknown_tags(type(body), bent, 4).skipped == [TAG]
    assert codec.decode_response(bent, codec.API_VERSIONS, 4, 5) == body


def test_unknown_tagged_fields_in_a_request_are_skipped_by_the_server() -> None:
    schema = codec.request_schema(codec.UPDATE_FEATURES, 1)
    key = codec.entity_type(schema, "feature_updates")
    body = schema(timeout=datetime.timedelta(seconds=5), validate_only=True,
                  feature_updates=(key(feature="group.version", max_version_level=1, upgrade_type=1),))
    raw = codec.encode_request(body, 9, "kfc")
    header_len = len(raw) - len(codec._write(schema, body))
    bent = add_unknown_tag(schema.__header_schema__, raw[:header_len], header=True) + add_unknown_tag(schema, raw[header_len:])
    req = codec.decode_request(bent)
    assert (req.api_key, req.correlation_id, req.client_id, req.body) == (codec.UPDATE_FEATURES, 9, "kfc", body)


def test_a_malformed_answer_names_the_byte() -> None:
    raw = codec.encode_response(5, _api_versions(4))
    cut = raw[:-3]
    with pytest.raises(codec.CodecError, match=r"at byte \d+") as e:
        codec.decode_response(cut, codec.API_VERSIONS, 4, 5)
    assert "malformed" not in str(e.value)  # the client says "malformed … response" once, not twice


def test_a_trailing_byte_keeps_the_body() -> None:
    body = _api_versions(3)
    raw = codec.encode_response(5, body) + b"\x00"
    with pytest.raises(codec.TrailingBytes, match=rf"1 trailing byte\(s\) at byte {len(raw) - 1}") as e:
        codec.decode_response(raw, codec.API_VERSIONS, 3, 5)
    assert e.value.body == body


def test_api_versions_v0_answered_in_v3_is_told_apart() -> None:
    raw = codec.encode_response(5, _api_versions(3))
    with pytest.raises(codec.WrongVersion, match="ApiVersions v0 answered with a flexible") as e:
        codec.decode_response(raw, codec.API_VERSIONS, 0, 5)
    assert [int(k.api_key) for k in e.value.body.api_keys] == [18, 57]
    assert codec.decode_response(codec.encode_response(5, _api_versions(0)), codec.API_VERSIONS, 0, 5) == _api_versions(0)
