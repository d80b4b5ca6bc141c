"""`python -m conformance.serving`: the reference over the Kafka protocol (as `kfc serve-broker`)."""

from .command import serve_broker_command

if __name__ == "__main__":
    serve_broker_command(prog_name="python -m conformance.serving")
