"""The two evaluation paths of an expression, asserted to agree (fidelity and Unicode regex tests)."""

import duckdb

from workbench.rules_language import compile_expression, get_scheme
from workbench.rules_language.table import requests_table


def agree(source, requests):
    """What each path answers for each request (dicts of fields), asserting they agree."""
    expr = compile_expression(source)
    per_request = [expr.matches(r) for r in requests]
    con = duckdb.connect()
    requests_table(con, requests, name="r", fields=list(get_scheme("http").fields))
    rows = con.sql(f"select {expr.to_sql()} from r").fetchall()
    assert [row[0] for row in rows] == per_request, source
    return per_request


def both(pattern, values):
    """Whether ``pattern`` matches each value (as a path), asserting both paths say the same."""
    source = f'http.request.uri.path matches r"{pattern}"'
    return agree(source, [{"http.request.uri.path": v} for v in values])
