"""The old OWASP package is generated from CRS 2.2.9, byte for byte, and carries its provenance.

The regeneration needs the CRS 2.2.9 source (a git mirror of coreruleset/coreruleset:
``$WORKBENCH_CRS2_REPO`` or the default mirror path) and skips without it; everything
else reads the committed files only.
"""

from __future__ import annotations

import json
import re

import pytest

from tools.crs_reference.source_crs2 import BASE, SETUP, TAG, checkout, unavailable_reason
from tools.crs_reference.translate_crs2 import (
    OWASP_PACKAGE,
    RULE_FILES,
    build_package,
    build_packages,
    build_program,
    dump,
)
from workbench.rules_language import MANAGED, ExpressionError, compile_expression
from workbench.rulesets.crs.request import raw_from_request as raw_request
from workbench.rulesets.crs.runtime_crs2 import CATALOG as PROGRAM
from workbench.rulesets.crs.runtime_crs2 import Crs2Engine
from workbench.traffic.request import Request
from workbench.waf_legacy.catalog import CATALOG_FILE, CLOUDFLARE_PACKAGE, load_catalog

PACKAGES = PROGRAM.parent / "packages.json"
SOURCE_MISSING = unavailable_reason()
#: Groups of the hand-written package, whose ids zones' data and tests name.
KEPT_GROUPS = {
    "db48f3ac82d63325360606bba318ade9": "OWASP Protocol Violations",
    "2da7bbc2fab62ea06023eb132b1e1286": "OWASP Protocol Anomalies",
    "d81973a72b64268eee8363759d83aef6": "OWASP Bad Robots",
    "34af2e55757a0bb800a9a158315316d0": "OWASP Generic Attacks",
    "65a7c4d7abf94b512bc58a77ea790bd7": "OWASP SQL Injection Attacks",
    "5b7d75240cd9bed5e4c5301b2be09bbe": "OWASP XSS Attacks",
    "1a3537fb6d01b4063cbc1245d60db3f8": "OWASP Trojans",
}


def _program() -> dict:
    return json.loads(PROGRAM.read_text(encoding="utf-8"))


@pytest.mark.skipif(bool(SOURCE_MISSING), reason=SOURCE_MISSING or "-")
def test_both_files_regenerate_byte_for_byte_from_crs_2_2_9() -> None:
    program = build_program(checkout())
    assert PROGRAM.read_text(encoding="utf-8") == dump(program), (
        "owasp_crs2.json differs from what CRS 2.2.9 gives: run python tools/build_old_owasp_package.py"
    )
    current = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    assert PACKAGES.read_text(encoding="utf-8") == dump(build_packages(program, current))


def test_the_program_carries_provenance_and_notice() -> None:
    data = _program()
    prov = data["provenance"]
    assert (prov["crs_version"], prov["tag"]) == ("2.2.9", TAG)
    assert re.fullmatch(r"[0-9a-f]{40}", prov["commit"])
    files = prov["files"]
    assert set(files) == {SETUP, *(f"{BASE}/{f.name}" for f in RULE_FILES)}
    assert all(
        re.fullmatch(r"[0-9a-f]{64}", h) for h in [*files.values(), *prov["data_files"].values()]
    )
    assert {"981227", "950922"} <= set(prov["left_out_rules"])
    assert f"{BASE}/modsecurity_crs_50_outbound.conf" in prov["left_out_files"]
    for notice in (
        data["notice"],
        json.loads(PACKAGES.read_text("utf-8"))["packages"][1]["notice"],
    ):
        assert "Apache License, Version 2.0" in notice and prov["commit"] in notice
    # The phrase files travel as data; the rule files themselves are not committed.
    assert set(data["crs"]["data"]) == {
        "modsecurity_35_scanners.data",
        "modsecurity_35_bad_robots.data",
        "modsecurity_40_generic_attacks.data",
    }


def test_the_anomaly_mode_set_up_is_in_the_tx_defaults() -> None:
    tx = _program()["crs"]["tx"]
    assert tx["anomaly_score_blocking"] == "on"
    assert (tx["critical_anomaly_score"], tx["notice_anomaly_score"]) == ("5", "2")
    assert tx["allowed_methods"] == "GET HEAD POST OPTIONS"
    ids = [e.get("id") for e in _program()["crs"]["program"]]
    assert 900017 in ids and 981176 in ids and 981227 not in ids and 950922 not in ids


def test_the_package_is_the_program_data_s_and_the_cloudflare_package_is_unchanged() -> None:
    packages = json.loads(PACKAGES.read_text(encoding="utf-8"))
    current = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    owasp = next(p for p in packages["packages"] if p["id"] == OWASP_PACKAGE)
    assert owasp == build_package(_program())
    cloudflare = [p for p in packages["packages"] if p["id"] == CLOUDFLARE_PACKAGE]
    assert cloudflare == [p for p in current["packages"] if p["id"] == CLOUDFLARE_PACKAGE]


def test_the_package_loads_with_one_rule_per_scoring_crs_rule() -> None:
    package = load_catalog(PACKAGES).package(OWASP_PACKAGE)
    assert package is not None and package.anomaly
    groups = {g.id: g.name for g in package.groups}
    assert KEPT_GROUPS.items() <= groups.items() and len(groups) == 10
    scoring = {int(r["id"]): r for r in _program()["rules"]}
    assert [int(r.id) for r in package.rules] == list(scoring)
    for group in package.groups:
        assert [r.priority for r in group.rules] == [str(n) for n in range(1, len(group.rules) + 1)]
    for rule in package.rules:
        assert rule.score == scoring[int(rule.id)]["score"] in (2, 3, 4, 5)
        assert rule.compiled is not None
        assert rule.compiled.matches({"cf.waf.crs2.rules": [int(rule.id)]})
        assert not rule.compiled.matches({"cf.waf.crs2.rules": [981176]})
    sqli = package.rule("959071")
    assert sqli is not None and sqli.description == "SQL Injection Attack" and sqli.score == 5
    # 960911 is a WARNING that adds the notice score: the score is what the rule adds.
    assert package.rule("960911") is not None and package.rule("960911").score == 2


def test_only_managed_rules_read_the_field() -> None:
    # As the engine words it: inside any() a name starting with hex letters that does not
    # resolve is unrecognised input; outside, an unknown identifier.
    with pytest.raises(ExpressionError, match="unrecognised input"):
        compile_expression("any(cf.waf.crs2.rules[*] == 959071)")
    with pytest.raises(ExpressionError, match="unknown identifier"):
        compile_expression("cf.waf.crs2.rules[0] == 959071")
    assert compile_expression("any(cf.waf.crs2.rules[*] == 959071)", MANAGED).matches(
        {"cf.waf.crs2.rules": [959071]}
    )


def test_the_field_runs_the_committed_program_once_per_request() -> None:
    request = Request(
        "GET",
        "https://a.example/item?id=1%27%20or%20%271%27%3D%271",
        {"User-Agent": "Mozilla/5.0", "Accept": "*/*"},
    )
    fired = request.fields(["cf.waf.crs2.rules"])["cf.waf.crs2.rules"]
    assert 959071 in fired and fired == sorted(fired)
    assert request.__dict__["_crs2_result"] is not None
    assert "_crs_result" not in request.__dict__  # the CRS 3 run is another one
    engine = Crs2Engine()
    assert engine.fired(raw_request(request)) == {i for i in fired if i in engine.scores}
    assert engine.blocks({959071, 959073, 981243, 981244, 981245}, "high")
    assert not engine.blocks({959071}, "high") and not engine.blocks(set(), "low")
