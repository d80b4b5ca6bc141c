"""Kafka error codes used by the reference, and the two exception types of its public surface."""

from __future__ import annotations

# name -> wire code (org.apache.kafka.common.protocol.Errors)
ERROR_CODES: dict[str, int] = {
    "NONE": 0,
    "UNKNOWN_SERVER_ERROR": -1,
    "REQUEST_TIMED_OUT": 7,
    "NETWORK_EXCEPTION": 13,
    "CLUSTER_AUTHORIZATION_FAILED": 31,
    "UNSUPPORTED_VERSION": 35,
    "NOT_CONTROLLER": 41,
    "INVALID_REQUEST": 42,
    "STALE_BROKER_EPOCH": 77,
    "INVALID_UPDATE_VERSION": 95,
    "FEATURE_UPDATE_FAILED": 96,
    "DUPLICATE_BROKER_REGISTRATION": 101,
    "BROKER_ID_NOT_REGISTERED": 102,
    "INCONSISTENT_CLUSTER_ID": 104,
    "INVALID_REGISTRATION": 119,
    "REBOOTSTRAP_REQUIRED": 129,
    "CONTROLLER_ID_NOT_REGISTERED": 136,
}

# Outcomes of the command-line tools have no wire code: their error name is TOOL_ERROR and
# error_code is None.  INVALID_COMMAND marks a command the reference cannot interpret at all.
TOOL_ERROR = "TOOL_ERROR"
INVALID_COMMAND = "INVALID_COMMAND"


class InputError(ValueError):
    """Bad input from a user (unknown profile, malformed command): one clear line, exit 1."""


class KafkaError(Exception):
    """An error Kafka would return; carries the error name, message and the rule id behind it."""

    def __init__(self, error: str, message: str, rule: str):
        super().__init__(message)
        self.error = error
        self.message = message
        self.rule = rule


class ToolError(KafkaError):
    """An error a Kafka command-line tool prints (kafka-storage, kafka-features)."""

    def __init__(self, message: str, rule: str, lines: list[str] | None = None):
        super().__init__(TOOL_ERROR, message, rule)
        self.lines = lines or []  # what the tool printed on stdout before it failed
