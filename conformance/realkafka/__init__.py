"""Real Apache Kafka: releases fetched from Maven Central (`releases`), clusters started from their
jars (`cluster`), Kafka's own classes as a target (`harness`), and a release's feature-versioning
tables dumped by its own classes (`dump`)."""
