"""Guards of the whole-table path: when a check's SQL may not be trusted for a row.

A decoding function's output may be bytes that are not UTF-8
(``url_decode("%c0%ae")``, ``decode_base64`` of arbitrary bytes), which DuckDB
text cannot hold. The SQL decoders therefore give the *Latin-1 view* of the
decoded bytes (:mod:`workbench.rules_language.sql_decode`), and every consumer
in :data:`VIEW_EXACT` reads a view as the per-request path reads the bytes:
comparisons, ``matches``, ``lower``, ``len``, ``concat`` and the like. A check
whose decoders feed only such consumers needs no guard.

A few functions read a view back as UTF-8 text (``split``, ``join``,
``coalesce``...). For a decoder whose output reaches one of those, a *guard* is
a Rules-language expression true where the SQL can be trusted: the decoded
bytes are ASCII (then the view is the text itself). The pipeline evaluates
guards in SQL next to the checks, and a check whose guard fails on a row is
evaluated per request, for that row only.

    >>> from workbench.rules_language import compile_expression
    >>> guards(compile_expression('lower(url_decode(http.request.uri, "r")) contains "/.."'))
    []
    >>> guards(compile_expression('split(url_decode(http.request.uri), "/", 2)[1] eq "a"'))
    ['not (url_decode(http.request.uri) matches "[\\\\x80-\\\\xff]")']
"""

from __future__ import annotations

from typing import Any

from ..rules_language import Expression
from ..rules_language.ast import Call, Compare, Index, walk

#: Functions whose output may be bytes that are not UTF-8.
DECODERS = ("url_decode", "decode_base64")

#: Functions whose SQL reads a byte-view argument exactly (see sql_calls): their output is
#: a view again, or a value that no longer depends on how the bytes were held.
VIEW_EXACT = frozenset(
    {
        *DECODERS,
        "lower",
        "upper",
        "len",
        "starts_with",
        "ends_with",
        "contains",
        "remove_bytes",
        "trim",
        "trim_start",
        "trim_end",
        "substring",
        "regex_replace",
        "wildcard_replace",
        "encode_base64",
        "lookup_json_string",
        "lookup_json_integer",
        "hash_in_range",
        "wildcard",
        "bit_slice",
        "sha256",
        "sha512",
        "hmac",
        "uuidv4",
        "is_timed_hmac_valid_v0",
    }
)

# Bytes outside ASCII: where none occur, a view is its text and every consumer is exact.
_NOT_ASCII = '"[\\x80-\\xff]"'


def guards(expr: Expression) -> list[str]:
    """Guard expressions (Rules language) for ``expr``; all must hold for its SQL to be trusted."""
    parents = _parents(expr.tree)
    out: list[str] = []
    source = expr.source
    for node in walk(expr.tree):
        if not isinstance(node, Call) or node.name not in DECODERS:
            continue
        if _exact_above(node, parents):
            continue
        call = source[node.start : node.end]
        if node.mapped or node.each:
            ascii_ = f"not any({call}[*] matches {_NOT_ASCII})"
        else:
            ascii_ = f"not ({call} matches {_NOT_ASCII})"
        if ascii_ not in out:
            out.append(ascii_)
    return out


def _parents(tree: Any) -> dict[int, Any]:
    """Each node's parent, by the node's id."""
    found: dict[int, Any] = {}
    for node in walk(tree):
        for child in _children(node):
            found[id(child)] = node
    return found


def _children(node: Any) -> list[Any]:
    if isinstance(node, Index):
        return [node.base]
    if isinstance(node, Call):
        return list(node.args)
    if isinstance(node, Compare):
        return [node.lhs, node.rhs]
    return []


def _exact_above(node: Any, parents: dict[int, Any]) -> bool:
    """True when every consumer from ``node`` up to a comparison reads a view exactly."""
    parent = parents.get(id(node))
    while parent is not None:
        if isinstance(parent, Compare):
            return True
        if isinstance(parent, Call):
            kind = parent.type.kind
            if parent.name == "concat" and kind == "Bytes":
                pass  # joined as views; concat of lists is not
            elif parent.name not in VIEW_EXACT:
                return False
            elif kind not in ("Bytes", "Array"):
                return True  # a number or a boolean: the bytes were read exactly
        elif not isinstance(parent, Index):
            return False
        parent = parents.get(id(parent))
    return True
