"""Test peers: Kafka-compatible processes the live tests start as their users start them."""
