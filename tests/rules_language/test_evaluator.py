"""The one per-request evaluator: every node kind, and the managed rulesets' expressions.

Every node kind and form of the tree (ast.py) is generated code, with no other
evaluator behind it, and answers as the language says. Every expression of the
shipped managed catalogues (the functions, the ``[*]`` walks and the long
regexes a managed rule has) answers attack-shaped and awkward requests as the
closure evaluator answered them when it was removed (answers recorded in
``data/evaluator-answers.json``, see ``evaluator_answers.py``).
"""

import importlib.util
import json
from pathlib import Path

import evaluator_answers
import pytest

from workbench.rules_language import MANAGED, ast, compile_expression
from workbench.rules_language.ast import walk
from workbench.rules_language.codegen import generate_with_source

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


# -- every node kind, one evaluator ------------------------------------------------------

REQUEST = {
    "http.host": "A.example",
    "http.referer": "A.example",
    "ssl": True,
    "ip.src": "10.1.2.3",
    "cf.waf.score": 3,
    "http.request.headers": {"accept": ["text/html", "Application/JSON"], "x": ["1"]},
    "http.request.headers.names": ["Accept", "X"],
}
LISTS = {"blocked": ["10.0.0.0/8"], "names": ["X"]}
NAMES = "http.request.headers.names[*]"
# Each node kind and form of ast.py, with its answer on REQUEST (and the same with ssl false).
KINDS = [
    ("", False, False),
    ("ssl", True, False),
    ("not ssl", False, True),
    ('ssl xor http.host eq "a"', True, False),
    ("ssl and cf.waf.score gt 10 or ip.src ge 10.0.0.0", True, True),
    (
        'ip.src in {10.0.0.0/8} and cf.waf.score in {1..5} and http.host in {"A.example"}',
        True,
        True,
    ),
    ("ssl and ip.src in $blocked", True, False),
    ('http.host matches "^A" and http.host wildcard "a*"', True, True),
    ("http.host eq http.referer", True, True),
    ('http.request.headers["accept"][1] eq "Application/JSON"', True, True),
    ('any(http.request.headers["accept"][*] eq "text/html")', True, True),
    ('lower(http.host) eq "a.example" and concat(http.host, "/") eq "A.example/"', True, True),
    ('any(lower(http.request.headers["accept"][*])[*] contains "json")', True, True),
    (f'any(not ({NAMES} eq "X"))', True, True),
    (f'all(({NAMES} eq "X" or {NAMES} eq "Accept"))', True, True),
    (f'any(({NAMES} eq "X" xor {NAMES} eq "X"))', False, False),
    ('any(http.request.headers[*][0] eq "1")', True, True),
    ('any(http.request.headers[*][*] eq "1") and not ssl', False, True),
    ("not ip.src eq 10.1.2.3", False, False),
    (f'any(starts_with({NAMES}, "X"))', True, True),
    (f"any({NAMES} in $names)", True, True),
]


def _forms(node):
    """The node kinds and forms below ``node``: class names, and forms where a class has several."""
    out = set()
    for n in walk(node):
        name = type(n).__name__
        out.add(name)
        if isinstance(n, ast.Index):
            out.add(f"Index {'[*]' if n.key is ast.STAR else type(n.key).__name__}")
            out.add("Index of each" if n.base.each else "Index")
        elif isinstance(n, ast.Call):
            kind = "any/all" if n.name in ("any", "all") else "impl"
            out.add("Call mapped" if n.mapped else f"Call {kind}")
        elif isinstance(n, ast.Compare):
            out.add("Compare each" if n.lhs.each else f"Compare with {type(n.rhs).__name__}")
        elif isinstance(n, ast.Not | ast.Logical):
            out.add(f"{name} {n.type.kind}")
    return out


def test_every_node_kind_is_generated_code_with_no_second_evaluator():
    classes = {
        c.__name__
        for c in vars(ast).values()
        if isinstance(c, type) and c.__module__ == ast.__name__ and c is not ast.Node
    }
    forms = set()
    for source, want, want_without_ssl in KINDS:
        expr = compile_expression(source)
        forms |= _forms(expr.tree)
        for inline in (True, False):
            fn, _ = generate_with_source(expr.tree, inline=inline)
            assert fn(REQUEST, LISTS) is want, source
            assert fn({**REQUEST, "ssl": False}, LISTS) is want_without_ssl, source
            for name, value in fn.__globals__.items():
                code = getattr(value, "__code__", None)
                if code is None or code.co_filename == "<rules expression>":
                    continue  # a value, a builtin, or generated code
                # Anything else is a helper of values: nothing that evaluates a tree or a node.
                params = code.co_varnames[: code.co_argcount]
                assert params not in (("fields", "lists"), ("f", "ls")), (source, name, value)
                assert value.__module__ not in ("workbench.rules_language.codegen",), value
    assert classes <= forms, classes - forms
    for form in ("Index int", "Index bytes", "Index [*]", "Index of each", "Call mapped"):
        assert form in forms
    for form in ("Call any/all", "Call impl", "Compare each", "Not Array", "Logical Array"):
        assert form in forms
    for rhs in ("Literal", "SetLiteral", "ListRef", "Pattern", "FieldRef"):
        assert f"Compare with {rhs}" in forms
    assert importlib.util.find_spec("workbench.rules_language.compiler") is None
