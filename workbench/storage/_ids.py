"""Durable Object ids: 64 hex characters, and the name an id was made from, if any.

An id is a value the runtime, ``ctx`` and the storage host protocol all pass
around, so it lives on its own, below every module that uses it:

    >>> oid = ObjectId("ab" * 32, name="alice")
    >>> oid.toString()[:8], oid.name, oid == ObjectId("ab" * 32)
    ('abababab', 'alice', True)
"""

from __future__ import annotations

import re


class ObjectId:
    """A Durable Object id: 64 hex characters, with ``name`` for ids made from a name."""

    def __init__(self, hex_id: str, name: str | None = None) -> None:
        if not re.fullmatch(r"[0-9a-f]{64}", hex_id):
            raise ValueError(f"object id must be 64 lowercase hex characters, got {hex_id!r}")
        self._hex, self.name = hex_id, name

    def toString(self) -> str:  # noqa: N802
        return self._hex

    to_string = toString

    def equals(self, other: ObjectId) -> bool:
        return isinstance(other, ObjectId) and other._hex == self._hex

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectId) and other._hex == self._hex

    def __hash__(self) -> int:
        return hash(self._hex)

    def __str__(self) -> str:
        return self._hex

    def __repr__(self) -> str:
        return f"ObjectId({self._hex[:12]}…, name={self.name!r})"
