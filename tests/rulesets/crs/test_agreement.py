"""The agreement figures (tools.crs_reference.agreement) on small hand-made sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.crs_reference.agreement import (
    Agreement,
    compare,
    counted,
    rule_levels,
    rule_scores,
    score,
)

SCORES = {913100: 5, 920350: 3, 942100: 5, 942200: 5, 941100: 5, 920273: 2}


def test_only_detection_rules_count_as_pairs():
    assert counted({901100, 911100, 944999, 945000, 949110, 980130}) == {911100, 944999}


def test_pairs_recall_precision_and_equal_sets():
    simulated = [{942100, 949110}, {942100, 942200}, set(), {920350}]
    oracle = [{942100, 949110, 901340}, {942100}, {941100}, {920350}]
    a = compare(simulated, oracle, SCORES)
    assert (a.true_positives, a.false_positives, a.false_negatives) == (3, 1, 1)
    assert a.recall == pytest.approx(3 / 4) and a.precision == pytest.approx(3 / 4)
    # 949110 and 901340 are not counted, so the first request's sets are equal.
    assert a.equal_sets == 2 and a.equal_share == pytest.approx(0.5)
    assert a.requests == 4


def test_per_rule_counts_and_worst_rules():
    simulated = [{942100}, {942100, 942200}, {942200}, set()]
    oracle = [{942100}, {942100}, {941100}, {941100}]
    a = compare(simulated, oracle, SCORES)
    rules = {r.rule_id: (r.true_positives, r.false_positives, r.false_negatives) for r in a.rules}
    assert rules == {941100: (0, 0, 2), 942100: (2, 0, 0), 942200: (0, 2, 0)}
    assert [r.rule_id for r in a.worst_rules(2)] == [941100, 942200]  # ties broken by id
    by_id = {r.rule_id: r for r in a.rules}
    assert by_id[941100].recall == 0 and by_id[941100].precision == 1.0
    assert by_id[942200].precision == 0 and by_id[942100].recall == 1.0


def test_decisions_at_thresholds():
    simulated = [{942100}, {920350, 920273}, {942100, 942200, 941100}, set()]
    oracle = [{942100}, {920350}, {942100, 942200, 941100, 913100}, {941100}]
    a = compare(simulated, oracle, SCORES, thresholds=(5, 15, 20))
    assert [score(s, SCORES) for s in simulated] == [5, 5, 15, 0]
    five, fifteen, twenty = a.decisions
    # At 5: both block 0 and 2; the simulation alone blocks 1 (3+2), the oracle alone 3.
    assert (five.both_block, five.simulation_only, five.oracle_only, five.agree) == (2, 1, 1, 2)
    assert (fifteen.both_block, fifteen.simulation_only, fifteen.oracle_only) == (1, 0, 0)
    assert fifteen.share == 1.0
    assert (twenty.both_block, twenty.oracle_only) == (0, 1)
    assert a.decision(15) is fifteen
    with pytest.raises(KeyError):
        a.decision(60)


def test_totals_decide_instead_of_scored_sets():
    # libmodsecurity adds a rule's score once per matched variable: 942100 twice is 10.
    a = compare([{942100}], [{942100}], SCORES, thresholds=(5, 10), oracle_totals=[10])
    assert a.decision(5).agree == 1
    assert a.decision(10).oracle_only == 1
    b = compare([{942100}], [set()], SCORES, thresholds=(5,), simulated_totals=[0])
    assert b.decision(5).agree == 1
    # Separate scores for the oracle's side.
    c = compare([{920350}], [{920350}], SCORES, thresholds=(5,), oracle_scores={920350: 5})
    assert c.decision(5).oracle_only == 1


def test_empty_and_mismatched_inputs():
    a = compare([], [], SCORES)
    assert (a.recall, a.precision, a.equal_share) == (1.0, 1.0, 1.0)
    assert all(d.share == 1.0 for d in a.decisions)
    assert [d.threshold for d in a.decisions] == [5, 25, 40, 60]
    with pytest.raises(ValueError):
        compare([set()], [], SCORES)
    with pytest.raises(ValueError):
        compare([set()], [set()], SCORES, oracle_totals=[1, 2])


def test_the_table_names_the_figures_and_the_worst_rules():
    a = compare([{942100}, {942200}], [{942100}, {941100}], SCORES, label="PL2")
    text = a.table(worst=5)
    assert text.splitlines()[0] == "CRS agreement over 2 requests (PL2)"
    assert "recall  50.00%" in text and "precision  50.00%" in text
    assert "same fired set: 1 / 2 (50.00%)" in text
    assert "threshold" in text and "worst rules (2 of 2)" in text
    assert "941100" in text and "942200" in text
    assert "942100" not in text.split("worst rules")[1]  # no errors, not listed
    assert isinstance(a, Agreement)
    with pytest.raises(AttributeError):
        a.requests = 3  # type: ignore[misc]


RULES = r"""
# A comment with id:999999 and setvar:'tx.anomaly_score_pl1=+%{tx.critical_anomaly_score}'
SecRule ARGS "@rx a" \
    "id:942100,\
    phase:2,\
    block,\
    tag:'paranoia-level/1',\
    severity:'CRITICAL',\
    setvar:'tx.anomaly_score_pl1=+%{tx.critical_anomaly_score}'"

SecRule REQUEST_HEADERS:Content-Length "!@rx ^\d+$" \
    "id:920160,\
    phase:1,\
    block,\
    tag:'paranoia-level/2',\
    severity:'WARNING',\
    chain"
    SecRule &ARGS "@gt 0" \
        "setvar:'tx.anomaly_score_pl2=+%{tx.warning_anomaly_score}'"

SecRule REQUEST_URI "@rx b" "id:920273,phase:2,pass,tag:'paranoia-level/4',\
    setvar:'tx.anomaly_score_pl4=+%{tx.notice_anomaly_score}'"
SecRule TX:EXECUTING_PARANOIA_LEVEL "@lt 2" "id:942013,phase:1,pass,nolog,skipAfter:END"
"""


def test_rule_scores_and_levels_from_rule_files(tmp_path: Path):
    (tmp_path / "REQUEST-942-TEST.conf").write_text(RULES)
    (tmp_path / "RESPONSE-950-TEST.conf").write_text(RULES.replace("942100", "950100"))
    assert rule_scores(tmp_path) == {942100: 5, 920160: 3, 920273: 2}
    assert rule_levels(tmp_path) == {942100: 1, 920160: 2, 920273: 4}
