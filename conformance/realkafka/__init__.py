"""Real Apache Kafka: releases fetched from Maven Central (`releases`), clusters started from their
jars (`cluster`), and Kafka's own classes as a target (`harness`)."""
