"""Glue over kio: request/response headers and bodies for any (api key, version) kio knows.

Header versions come from kio's schemas (`__header_schema__`): flexible requests use request
header v2, the others v1; flexible responses use response header v1, except ApiVersions, whose
response always uses header v0 (KIP-511) so a client can read it before it knows the version.
Our control extension (serve-broker only) is the one message kio cannot know: header v1 + JSON.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import struct
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from kio.index import KioIndexError, load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.request_header.v1.header import RequestHeader as RequestHeaderV1
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import SerialError
from kio.static.primitive import i16, i32

from . import kio_ext
from .tagged import WalkError, strip_unknown_tags

API_VERSIONS, METADATA, UPDATE_FEATURES, DESCRIBE_CLUSTER = 18, 3, 57, 60
BROKER_REGISTRATION, UNREGISTER_BROKER, CONTROLLER_REGISTRATION = 62, 64, 70
UNREGISTER_CONTROLLER = 94  # KIP-1312, 4.4+ (kio_ext)
DESCRIBE_QUORUM = 55
DESCRIBE_CONFIGS = 32
# Ours, not Kafka's: far above every assigned key, answered only by `kfc serve-broker`.
CONTROL_API_KEY = 32100

API_NAMES = {
    API_VERSIONS: "ApiVersions", METADATA: "Metadata", UPDATE_FEATURES: "UpdateFeatures",
    DESCRIBE_CLUSTER: "DescribeCluster", BROKER_REGISTRATION: "BrokerRegistration",
    UNREGISTER_BROKER: "UnregisterBroker", CONTROLLER_REGISTRATION: "ControllerRegistration",
    UNREGISTER_CONTROLLER: "UnregisterController",
    DESCRIBE_QUORUM: "DescribeQuorum", DESCRIBE_CONFIGS: "DescribeConfigs",
    CONTROL_API_KEY: "KfcControl",
}
_PEEK = struct.Struct(">hhi")


class CodecError(Exception):
    """Bytes that are not the message they should be."""


@dataclass
class Request:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any  # a kio payload entity, or a dict for the control extension


class TrailingBytes(CodecError):
    """A readable response followed by bytes that belong to no field: the body is kept."""

    def __init__(self, body: Any, reason: str):
        super().__init__(reason)
        self.body = body


class WrongVersion(CodecError):
    """An ApiVersions v0 request answered with a flexible (v3+) body: the body is kept (KIP-511 says v0)."""

    def __init__(self, body: Any, reason: str):
        super().__init__(reason)
        self.body = body


_READ_ERRORS = (SerialError, ValueError, TypeError, OverflowError, MemoryError, struct.error, KeyError, IndexError)


def read_entity(schema: Any, data: bytes, pos: int, header: bool = False) -> tuple[Any, int]:
    """(entity, bytes read) of `schema` at data[pos]; tagged fields the schema does not know are
    skipped (KIP-482).  CodecError, naming the byte where the bytes stop being that entity."""
    try:
        entity, n = entity_reader(schema)(data, pos)
        return entity, int(n)
    except _READ_ERRORS as e:
        first = e
    try:
        stripped = strip_unknown_tags(schema, data, pos, header)
    except WalkError as w:
        raise CodecError(f"{w} ({type(first).__name__}: {first})") from None
    try:
        entity, _ = entity_reader(schema)(stripped.data, 0)
    except _READ_ERRORS as e:
        raise CodecError(f"{type(e).__name__}: {e}") from None
    return entity, stripped.end - pos


class BadRequest(CodecError):
    """The header was readable (so an error response can be addressed) but the request was not."""

    def __init__(self, api_key: int, api_version: int, correlation_id: int, reason: str, known: bool):
        super().__init__(reason)
        self.api_key, self.api_version, self.correlation_id, self.known = api_key, api_version, correlation_id, known


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name.upper()
    except ValueError:
        from reference_impl import ERROR_CODES  # codes newer than kio's ErrorCode (136: 4.4's KIP-1312)

        return next((name for name, c in ERROR_CODES.items() if c == code), f"UNKNOWN_ERROR_{code}")


def error_code(name: str) -> int:
    from reference_impl import ERROR_CODES

    if name in ERROR_CODES:
        return ERROR_CODES[name]
    try:
        return int(ErrorCode[name.lower()])
    except KeyError:
        return int(ErrorCode.unknown_server_error)


def request_schema(api_key: int, version: int) -> Any:
    try:
        return load_request_schema(api_key, version)
    except (KioIndexError, ImportError, ValueError, AttributeError):
        return kio_ext.REQUESTS.get((api_key, version))


def response_schema(api_key: int, version: int) -> Any:
    try:
        return load_response_schema(api_key, version)
    except (KioIndexError, ImportError, ValueError, AttributeError):
        return kio_ext.RESPONSES.get((api_key, version))


def _write(entity_type: Any, value: Any) -> bytes:
    buf = io.BytesIO()
    entity_writer(entity_type)(buf, value)
    return buf.getvalue()


# -- requests -------------------------------------------------------------------------------------

def encode_request(body: Any, correlation_id: int, client_id: str | None) -> bytes:
    schema = type(body)
    header = schema.__header_schema__(request_api_key=schema.__api_key__, request_api_version=schema.__version__,
                                      correlation_id=i32(correlation_id), client_id=client_id)
    return _write(schema.__header_schema__, header) + _write(schema, body)


def encode_control_request(command: dict[str, Any], correlation_id: int, client_id: str | None) -> bytes:
    header = RequestHeaderV1(request_api_key=i16(CONTROL_API_KEY), request_api_version=i16(0),
                             correlation_id=i32(correlation_id), client_id=client_id)
    return _write(RequestHeaderV1, header) + json.dumps(command).encode()


def decode_request(data: bytes) -> Request:
    """A whole request frame.  CodecError: not even a header; BadRequest: header but no request."""
    if len(data) < _PEEK.size:
        raise CodecError(f"{len(data)}-byte frame is shorter than a request header")
    api_key, version, corr = _PEEK.unpack_from(data)
    if api_key == CONTROL_API_KEY:
        header, n = _read_header(RequestHeaderV1, data, api_key, version, corr)
        try:
            command = json.loads(data[n:].decode())
        except (UnicodeDecodeError, ValueError) as e:
            raise BadRequest(api_key, version, corr, f"control body is not JSON: {e}", True) from None
        if not isinstance(command, dict):
            raise BadRequest(api_key, version, corr, "control body is not a JSON object", True)
        return Request(api_key, version, corr, header.client_id, command)
    schema = request_schema(api_key, version)
    if schema is None:
        # Unknown to kio: the v1 header's fields still come first, so the id is readable.
        raise BadRequest(api_key, version, corr, f"unknown api key {api_key} version {version}", False)
    header, n = _read_header(schema.__header_schema__, data, api_key, version, corr)
    try:
        body, m = read_entity(schema, data, n)
    except CodecError as e:
        raise BadRequest(api_key, version, corr, f"malformed {API_NAMES.get(api_key, api_key)} v{version} "
                         f"body: {e}", True) from None
    if n + m != len(data):
        raise BadRequest(api_key, version, corr, f"{len(data) - n - m} trailing byte(s) after the request", True)
    return Request(api_key, version, corr, header.client_id, body)


def _read_header(schema: Any, data: bytes, api_key: int, version: int, corr: int) -> tuple[Any, int]:
    try:
        header, n = read_entity(schema, data, 0, header=True)
    except CodecError as e:
        raise BadRequest(api_key, version, corr, f"malformed request header: {e}", False) from None
    return header, n


# -- responses ------------------------------------------------------------------------------------

def encode_response(correlation_id: int, body: Any) -> bytes:
    header_schema = type(body).__header_schema__
    return _write(header_schema, header_schema(correlation_id=correlation_id)) + _write(type(body), body)


def encode_control_response(correlation_id: int, reply: dict[str, Any]) -> bytes:
    return _write(ResponseHeaderV0, ResponseHeaderV0(correlation_id=i32(correlation_id))) + json.dumps(reply).encode()


def decode_response(data: bytes, api_key: int, version: int, correlation_id: int) -> Any:
    """The body of the response to (api_key, version); CodecError for anything else."""
    if api_key == CONTROL_API_KEY:
        n = _check_header(ResponseHeaderV0, data, correlation_id)
        try:
            reply = json.loads(data[n:].decode())
        except (UnicodeDecodeError, ValueError) as e:
            raise CodecError(f"control reply is not JSON: {e}") from None
        if not isinstance(reply, dict):
            raise CodecError("control reply is not a JSON object")
        return reply
    schema = response_schema(api_key, version)
    if schema is None:
        raise CodecError(f"kio has no {API_NAMES.get(api_key, api_key)} v{version} response")
    n = _check_header(schema.__header_schema__, data, correlation_id)
    if api_key == API_VERSIONS and version > 0 and data[n:n + 2] == struct.pack(">h", ErrorCode.unsupported_version):
        schema = response_schema(API_VERSIONS, 0)  # KIP-511: an unsupported version is answered in v0
    try:
        body, m = read_entity(schema, data, n)
    except CodecError as e:
        if api_key == API_VERSIONS and version < 3:
            _answered_flexible(data, n, version, str(e))
        raise
    if n + m != len(data):
        if api_key == API_VERSIONS and version < 3:
            _answered_flexible(data, n, version, "")
        raise TrailingBytes(body, f"{len(data) - n - m} trailing byte(s) at byte {n + m} after the response "
                            f"({len(data)} bytes)")
    return body


def _answered_flexible(data: bytes, n: int, version: int, why: str) -> None:
    """A v0-v2 ApiVersions answer that does not read as asked but reads whole as v3 (a server that
    answers every ApiVersions in its newest version): WrongVersion carrying that body."""
    flexible = response_schema(API_VERSIONS, 3)
    try:
        body, m = read_entity(flexible, data, n)
    except CodecError:
        return
    if n + m == len(data) and body.api_keys:
        raise WrongVersion(body, f"ApiVersions v{version} answered with a flexible (v3+) body"
                           + (f" (as v{version}: {why})" if why else ""))


def _check_header(schema: Any, data: bytes, correlation_id: int) -> int:
    try:
        header, n = read_entity(schema, data, 0)
    except CodecError as e:
        raise CodecError(f"response header: {e}") from None
    if header.correlation_id != correlation_id:
        raise CodecError(f"correlation id {header.correlation_id} in a response to request {correlation_id}")
    return int(n)


# -- generic error responses ------------------------------------------------------------------------

def error_response(api_key: int, version: int, code: int, message: str | None) -> Any:
    """The (api_key, version) response carrying only an error, or None when that response has no
    top-level error code (Metadata) or kio does not know it: the caller then closes the connection."""
    schema = response_schema(api_key, version)
    if schema is None:
        return None
    names = {f.name for f in dataclasses.fields(schema)}
    if "error_code" not in names:
        return None
    values: dict[str, Any] = {}
    for f in dataclasses.fields(schema):
        if f.name == "error_code":
            # kio_ext's messages carry a plain int16 (codes kio's ErrorCode lacks)
            values[f.name] = ErrorCode(code) if f.metadata.get("kafka_type") == "error_code" else i16(code)
        elif f.name == "error_message":
            values[f.name] = message
        elif f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        else:
            values[f.name] = _blank(f)
    return schema(**values)


def _blank(f: dataclasses.Field[Any]) -> Any:
    kind = f.metadata.get("kafka_type")
    if get_origin(f.type) is tuple or kind is None:
        return ()
    if kind.startswith("timedelta"):
        return datetime.timedelta(0)
    if kind == "bool":
        return False
    if kind in ("string", "bytes", "records"):
        return None if type(None) in get_args(f.type) else ""
    if kind == "uuid":
        return None
    return -1  # ints: Kafka's "unknown" (broker epoch, controller id)


def entity_type(schema: Any, name: str) -> Any:
    """The kio entity type of a tuple field (entities are generated per version)."""
    for f in dataclasses.fields(schema):
        if f.name == name:
            return get_args(f.type)[0]
    raise KeyError(name)
