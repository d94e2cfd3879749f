"""The loose form of a regex (rules_language.regex_relax) matches wherever the exact one does."""

from __future__ import annotations

import json
import random
from pathlib import Path

import re2

from workbench.rules_language import ExpressionError, compile_expression
from workbench.rules_language.ast import Compare, Pattern, walk
from workbench.rules_language.regex import parse_regex
from workbench.rules_language.regex_relax import relax, relaxed_pattern

CATALOG = Path(__file__).resolve().parents[2] / "workbench" / "rulesets" / "catalog"


def _catalogue_patterns() -> list[str]:
    out = []
    for path in sorted(CATALOG.glob("*.json")):
        for text in _expressions(json.loads(path.read_text())):
            try:
                tree = compile_expression(text).tree
            except ExpressionError:
                continue  # a ruleset's "true" and the like: no pattern in it
            for node in walk(tree):
                if (
                    isinstance(node, Compare)
                    and node.op == "matches"
                    and isinstance(node.rhs, Pattern)
                ):
                    out.append(node.rhs.compiled.pattern)
    return out


def _expressions(doc) -> list[str]:
    if isinstance(doc, dict):
        found = [doc["expression"]] if isinstance(doc.get("expression"), str) else []
        return found + [e for v in doc.values() for e in _expressions(v)]
    if isinstance(doc, list):
        return [e for v in doc for e in _expressions(v)]
    return []


def _search(pattern: str, data: bytes) -> bool:
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1
    return re2.compile(pattern.encode("latin-1"), options).search(data) is not None


def test_only_broad_long_counts_are_loosened():
    assert relaxed_pattern(parse_regex("a[^x]{0,60}b").tree, utf8=False) == (
        "a(?:[\\x{00}-wy-\\x{ff}])*b"
    )
    assert relax(parse_regex("a[a-z]{3,30}b").tree) is None  # a narrow class: left as it is
    assert relax(parse_regex("a[^x]{0,15}b").tree) is None  # a short count: left as it is
    assert relax(parse_regex("(?:ab|c)").tree) is None


def test_the_loose_form_matches_wherever_the_exact_one_does():
    patterns = [p for p in _catalogue_patterns() if relax(parse_regex(p).tree) is not None]
    assert len(patterns) >= 3  # the catalogue has such counts (XSS, SQL injection rules)
    rng = random.Random(7)
    pieces = [
        b"<",
        b">",
        b"'",
        b'"',
        b"on",
        b"load",
        b"click",
        b"=",
        b" ",
        b"/",
        b"select",
        b"from",
    ]
    pieces += [b"x" * 40, b"a", b"\n", b"\\", b"(", b")", b"`", b"union", b"error"]
    checked = matched = 0
    for pattern in patterns:
        regex = parse_regex(pattern)
        loose = relaxed_pattern(regex.tree, utf8=False)
        assert loose is not None
        for _ in range(300):
            data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
            exact = regex.search(data)
            assert _search(regex.sql_view_pattern(), data) == exact
            if exact:
                matched += 1
                assert _search(loose, data), (pattern, data)
            checked += 1
    assert matched > 20 and checked == 300 * len(patterns)
