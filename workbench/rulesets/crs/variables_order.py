"""The order in which libmodsecurity 3 lists a collection's values (ARGS, REQUEST_HEADERS, FILES...).

libmodsecurity keeps each request collection in a C++ ``unordered_multimap``
whose hash is the sum of the key's lower-cased bytes and whose key equality
ignores ASCII case. A whole-collection target (``ARGS``, ``ARGS:/re/``)
walks the table's node list and reverses it; a key target (``ARGS:q``)
returns the equal keys newest first. The node list's order is libstdc++'s:
prime bucket counts (11 to start, because the collection reserves 10),
new keys at the front of their bucket, a new bucket at the front of the
list, and a rehash when the table fills. :class:`Collection` replays those
insertions so the values come out in the engine's order, which decides
MATCHED_VAR and so what a rule logs.

    >>> c = Collection()
    >>> for k, v in [(b"x", b"1"), (b"y", b"A b"), (b"x", b"2"), (b"", b""), (b"z", b""), (b"", b"q")]:
    ...     c.add(k, v)
    >>> [k for k, _ in c.items()]
    [b'x', b'x', b'y', b'', b'', b'z']
    >>> c.get(b"X")
    [(b'x', b'2'), (b'x', b'1')]
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable

__all__ = ["Collection", "key_hash"]

# libstdc++'s table of bucket counts (bits/hashtable-aux.cc), as far as any
# request could need; lookups start at its seventh entry, as libstdc++'s do.
_PRIMES = (
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79,
    83, 89, 97, 103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227,
    241, 257, 277, 293, 313, 337, 359, 383, 409, 439, 467, 503, 541, 577, 619, 661, 709,
    761, 823, 887, 953, 1031, 1109, 1193, 1289, 1381, 1493, 1613, 1741, 1879, 2029, 2179,
    2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087, 5503, 5953, 6427,
    6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173, 16411, 17749,
    19183, 20753, 22447, 24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043, 45481,
    49201, 53201, 57557, 62233, 67307, 72817, 78779, 85229, 92203, 99733, 107897, 116731,
    126271, 136607, 147793, 159871, 172933, 187091, 202409, 218971, 236897, 256279,
    277261, 299951, 324503, 351061, 379787, 410857, 444487, 480881, 520241, 562841,
    608903, 658753, 712697, 771049, 834181, 902483, 976369, 1056323, 1142821, 1236397,
    1337629, 1447153, 1565659, 1693859, 1832561, 1982627, 2144977, 2320627, 2510653,
    2716249, 2938679, 3179303, 3439651, 3721303, 4026031, 4355707, 4712381, 5098259,
    5515729, 5967347, 6456007, 6984629, 7556579, 8175383, 8844859, 9569143, 10352717,
    11200489, 12117689, 13109983, 14183539, 15345007, 16601593, 17961079, 19431899,
)  # fmt: skip
_FAST = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
_SIZE_T = (1 << 64) - 1


def key_hash(key: bytes) -> int:
    """ModSecurity's key hash: the sum of ``tolower(c)`` over the key's chars.

    The chars are signed, and glibc's ``tolower`` maps -128..-2 to 128..254 but
    leaves -1 (EOF, the byte 0xFF) alone; so the sum is over the unsigned,
    ASCII-lower-cased bytes, with 256 less for each 0xFF, as a size_t
    (checked against libmodsecurity with non-ASCII keys).
    """
    h = sum(key.lower())
    if 0xFF in key:
        h = (h - 256 * key.count(0xFF)) & _SIZE_T
    return h


def _next_bucket_count(n: int) -> tuple[int, int]:
    """libstdc++'s ``_M_next_bkt``: a bucket count of at least ``n`` and the size that triggers a rehash."""
    if n < len(_FAST):
        count = _FAST[n]
        return count, count
    i = bisect.bisect_left(_PRIMES, n, 6)
    count = _PRIMES[min(i, len(_PRIMES) - 1)]
    return count, count


class Collection:
    """One request collection: values added in the engine's order, listed in the engine's order."""

    __slots__ = ("_keys", "_values", "_order")

    def __init__(self) -> None:
        self._keys: list[bytes] = []
        self._values: list[bytes] = []
        self._order: list[int] | None = None

    def add(self, key: bytes, value: bytes) -> None:
        """Insert one value (``emplace``)."""
        self._keys.append(key)
        self._values.append(value)
        self._order = None

    def extend(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        """Insert several values in order."""
        for k, v in pairs:
            self.add(k, v)

    def __len__(self) -> int:
        return len(self._keys)

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every value in the order a whole-collection target lists them."""
        if self._order is None:
            self._order = _reversed_node_order(self._keys)
        keys, values = self._keys, self._values
        return [(keys[i], values[i]) for i in self._order]

    def get(self, key: bytes) -> list[tuple[bytes, bytes]]:
        """The values whose key equals ``key`` ignoring ASCII case, newest first (``equal_range``)."""
        low = key.lower()
        keys, values = self._keys, self._values
        return [
            (keys[i], values[i]) for i in range(len(keys) - 1, -1, -1) if keys[i].lower() == low
        ]

    def first(self, key: bytes) -> bytes | None:
        """The value ``find(key)`` returns: the newest with that key."""
        low = key.lower()
        for i in range(len(self._keys) - 1, -1, -1):
            if self._keys[i].lower() == low:
                return self._values[i]
        return None

    def matching(self, pattern: re.Pattern[bytes]) -> list[tuple[bytes, bytes]]:
        """The values whose key the (case-insensitive) regex finds, in whole-collection order."""
        return [(k, v) for k, v in self.items() if pattern.search(k)]


def _reversed_node_order(keys: list[bytes]) -> list[int]:
    """Indexes of ``keys`` in reverse node-list order after inserting them one by one."""
    n = len(keys)
    if n <= 1:
        return list(range(n))
    hashes = [key_hash(k) for k in keys]
    lows = [k.lower() for k in keys]
    if n <= 11:
        return _small_order(hashes, lows)
    # A singly linked list of nodes 0..n-1 behind a sentinel (index n).
    head = n
    nxt = [-1] * (n + 1)
    buckets: list[int] = [-1] * 11  # for each bucket, the node before its first node
    count = 11
    next_resize = 11
    size = 0
    for node in range(n):
        if size + 1 > next_resize:
            wanted = float(size + 1)  # max load factor 1.0
            if wanted >= count:
                count, next_resize = _next_bucket_count(max(math.floor(wanted) + 1, count * 2))
                buckets = _rehash(nxt, head, hashes, count)
            else:
                next_resize = count
        b = hashes[node] % count
        prev = _before_equal(nxt, buckets, hashes, lows, b, count, lows[node])
        if prev >= 0:
            nxt[node] = nxt[prev]
            nxt[prev] = node
        elif buckets[b] >= 0:
            before = buckets[b]
            nxt[node] = nxt[before]
            nxt[before] = node
        else:
            first = nxt[head]
            nxt[node] = first
            nxt[head] = node
            if first >= 0:
                buckets[hashes[first] % count] = node
            buckets[b] = head
        size += 1
    order = []
    p = nxt[head]
    while p >= 0:
        order.append(p)
        p = nxt[p]
    order.reverse()
    return order


def _small_order(hashes: list[int], lows: list[bytes]) -> list[int]:
    """The same order for at most 11 keys (no rehash), kept as a plain list.

    A bucket's nodes are contiguous in the list, so "after the node before the
    bucket" is "before the bucket's first node", and likewise for equal keys.
    """
    buckets = [h % 11 for h in hashes]
    order: list[int] = []
    for node in range(len(hashes)):
        b = buckets[node]
        low = lows[node]
        at = -1
        for i, other in enumerate(order):
            if buckets[other] == b:
                if at < 0:
                    at = i  # the bucket's first node
                if lows[other] == low:
                    at = i
                    break
            elif at >= 0:
                break  # past the bucket
        order.insert(at if at >= 0 else 0, node)
    order.reverse()
    return order


def _before_equal(
    nxt: list[int],
    buckets: list[int],
    hashes: list[int],
    lows: list[bytes],
    b: int,
    count: int,
    low: bytes,
) -> int:
    """The node before the first node of bucket ``b`` equal to ``low``, or -1 (``_M_find_before_node``)."""
    prev = buckets[b]
    if prev < 0:
        return -1
    p = nxt[prev]
    while True:
        if lows[p] == low:
            return prev
        q = nxt[p]
        if q < 0 or hashes[q] % count != b:
            return -1
        prev = p
        p = q


def _rehash(nxt: list[int], head: int, hashes: list[int], count: int) -> list[int]:
    """Relink the nodes into ``count`` buckets keeping equal runs in order (the multimap rehash)."""
    buckets = [-1] * count
    p = nxt[head]
    nxt[head] = -1
    begin_bucket = 0
    prev_node = -1
    prev_bucket = 0
    check = False
    while p >= 0:
        following = nxt[p]
        b = hashes[p] % count
        if prev_node >= 0 and prev_bucket == b:
            # Right after the previous node: equal keys stay in their order.
            nxt[p] = nxt[prev_node]
            nxt[prev_node] = p
            check = True
        else:
            if check:
                after = nxt[prev_node]
                if after >= 0:
                    nb = hashes[after] % count
                    if nb != prev_bucket:
                        buckets[nb] = prev_node
                check = False
            if buckets[b] < 0:
                nxt[p] = nxt[head]
                nxt[head] = p
                buckets[b] = head
                if nxt[p] >= 0:
                    buckets[begin_bucket] = p
                begin_bucket = b
            else:
                before = buckets[b]
                nxt[p] = nxt[before]
                nxt[before] = p
        prev_node = p
        prev_bucket = b
        p = following
    if check and prev_node >= 0:
        after = nxt[prev_node]
        if after >= 0:
            nb = hashes[after] % count
            if nb != prev_bucket:
                buckets[nb] = prev_node
    return buckets
