"""The Kafka wire protocol for the suite: kio glue, framing, a blocking client and `kfc serve-broker`.

Only the length-prefix framing, the dispatch and our control extension are written here; every
Kafka message type and its serializer comes from kio (docs/wire.md)."""

from .client import NodeClient, WireError
from .codec import CONTROL_API_KEY

__all__ = ["CONTROL_API_KEY", "NodeClient", "WireError"]
