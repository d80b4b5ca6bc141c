"""Messages newer than kio 0.6.5 knows, written the way kio generates its own (one frozen dataclass
per message version, from Kafka's JSON message definitions), so the codec treats them alike.

- ApiVersions v5 (KIP-1242, Kafka 4.4.0's ApiVersionsRequest.json / ApiVersionsResponse.json): the
  request adds ClusterId (nullable string, default null) and NodeId (int32, default -1) after the
  v3 fields; the response body is v4's, answered at v5 (REBOOTSTRAP_REQUIRED is only a new code).

Remove an entry once kio ships that version."""


from dataclasses import dataclass, field
from typing import Any, ClassVar  # no `from __future__ import annotations`: kio reads the field types

from kio.schema.api_versions.v4 import request as _av4_request
from kio.schema.api_versions.v4 import response as _av4_response
from kio.static.primitive import i16, i32


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


REQUESTS: dict[tuple[int, int], Any] = {(18, 5): ApiVersionsRequestV5}
RESPONSES: dict[tuple[int, int], Any] = {(18, 5): ApiVersionsResponseV5}
