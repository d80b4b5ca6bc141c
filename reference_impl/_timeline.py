"""Iteration order of org.apache.kafka.timeline.TimelineHashMap<Integer, ?>: the map the
controller keeps broker and controller registrations in (ClusterControlManager), and so the order
in which FeatureControlManager.reasonNotSupported meets them -- which node an error names.

Kafka's algorithm (server-common BaseHashTable / SnapshottableHashTable, the same from 3.7.0 to
4.2): a key's slot is the top log2(capacity) bits of (long) key * 0x9E3779B97F4A7C15; the table
starts at 2 slots and doubles before a put (a replacement too) when (size + 1) * 0.75 > capacity;
it never shrinks; iteration walks the slots upwards, the most recently inserted key of a slot first.
"""

from __future__ import annotations

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _slot(key: int, capacity: int) -> int:
    k = key & 0xFFFFFFFF
    k = k - (1 << 32) if k >= 1 << 31 else k  # an Integer's int value
    return ((k * _GOLDEN) & _MASK64) >> (65 - capacity.bit_length())


class TimelineOrder:
    """The keys of one TimelineHashMap, in its iteration order."""

    __slots__ = ("size", "slots")

    def __init__(self) -> None:
        self.slots: list[list[int]] = [[], []]
        self.size = 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimelineOrder) and self.slots == other.slots

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"TimelineOrder({list(self)}, capacity={len(self.slots)})"

    def copy(self) -> TimelineOrder:
        other = TimelineOrder()
        other.slots, other.size = [list(s) for s in self.slots], self.size
        return other

    def put(self, key: int) -> None:
        if (self.size + 1) * 0.75 > len(self.slots):
            old, self.slots = self.slots, [[] for _ in range(len(self.slots) * 2)]
            for chain in old:
                for k in chain:
                    self.slots[_slot(k, len(self.slots))].append(k)
        chain = self.slots[_slot(key, len(self.slots))]
        if key not in chain:
            chain.append(key)
            self.size += 1

    def remove(self, key: int) -> None:
        chain = self.slots[_slot(key, len(self.slots))]
        if key in chain:
            chain.remove(key)
            self.size -= 1

    def __iter__(self):  # type: ignore[no-untyped-def]
        for chain in self.slots:
            yield from reversed(chain)


def timeline_order(keys: list[int]) -> list[int]:
    """The iteration order after putting `keys` one by one into an empty map."""
    t = TimelineOrder()
    for k in keys:
        t.put(k)
    return list(t)
