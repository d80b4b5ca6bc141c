"""Fixture corpora and replay at scale: corpus I/O (corpus), the generator (generate), per-trace replay
(replay_core); the Spark job builds on these."""
