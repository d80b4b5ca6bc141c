"""Iteration order of a java.util.HashMap<String, ?>: 4.x controllers report the first failing
feature in this order, so a conformance check must reproduce it."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=4096)
def java_string_hash(s: str) -> int:
    h = 0
    data = s.encode("utf-16-be")  # Java hashes UTF-16 code units
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_order(keys: list[str]) -> list[str]:
    """Keys in the order a HashMap built by inserting them (default capacity) iterates them."""
    return list(_order(tuple(keys)))


@functools.lru_cache(maxsize=4096)
def _order(keys: tuple[str, ...]) -> tuple[str, ...]:
    cap = 16
    while len(keys) > cap * 0.75:
        cap *= 2
    buckets: dict[int, list[str]] = {}
    for k in dict.fromkeys(keys):  # a repeated key keeps its first position
        h = java_string_hash(k)
        spread = h ^ (h >> 16)
        buckets.setdefault(spread & (cap - 1), []).append(k)
    return tuple(k for b in sorted(buckets) for k in buckets[b])
