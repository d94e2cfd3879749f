"""Recorded answers of the per-request evaluator, checked after every change.

``data/evaluator-answers.json`` holds, for each group of cases (the eval
corpus, each covered shape over awkward values, the managed rulesets ...) and
each expression, the answer of ``Expression.matches`` to each of its requests
in order: ``T``, ``F``, or a lower-case letter naming the exception the
evaluator raised (:data:`ERRORS`).

They were first recorded with the closure evaluator (``compiler.py``, the
reference the generated code was checked against until issue 27 removed it),
so they pin the answers it gave. ``RULES_RECORD_ANSWERS=1`` with pytest writes
the answers of the evaluator in place instead of checking them; every changed
character in the diff is an answer a user sees change, to review as such.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
from pathlib import Path
from typing import Any

PATH = Path(__file__).parent / "data" / "evaluator-answers.json"
RECORD = os.environ.get("RULES_RECORD_ANSWERS") == "1"
ERRORS = {
    "a": "AttributeError",
    "t": "TypeError",
    "v": "ValueError",
    "k": "KeyError",
    "o": "OverflowError",
    "u": "UnicodeError",
}
_LETTER = {name: letter for letter, name in ERRORS.items()}

_answers: dict[str, dict[str, str]] = json.loads(PATH.read_text()) if PATH.exists() else {}
_recorded = False


def key(source: str) -> str:
    """The entry name of an expression: itself, or its start and a digest when long."""
    if len(source) <= 100:
        return source
    return (
        f"{source[:60]} #{hashlib.sha1(source.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    )


def answer(expr: Any, request: Any, lists: Any = None) -> str:
    """One character: ``T``, ``F`` or the letter of the exception raised."""
    try:
        got = expr.matches(request, lists)
    except Exception as err:  # noqa: BLE001 - the exception's kind is the answer
        for cls in type(err).__mro__:
            if cls.__name__ in _LETTER:
                return _LETTER[cls.__name__]
        raise
    assert got is True or got is False, f"{expr.source!r} answered {got!r}"
    return "T" if got else "F"


def check(group: str, name: str, expr: Any, cases: list[tuple[Any, Any]]) -> None:
    """Answers of ``expr`` to ``cases`` (request, lists) equal the recorded ones."""
    got = "".join(answer(expr, request, lists) for request, lists in cases)
    if RECORD:
        _record(group, name, got)
        return
    want = _answers.get(group, {}).get(name)
    assert want is not None, f"no recorded answers for {name!r} in {group!r}"
    if got != want:
        i = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
        if i is None:
            raise AssertionError(f"{expr.source!r}: {len(got)} answers, {len(want)} recorded")
        request, lists = cases[i]
        raise AssertionError(
            f"{expr.source!r} on {request!r} (lists {lists!r}): "
            f"answered {got[i]!r}, recorded {want[i]!r}"
        )


def _record(group: str, name: str, got: str) -> None:
    global _recorded
    _answers.setdefault(group, {})[name] = got
    if not _recorded:
        _recorded = True
        atexit.register(_write)


def _write() -> None:
    ordered = {g: dict(sorted(_answers[g].items())) for g in sorted(_answers)}
    PATH.write_text(json.dumps(ordered, indent=0, ensure_ascii=True) + "\n", encoding="utf-8")
