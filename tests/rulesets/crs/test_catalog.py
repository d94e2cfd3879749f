"""The OWASP catalogue is generated from Debian's CRS 3.3.4, byte for byte, and carries its provenance."""

from __future__ import annotations

import json

import pytest

from tools.crs_reference.translate import (
    FIXED_IDS,
    RULES_DIR,
    SEVERITY_SCORES,
    build_catalog,
    dump_catalog,
)
from workbench.rulesets.catalog import load_catalog
from workbench.rulesets.crs.runtime import CATALOG

OWASP = "4814384a9e5d4991b9815dcfc25d2f1f"


@pytest.mark.skipif(not RULES_DIR.is_dir(), reason="Debian's modsecurity-crs is not installed")
def test_the_committed_catalogue_regenerates_byte_for_byte() -> None:
    text = dump_catalog(build_catalog())
    assert CATALOG.read_text(encoding="utf-8") == text, (
        "owasp_core.json differs from what the rules give: run python tools/build_owasp_catalog.py"
    )


def test_the_catalogue_carries_provenance_and_notice() -> None:
    data = json.loads(CATALOG.read_text(encoding="utf-8"))
    assert data["provenance"]["crs_version"] == "3.3.4"
    files = data["provenance"]["files"]
    assert "REQUEST-942-APPLICATION-ATTACK-SQLI.conf" in files
    assert all(len(h) == 64 for h in files.values())
    assert "Apache License, Version 2.0" in data["notice"]
    assert not any(name.startswith(("REQUEST-910", "REQUEST-903")) for name in files)


def test_one_managed_rule_per_scoring_crs_rule_plus_949110() -> None:
    ruleset = load_catalog(CATALOG)[OWASP]
    data = json.loads(CATALOG.read_text(encoding="utf-8"))
    crs_ids = [r["crs_id"] for r in data["rules"]]
    assert len(crs_ids) == len(set(crs_ids)) > 190
    assert all(911000 <= i < 945000 for i in crs_ids[:-1]) and crs_ids[-1] == 949110
    last = ruleset.rules[-1]
    assert last.id == FIXED_IDS[949110] and last.score_threshold == 40
    for rule, raw in zip(ruleset.rules[:-1], data["rules"][:-1], strict=True):
        assert rule.description.startswith(f"{raw['crs_id']}: ")
        assert rule.score in SEVERITY_SCORES.values()
        assert f"paranoia-level-{rule.paranoia_level}" in rule.categories
        assert len(rule.id) == 32
    sqli = next(r for r in ruleset.rules if r.description.startswith("942100:"))
    assert sqli.description == "942100: SQL Injection Attack Detected via libinjection"
    assert "sqli" in sqli.categories and sqli.score == 5 and sqli.paranoia_level == 1


def test_a_users_rule_cannot_read_the_managed_only_field() -> None:
    from workbench.rules_language import MANAGED, ExpressionError, compile_expression

    # As the engine words it: inside any() a name starting with hex letters that does not
    # resolve is unrecognised input; outside, an unknown identifier.
    with pytest.raises(ExpressionError, match="unrecognised input"):
        compile_expression("any(cf.waf.crs.rules[*] == 942100)")
    with pytest.raises(ExpressionError, match="unknown identifier"):
        compile_expression("cf.waf.crs.rules[0] == 942100")
    assert compile_expression("any(cf.waf.crs.rules[*] == 942100)", MANAGED).matches(
        {"cf.waf.crs.rules": [942100]}
    )
