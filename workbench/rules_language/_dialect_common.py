"""What :mod:`.dialects` and :mod:`.dialect_postgres` share: templates, literals, refusals.

A template is SQL text in a dialect with columns ``_a0``, ``_a1``... standing for
the arguments (:func:`template`); a refusal names the function as DuckDB spells it
(:func:`public`) and the dialect (:func:`unsupported`).

    >>> print(template("LENGTH(_a0) > _a1", "spark", exp.column("x"), exp.Literal.number(3)).sql())
    LENGTH(x) > 3
    >>> str(unsupported("wb_list_len", "bigquery"))
    'len() is not supported on bigquery'
"""

from __future__ import annotations

from collections.abc import Callable

import sqlglot
from sqlglot import exp

from .sql_value import SqlTranslationError

#: The DuckDB names of the functions sqlglot names otherwise (its node classes, the compiler's own).
_PUBLIC = {
    "wb_list_len": "len",
    "wb_to_hex": "to_hex",
    "RegexpLike": "regexp_matches",
    "RegexpFullMatch": "regexp_full_match",
    "RegexpReplace": "regexp_replace",
    "RegexpExtractAll": "regexp_extract_all",
    "Transform": "list_transform",
    "ArrayFilter": "list_filter",
    "ArrayConcat": "list_concat",
    "ArrayContains": "list_contains",
    "ArrayToString": "array_to_string",
    "GenerateSeries": "range",
    "Split": "string_split",
    "Lambda": "lambda",
    "Try": "try",
}


def name_of(node: exp.Expr) -> str:
    """The function a node calls: an anonymous call's name in lower case, else its class name."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return type(node).__name__


def public(name: str) -> str:
    """A function's DuckDB name for messages (``wb_list_len`` is ``len``)."""
    return _PUBLIC.get(name, name[:1].lower() + name[1:] if name[:1].isupper() else name)


def unsupported(name: str, dialect: str, why: str = "") -> SqlTranslationError:
    """The refusal of ``name`` (a function's name, or words) on ``dialect``, ``why`` in brackets."""
    detail = f" ({why})" if why else ""
    what = name if " " in name else f"{public(name)}()"
    return SqlTranslationError(f"{what} is not supported on {dialect}{detail}")


def template(
    text: str, dialect: str, *args: exp.Expr, mark: Callable[[exp.Expr], None] | None = None
) -> exp.Expr:
    """``text`` parsed in ``dialect`` with columns ``_a0``, ``_a1``... replaced by ``args``.

    ``mark`` sees the parsed tree before the arguments go in (its own nodes only).
    """
    tree = sqlglot.parse_one(text, read=dialect)
    slots = [c for c in tree.find_all(exp.Column) if c.name[:2] == "_a" and c.name[2:].isdigit()]
    if mark is not None:
        mark(tree)
    for col in slots:
        col.replace(args[int(col.name[2:])].copy())
    return tree


def literal(node: exp.Expr | None, what: str, dialect: str) -> str:
    """The text of a string literal; refused on ``dialect`` as ``what`` for anything else."""
    if not isinstance(node, exp.Literal) or not node.is_string:
        raise unsupported(f"{what} with an argument that is not a string literal", dialect)
    return str(node.this)


def hex_digits(node: exp.Cast) -> exp.Expr | None:
    """H of ``('0x' || H)::T`` (DuckDB reads hex text as an integer), or None."""
    inner = node.this.unnest() if isinstance(node.this, exp.Paren) else node.this
    if isinstance(inner, exp.DPipe) and isinstance(inner.this, exp.Literal):
        if inner.this.this == "0x":
            return inner.expression
    return None
