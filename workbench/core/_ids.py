"""Seeded identifiers: the same seed always gives the same sequence.

>>> ids = IdGenerator(seed=0)
>>> len(ids.new_id()), ids.new_id() == IdGenerator(seed=0).new_id()
(32, False)
"""

from __future__ import annotations

import random
import string


class IdGenerator:
    """Makes 32-character lowercase hex ids (the v4 API's id shape) from a seed."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)

    def new_id(self) -> str:
        """A fresh 32-character lowercase hex id."""
        return f"{self._rng.getrandbits(128):032x}"

    def hex(self, length: int) -> str:
        """A fresh lowercase hex string of ``length`` characters."""
        return "".join(self._rng.choice("0123456789abcdef") for _ in range(length))

    def token(self, length: int) -> str:
        """A fresh token of letters, digits, ``-`` and ``_`` (API-token alphabet)."""
        alphabet = string.ascii_letters + string.digits + "-_"
        return "".join(self._rng.choice(alphabet) for _ in range(length))
