"""Writing HCL for Terraform: string escapes, values, and provider 4 or 5 bodies.

A body is a list of ``(name, value)`` pairs. :func:`render_body` writes it
the way provider 5 wants (every nested object an attribute: ``x = { ... }``,
``x = [ { ... } ]``) or the way provider 4 wants (a nested object is a block
``x { ... }``, a list of objects is a repeated block). A :class:`Map` is a
map attribute in both: its keys are data (ruleset ids), always quoted.

    >>> hcl_string('http.host eq "a" and ${x}')
    '"http.host eq \\\\"a\\\\" and $${x}"'
    >>> hcl_value(hcl_string('say "hi" \\\\ ${x} %{y}\\n'))
    'say "hi" \\\\ ${x} %{y}\\n'
    >>> print(render_body([("id", "abc"), ("overrides", {"enabled": False})], blocks=True))
    id = "abc"
    overrides {
      enabled = false
    }
    >>> print(render_body([("id", "abc"), ("overrides", {"enabled": False})], blocks=False))
    id = "abc"
    overrides = {
      enabled = false
    }
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

INDENT = "  "
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_SIMPLE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


class Map(dict[str, Any]):
    """A map attribute whose keys are data (ruleset ids): quoted, never a block."""


def hcl_string(text: str) -> str:
    """``text`` as a quoted HCL string literal.

    Besides quotes, backslashes and control characters, HCL reads ``${`` and
    ``%{`` inside any quoted string as the start of a template, so an
    expression such as ``http.request.uri.path eq "/${x}"`` must be written
    with ``$${`` (and ``%%{``) to come back unchanged.
    """
    out: list[str] = []
    for ch in text:
        if ch in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[ch])
        elif unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            # Other line breaks and controls would end or corrupt the line.
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return f'"{_escape_templates("".join(out))}"'


def _escape_templates(text: str) -> str:
    """``${`` as ``$${`` and ``%{`` as ``%%{``, the HCL escapes.

    python-hcl2 reads ``$${`` only up to a closing ``}``; an unclosed one
    (rare in an expression) is written ``\\u0024{`` instead, which Terraform
    reads as the same two characters and python-hcl2 can parse.
    """
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] in "$%" and text.startswith("{", i + 1):
            closed = "}" in text[i + 2 :]
            out.append(text[i] * 2 + "{" if closed else f"\\u{ord(text[i]):04x}{{")
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def hcl_value(raw: Any) -> Any:
    """The value of a string as python-hcl2 returns it, quotes and escapes resolved.

    python-hcl2 8 keeps strings in their source form (``'"a\\\\"b"'``); older
    releases gave the bare value. Anything not quoted is returned as is.
    """
    if not (isinstance(raw, str) and len(raw) >= 2 and raw[0] == raw[-1] == '"'):
        return raw
    body, out, i = raw[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _UNESCAPES:
                out.append(_UNESCAPES[nxt])
                i += 2
                continue
            width = {"u": 4, "U": 8}.get(nxt)
            if width is not None:
                out.append(chr(int(body[i + 2 : i + 2 + width], 16)))
                i += 2 + width
                continue
        if body.startswith("$${", i) or body.startswith("%%{", i):
            out.append(ch + "{")
            i += 3
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _key(name: str, force_quotes: bool = False) -> str:
    return name if _IDENTIFIER.fullmatch(name) and not force_quotes else hcl_string(name)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int in Python
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return hcl_string(value)
    raise TypeError(f"no HCL form for {type(value).__name__}")


def _is_object_list(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, dict) for v in value)


def render_value(value: Any, depth: int, *, blocks: bool) -> str:
    """``value`` as an HCL expression whose continuation lines sit at ``depth``."""
    pad, inner = INDENT * depth, INDENT * (depth + 1)
    if isinstance(value, Map):
        if not value:
            return "{}"
        items = [
            f"{inner}{_key(k, True)} = {render_value(v, depth + 1, blocks=blocks)}"
            for k, v in value.items()
        ]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{\n" + _body_lines(value.items(), depth + 1, blocks=blocks) + f"\n{pad}}}"
    if isinstance(value, list):
        if not _is_object_list(value):
            return "[" + ", ".join(render_value(v, depth, blocks=blocks) for v in value) + "]"
        items = [f"{inner}{render_value(v, depth + 1, blocks=blocks)}," for v in value]
        return "[\n" + "\n".join(items) + f"\n{pad}]"
    return _scalar(value)


def _body_lines(pairs: Iterable[tuple[str, Any]], depth: int, *, blocks: bool) -> str:
    """Attributes and blocks of one body, ``=`` aligned the way ``terraform fmt`` does."""
    pad = INDENT * depth
    out: list[str] = []
    group: list[tuple[str, str]] = []  # consecutive one-line attributes, aligned together

    def flush() -> None:
        width = max((len(k) for k, _ in group), default=0)
        out.extend(f"{pad}{k.ljust(width)} = {v}" for k, v in group)
        group.clear()

    for name, value in pairs:
        if value is None:
            continue
        key = _key(name)
        as_block = blocks and not isinstance(value, Map)
        if as_block and isinstance(value, dict):
            flush()
            out.append(f"{pad}{key} {render_value(value, depth, blocks=blocks)}")
            continue
        if as_block and _is_object_list(value):
            flush()
            out.extend(f"{pad}{key} {render_value(v, depth, blocks=blocks)}" for v in value)
            continue
        text = render_value(value, depth, blocks=blocks)
        if "\n" in text:
            flush()  # terraform fmt does not align a multi-line value with its neighbours
            out.append(f"{pad}{key} = {text}")
        else:
            group.append((key, text))
    flush()
    return "\n".join(out)


def render_body(pairs: Iterable[tuple[str, Any]], depth: int = 0, *, blocks: bool) -> str:
    """A body's lines at ``depth``; ``blocks=True`` for provider 4's nested blocks."""
    return _body_lines(pairs, depth, blocks=blocks)


def render_block(header: str, pairs: Iterable[tuple[str, Any]], *, blocks: bool) -> str:
    """A top-level block such as ``resource "a" "b" { ... }``."""
    body = render_body(pairs, 1, blocks=blocks)
    return f"{header} {{\n{body}\n}}\n" if body else f"{header} {{\n}}\n"
