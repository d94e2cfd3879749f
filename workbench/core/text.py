"""The one rule for text entering the workbench: it must be encodable as UTF-8.

Python strings can hold lone surrogates (``"\\ud800"``, from JSON escapes or
bad decoding) that no UTF-8 store, log or wire can carry. Every face and
service checks text where it enters (HTTP bodies and query strings, Rules
language expressions, storage keys and SQL bindings) with :func:`utf8_problem`
and refuses it in its own error form, so such text is never stored.

    >>> utf8_problem("caf\\u00e9") is None
    True
    >>> utf8_problem("a\\ud800b")
    'holds a lone surrogate (U+D800) at character 2, which cannot be encoded as UTF-8'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def utf8_problem(text: str) -> str | None:
    """What makes ``text`` unencodable as UTF-8, or None when it is fine."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        return (
            f"holds a lone surrogate (U+{ord(bad):04X}) at character {exc.start + 1}, "
            "which cannot be encoded as UTF-8"
        )
    return None


def quotable(text: object) -> str:
    """``str(text)`` as a message may quote it: encodable as UTF-8 (escapes for the rest).

    >>> quotable("a\\ud800b")
    'a\\\\ud800b'
    """
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8")


def unencodable_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(JSON pointer, problem)`` for every string in a JSON-like value (keys too) that is not UTF-8.

    >>> list(unencodable_strings({"a": ["ok", "\\udfff"]}))
    [('/a/1', 'holds a lone surrogate (U+DFFF) at character 1, which cannot be encoded as UTF-8')]
    """
    # An explicit stack: a deeply nested body must not exhaust the recursion limit.
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            problem = utf8_problem(item)
            if problem is not None:
                yield where, problem
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                # Pointers are shown in error messages, so they must be encodable themselves.
                shown = f"{where}/{quotable(key)}"
                problem = utf8_problem(str(key))
                if problem is not None:
                    yield shown, "key " + problem
                stack.append((shown, inner))
        elif isinstance(item, list | tuple):
            for i in reversed(range(len(item))):
                stack.append((f"{where}/{i}", item[i]))


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, with an ``s`` unless ``n`` is 1 (panels and reports alike).

    >>> plural(1, "request"), plural(62, "request")
    ('1 request', '62 requests')
    """
    return f"{n} {word}" + ("" if n == 1 else "s")
