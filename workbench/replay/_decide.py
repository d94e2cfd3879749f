"""Each distinct key decided once: the one grouping step of every replay.

A request's *key* is the vector of its slots' matches. Requests with the same
key get the same verdict, so a replay decides each distinct key once, with the
plan's own ``decide``, and joins the verdict back to its requests by index. The
in-memory backend gives its keys as a boolean matrix (one row per request); a
log backend gives only the distinct keys, as the text its engine grouped by
(``1``/``0`` per slot, :meth:`~._checks.CheckQuery.key`). Both come here, and
the verdicts are kept across chunks: a key met again is not decided again. New
keys are decided in the order of their bits, so verdict indexes do not depend on
the order of the requests within a chunk.

    >>> calls = []
    >>> def decide(matched):
    ...     calls.append(1)
    ...     return "block" if matched(0) else None
    >>> d = Decisions(decide)
    >>> d.index(np.array([[True, False], [False, False], [True, False]])).tolist()
    [1, 0, 1]
    >>> d.index_texts(["10", "01"]), d.verdicts, len(calls)
    ([1, 2], [None, 'block', None], 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


class Decisions:
    """The verdicts decided so far (:attr:`verdicts`), one per distinct key met."""

    def __init__(self, decide: Callable[[Callable[[int], bool]], Any]) -> None:
        #: The plan's ``decide``: given whether each slot matched, a verdict.
        self.decide = decide
        self.verdicts: list[Any] = []
        self._by_key: dict[bytes, int] = {}

    def index(self, matrix: np.ndarray) -> np.ndarray:
        """The verdict index of each row of ``matrix`` (requests x slots, bool)."""
        n, width = matrix.shape
        packed = np.packbits(matrix, axis=1) if width else np.zeros((n, 1), dtype=np.uint8)
        rows = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
        distinct, inverse = np.unique(rows, return_inverse=True)
        ids = np.empty(len(distinct), dtype=np.int64)
        by_key, decide = self._by_key, self.decide
        new = []
        for u, key in enumerate(distinct.tolist()):
            found = by_key.get(key)
            if found is None:
                new.append(u)
            else:
                ids[u] = found
        if new:
            # Unpacked in one call for every new key: a call per key cost more than deciding.
            unpacked = np.unpackbits(_as_bytes(distinct[new]), axis=1)[:, :width]
            for u, bits in zip(new, unpacked.astype(bool).tolist(), strict=True):
                ids[u] = by_key[distinct[u].tobytes()] = len(self.verdicts)
                self.verdicts.append(decide(bits.__getitem__))
        return ids[inverse.ravel()]

    def index_texts(self, keys: Sequence[str]) -> list[int]:
        """The verdict index of each key text (``1``/``0`` per slot, all of one length)."""
        width = len(keys[0]) if keys else 0
        matrix = np.array([[c == "1" for c in k] for k in keys], dtype=bool)
        return self.index(matrix.reshape(len(keys), width)).tolist()


def _as_bytes(rows: np.ndarray) -> np.ndarray:
    """Rows of a 1-D array of fixed-size void items as a 2-D uint8 array."""
    return np.frombuffer(rows.tobytes(), dtype=np.uint8).reshape(len(rows), rows.dtype.itemsize)
