"""Literal text every match of a regex must contain: a cheap test before the regex runs.

The per-request function (codegen.py) calls the regex engine only when the
value holds this text, so most requests that cannot match never pay for the
engine call. Only the top-level sequence of the pattern is read (each of its
items takes part in every match), so the text found is always required.

    >>> from workbench.rules_language.regex import parse_regex
    >>> required_text(parse_regex("^/api/v[0-9]+/x$").tree)
    [('prefix', '/api/v', False), ('suffix', '/x', False)]
"""

from __future__ import annotations

from .regex_tree import Node as RegexNode


def _one_byte(node: RegexNode) -> tuple[int, bool] | None:
    """(byte, folded) when a regex node matches exactly one byte, or one ASCII letter in either case."""
    if node.kind != "set":
        return None
    ranges = node.ranges
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return ranges[0][0], False
    if len(ranges) == 2 and all(lo == hi for lo, hi in ranges):
        upper, lower = ranges[0][0], ranges[1][0]
        if 0x41 <= upper <= 0x5A and lower == upper + 32:
            return lower, True
    return None


def required_text(tree: RegexNode) -> list[tuple[str, str, bool]]:
    """Text every match of ``tree`` contains: ``(where, text, folded)`` checks.

    ``where`` is ``prefix`` (after ``\\A``), ``suffix`` (before ``\\z``) or ``part``;
    ``folded`` means ASCII case does not matter (compare with the value lowered).
    Only the top-level sequence is read: each of its items takes part in every match.

    >>> from workbench.rules_language.regex import parse_regex
    >>> required_text(parse_regex("(?i)union.+select").tree)
    [('part', 'select', True)]
    """
    items = tree.items if tree.kind == "cat" else [tree]
    runs: list[tuple[int, int, list[tuple[int, bool]]]] = []  # start, end, bytes
    current: list[tuple[int, bool]] = []
    for index, item in enumerate([*items, RegexNode("empty")]):
        byte = _one_byte(item)
        if byte is not None:
            current.append(byte)
            continue
        if current:
            runs.append((index - len(current), index, current))
            current = []
    checks: list[tuple[str, str, bool]] = []
    inner: tuple[int, int, list[tuple[int, bool]]] | None = None
    for start, end, run in runs:
        where = "part"
        if start == 1 and items[0].kind == "assert" and items[0].name == "bot":
            where = "prefix"
        elif end == len(items) - 1 and items[-1].kind == "assert" and items[-1].name == "eot":
            where = "suffix"
        if where == "part":
            if inner is None or len(run) > len(inner[2]):
                inner = (start, end, run)
            continue
        check = _run_text(where, run)
        if check is not None:
            checks.append(check)
    if inner is not None and len(inner[2]) >= 3:
        check = _run_text("part", inner[2])
        if check is not None:
            checks.append(check)
    return checks


def _run_text(where: str, run: list[tuple[int, bool]]) -> tuple[str, str, bool] | None:
    data = bytes(b for b, _ in run)
    folded = any(f for _, f in run)
    if folded:
        # Lowering the value changes non-ASCII text too: only ASCII runs are safe to fold.
        return (where, data.decode("ascii").lower(), True) if data.isascii() else None
    try:
        return where, data.decode("utf-8"), False
    except UnicodeDecodeError:
        return None  # part of a character: str tests would not see it
