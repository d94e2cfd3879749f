"""Headers as a request gives them: ``(name, value)`` pairs of text, and their parts.

A :class:`~workbench.traffic.request.Request` takes headers as a mapping or as
pairs (repeated names); :func:`text_pairs` makes them pairs of text. Their
*parts* (names, values and lower-case names, in request order) are what every
header field reads; :func:`dict_parts` makes them straight from a dict of text
(the generators' form), whose names and values are at hand as the request is
built.

    >>> text_pairs({"Host": "a.example", "X": b"v"})
    [('Host', 'a.example'), ('X', 'v')]
    >>> dict_parts({"User-Agent": "ua", "X-\u00c9": "v"})
    (('User-Agent', 'X-\u00c9'), ('ua', 'v'), ['user-agent', 'x-\u00c9'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .textvalues import as_text, ascii_lower

Headers = Mapping[str, Any] | Iterable[tuple[Any, Any]] | None
#: Header names, values and lower-case names (ASCII letters only), in request order.
HeaderParts = tuple[tuple[str, ...], tuple[str, ...], list[str]]
_NUL = "\x00"


def lower_names(names: tuple[str, ...], joined: str | None = None) -> list[str]:
    """Header names in lower case (ASCII letters only); ``joined``: them joined with NUL
    (made here when not given).

    Lowering all names in one string and splitting it back avoids a call per name;
    the split only lines up when no name holds the NUL they were joined with.
    """
    if joined is None:
        joined = _NUL.join(names)
    keys = (joined.lower() if joined.isascii() else ascii_lower(joined)).split(_NUL)
    if len(keys) != len(names):
        keys = [ascii_lower(n) for n in names]
    return keys


def dict_parts(headers: dict[Any, Any]) -> HeaderParts | None:
    """A dict's header parts (see ``Request._header_parts``), or None unless every name
    and value is text (two joins in C check that: they raise TypeError otherwise)."""
    if not headers:
        return (), (), []
    names, values = tuple(headers), tuple(headers.values())
    try:
        joined = _NUL.join(names)
        "".join(values)
    except TypeError:
        return None
    return names, values, lower_names(names, joined)


def text_pairs(headers: Headers) -> list[tuple[str, str]]:
    """Headers as ``(name, value)`` pairs of text, in request order (a dict of text, the
    common case, goes through :func:`dict_parts` first and never reaches here)."""
    items = headers.items() if isinstance(headers, Mapping) else (headers or ())
    return [
        (k, v) if type(k) is str and type(v) is str else (as_text(k), as_text(v)) for k, v in items
    ]
