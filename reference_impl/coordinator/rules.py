"""KIP-915 rule ids (coordinator record loading).  Every error outcome of load_coordinator names one."""

from __future__ import annotations

RULES: dict[str, str] = {
    "KIP915-CODEC-01": "a key or value buffer must hold its 2-byte type/version prefix "
                       "(\"Could not read version from key's|value's buffer.\")",
    "KIP915-CODEC-02": "a record body must be readable in the layout of its version: no underflow, no length past "
                       "the buffer, no overlong varint, no string longer than 32767",
    "KIP915-CODEC-03": "a non-nullable string, bytes or array field cannot be serialized as null",
    "KIP915-LOAD-01": "a key type the loader does not know is skipped and counted, never fatal "
                      "(3.7-3.9 transaction loader: a batch with no known key never finishes loading)",
    "KIP915-LOAD-02": "unknown tagged fields of a flexible value are skipped by their declared size and counted; "
                      "a size past the end of the buffer fails the load",
    "KIP915-LOAD-03": "the Scala readers accept only the value versions they know "
                      "(OffsetCommitValue/GroupMetadataValue 0-4, TransactionLogValue 0-1): IllegalStateException; "
                      "from 4.3 the transaction loader logs and ignores a TransactionLogValue of an unknown version",
    "KIP915-LOAD-04": "the new group coordinator checks value versions only from 4.0 (KAFKA-18672: \"Found an unknown "
                      "record version V for T type\"); before 4.0 it reads them in the layout the generated code picks",
    "KIP915-LOAD-05": "a transaction status must be a known TransactionState id (0-7)",
    "KIP915-LOAD-06": "from 4.0 the ClientTransactionVersion tag must be a known transaction.version level (0-2)",
    "KIP915-LOAD-07": "a coordinator record must have a key",
    "KIP915-LOAD-08": "a transaction that is not Empty must carry its partition list (null gives NullPointerException)",
}
