"""A SecRule target list (``ARGS|!REQUEST_COOKIES:/__utm/|&ARGS|XML:/*``) and how its parts select values.

:func:`parse_targets` splits the list into :class:`Target` entries;
:func:`excluded` applies a list's key exclusions the way libmodsecurity 3 does
(a named key ignoring ASCII case, a ``/regex/`` key searched caseless) and
:func:`count_label` names a count as the engine logs it.

    >>> [(t.name, t.key, t.negated, t.count) for t in parse_targets("ARGS|!ARGS:/^_/|&ARGS:id")]
    [('ARGS', None, False, False), ('ARGS', '/^_/', True, False), ('ARGS', 'id', False, True)]
    >>> excluded(b"__utma", parse_targets("!REQUEST_COOKIES:/__utm/"))
    True
    >>> count_label(Target("ARGS", "/^a/", count=True))
    'ARGS:regex(^a)'
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Target", "count_label", "excluded", "key_regex", "parse_targets"]


@dataclass(frozen=True)
class Target:
    """One entry of a rule's target list."""

    name: str
    key: str | None = None
    negated: bool = False
    count: bool = False
    #: A ``/regex/`` key (XML's XPath keys excepted).
    is_regex: bool = field(init=False, compare=False, repr=False)
    _hash: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        k = self.key
        regex = k is not None and self.name != "XML" and len(k) >= 2 and k[0] == k[-1] == "/"
        object.__setattr__(self, "is_regex", regex)
        # Target lists key the resolver's caches, hashed once per rule run: keep it cheap.
        object.__setattr__(self, "_hash", hash((self.name, self.key, self.negated, self.count)))

    def __hash__(self) -> int:
        return self._hash


def parse_targets(text: str) -> list[Target]:
    """Split a SecRule target list (``ARGS|!ARGS:/re/|&REQUEST_HEADERS:'/a|b/'|XML:/*``).

    Collection names are upper-cased (SecLang reads them in any case); a key
    follows ``:`` or ``.``, keeps its case and, for a regex, its slashes; a
    quoted key loses its quotes.
    """
    targets = []
    i, n = 0, len(text)
    while i < n:
        negated = count = False
        while i < n and text[i] in "!&":
            negated = negated or text[i] == "!"
            count = count or text[i] == "&"
            i += 1
        j = i
        while j < n and text[j] not in ":.|":
            j += 1
        name = text[i:j].strip().upper()
        key = None
        i = j
        if i < n and text[i] in ":.":  # ARGS.id is ARGS:id to SecLang
            i += 1
            if i < n and text[i] == "'":
                end = text.find("'", i + 1)
                end = n if end < 0 else end
                key = text[i + 1 : end]
                i = end + 1
            elif i < n and text[i] == "/" and name != "XML":
                # A regex may hold '|': it ends at the next "/|" or at the end.
                end = text.find("/|", i + 1)
                end = n - 1 if end < 0 else end
                key = text[i : end + 1]
                i = end + 1
            else:
                end = text.find("|", i)
                end = n if end < 0 else end
                key = text[i:end]
                i = end
        targets.append(Target(name, key, negated, count))
        if i < n and text[i] == "|":
            i += 1
    return targets


@functools.lru_cache(maxsize=512)
def key_regex(key: str) -> re.Pattern[bytes]:
    """A ``/regex/`` key compiled as ModSecurity compiles it: caseless, dot-all, multi-line."""
    return re.compile(key[1:-1].encode(), re.IGNORECASE | re.DOTALL | re.MULTILINE)


def count_label(t: Target) -> str:
    """How the engine names a count (``&ARGS:/^a/``): ``ARGS``, ``ARGS:id``, ``ARGS:regex(^a)``."""
    if t.key is None:
        return t.name
    return f"{t.name}:regex({t.key[1:-1]})" if t.is_regex else f"{t.name}:{t.key}"


def excluded(key: bytes, exclusions: Sequence[Target]) -> bool:
    """Whether a key exclusion (``!ARGS:id``, ``!ARGS:/^a/``) drops the value with this key.

    A named key compares ignoring ASCII case; a regex is searched, caseless.
    """
    for e in exclusions:
        if e.key is None:
            if not key:  # "!ARGS" excludes by the empty key name
                return True
        elif e.is_regex:
            if key_regex(e.key).search(key):
                return True
        elif key.upper() == e.key.encode("utf-8", "surrogateescape").upper():
            return True
    return False
