"""Spark jobs only: the session and its preflight (session), job progress (progress), the corpus
replay (replay_job) and the corpus generator split by seed ranges (generate_job), plus a throw-away
standalone cluster for tests (cluster).  Everything Spark-free they build on lives in conformance."""
