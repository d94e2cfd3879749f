"""Guards: which decoder checks go back to the per-request path, and both paths agree."""

from __future__ import annotations

import json
from pathlib import Path

from traffic_helpers import both_paths, log_plan

import workbench
from workbench.replay._evaluate import Evaluator
from workbench.replay._guards import guards
from workbench.rules_language import compile_expression
from workbench.traffic.generators import generate
from workbench.traffic.request import Request

PACKAGE = Path(workbench.__file__).parent
CATALOGUES = [
    PACKAGE / "rulesets" / "catalog" / "owasp_core.json",
    PACKAGE / "rulesets" / "catalog" / "cloudflare_managed.json",
    PACKAGE / "waf_legacy" / "catalog" / "packages.json",
]

URI = "http.request.uri"
CHECKS = {
    # Read exactly over the decoded bytes' view: no guard.
    "dots": f'url_decode({URI}, "r") matches r#"(?:\\.|\\xc0\\xae){{2}}(?:/|\\xc0\\xaf)"#',
    "lower": f'lower(url_decode({URI})) contains "\\xc0\\xae"',
    "len": f'len(concat(url_decode({URI}, "r"), "\\xff")) gt 12',
    "headers": 'any(url_decode(http.request.headers.values[*], "r")[*] contains "${jndi")',
    "b64": 'decode_base64(http.request.uri.query) contains "\\xff"',
    # Functions that read a view back as text: guarded.
    "split": f'split(url_decode({URI}), "/", 3)[1] eq "\\xc0\\xae\\xc0\\xae"',
    "coalesce": f'coalesce(url_decode({URI}, "r"), "x") eq "/caf\\xc3\\xa9"',
    "join": 'join(url_decode(http.request.headers.values[*]), ",") contains "\\xc0\\xae"',
}
GUARDED = {"split", "coalesce", "join"}

ODD = [
    Request(url="/%c0%ae%c0%ae/%c0%afetc/passwd"),
    Request(url="/%2525c0%2525ae%2525c0%2525ae/x"),
    Request(url="/caf%C3%A9"),
    Request(url="/caf\u00e9"),
    Request(url="/?%ff%fe=1"),
    Request(url="/?/w=="),
    Request(url="/x", headers={"X-Api": "${jndi:ldap://%c0%ae}", "X-B": "%ff"}),
]


def test_only_functions_that_read_views_as_text_are_guarded():
    guarded = {k for k, source in CHECKS.items() if guards(compile_expression(source))}
    assert guarded == GUARDED
    assert guards(compile_expression(CHECKS["split"])) == [
        f'not (url_decode({URI}) matches "[\\x80-\\xff]")'
    ]
    assert guards(compile_expression(CHECKS["join"])) == [
        'not any(url_decode(http.request.headers.values[*])[*] matches "[\\x80-\\xff]")'
    ]


def test_no_check_of_the_managed_catalogues_needs_a_guard():
    expressions: list[str] = []

    def collect(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "expression" and isinstance(value, str):
                    expressions.append(value)
                else:
                    collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    for path in CATALOGUES:
        collect(json.loads(path.read_text()))
    decoding = [e for e in expressions if "url_decode(" in e or "decode_base64(" in e]
    assert len(decoding) > 100
    assert [e for e in decoding if guards(compile_expression(e))] == []


def test_both_paths_agree_and_guards_send_back_only_the_guarded_checks():
    requests = [Request.from_raw(r) for r in generate(2_000, seed=3)]
    requests += ODD
    ev = Evaluator(log_plan(CHECKS))
    table, single = both_paths(ev, requests)
    assert table == single
    n = len(requests)
    # Every check fired somewhere on the odd requests, so the agreement is not vacuous.
    assert {k for ids in table[-len(ODD) :] for k in ids} == set(CHECKS)
    # Cells sent back: rows whose decoding is not ASCII, for the guarded checks only.
    assert 0 < ev.stats["guarded_cells"] < len(GUARDED) * n
