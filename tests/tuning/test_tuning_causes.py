"""Marked requests blocked by different rules: candidates that clear them together, or by cause.

A person who marks several false positives blocked by different managed rules must get
candidates that clear them all at once (the narrowest combination) or, when no one change
can, candidates for each cause with the reason; never an empty list that says nothing.
"""

from __future__ import annotations

import pytest

from workbench import Workbench
from workbench.traffic import Request, generate
from workbench.tuning import candidates as cands

TRACE = Request("TRACE", "https://example.com/status", label="benign")
PHPUNIT = Request(
    "GET", "https://example.com/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php", label="benign"
)


@pytest.fixture(scope="module")
def whatif():
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="pro")
    reqs = [Request.from_raw(r) for r in generate(200, seed=2)] + [TRACE, PHPUNIT]
    return wb, wb.tuning.whatif(zone.id, reqs, progress=False)


def marked(w) -> list[str]:
    return [str(r) for r in w.requests.ray_id[-2:]]


def test_two_requests_blocked_by_two_managed_rules_get_one_combined_candidate(whatif):
    wb, w = whatif
    assert list(w.requests.new_action[-2:]) == ["block", "block"]
    found = wb.tuning.propose(w, marked(w))
    assert found.reason == "" and len(found) >= 1
    first = found[0]
    assert first.kind == "rule" and first.title == "log only the 2 rules that blocked them"
    assert sorted(first.clears) == sorted(marked(w))
    # Applied, it clears both, as predicted.
    assert all(first.actions[i] == "pass" for i in (len(w.requests) - 2, len(w.requests) - 1))
    logged = [o["rules"][0] for o in first.change["overrides"]]
    assert [r["action"] for r in logged] == ["log", "log"]


def test_when_no_one_change_clears_them_each_cause_gets_its_candidates_and_a_reason(
    whatif, monkeypatch
):
    wb, w = whatif
    real = cands._candidates

    def no_combination(whatif, idx, blocking):
        return [] if len(idx) > 1 else real(whatif, idx, blocking)

    monkeypatch.setattr(cands, "_candidates", no_combination)
    found = wb.tuning.propose(w, marked(w))
    assert found, "candidates for each cause"
    assert found.reason.startswith("no single exception clears all 2 marked requests: 2 different")
    assert "Anomaly:Method" in found.reason and "PHPUnit" in found.reason
    assert sorted(len(v) for v in found.groups.values()) == [1, 1]
    assert {tuple(c.clears) for c in found} == {(r,) for r in marked(w)}
    assert all("(for the 1 blocked by rule " in c.title for c in found)


def test_an_empty_answer_always_says_why(whatif, monkeypatch):
    wb, w = whatif
    monkeypatch.setattr(cands, "_candidates", lambda whatif, idx, blocking: [])
    found = wb.tuning.propose(w, marked(w))
    assert list(found) == []
    assert "2 different causes" in found.reason and "None was found for: rule " in found.reason
    found = wb.tuning.propose(w, marked(w)[:1])
    assert list(found) == [] and found.reason.startswith(
        "no exception the tuning can write clears the 1 marked request, all blocked by rule "
    )
