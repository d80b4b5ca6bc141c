"""Messages newer than kio 0.6.5 knows, written the way kio generates its own (one frozen dataclass
per message version, from Kafka's JSON message definitions), so the codec treats them alike.

- ApiVersions v5 (KIP-1242, Kafka 4.4.0's ApiVersionsRequest.json / ApiVersionsResponse.json): the
  request adds ClusterId (nullable string, default null) and NodeId (int32, default -1) after the
  v3 fields; the response body is v4's, answered at v5 (REBOOTSTRAP_REQUIRED is only a new code).
- UnregisterController v0 (KIP-1312, API key 94, Kafka 4.4.0's UnregisterControllerRequest.json /
  UnregisterControllerResponse.json, flexible from v0): the request is ControllerId (int32); the
  response ThrottleTimeMs, ErrorCode, ErrorMessage (nullable) -- UnregisterBroker's shapes.  Its
  error code is read and written as a plain int16: kio's ErrorCode lacks CONTROLLER_ID_NOT_REGISTERED (136).

Remove an entry once kio ships that version."""


from dataclasses import dataclass, field
from typing import Any, ClassVar  # no `from __future__ import annotations`: kio reads the field types

from kio.schema.api_versions.v4 import request as _av4_request
from kio.schema.api_versions.v4 import response as _av4_response
from kio.schema.request_header.v2.header import RequestHeader as _RequestHeaderV2
from kio.schema.response_header.v1.header import ResponseHeader as _ResponseHeaderV1
from kio.static.constants import EntityType
from kio.static.primitive import i16, i32, i32Timedelta


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiVersionsRequestV5(_av4_request.ApiVersionsRequest):
    __version__: ClassVar[i16] = i16(5)
    cluster_id: str | None = field(metadata={"kafka_type": "string"}, default=None)
    """The cluster ID the client intends to connect to."""
    node_id: i32 = field(metadata={"kafka_type": "int32"}, default=i32(-1))
    """The node ID the client intends to connect to."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiVersionsResponseV5(_av4_response.ApiVersionsResponse):
    __version__: ClassVar[i16] = i16(5)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterControllerRequest:
    __type__: ClassVar = EntityType.request
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = True
    __api_key__: ClassVar[i16] = i16(94)
    __header_schema__: ClassVar[type[_RequestHeaderV2]] = _RequestHeaderV2
    controller_id: i32 = field(metadata={"kafka_type": "int32"})
    """The controller ID to unregister."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterControllerResponse:
    __type__: ClassVar = EntityType.response
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = True
    __api_key__: ClassVar[i16] = i16(94)
    __header_schema__: ClassVar[type[_ResponseHeaderV1]] = _ResponseHeaderV1
    throttle_time: i32Timedelta = field(metadata={"kafka_type": "timedelta_i32"})
    """Duration in milliseconds for which the request was throttled due to a quota violation."""
    error_code: i16 = field(metadata={"kafka_type": "int16"})
    """The error code, or 0 if there was no error."""
    error_message: str | None = field(metadata={"kafka_type": "string"})
    """The top-level error message, or `null` if there was no top-level error."""


REQUESTS: dict[tuple[int, int], Any] = {(18, 5): ApiVersionsRequestV5, (94, 0): UnregisterControllerRequest}
RESPONSES: dict[tuple[int, int], Any] = {(18, 5): ApiVersionsResponseV5, (94, 0): UnregisterControllerResponse}
