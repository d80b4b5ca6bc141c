"""librdkafka's mock cluster as a process: `python -m tests.peers.rdkafka_mock [BROKERS]`.

It uses the librdkafka bundled in the confluent-kafka wheel through ctypes (rd_kafka_mock_cluster_new),
prints its bootstrap addresses as the first stdout line, and runs until SIGTERM/SIGINT or stdin closes.
A test peer, not part of the product."""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
from pathlib import Path


def library() -> ctypes.CDLL:
    import confluent_kafka

    libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka*.so*"))
    if not found:
        raise SystemExit(f"no librdkafka in {libs}")
    lib = ctypes.CDLL(str(found[0]))
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                      ctypes.c_size_t]
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_cluster_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    return lib


def main(argv: list[str]) -> int:
    brokers = int(argv[0]) if argv else 3
    lib = library()
    err = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    lib.rd_kafka_conf_set(conf, b"log_level", b"0", err, len(err))
    rk = lib.rd_kafka_new(0, conf, err, len(err))  # RD_KAFKA_PRODUCER
    if not rk:
        print(f"rd_kafka_new: {err.value.decode()}", file=sys.stderr)
        return 1
    mcluster = lib.rd_kafka_mock_cluster_new(rk, brokers)
    if not mcluster:
        lib.rd_kafka_destroy(rk)
        print("rd_kafka_mock_cluster_new failed", file=sys.stderr)
        return 1
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print(lib.rd_kafka_mock_cluster_bootstraps(mcluster).decode(), flush=True)
    done.wait()
    lib.rd_kafka_mock_cluster_destroy(mcluster)
    lib.rd_kafka_destroy(rk)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
