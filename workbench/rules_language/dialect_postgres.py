"""The compiler's DuckDB SQL rewritten for PostgreSQL (15 and later), regexes included.

:mod:`.dialects` parses the compiler's DuckDB SQL with sqlglot; this module rewrites
that tree for PostgreSQL before sqlglot writes it:

* **Regexes** become AREs of the same meaning (:mod:`._regex_postgres`), matched with
  ``~`` over the subject read ``COLLATE "C"``, so that ``\\y`` (RE2's ``\\b``) knows
  ASCII word characters only, as the engine's ``\\b`` does. A replace or an extract
  is translated only where PostgreSQL's longest match is RE2's first match.
* **Bytes.** The compiler matches byte-sensitive patterns over a *Latin-1 view* of
  the text (one character per byte); DuckDB builds it with list lambdas, PostgreSQL
  with ``convert_from(convert_to(t, 'UTF8'), 'LATIN1')`` (the database encoding must
  be UTF8). Its inverse is checked to be UTF-8 first (NULL otherwise, as DuckDB's
  ``try(decode(...))``).
* **Bindings.** A value the compiler names once (``list_transform([e], lambda v: ...)[1]``)
  is a scalar subquery over ``(SELECT e AS v OFFSET 0)``: without ``OFFSET 0`` the
  planner would paste ``e`` back at every use, and nested bindings would grow
  exponentially.
* **Lists** are PostgreSQL arrays: a lambda over a list becomes ``ARRAY(SELECT ...
  FROM UNNEST(l) WITH ORDINALITY ... ORDER BY n)``, ``list_bool_or`` a ``bool_or``
  over ``UNNEST``, a lambda bound to one value (the compiler's ``bind``) a scalar
  subquery. PostgreSQL arrays are rectangular: a list of lists is ``jsonb``, its inner
  lists arrays once picked.
* **Maps** are ``jsonb`` columns (``{"key": [values]}``): ``m["k"]`` is
  ``ARRAY(SELECT jsonb_array_elements_text(m -> 'k'))``. ``m[*]`` is refused: jsonb
  orders its keys, not in the request's order.

Everything else the compiler writes that PostgreSQL lacks raises
:class:`~.sql_value.SqlTranslationError` naming the function and ``postgres``.

    >>> from workbench.rules_language.dialects import to_dialect
    >>> print(to_dialect("regexp_matches(x, '\\\\Aa\\\\x{2e}')", "postgres"))
    (x COLLATE "C") ~ '\\Aa\\u002e'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from ._dialect_common import hex_digits, literal, name_of, template, unsupported
from ._regex_postgres import are_pattern, are_replacement
from .sql_value import SqlTranslationError


def _fail(what: str, why: str = "") -> SqlTranslationError:
    return unsupported(what, "postgres", why)


# -- the tree rewrite -------------------------------------------------------------------------
_UTF8 = (
    "[\\u0001-\\u007f]|[\\u00c2-\\u00df][\\u0080-\\u00bf]|\\u00e0[\\u00a0-\\u00bf][\\u0080-\\u00bf]"
    "|[\\u00e1-\\u00ec\\u00ee\\u00ef][\\u0080-\\u00bf]{2}|\\u00ed[\\u0080-\\u009f][\\u0080-\\u00bf]"
    "|\\u00f0[\\u0090-\\u00bf][\\u0080-\\u00bf]{2}|[\\u00f1-\\u00f3][\\u0080-\\u00bf]{3}"
    "|\\u00f4[\\u0080-\\u008f][\\u0080-\\u00bf]{2}"
)
#: A Latin-1 view holding UTF-8 (each byte one character, U+0001 to U+00FF).
UTF8_VIEW = f"\\A(?:{_UTF8})*\\Z"


def _own(tree: exp.Expr) -> None:
    """Mark a template's own nodes final; sqlglot reads PostgreSQL's to_hex(integer) as its
    HEX, which it writes back as HEX, so those become to_hex again."""
    for node in tree.walk():
        node.meta["pg"] = True
    for hexed in list(tree.find_all(exp.Hex)):
        new = exp.Anonymous(this="TO_HEX", expressions=[hexed.this])
        new.meta["pg"] = True
        hexed.replace(new)


def _pg(text: str, *args: exp.Expr) -> exp.Expr:
    """``text`` parsed as PostgreSQL, ``_a0``... replaced by ``args``; its own nodes are final."""
    return template(text, "postgres", *args, mark=_own)


def _lit(node: exp.Expr | None, what: str) -> str:
    return literal(node, what, "postgres")


def _s(text: str) -> exp.Literal:
    return exp.Literal.string(text)


def _anon(node: exp.Expr, name: str) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).lower() == name


def _simple(node: exp.Expr) -> bool:
    """A value cheap enough to write twice (a column, a variable, a literal, a cast of one)."""
    if isinstance(node, exp.Cast):
        node = node.this
    return isinstance(node, exp.Column | exp.Identifier | exp.Literal)


# Shapes of sql_fragments, recognised whole before the bottom-up rewrite.
def _view_of_hex(node: exp.Expr) -> exp.Expr | None:
    """``list_aggr(list_transform(regexp_extract_all(H, '..'), lambda b: chr(...)), ...)``:
    the Latin-1 view of the bytes whose hex is H."""
    if not _anon(node, "list_aggr"):
        return None
    lst = node.expressions[0]
    if not isinstance(lst, exp.Transform) or not isinstance(lst.this, exp.RegexpExtractAll):
        return None
    if not isinstance(lst.expression.this, exp.Chr):
        return None
    hex_text = lst.this.this
    if isinstance(hex_text, exp.Hex) and isinstance(hex_text.this, exp.Encode):
        return _pg("CONVERT_FROM(CONVERT_TO(_a0, 'UTF8'), 'LATIN1')", hex_text.this.this)
    return _view_of_bytes(_pg("DECODE(_a0, 'hex')", hex_text))


#: The character standing for byte 0x00 in a view of bytes: PostgreSQL text has no NUL.
NUL_STAND_IN = 0x100


def _view_of_bytes(blob: exp.Expr) -> exp.Expr:
    new = _pg(
        "(SELECT CASE WHEN POSITION(CAST('\\x00' AS BYTEA) IN wb_b) = 0 "
        "THEN CONVERT_FROM(wb_b, 'LATIN1') ELSE (SELECT STRING_AGG(CHR(CASE WHEN "
        f"GET_BYTE(wb_b, wb_i) = 0 THEN {NUL_STAND_IN} ELSE GET_BYTE(wb_b, wb_i) END), '' "
        "ORDER BY wb_i) FROM GENERATE_SERIES(0, LENGTH(wb_b) - 1) AS wb_g(wb_i)) END "
        "FROM (SELECT _a0 AS wb_b OFFSET 0) AS wb_let)",
        blob,
    )
    new.meta["bytes_view"] = True
    return new


def _chars_to_hex_of(node: exp.Expr) -> exp.Expr | None:
    """V of ``list_aggr(list_transform(string_split(V, ''), lambda c: lpad(to_hex(ord(c))..)))``,
    the hex of the bytes a Latin-1 view V stands for."""
    if not _anon(node, "list_aggr"):
        return None
    lst = node.expressions[0]
    if not isinstance(lst, exp.Transform) or not isinstance(lst.this, exp.Split):
        return None
    if not isinstance(lst.expression.this, exp.Pad):
        return None
    return lst.this.this


def _hex_of_view(node: exp.Expr) -> exp.Expr | None:
    view = _chars_to_hex_of(node)
    if view is None:
        return None
    return _pg(
        f"CASE WHEN STRPOS(_a0, CHR({NUL_STAND_IN})) = 0 THEN ENCODE(CONVERT_TO(_a0, 'LATIN1'), "
        f"'hex') ELSE (SELECT STRING_AGG(CASE WHEN wb_c = CHR({NUL_STAND_IN}) THEN '00' ELSE "
        "LPAD(TO_HEX(ASCII(wb_c)), 2, '0') END, '' ORDER BY wb_n) "
        "FROM REGEXP_SPLIT_TO_TABLE(_a0, '') WITH ORDINALITY AS wb_s(wb_c, wb_n)) END",
        view,
    )


def _try_decode(node: exp.Expr) -> exp.Expr | None:
    """``try(decode(B))``: B's text when B is UTF-8, else NULL."""
    if not isinstance(node, exp.Try) or not isinstance(node.this, exp.Decode):
        return None
    blob = node.this.this
    if isinstance(blob, exp.Unhex) and (view := _chars_to_hex_of(blob.this)) is not None:
        # The text a view stands for, when it is UTF-8 (a NUL stand-in is not: NULL).
        return _pg(
            '(SELECT CASE WHEN wb_t COLLATE "C" ~ _a1 THEN '
            "CONVERT_FROM(CONVERT_TO(wb_t, 'LATIN1'), 'UTF8') END FROM (SELECT _a0 AS wb_t OFFSET 0) AS wb_let)",
            view,
            _s(UTF8_VIEW),
        )
    return _pg(
        "(SELECT CASE WHEN POSITION(CAST('\\x00' AS BYTEA) IN wb_b) = 0 "
        "AND CONVERT_FROM(wb_b, 'LATIN1') COLLATE \"C\" ~ _a1 "
        "THEN CONVERT_FROM(wb_b, 'UTF8') END FROM (SELECT _a0 AS wb_b OFFSET 0) AS wb_let)",
        blob,
        _s(UTF8_VIEW),
    )


def _sha512(node: exp.Expr) -> exp.Expr | None:
    """sql_sha512's digest (a fold over 64-bit words, DuckDB having no SHA-512): PostgreSQL's."""
    if not _anon(node, "list_aggr"):
        return None
    lst = node.expressions[0]
    if not isinstance(lst, exp.Transform) or _lambda_names(lst) != ["_s5x"]:
        return None
    for inner in lst.find_all(exp.Transform):
        if _lambda_names(inner) == ["_s5m"] and isinstance(inner.this, exp.Array):
            return _pg("ENCODE(SHA512(_a0), 'hex')", inner.this.expressions[0])
    return None


def _try_url_decode(node: exp.Expr) -> exp.Expr | None:
    """``try(url_decode(s))``, DuckDB's decoder where its result is UTF-8: PostgreSQL has none,
    and NULL sends the text to the compiler's own decoding, escape by escape."""
    if isinstance(node, exp.Try) and _anon(node.this, "url_decode"):
        return _pg("CAST(NULL AS TEXT)")
    return None


def _lambda_names(node: exp.Expr) -> list[str]:
    fn = node.args.get("expression")
    return [p.name for p in fn.expressions] if isinstance(fn, exp.Lambda) else []


def prepass(node: exp.Expr) -> exp.Expr:
    """Shapes of the compiler's SQL (the byte view and its inverse, SHA-512, DuckDB's URL
    decoder) rewritten whole, top down."""
    for shape in (_sha512, _view_of_hex, _hex_of_view, _try_decode, _try_url_decode):
        new = shape(node)
        if new is not None:
            node.replace(new)
            node = new
            break
    for child in list(node.iter_expressions()):
        prepass(child)
    return node


def _lambda(node: exp.Expr) -> tuple[exp.Expr, str]:
    fn = node.args.get("expression")
    if not isinstance(fn, exp.Lambda) or len(fn.expressions) != 1:
        raise _fail(f"{type(node).__name__} without a one-argument lambda")
    name = fn.expressions[0].name
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise _fail(f"the lambda variable {name}")
    return fn.this, name


def _over_list(lst: exp.Expr, build: Callable[[str], str], *args: exp.Expr) -> exp.Expr:
    """``build(l)`` (SQL over the list named ``l``, NULL when it is NULL) for ``lst``."""
    if _simple(lst) or (
        isinstance(lst, exp.Coalesce) and isinstance(lst.expressions[-1], exp.Array)
    ):
        return _pg(build("_a0"), lst, *args)
    return _pg(f"(SELECT {build('wb_l')} FROM (SELECT _a0 AS wb_l OFFSET 0) AS wb_let)", lst, *args)


def _transform(node: exp.Transform) -> exp.Expr:
    if node.this.meta.get("zip"):
        return _zipped(node)
    body, x = _lambda(node)
    lst = node.this
    parent = node.parent
    if (
        isinstance(lst, exp.Array)
        and len(lst.expressions) == 1
        and isinstance(parent, exp.Bracket)
        and parent.this is node
    ):
        # sql_fragments.bind(): list_transform([e], lambda x: body)[1] names e once.
        new = _pg(
            f"(SELECT _a0 FROM (SELECT _a1 AS {x} OFFSET 0) AS wb_let)", body, lst.expressions[0]
        )
        new.meta["bound"] = True
        return new
    return _over_list(
        lst,
        lambda v: (
            f"CASE WHEN {v} IS NULL THEN NULL ELSE ARRAY(SELECT _a1 FROM UNNEST({v}) "
            f"WITH ORDINALITY AS wb_u({x}, wb_n) ORDER BY wb_n) END"
        ),
        body,
    )


def _reduce(args: list[exp.Expr]) -> exp.Expr:
    """``list_reduce(l, lambda acc, x: step, init)`` as a recursive query: one row per step."""
    if len(args) != 3 or not isinstance(args[1], exp.Lambda) or len(args[1].expressions) != 2:
        raise _fail("list_reduce() without an initial value")
    fn = args[1]
    acc, x = (p.name for p in fn.expressions)
    step = fn.this.copy()
    element = _pg("(wb_list)[wb_i + 1]")
    for ref in list(step.find_all(exp.Identifier, exp.Column)):
        if ref.name == x and not isinstance(ref.parent, exp.Column):
            ref.replace(element.copy())
    return _pg(
        f"(SELECT (WITH RECURSIVE wb_f(wb_i, {acc}) AS (SELECT 0, _a1 UNION ALL "
        "SELECT wb_i + 1, _a2 FROM wb_f WHERE wb_i < CARDINALITY(wb_list)) "
        f"SELECT {acc} FROM wb_f ORDER BY wb_i DESC LIMIT 1) "
        "FROM (SELECT _a0 AS wb_list OFFSET 0) AS wb_let)",
        args[0],
        args[2],
        step,
    )


def _zipped(node: exp.Transform) -> exp.Expr:
    """``list_transform(list_zip(a, b, ..., true), lambda r: ...r[1]...r[2]...)``: the lists
    side by side up to the shortest, ``r[k]`` the k-th list's element."""
    body, r = _lambda(node)
    lists = node.this.meta["zip"]
    names = [f"{r}_{k}" for k in range(1, len(lists) + 1)]
    body = body.copy()
    for ref in list(body.find_all(exp.Bracket)):
        target, index = ref.this, ref.expressions[0]
        if target.name == r and isinstance(index, exp.Literal) and not index.is_string:
            ref.replace(exp.to_identifier(names[int(index.this)]))
    slots = ", ".join(f"_a{k}" for k in range(len(lists)))
    shortest = ", ".join(f"CARDINALITY(_a{k})" for k in range(len(lists)))
    n = len(lists)
    return _pg(
        f"ARRAY(SELECT _a{n} FROM UNNEST({slots}) WITH ORDINALITY AS wb_u({', '.join(names)}, "
        f"wb_n) WHERE wb_n <= LEAST({shortest}) ORDER BY wb_n)",
        *lists,
        body,
    )


def _filter(node: exp.ArrayFilter) -> exp.Expr:
    body, x = _lambda(node)
    return _over_list(
        node.this,
        lambda v: (
            f"CASE WHEN {v} IS NULL THEN NULL ELSE ARRAY(SELECT {x} FROM UNNEST({v}) "
            f"WITH ORDINALITY AS wb_u({x}, wb_n) WHERE _a1 ORDER BY wb_n) END"
        ),
        body,
    )


def _element(lst: exp.Expr, index: exp.Expr) -> exp.Expr:
    """``lst[index]`` (1-based). sqlglot keeps a bracket's index 0-based and adds one when
    it writes PostgreSQL, so the index goes in less one."""
    if isinstance(index, exp.Literal) and not index.is_string:
        zero_based: exp.Expr = exp.Literal.number(int(index.this) - 1)
    else:
        zero_based = exp.Sub(this=index, expression=exp.Literal.number(1))
    new = exp.Bracket(this=exp.Paren(this=lst), expressions=[zero_based])
    new.meta["pg"] = True
    return new


def _printf(args: list[exp.Expr]) -> exp.Expr:
    fmt = _lit(args[0], "printf()")
    pieces: list[str] = []
    values = iter(range(1, len(args)))
    for m in re.finditer(r"%(0?)(\d*)([sdx%])|[^%]+|%", fmt):
        if m.group(3) is None:
            if m.group(0) == "%":
                raise _fail(f"printf() format {fmt!r}")
            pieces.append("'" + m.group(0).replace("'", "''") + "'")
            continue
        kind = m.group(3)
        if kind == "%":
            pieces.append("'%'")
            continue
        value = f"_a{next(values)}"
        text = f"TO_HEX({value})" if kind == "x" else f"CAST({value} AS TEXT)"
        if m.group(2):
            fill = "'0'" if m.group(1) else "' '"
            text = f"LPAD({text}, {int(m.group(2))}, {fill})"
        pieces.append(text)
    return _pg("(" + " || ".join(pieces or ["''"]) + ")", *args)


def _hex_cast(node: exp.Cast) -> exp.Expr | None:
    digits = hex_digits(node)
    if digits is None:
        return None
    to = node.to.sql("postgres")
    return _pg(f"CAST(CAST(CAST('x' || LPAD(_a0, 16, '0') AS BIT(64)) AS BIGINT) AS {to})", digits)


def _cast(node: exp.Cast) -> exp.Expr:
    to = node.to
    if to.this == exp.DataType.Type.MAP:
        new = _pg("CAST(_a0 AS JSONB)", node.this)
        new.meta["map_of"] = to.expressions[1]
        return new
    if to.this == exp.DataType.Type.ARRAY and to.expressions[0].this == exp.DataType.Type.ARRAY:
        inner = to.expressions[0]
        if inner.expressions[0].this == exp.DataType.Type.ARRAY:
            raise _fail("a list of lists of lists")
        # PostgreSQL arrays are rectangular: a list of lists is jsonb ([["a"], ["b", "c"]]),
        # and each inner list a PostgreSQL array once picked (_json_lists).
        new = _pg("CAST(_a0 AS JSONB)", node.this)
        new.meta["lists_of"] = inner.expressions[0].sql("postgres")
        return new
    if to.this == exp.DataType.Type.UBIGINT:
        digits = hex_digits(node)
        if digits is None:
            raise _fail("the UBIGINT type", "unsigned 64-bit integers")
        # 16 hex digits read as a signed 64-bit integer, then moved into 0..2**64-1.
        return _pg(
            f"MOD(CAST(CAST(CAST('x' || LPAD(_a0, 16, '0') AS BIT(64)) AS BIGINT) AS NUMERIC) "
            f"+ {1 << 64}, {1 << 64})",
            digits,
        )
    if to.this == exp.DataType.Type.INT128:
        # bit_slice() gathers up to 9 bytes in a 128-bit integer: NUMERIC, whose shifts and
        # masks are products, quotients and remainders by powers of two (_numeric).
        new = _pg("CAST(_a0 AS NUMERIC)", node.this)
        new.meta["numeric"] = True
        return new
    hexed = _hex_cast(node)
    return hexed if hexed is not None else node


def _numeric(node: exp.Expr) -> exp.Expr | None:
    """Shifts, masks and sums of NUMERIC values (bit_slice's), which PostgreSQL's NUMERIC
    has no bit operators for; None for anything else."""
    if not isinstance(node, exp.Paren | exp.Add | exp.BitwiseLeftShift):
        if not isinstance(node, exp.BitwiseRightShift | exp.BitwiseAnd):
            return None
    left = node.this
    if not left.meta.get("numeric") and not (
        isinstance(node, exp.Add) and node.expression.meta.get("numeric")
    ):
        return None
    if isinstance(node, exp.Paren | exp.Add):
        node.meta["numeric"] = True
        return node
    amount = node.expression
    if not isinstance(amount, exp.Literal) or amount.is_string:
        raise _fail("a shift of a 128-bit integer by a computed amount")
    n = int(amount.this)
    if isinstance(node, exp.BitwiseLeftShift):
        new = _pg(f"(_a0 * {1 << n})", left)
    elif isinstance(node, exp.BitwiseRightShift):
        new = _pg(f"DIV(_a0, {1 << n})", left)
    elif n & (n + 1):
        raise _fail("a mask of a 128-bit integer that is not 2**k - 1")
    else:
        new = _pg(f"MOD(_a0, {n + 1})", left)
    new.meta["numeric"] = True
    return new


def _inner_list(json: str, element: str) -> str:
    """SQL: the jsonb array ``json`` as a PostgreSQL array of ``element`` (NULL if not one)."""
    return (
        f"CASE WHEN JSONB_TYPEOF({json}) = 'array' THEN ARRAY(SELECT CAST(wb_e AS {element}) "
        f"FROM JSONB_ARRAY_ELEMENTS_TEXT({json}) WITH ORDINALITY AS wb_t(wb_e, wb_o) "
        "ORDER BY wb_o) END"
    )


def _json_lists(node: exp.Expr, name: str, args: list[exp.Expr]) -> exp.Expr | None:
    """A list of lists held as jsonb (see _cast): its default, an element, a lambda over it."""
    if isinstance(node, exp.Coalesce):
        first = node.this
        element = first.meta.get("lists_of")
        if element is None:
            return None
        new = _pg("COALESCE(_a0, CAST('[]' AS JSONB))", first)
    elif name == "list_extract" and args[0].meta.get("lists_of"):
        element = args[0].meta["lists_of"]
        index = args[1]
        if isinstance(index, exp.Literal) and not index.is_string:
            pick = f"(_a0 -> {int(index.this) - 1})"
        else:
            pick = "(_a0 -> CAST(_a1 - 1 AS INT))"
        return _pg(_inner_list(pick, element), *args)
    elif isinstance(node, exp.Transform) and node.this.meta.get("lists_of"):
        element = node.this.meta["lists_of"]
        body, x = _lambda(node)
        rows = (
            "FROM JSONB_ARRAY_ELEMENTS(_a0) WITH ORDINALITY AS wb_u(wb_j, wb_n), "
            f"LATERAL (SELECT {_inner_list('wb_j', element)} AS {x}) AS wb_x"
        )
        if isinstance(node.parent, exp.Flatten):
            # flatten(list_transform(l, lambda x: list)): each inner list's elements in turn.
            new = _pg(
                f"ARRAY(SELECT wb_f {rows}, LATERAL UNNEST(_a1) WITH ORDINALITY AS "
                "wb_w(wb_f, wb_m) ORDER BY wb_n, wb_m)",
                node.this,
                body,
            )
            new.meta["flat"] = True
            return new
        return _pg(f"ARRAY(SELECT _a1 {rows} ORDER BY wb_n)", node.this, body)
    else:
        return None
    new.meta["lists_of"] = element
    return new


def _map_value(args: list[exp.Expr]) -> exp.Expr:
    m, key = args
    element = m.meta.get("map_of")
    if element is None:
        raise _fail("map_extract_value() of a map that is not a column")
    if element.this == exp.DataType.Type.ARRAY:
        inner = element.expressions[0].sql("postgres")
        return _pg(
            f"CASE WHEN (_a0 -> _a1) IS NULL THEN NULL ELSE ARRAY(SELECT CAST(wb_e AS {inner}) "
            "FROM JSONB_ARRAY_ELEMENTS_TEXT((_a0 -> _a1)) WITH ORDINALITY AS wb_u(wb_e, wb_n) "
            "ORDER BY wb_n) END",
            m,
            key,
        )
    return _pg(f"CAST(_a0 ->> _a1 AS {element.sql('postgres')})", m, key)


def _regex(node: exp.Expr) -> exp.Expr:
    subject = node.this
    if any(inner.meta.get("bytes_view") for inner in subject.walk()):
        raise _fail(
            "a regex over hashed bytes", "they may hold a NUL, which PostgreSQL text cannot"
        )
    if isinstance(node, exp.RegexpLike | exp.RegexpFullMatch):
        if node.args.get("flag") is not None:
            raise _fail("regexp_matches() with options")
        full = isinstance(node, exp.RegexpFullMatch)
        pattern = are_pattern(_lit(node.expression, "matches"), full=full)
        return _pg('(_a0 COLLATE "C") ~ _a1', subject, _s(pattern))
    if isinstance(node, exp.RegexpReplace):
        pattern = are_pattern(_lit(node.expression, "regexp_replace()"), positions=True)
        repl = are_replacement(_lit(node.args.get("replacement"), "regexp_replace()"))
        mods = node.args.get("modifiers")
        every = mods is not None and "g" in _lit(mods, "regexp_replace()")
        flags = ", 'g'" if every else ""
        return _pg(
            f'REGEXP_REPLACE(_a0 COLLATE "C", _a1, _a2{flags})', subject, _s(pattern), _s(repl)
        )
    if isinstance(node, exp.RegexpExtract):
        pattern = are_pattern(_lit(node.expression, "regexp_extract()"), positions=True)
        group = node.args.get("group")
        index = int(group.this) if isinstance(group, exp.Literal) else 0
        if index == 0:
            pattern, index = f"({pattern})", 1
        return _over_list(
            subject,
            lambda v: (
                f'COALESCE((REGEXP_MATCH({v} COLLATE "C", _a1))[{index}], '
                f"CASE WHEN {v} IS NULL THEN NULL ELSE '' END)"
            ),
            _s(pattern),
        )
    assert isinstance(node, exp.RegexpExtractAll)
    pattern = are_pattern(_lit(node.expression, "regexp_extract_all()"), positions=True)
    return _over_list(
        subject,
        lambda v: (
            f"CASE WHEN {v} IS NULL THEN NULL ELSE ARRAY(SELECT wb_m[1] FROM "
            f"REGEXP_MATCHES({v} COLLATE \"C\", _a1, 'g') AS wb_r(wb_m)) END"
        ),
        _s(f"({pattern})"),
    )


def _split(args: list[exp.Expr]) -> exp.Expr:
    text, sep = args
    sep_text = _lit(sep, "string_split()")
    if sep_text == "":
        return _over_list(
            text,
            lambda v: (
                f"CASE WHEN {v} = '' THEN CAST(ARRAY[] AS TEXT[]) "
                f"ELSE REGEXP_SPLIT_TO_ARRAY({v}, '') END"
            ),
        )
    # '***=': the rest of the pattern is a literal string.
    return _pg("REGEXP_SPLIT_TO_ARRAY(_a0, _a1)", text, _s("***=" + sep_text))


_TEMPLATES = {
    "strlen": "OCTET_LENGTH(_a0)",
    "suffix": "RIGHT(_a0, LENGTH(_a1)) = _a1",
    "Contains": "STRPOS(_a0, _a1) > 0",
    # ord() reads a view's characters only: U+0100 there stands for the byte 0x00.
    "ord": "MOD(ASCII(_a0), 256)",
    "wb_to_hex": "UPPER(TO_HEX(_a0))",
    "wb_list_len": "CARDINALITY(_a0)",
    "list_slice": "(_a0)[_a1:_a2]",
    "list_bool_or": "(SELECT BOOL_OR(wb_e) FROM UNNEST(_a0) AS wb_u(wb_e))",
    "list_bool_and": "(SELECT BOOL_AND(wb_e) FROM UNNEST(_a0) AS wb_u(wb_e))",
    "map_contains": "(_a0 -> _a1) IS NOT NULL",
    "Encode": "CONVERT_TO(_a0, 'UTF8')",
    "Decode": "CONVERT_FROM(_a0, 'UTF8')",
    "Hex": "UPPER(ENCODE(_a0, 'hex'))",
    "Unhex": "DECODE(_a0, 'hex')",
    "FromBase64": "DECODE(_a0, 'base64')",
    "ToBase64": "REPLACE(ENCODE(_a0, 'base64'), CHR(10), '')",
}
_ONE_ARG = {"Encode", "Decode", "Hex", "Unhex", "FromBase64", "ToBase64"}

#: What PostgreSQL cannot run, by the name :mod:`.dialects` gives a node, and why.
REFUSED = {
    "json_valid": "no json_valid() in PostgreSQL 15",
    "url_decode": "",
    "Try": "",
    "Flatten": "a list of lists but a field's",
    "map_values": "jsonb keeps a map's keys sorted, not in the request's order",
    "JSONExtract": "",
    "JSONExtractScalar": "",
    "JSONType": "",
}


def rewrite(node: exp.Expr) -> exp.Expr:  # noqa: C901
    """One node of the compiler's DuckDB tree (its children done) as PostgreSQL."""
    if node.meta.get("pg"):
        return node
    name = name_of(node)
    if isinstance(node, exp.Flatten) and node.this.meta.get("flat"):
        return node.this
    if name in REFUSED:
        raise _fail(name, REFUSED[name])
    args: list[exp.Expr] = list(node.iter_expressions()) if isinstance(node, exp.Anonymous) else []
    lists = _json_lists(node, name, args)
    if lists is not None:
        return lists
    if name in _ONE_ARG:
        return _pg(_TEMPLATES[name], node.this)
    if name in _TEMPLATES:
        if not args:
            args = [node.this, node.expression]
        return _pg(_TEMPLATES[name], *args)
    if isinstance(node, exp.Bracket) and node.this.meta.get("bound"):
        return node.this
    numeric = _numeric(node)
    if numeric is not None:
        return numeric
    if isinstance(node, exp.Transform):
        return _transform(node)
    if isinstance(node, exp.ArrayFilter):
        return _filter(node)
    if isinstance(node, exp.RegexpLike | exp.RegexpFullMatch | exp.RegexpReplace):
        return _regex(node)
    if isinstance(node, exp.RegexpExtract | exp.RegexpExtractAll):
        return _regex(node)
    if isinstance(node, exp.TryCast):
        if node.to.this != exp.DataType.Type.BIGINT:
            raise _fail(f"try_cast() to {node.to.sql('duckdb')}")
        # Digits that fit (DuckDB's try_cast also reads spaces and larger numbers; the
        # compiler casts only what a regex has found to be digits).
        return _pg(
            "CASE WHEN (_a0 COLLATE \"C\") ~ '\\A[+-]?[0-9]{1,18}\\Z' THEN CAST(_a0 AS BIGINT) END",
            node.this,
        )
    if isinstance(node, exp.Cast):
        return _cast(node)
    if isinstance(node, exp.Split):
        return _split([node.this, node.expression])
    if isinstance(node, exp.GenerateSeries):
        new = _pg("ARRAY(SELECT _a0)", node.copy())
        for inner in new.walk():
            inner.meta["pg"] = True
        return new
    if isinstance(node, exp.Array) and not node.expressions:
        return _pg("'{}'")  # an untyped empty list: PostgreSQL types the literal from its context
    if isinstance(node, exp.Chr):
        code = node.expressions[0]
        if isinstance(code, exp.Literal) and not code.is_string and int(code.this) == 0:
            raise _fail("text holding a NUL character")
        if not isinstance(code, exp.Literal):
            # A byte decoded into a view (url_decode's escapes): 0x00 becomes the stand-in.
            return _pg(f"CHR(CASE WHEN _a0 = 0 THEN {NUL_STAND_IN} ELSE _a0 END)", code)
        return node
    if name == "list_extract":
        return _element(*args)
    if name == "list_reduce":
        return _reduce(args)
    if name == "list_zip":
        if not (isinstance(node.parent, exp.Transform) and node.parent.this is node):
            raise _fail("list_zip", "only under a list_transform")
        marker = exp.Anonymous(this="wb_zip", expressions=[])
        marker.meta["zip"] = [a.copy() for a in args[:-1]]
        return marker
    if name == "printf":
        return _printf(args)
    if name == "map_extract_value":
        return _map_value(args)
    if name == "list_aggr":
        if _lit(args[1], "list_aggr()") != "string_agg":
            raise _fail("list_aggr")
        return _pg(
            "(SELECT STRING_AGG(wb_e, _a1 ORDER BY wb_n) FROM UNNEST(_a0) "
            "WITH ORDINALITY AS wb_u(wb_e, wb_n))",
            args[0],
            args[2],
        )
    return node


#: DuckDB functions sqlglot leaves anonymous that PostgreSQL has as they are (the rewrite's own
#: calls are marked and not checked).
ALLOWED = {"OCTET_LENGTH"}
