"""Serving the reference to clients: over the Kafka protocol (`broker`, started by `command`, spawned
on free ports by `process`) and over the JSON-lines target protocol (`jsonlines`).

`python -m conformance.serving [OPTIONS]` is `kfc serve-broker` (one option table, `command`); the
suite's child servers start that way, so no library shells out to the application.
"""
