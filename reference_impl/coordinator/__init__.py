"""KIP-915: coordinator record codec, per-profile loaders of __consumer_offsets / __transaction_state,
a writer for newer software and the downgrade projection.  See docs/research/kip915-notes.md."""

from ._codec import JavaError, decode, encode
from ._loader import LoadResult, load, load_coordinator, profile_names, project
from ._writer import NewerWriter, encode_record, encode_records, load_command, sample_records
from .rules import RULES

__all__ = [
    "RULES", "JavaError", "LoadResult", "NewerWriter", "decode", "encode", "encode_record", "encode_records",
    "load", "load_command", "load_coordinator", "profile_names", "project", "sample_records",
]
