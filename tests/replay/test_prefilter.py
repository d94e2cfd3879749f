"""Literal prefilters as formulas: what a match needs, pruned, and the SQL that tests it."""

from __future__ import annotations

import random

import pytest
from traffic_helpers import both_paths, log_plan

from workbench.replay import _prefilter as prefilter_module
from workbench.replay._evaluate import Evaluator
from workbench.replay._prefilter import (
    formula,
    one_pass,
    passes,
    prefilter,
    prune,
    scans,
)
from workbench.rules_language import compile_expression
from workbench.rules_language.ast import Compare, Pattern, walk
from workbench.rules_language.regex import parse_regex
from workbench.rulesets.catalog import load_catalog
from workbench.traffic.request import Request

WS = "('\\t' | '\\n' | '\\x0b' | '\\x0c' | '\\r' | ' ')"
#: A regex as dear as the cost model once took it (30 scans): the model's choices show.
DEAR = 30.0


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("(?i)union\\s+(?:all\\s+)?select", f"'union' & {WS} & 'select'"),
        # The exact text around an alternation joins each branch's own literal.
        ("etc/(?:passwd|shadow)", "'etc/passwd' | 'etc/shadow'"),
        ("(?i)on(?:error|load\\w*)\\s*=", "'=' & ('onerror' | 'onload')"),
        # Each branch of a top alternation keeps its own conjunction.
        ("(?:<|\\\\u003c)\\s*script|on\\w+=", "('<' | '\\\\u003c') & 'script' | 'on' & '='"),
        # A branch that needs nothing makes the alternation need nothing.
        ("[a-z]+|x", None),
        ("ABC", "'abc'"),  # compared lowered: weaker for a case-sensitive pattern
        ("a{3}b", "'aaab'"),
        ("(?:ab)?c", "'c'"),
        ("(?:ab)+c", "'ab' & 'c'"),
        ("(?u)\\s+x", "'x'"),  # Unicode white space is not a small ASCII set
        ("select|selector", "'select'"),  # a branch implying another adds nothing
        ("", None),
    ],
)
def test_a_match_needs_the_formula_of_its_pattern(pattern, expected):
    f = formula(parse_regex(pattern).tree)
    assert (None if f is None else str(f)) == expected


def test_pruning_keeps_every_branch_of_an_alternation_but_weakens_each():
    # The event-handler pattern of the managed rules, shortened: tag openers or quotes.
    pattern = (
        "(?i)(?:<|\\\\u003c|\\\\x3c|\\\\074)[a-z][^>]*?(?:[\\s/]|\\\\[nrt])on[a-z]{3,30}\\s*="
        "|(?:['\"`]|\\\\u0027|\\\\u0022)[^'\"`]*?on(?:error|load|click)\\s*="
    )
    # With a regex as dear as 30 scans (alone, a managed-rules regex costs 20-40).
    pruned = prefilter(parse_regex(pattern).tree, DEAR)
    assert pruned is not None and pruned.op == "and"
    # First one pass for each branch's most selective literals (tag openers, handler names)...
    first, then = pruned.items
    assert first.op == "or" and {"<", "\\u003c", "onerror", "onload"} <= _literals(first)
    # ...then both branches, each cut to its best few tests, on the rows that passed.
    assert then.op == "or" and len(then.items) == 2
    assert passes(pruned) < 0.05 and scans(pruned) < 10


def test_the_cost_model_keeps_cheap_selective_tests_and_drops_useless_ones():
    union = formula(parse_regex("(?i)union\\s+select").tree)
    pruned = prune(union, DEAR)
    # White space is in every row: not worth a scan.
    assert pruned is not None and {str(i) for i in pruned.items} == {"'union'", "'select'"}
    assert scans(pruned) < scans(union)
    # A newline separates every concatenated field: testing for it filters nothing.
    assert prefilter(parse_regex("[^a]\\n").tree, DEAR) is None
    # Letters are in every row too, even in one pass.
    assert prefilter(parse_regex("(?:a|e|o)\\d").tree, DEAR) is None
    # Many long literals: one RE2 pass over them all, far cheaper than a scan for each.
    many = prefilter(parse_regex("|".join(f"word{i}x" for i in range(40))).tree, DEAR)
    assert many is not None and one_pass(many) and scans(many) < 5
    # Without a shared prefix RE2 would scan every byte: a scan each instead.
    few = prefilter(parse_regex("passwd|shadow|sudoers").tree, DEAR)
    assert few is not None and few.op == "or" and not one_pass(few)


def _literals(f) -> set[str]:
    return {f.literal} if f.op == "lit" else {x for i in f.items for x in _literals(i)}


def _catalogue_patterns() -> list:
    out = []
    for ruleset in load_catalog().values():
        for rule in ruleset.rules:
            if " matches " not in rule.expression:
                continue  # "true" and the like: phase-specific names the parser lacks
            for node in walk(compile_expression(rule.expression).tree):
                if isinstance(node, Compare) and isinstance(node.rhs, Pattern):
                    out.append(node.rhs.compiled)
    return out


def _sample(node, rng: random.Random) -> bytes:
    """Bytes built along the pattern's tree: often a match, checked by the regex itself."""
    k = node.kind
    if k == "set":
        lo, hi = rng.choice(node.ranges)
        return bytes([rng.randint(lo, min(hi, lo + 40))])
    if k == "cat":
        return b"".join(_sample(i, rng) for i in node.items)
    if k == "alt":
        return _sample(rng.choice(node.items), rng)
    if k == "group":
        return _sample(node.items[0], rng)
    if k == "rep":
        hi = node.lo + 3 if node.hi is None else min(node.hi, node.lo + 3)
        return b"".join(_sample(node.items[0], rng) for _ in range(rng.randint(node.lo, hi)))
    if k in ("uany", "uclass"):
        return rng.choice([b"a", b" ", "\u00e9".encode()])
    return b""


def test_the_pruned_formula_holds_wherever_a_catalogue_regex_matches():
    rng = random.Random(5)
    noise = [b"", b" ", b"GET /index.html?a=1&b=2\n", b"Mozilla/5.0 (X11; Linux)\n"]
    patterns = _catalogue_patterns()
    # The Cloudflare Managed Ruleset's and the old package's regexes (the OWASP ruleset's
    # rules read cf.waf.crs.rules: its regexes are CRS's, run by the CRS program).
    assert len(patterns) > 80
    matched = 0
    for regex in patterns:
        full = formula(regex.tree)
        pruned = prune(full)
        for _ in range(12):
            text = rng.choice(noise) + _sample(regex.tree, rng) + rng.choice(noise)
            if not regex.search(text):
                continue
            matched += 1
            lowered = text.lower().decode("latin-1")
            assert full is None or full.holds(lowered), (regex.pattern, text)
            assert pruned is None or pruned.holds(lowered), (regex.pattern, text)
    assert matched > len(patterns) * 4  # most samples are matches: the property is exercised


CHECKS = {
    "xss": 'url_decode(http.request.uri.query, "r") matches '
    'r#"(?i)(?:<|\\\\u003c)[a-z][^>]*?\\son[a-z]{3,30}\\s*=|[\'\\"]\\s*on(?:error|load)\\s*="#',
    "hdr": 'any(http.request.headers.values[*] matches r#"(?i)union\\s+(?:all\\s+)?select"#)',
}
REQUESTS = [
    Request(url="/?q=%3Csvg%20onload%3Dalert(1)%3E"),
    Request(url="/?q=%5Cu003cIMG%20ONERROR=1"),
    Request(url="/?q=%22%20onerror%3D1"),
    Request(url="/?q=onload%3D1"),
    Request(url="/?q=caf%C3%A9%20%3Cb%20onclick%3Dx"),
    Request(url="/", headers={"X-A": "1 UNION ALL SELECT 2"}),
    Request(url="/", headers={"X-A": "union", "X-B": "caf\u00e9 select"}),
    Request(url="/"),
]


def test_formula_prefilters_in_sql_give_the_per_request_results(monkeypatch):
    monkeypatch.setattr(prefilter_module, "REGEX_COST", DEAR)  # regexes worth gating
    ev = Evaluator(log_plan(CHECKS))
    xss, hdr = ev.sql
    assert xss is not None and hdr is not None
    # Both branches' tag opener or quote is asked before the regex, nested for the "and".
    assert "contains(" in xss and "'<'" in xss and " OR " in xss and "THEN regexp_matches" in xss
    # List elements (short header values) are not lowered one by one: the list's joined
    # text is, once, and the gate asks it before the lambda (see list_gates).
    gate, _, exact = hdr.partition(" THEN ")
    assert "contains(" in gate and "'union'" in gate and "'select'" in gate
    assert "lambda" in exact and "regexp_matches(" in exact
    table, single = both_paths(ev, REQUESTS)
    assert table == single
    assert table == [["xss"], ["xss"], ["xss"], [], ["xss"], ["hdr"], [], []]
    # At the default cost the xss regex is cheaper run than gated: the same results.
    monkeypatch.undo()
    plain = Evaluator(log_plan(CHECKS))
    assert plain.sql[0] != xss and "contains(" not in plain.sql[0]
    assert both_paths(plain, REQUESTS) == (table, single)
