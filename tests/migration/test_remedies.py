"""The migration's remedies: the bodies they PUT and the custom rules they propose."""

from __future__ import annotations

import pytest

from workbench.migration.remedies import (
    MAX_EXPRESSION,
    custom_rules_for,
    remedy_for,
    with_override,
)
from workbench.rules_language import compile_expression
from workbench.rules_language.parser import MAX_LENGTH


def _entry():
    return [
        {"id": "r0", "version": "3", "action": "execute", "expression": "true",
         "action_parameters": {"id": "owasp", "overrides": {"categories": [{"category": "paranoia-level-2", "enabled": False}],
                                                              "rules": [{"id": "a", "score_threshold": 40}]}}},
    ]  # fmt: skip


def test_an_override_merges_into_the_execute_rule_and_keeps_what_it_had():
    rules = with_override(_entry(), "owasp", "a", "log")
    params = rules[0]["action_parameters"]
    assert params["overrides"]["rules"] == [
        {"id": "a", "score_threshold": 40, "action": "log", "enabled": True}
    ]
    assert params["overrides"]["categories"][0]["category"] == "paranoia-level-2"
    assert "version" not in rules[0]  # what a PUT takes only
    disabled = with_override(_entry(), "owasp", "b", "disable")
    assert disabled[0]["action_parameters"]["overrides"]["rules"][1] == {
        "id": "b",
        "enabled": False,
    }


def test_an_override_is_refused_without_its_ruleset_or_with_an_unknown_way():
    with pytest.raises(ValueError, match="no execute rule of the entry point runs ruleset x"):
        with_override(_entry(), "x", "a", "log")
    with pytest.raises(ValueError, match="how must be one of log, disable"):
        with_override(_entry(), "owasp", "a", "block")


def test_uri_rules_split_at_the_languages_limit_and_all_compile():
    assert MAX_EXPRESSION == MAX_LENGTH  # one limit, the language's
    rows = [
        {"old_rules": "981176", "old_action": "challenge", "path": f"/p/{i:04d}/" + "x" * 80,
         "query": "q=1"}
        for i in range(120)
    ]  # fmt: skip
    made = custom_rules_for(rows, catalog=None)
    assert len(made) > 1 and {r["action"] for r in made} == {"challenge"}
    for rule in made:
        assert len(rule["expression"]) <= MAX_EXPRESSION
        compile_expression(rule["expression"])
    listed = "".join(r["expression"] for r in made)
    assert all(f"/p/{i:04d}/" in listed for i in range(120))


def test_a_refusal_code_has_its_remedy_and_an_unknown_one_none():
    assert remedy_for(10700).startswith("advance the virtual clock")
    assert remedy_for(99999) == "" and remedy_for("10700") == ""
