"""url_decode of a concatenation decoded part by part (workbench.replay._decode_split)."""

from __future__ import annotations

import random

import pytest
from traffic_helpers import both_paths, log_plan

from workbench.replay._decode_split import split_decode
from workbench.replay._evaluate import Evaluator
from workbench.rules_language import compile_expression
from workbench.rules_language.ast import Call, walk
from workbench.traffic.request import Request

# Text made of what escapes are made of, so that escapes cut by a separator are common.
ALPHABET = "%%%uU0123456789aAfF+gz\n<>é"


def _call(text: str) -> Call:
    tree = compile_expression(text).tree
    return next(n for n in walk(tree) if isinstance(n, Call) and n.name == "url_decode")


@pytest.mark.parametrize(
    "joined",
    [
        'concat(http.request.uri, "1", http.cookie)',  # a hex digit could finish an escape
        'concat(http.request.uri, "u", http.cookie)',  # ... or make a %u escape
        'concat(http.request.uri, "%", http.cookie)',  # a separator a pass would change
        'concat(http.request.uri, "+", http.cookie)',
        "concat(http.request.uri, http.cookie)",  # parts side by side
        'concat(http.request.uri, "", http.cookie)',
    ],
)
def test_parts_that_an_escape_could_span_are_not_split(joined):
    assert split_decode(_call(f'url_decode({joined}, "r") eq ""')) is None


def test_a_separator_that_keeps_escapes_apart_splits_the_call():
    parts = split_decode(
        _call('url_decode(concat(">", http.request.uri, "\\x0a;", http.cookie)) eq ""')
    )
    assert parts is not None
    assert [getattr(p, "name", None) for p in parts] == [None, "url_decode", None, "url_decode"]
    assert split_decode(_call('url_decode(http.request.uri, "r") eq ""')) is None


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))


@pytest.mark.parametrize("options", ["", "r", "u", "ur"])
def test_the_whole_table_path_decodes_a_split_concatenation_as_the_per_request_path(options):
    rng = random.Random(f"split-{options}")
    decoded = f'url_decode(concat(http.request.uri, "\\x0a", http.cookie, "\\x0a", http.user_agent), "{options}")'
    checks = {
        "eq": f'{decoded} eq "/A\\x0a%41\\x0aB"',
        "escape": f'{decoded} contains "%"',
        "spanned": f'{decoded} contains "A"',
        "len": f"len({decoded}) gt 6",
        "high": f'{decoded} matches "[\\\\x80-\\\\xff]"',
    }
    requests = [Request(url="/A", headers={"Cookie": "%2541", "User-Agent": "B"})]
    for _ in range(400):
        requests.append(
            Request(
                url="/" + _random_text(rng),
                headers={"Cookie": _random_text(rng), "User-Agent": _random_text(rng)},
            )
        )
    ev = Evaluator(log_plan(checks))
    assert all(ev.sql)
    assert any("url_decode" not in c.sql and "_wb_s" in c.sql for c in ev.query.columns)
    table, single = both_paths(ev, requests)
    assert table == single
    assert all(set(found) <= set(checks) for found in table)
    assert sum(bool(found) for found in table) > 50  # the checks do match, on both paths
