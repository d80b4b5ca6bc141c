"""The Kafka wire protocol for the suite: kio glue (codec), framing, a blocking client, the
`kafka://` target and the `kfc serve-broker` server.

Only the length-prefix framing, the dispatch and our control extension are written here; every
Kafka message type and its serializer comes from kio (docs/wire.md).  Nothing is imported here:
kio is heavy (it imports hypothesis), so only what uses the wire loads it.
"""
