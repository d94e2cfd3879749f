"""Stored values as JSON, and JSON text back into values, for tools that show and edit storage.

A tool shows a key's value in the same form it accepts as input: JSON. Plain
JSON covers null, booleans, numbers, strings, arrays and objects with string
keys; every other structured-clone value is written as a *tagged* object, one
whose first key starts with ``$``:

================================  ===============================================
Python value (platform type)      JSON form
================================  ===============================================
``bytes`` (ArrayBuffer)           ``{"$bytes": "<base64>"}``
``bytearray`` (Uint8Array)        ``{"$bytearray": "<base64>"}``
``datetime`` (Date)               ``{"$datetime": "2024-05-01T00:00:00+00:00"}``
``date``                          ``{"$date": "2024-05-01"}``
``set`` (Set)                     ``{"$set": [...]}`` (items sorted, so stable)
``frozenset``                     ``{"$frozenset": [...]}``
``tuple``                         ``{"$tuple": [...]}``
``dict`` with non-str keys, or a  ``{"$map": [[key, value], ...]}``
key starting with ``$`` (Map)
NaN, Infinity, -Infinity          ``{"$float": "NaN"}`` (and so on)
``re.Pattern`` (RegExp)           ``{"$regexp": "a+b", "flags": "i"}``
an exception (Error)              ``{"$error": "ValueError", "message": "..."}``
a cycle back to a container       ``{"$ref": "#/json/pointer"}`` (shown, not accepted)
================================  ===============================================

    >>> from datetime import date
    >>> dumps({"n": [1, 2], "raw": b"hi", "tags": {"b", "a"}, "day": date(2026, 1, 1)})
    '{"n": [1, 2], "raw": {"$bytes": "aGk="}, "tags": {"$set": ["a", "b"]}, "day": {"$date": "2026-01-01"}}'
    >>> loads('{"raw": {"$bytes": "aGk="}, "tags": {"$set": ["a"]}}')
    {'raw': b'hi', 'tags': {'a'}}

Bad input raises :class:`JsonInputError`, whose message names the field, the
line and column and what was expected (never a Python exception text), and
whose ``detail`` shows the line with a caret under the spot:

    >>> try:
    ...     loads('{"a": 1 "b": 2}', field="value (JSON)")
    ... except JsonInputError as err:
    ...     print(err)
    ...     print(err.detail)
    value (JSON), line 1, column 9: expected ',' or '}' (the object opened at line 1, column 1 is not closed)
    {"a": 1 "b": 2}
            ^
"""

from __future__ import annotations

import base64
import binascii
import builtins
import json
import math
import re
from datetime import date, datetime
from typing import Any

from workbench.core.errors import ValidationError

__all__ = ["JsonInputError", "dumps", "loads", "to_json", "from_json", "sql_cell"]

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "a": re.ASCII}
_TAGS = (
    "$bytes",
    "$bytearray",
    "$datetime",
    "$date",
    "$set",
    "$frozenset",
    "$tuple",
    "$map",
    "$float",
    "$regexp",
    "$error",
    "$ref",
)
_EXTRA = {"$regexp": {"flags"}, "$error": {"message"}}
_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class JsonInputError(ValidationError, ValueError):
    """JSON text that cannot be read as a value: ``str(err)`` says where and why, ``detail`` shows it."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


# -- values to JSON -------------------------------------------------------------------
def to_json(value: Any) -> Any:
    """A JSON-compatible copy of ``value`` with the tags above (no NaN, no bytes, no sets)."""
    return _to_json(value, "", {})


def _to_json(value: Any, where: str, ancestors: dict[int, str]) -> Any:  # noqa: C901 - one case per type
    if value is None or isinstance(value, bool | str):
        return str(value) if isinstance(value, str) else value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return {"$float": "NaN"}
        if math.isinf(value):
            return {"$float": "Infinity" if value > 0 else "-Infinity"}
        return float(value)
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, bytearray | memoryview):
        return {"$bytearray": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, re.Pattern):
        letters = "".join(k for k, f in _FLAGS.items() if value.flags & f)
        return {"$regexp": str(value.pattern), **({"flags": letters} if letters else {})}
    if isinstance(value, BaseException):
        return {"$error": type(value).__name__, "message": str(value)}
    if id(value) in ancestors:
        return {"$ref": "#" + ancestors[id(value)]}
    if not isinstance(value, list | tuple | dict | set | frozenset):
        return {"$error": "TypeError", "message": f"{type(value).__name__} has no JSON form"}
    ancestors[id(value)] = where
    try:
        if isinstance(value, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in value):
                return {
                    k: _to_json(v, f"{where}/{_escape(k)}", ancestors) for k, v in value.items()
                }
            return {
                "$map": [
                    [_to_json(k, f"{where}/$map/{i}/0", ancestors),
                     _to_json(v, f"{where}/$map/{i}/1", ancestors)]
                    for i, (k, v) in enumerate(value.items())
                ]
            }  # fmt: skip
        if isinstance(value, list):
            return [_to_json(v, f"{where}/{i}", ancestors) for i, v in enumerate(value)]
        tag = "$tuple" if isinstance(value, tuple) else "$set"
        if isinstance(value, frozenset):
            tag = "$frozenset"
        items = [_to_json(v, f"{where}/{tag}/{i}", ancestors) for i, v in enumerate(value)]
        if tag != "$tuple":
            items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return {tag: items}
    finally:
        del ancestors[id(value)]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def dumps(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON text (tagged where JSON has no form; non-ASCII kept as is).

    Text that cannot be encoded as UTF-8 (a lone surrogate) is written with
    ``\\u`` escapes instead, so the result can always be shown.
    """
    data = to_json(value)
    text = json.dumps(data, ensure_ascii=False, indent=indent, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, ensure_ascii=True, indent=indent, allow_nan=False)
    return text


def sql_cell(value: Any) -> str:
    """A SQL value as a table cell: NULL, numbers and text as they are, blobs as ``X'..'``."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "X'" + value.hex().upper() + "'"
    return str(value)


# -- JSON text to values ----------------------------------------------------------------
def loads(text: str, field: str = "value (JSON)") -> Any:
    """The value written as JSON ``text`` (tags above understood), or :class:`JsonInputError`."""
    if not text.strip():
        raise JsonInputError(
            f'{field} is empty: type a JSON value, for example "text", 42, '
            '{"a": 1}, [1, 2] or null'
        )
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise _syntax_error(text, err, field) from None
    except _Refused as err:
        raise JsonInputError(f"{field}: {err}") from None
    return from_json(data, field)


class _Refused(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f"the key {json.dumps(key)} appears twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise _Refused(f'{name} is not JSON: write {{"$float": "{name}"}}')


def from_json(data: Any, field: str = "value (JSON)", where: str = "") -> Any:
    """The value a parsed JSON document stands for (tags turned back into their types)."""
    if isinstance(data, list):
        return [from_json(v, field, f"{where}/{i}") for i, v in enumerate(data)]
    if not isinstance(data, dict):
        return data
    tags = [k for k in data if k.startswith("$")]
    if not tags:
        return {k: from_json(v, field, f"{where}/{_escape(k)}") for k, v in data.items()}
    tag = tags[0]
    place = f"{field} at {where}" if where else field

    def bad(why: str) -> JsonInputError:
        return JsonInputError(f"{place}: {why}")

    if tag not in _TAGS:
        return _raise(
            bad(
                f'unknown tag "{tag}" (keys starting with "$" mark tagged values: '
                + ", ".join(_TAGS[:-1])
                + '); to store such a key, write {"$map": [["'
                + tag
                + '", value]]}'
            )
        )
    extra = set(data) - {tag} - _EXTRA.get(tag, set())
    if extra:
        return _raise(bad(f"{tag} takes no other keys, found {', '.join(sorted(extra))}"))
    arg = data[tag]
    inner = f"{where}/{_escape(tag)}"
    if tag in ("$bytes", "$bytearray"):
        if not isinstance(arg, str):
            return _raise(bad(f"{tag} takes a base64 string"))
        try:
            raw = base64.b64decode(arg, validate=True)
        except (binascii.Error, ValueError):
            return _raise(bad(f"{tag} takes a base64 string; {json.dumps(arg)} is not base64"))
        return raw if tag == "$bytes" else bytearray(raw)
    if tag in ("$datetime", "$date"):
        kind = datetime if tag == "$datetime" else date
        example = "2026-01-01T00:00:00+00:00" if tag == "$datetime" else "2026-01-01"
        try:
            if not isinstance(arg, str):
                raise ValueError
            return kind.fromisoformat(arg)
        except ValueError:
            return _raise(bad(f"{tag} takes an ISO 8601 string such as {json.dumps(example)}"))
    if tag in ("$set", "$frozenset", "$tuple"):
        if not isinstance(arg, list):
            return _raise(bad(f"{tag} takes an array of items"))
        items = [from_json(v, field, f"{inner}/{i}") for i, v in enumerate(arg)]
        if tag == "$tuple":
            return tuple(items)
        try:
            return set(items) if tag == "$set" else frozenset(items)
        except TypeError:
            return _raise(bad(f"{tag} items must be hashable (no arrays, objects or sets)"))
    if tag == "$map":
        if not isinstance(arg, list) or not all(isinstance(p, list) and len(p) == 2 for p in arg):
            return _raise(bad("$map takes an array of [key, value] pairs"))
        out: dict[Any, Any] = {}
        for i, (k, v) in enumerate(arg):
            key = from_json(k, field, f"{inner}/{i}/0")
            try:
                out[key] = from_json(v, field, f"{inner}/{i}/1")
            except TypeError:
                return _raise(bad(f"$map key {i + 1} cannot be a key (arrays and objects cannot)"))
        return out
    if tag == "$float":
        if arg not in _SPECIAL_FLOATS:
            return _raise(bad('$float takes "NaN", "Infinity" or "-Infinity"'))
        return _SPECIAL_FLOATS[arg]
    if tag == "$regexp":
        flags_text = data.get("flags", "")
        if not isinstance(arg, str) or not isinstance(flags_text, str):
            return _raise(bad('$regexp takes a pattern string and optional "flags" letters'))
        unknown = set(flags_text) - set(_FLAGS)
        if unknown:
            return _raise(bad(f"$regexp flags are letters of {''.join(_FLAGS)}"))
        flags = 0
        for letter in flags_text:
            flags |= _FLAGS[letter]
        try:
            return re.compile(arg, flags)
        except re.error as err:
            return _raise(bad(f"$regexp pattern does not compile: {err}"))
    if tag == "$error":
        message = data.get("message", "")
        if not isinstance(arg, str) or not isinstance(message, str):
            return _raise(bad('$error takes a class name string and an optional "message"'))
        cls = getattr(builtins, arg, None)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            cls = Exception
        return cls(message)
    return _raise(bad("$ref marks a cycle in a shown value; a cycle cannot be typed in"))


def _raise(err: JsonInputError) -> Any:
    raise err


# -- syntax errors in plain words ---------------------------------------------------------
def _syntax_error(text: str, err: json.JSONDecodeError, field: str) -> JsonInputError:
    pos = err.pos
    here = text[pos:]
    before = text[:pos].rstrip()
    opened = _open_bracket(text, pos)
    closer = {"[": "]", "{": "}"}.get(opened[0], "") if opened else ""
    where_open = ""
    if opened:
        line, col = _line_col(text, opened[1])
        kind = "array" if opened[0] == "[" else "object"
        where_open = f" (the {kind} opened at line {line}, column {col} is not closed)"
    msg = err.msg
    hint = ""
    if msg == "Expecting value":
        if here[:1] in ("]", "}") and before.endswith(","):
            why = f"a comma before '{here[0]}': remove the trailing comma"
        elif not here.strip():
            why = "the text ends where a value was expected"
        else:
            why = (
                "expected a value: a string in double quotes, a number, true, false, null, "
                "an object {...} or an array [...]"
            )
        hint = _word_hint(here)
    elif msg.startswith("Expecting property name"):
        if here[:1] == "}" and before.endswith(","):
            why = "a comma before '}': remove the trailing comma"
        else:
            why = "expected a property name in double quotes"
            if here[:1] == "'":
                hint = "JSON strings use double quotes: \"name\", not 'name'"
    elif msg == "Expecting ',' delimiter":
        why = f"expected ',' or '{closer}'{where_open}" if closer else "expected ','"
    elif msg == "Expecting ':' delimiter":
        why = "expected ':' after the property name"
    elif msg.startswith("Unterminated string"):
        why = "this string is not closed: add the closing double quote"
    elif msg.startswith("Invalid control character"):
        why = "a line break or control character inside a string: write it as \\n, \\t or \\uXXXX"
    elif msg.startswith("Invalid \\u"):
        why = "\\u must be followed by four hex digits"
    elif msg.startswith("Invalid \\escape"):
        why = 'unknown escape in a string (valid: \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)'
    elif msg == "Extra data":
        why = "more text after the value: write one JSON value (put several in [...] or {...})"
    else:
        why = msg[:1].lower() + msg[1:]
    line_no, col_no = err.lineno, err.colno
    line_text = text.splitlines()[line_no - 1] if text.splitlines() else ""
    detail = f"{line_text}\n{' ' * (col_no - 1)}^"
    if hint:
        detail += f"\n{hint}"
    return JsonInputError(f"{field}, line {line_no}, column {col_no}: {why}", detail)


def _word_hint(here: str) -> str:
    word = re.match(r"[A-Za-z_][\w-]*", here)
    if here[:1] == "'":
        return "JSON strings use double quotes: \"text\", not 'text'"
    if not word:
        return ""
    w = word.group(0)
    if w in ("True", "False", "None"):
        return f"JSON writes {json.dumps({'True': True, 'False': False, 'None': None}[w])}, not {w}"
    if w in ("NaN", "Infinity"):
        return f'{w} is not JSON: write {{"$float": "{w}"}}'
    return f'to store text, put it in double quotes: "{w}"'


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _open_bracket(text: str, end: int) -> tuple[str, int] | None:
    """The innermost bracket still open before ``end`` (strings skipped), with its position."""
    stack: list[tuple[str, int]] = []
    i = 0
    while i < end:
        c = text[i]
        if c == '"':
            i += 1
            while i < end and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "[{":
            stack.append((c, i))
        elif c in "]}" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else None
