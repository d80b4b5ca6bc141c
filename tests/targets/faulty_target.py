"""A JSON-lines target (docs/target-protocol.md) with three kinds of fault, chosen by the command:
`negative-level-off-by-one` (a seeded mutant) for every command, except `state` (the process
crashes) and `version_mapping` (it answers an outcome without error_code and message)."""

from __future__ import annotations

import os
import sys
from typing import Any

from conformance.serving.jsonlines import serve
from conformance.targets import Target, make_target


class Faulty(Target):
    name = "faulty"

    def __init__(self) -> None:
        self.inner = make_target("mutant:negative-level-off-by-one")
        self.profile = self.inner.profile

    def reset(self, profile: str | None = None) -> None:
        self.inner.reset(profile)
        self.profile = self.inner.profile

    def apply(self, command: dict[str, Any]) -> dict[str, Any]:
        if command.get("op") == "state":
            os._exit(3)
        if command.get("op") == "version_mapping":
            return {"error": "NONE"}
        return self.inner.apply(command)


if __name__ == "__main__":
    sys.exit(serve(Faulty(), sys.stdin, sys.stdout))
