"""Rule expressions of the ruleset engine: the Rules language, plus the bare ``true``.

The ruleset engine takes ``"expression": "true"`` for "all traffic" (the
migration's execute rules use it), while the Rules language itself has no
boolean literal. Such rules are not checks of a plan: they always match, so
no evaluator (closures or SQL) ever has to compile them.

    >>> compile_rule_expression("true").matches({})
    True
    >>> compile_rule_expression('http.host eq "a.example"').matches({"http.host": "a.example"})
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..rules_language import compile_expression

ALL_TRAFFIC = "true"


def matches_everything(expression: str) -> bool:
    """True for the bare ``true`` expression."""
    return expression.strip() == ALL_TRAFFIC


class Always:
    """The compiled form of ``true``."""

    source = ALL_TRAFFIC

    def matches(self, fields: Mapping[str, Any]) -> bool:
        """Every request matches."""
        return True


def compile_rule_expression(expression: str, scheme: str = "http") -> Any:
    """The compiled expression (raises ``ExpressionError`` like ``compile_expression``).

    A user's rule takes the ``http`` scheme; a managed catalogue's rules take
    :data:`~workbench.rules_language.MANAGED`, which adds the fields only managed rules read.
    """
    if matches_everything(expression):
        return Always()
    return compile_expression(expression, scheme)
