"""The one per-request evaluator on the managed rulesets' expressions.

Every expression of the shipped managed catalogues (the functions, the
``[*]`` walks and the long regexes a managed rule has) answers attack-shaped
and awkward requests as the closure evaluator answered them when it was
removed (answers recorded in ``data/evaluator-answers.json``, see
``evaluator_answers.py``).
"""

import json
from pathlib import Path

import evaluator_answers
import pytest

from workbench.rules_language import MANAGED, compile_expression

CATALOGUES = Path(__file__).parents[2] / "workbench" / "rulesets" / "catalog"
MANAGED_SOURCES = sorted(
    {
        rule["expression"]
        for name in ("cloudflare_managed.json", "owasp_core.json")
        for rule in json.loads((CATALOGUES / name).read_text(encoding="utf-8"))["rules"]
        if rule["expression"].strip() != "true"
    }
)

PAYLOADS = [
    "",
    "/index.html?q=shoes",
    "id=1 UNION ALL SELECT password FROM users",
    "<script>alert(1)</script>",
    "%3Cscript%3Ealert(1)%3C/script%3E",
    "../../etc/passwd",
    "${jndi:ldap://x.test/a}",
    "' or 1=1 --",
    "() { :; }; /bin/bash -c id",
    "<?xml version='1.0'?><methodCall>pingback.ping</methodCall>",
    "/xmlrpc.php",
    "a%00b",
    "é/café",
    "a\ud800b",  # a lone surrogate stands for its bytes
    b"\xff<script>",  # not UTF-8
    bytearray(b"select * from t"),
]
RULE_IDS = [[], [911100], [913100, 942100], [944300, 1]]


def _value(kind, element, payload, i):
    if kind == "Bytes":
        return payload
    if kind == "Int":
        return i
    if kind == "Bool":
        return i % 2 == 0
    if kind == "Ip":
        return ["192.0.2.1", "2001:db8::1", "not an address"][i % 3]
    if kind == "Array" and element.kind == "Int":
        return RULE_IDS[i % len(RULE_IDS)]
    if kind == "Array":
        return [payload, "x"]
    return {"x-test": [payload], "accept": ["*/*"]}


def _requests(expr):
    """One request with every field the expression reads set from each payload, and an empty one."""
    out = [{}]
    for i, payload in enumerate(PAYLOADS):
        request = {}
        for name in expr.fields:
            t = expr.scheme.fields[name].type
            request[name] = _value(t.kind, t.element, payload, i)
        out.append(request)
    return out


@pytest.mark.parametrize("source", MANAGED_SOURCES, ids=[s[:50] for s in MANAGED_SOURCES])
def test_managed_expressions_answer_as_recorded(source):
    expr = compile_expression(source, MANAGED)
    evaluator_answers.check(
        "managed", evaluator_answers.key(source), expr, [(r, None) for r in _requests(expr)]
    )
