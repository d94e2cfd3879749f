"""The SQL names the storage keeps for itself, compared the way SQLite compares names.

SQLite resolves names case-insensitively (ASCII letters only), whatever the
quoting (``"x"``, ``[x]``, `` `x` ``, ``'x'``) and with or without a schema
prefix. So a guard on hidden names must compare them the same way, or user SQL
can reach ``_cf_KV`` as ``_CF_KV``. :func:`is_hidden` is that guard: a name is
hidden when it starts with exactly ``_cf_`` (the platform's own rule, which is
case-sensitive: ``_CF_upper`` stays a legal user table, as observed) or when
SQLite would resolve it to one of the storage's own objects:

    >>> is_hidden("_cf_KV"), is_hidden("_CF_kv"), is_hidden("_cf_pitr")
    (True, True, True)
    >>> is_hidden("_CF_upper"), is_hidden("_CF_\\u212aV")   # a Kelvin sign is no K to SQLite
    (False, False)
"""

from __future__ import annotations

import string

KV_TABLE = "_cf_KV"
META_TABLE = "_cf_METADATA"
HIDDEN_TABLES = (KV_TABLE, META_TABLE)
RESERVED_PREFIX = "_cf_"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_RESERVED = frozenset(n.translate(_ASCII_LOWER) for n in HIDDEN_TABLES)


def fold(name: str) -> str:
    """``name`` as SQLite compares it: ASCII letters lower-cased, nothing else changed."""
    return name.translate(_ASCII_LOWER)


def quoted(name: str) -> str:
    """``name`` as a double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def is_reserved(name: str) -> bool:
    """True when SQLite would resolve ``name`` to a table or schema of the storage itself."""
    return fold(name) in _RESERVED


def is_hidden(name: str | None) -> bool:
    """True for a name user SQL may not create, read, write, alter or inspect."""
    if not name or name[0] != "_":  # every name kept for the storage starts with "_"
        return False
    return name.startswith(RESERVED_PREFIX) or fold(name) in _RESERVED
