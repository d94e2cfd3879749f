"""``url_decode`` of a concatenation, decoded part by part.

The managed rulesets decode the same few fields joined in several ways
(``url_decode(concat(http.request.uri, "\\n", http.request.body.raw, "\\n",
http.cookie), "r")``, the same with the referer, with the User-Agent...): eight
concatenations of five fields, each decoded in full. A pass of ``url_decode``
reads escapes left to right, and an escape (``%XX``, ``%uXXXX``) is ``%``
followed only by hex digits or ``u``. A separator that holds neither ``%`` nor
``+``, and whose first character is neither a hex digit nor ``u``, is left as it
is by every pass and no escape can reach into it or across it, so each part
decodes on its own, recursive decoding included (a part that stops changing
stays unchanged while the others go on)::

    url_decode(concat(a, "\\n", b), o) == concat(url_decode(a, o), "\\n", url_decode(b, o))

:func:`split_decode` gives the parts of such a call (None where the rule does
not hold); the whole-table path then decodes each field once per row, as a
shared column, and joins the decoded parts, so a field without ``%`` is not
decoded at all, whatever the fields joined to it hold.

    >>> from workbench.rules_language import compile_expression
    >>> from workbench.rules_language.ast import Call, walk
    >>> e = compile_expression('url_decode(concat(http.request.uri, "\\n", http.cookie), "r") contains "x"')
    >>> call = next(n for n in walk(e.tree) if isinstance(n, Call) and n.name == "url_decode")
    >>> [type(p).__name__ for p in split_decode(call)]
    ['Call', 'Literal', 'Call']
    >>> bad = compile_expression('url_decode(concat(http.request.uri, "1", http.cookie)) contains "x"')
    >>> split_decode(next(n for n in walk(bad.tree) if isinstance(n, Call) and n.name == "url_decode"))
"""

from __future__ import annotations

import dataclasses

from ..rules_language.ast import Call, Literal, Node

# What may follow a part without letting an escape that starts in the part run on.
_ESCAPE_CHARS = frozenset(b"0123456789abcdefABCDEFuU")


def _separates(value: bytes) -> bool:
    """True when ``value`` between two parts keeps their escapes apart (see the docstring)."""
    return bool(value) and b"%" not in value and b"+" not in value and value[0] not in _ESCAPE_CHARS


def split_decode(node: Node) -> list[Node] | None:
    """The parts of ``url_decode(concat(...), o)`` as ``url_decode(part, o)`` calls and separators.

    None where the call is not a ``url_decode`` of a text ``concat``, or where its
    parts would not decode on their own (an integer part, two parts with no separator
    between them, a separator an escape could run into).
    """
    if not isinstance(node, Call) or node.name != "url_decode" or node.mapped or not node.args:
        return None
    joined = node.args[0]
    if not isinstance(joined, Call) or joined.name != "concat" or joined.mapped or joined.each:
        return None
    if joined.type.kind != "Bytes":
        return None
    out: list[Node] = []
    after_part = False
    for arg in joined.args:
        if arg.type.kind != "Bytes" or arg.each:
            return None
        if isinstance(arg, Literal):
            value = arg.value
            if not isinstance(value, bytes) or not value.isascii():
                return None
            if after_part and not _separates(value):
                return None
            if b"%" in value or b"+" in value:
                return None
            out.append(arg)
            after_part = False
            continue
        if after_part:
            return None  # two parts side by side: an escape could span them
        out.append(
            dataclasses.replace(node, args=[arg, *node.args[1:]], start=arg.start, end=arg.end)
        )
        after_part = True
    return out
