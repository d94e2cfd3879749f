"""The OWASP ruleset fires what the real CRS 3.3.4 fires on libmodsecurity, rule by rule.

The corpus: the CRS project's regression tests (v3.3.4), seeded generated traffic and the
payload lists in a query, a form and a JSON body. At each paranoia level the test prints
pair recall and precision (request x CRS rule), the share of requests whose fired set is
the same, and decision agreement at thresholds 5, 25, 40 and 60: scoring each fired rule
once, as the ruleset does, and against libmodsecurity's own totals (a rule counted once per
matched variable). Skipped with the reason when libmodsecurity or the rules are absent.
"""

from __future__ import annotations

import pytest

from tools.crs_reference import oracle as oracle_module
from tools.crs_reference.agreement import compare
from tools.crs_reference.corpus import (
    CRS4_PATH,
    generated_requests,
    payload_requests,
    regression_corpus,
)
from tools.crs_reference.odd_requests import odd_requests
from workbench.rulesets.crs.runtime import CrsEngine

pytestmark = pytest.mark.skipif(
    not oracle_module.available(), reason=oracle_module.unavailable_reason()
)

LEVELS = (1, 2, 4)
#: Floors a little under what was measured on 4,585 requests: recall, precision, equal sets and
#: decisions scored once per rule all 1.0000 at PL1, PL2 and PL4.
FLOOR = {"recall": 0.999, "precision": 0.998, "equal": 0.995, "decisions": 0.995}


@pytest.fixture(scope="module")
def corpus():
    requests = [c.request for c in regression_corpus()]
    requests += generated_requests(600, 20261128)
    requests += payload_requests()
    return requests


@pytest.fixture(scope="module")
def engine_runs(corpus):
    # The program runs every level at once; a level keeps its rules (CrsEngine.fired).
    engine = CrsEngine(4)
    return [set(engine.run(r).hits) for r in corpus]


@pytest.mark.parametrize("level", LEVELS)
def test_the_ruleset_fires_what_crs_fires(level, corpus, engine_runs, capsys):
    engine = CrsEngine(level)
    oracle = oracle_module.Oracle(paranoia_level=level)
    real, totals, ours = [], [], []
    for request, ran in zip(corpus, engine_runs, strict=True):
        result = oracle.run(request)
        real.append(result.rule_ids)
        totals.append(result.reported_score or 0)
        ours.append({i for i in ran if engine.levels.get(i, 9) <= level})
    once = compare(ours, real, engine.scores, label=f"PL{level}, each rule once")
    theirs = compare(
        ours, real, engine.scores, oracle_totals=totals, label=f"PL{level}, oracle's totals"
    )
    with capsys.disabled():
        print(f"\n{len(corpus)} requests")
        print(once.table(worst=5))
        print(theirs.table(worst=0))
    assert once.recall >= FLOOR["recall"] and once.precision >= FLOOR["precision"]
    assert once.equal_share >= FLOOR["equal"]
    for d in once.decisions:
        assert d.share >= FLOOR["decisions"], d


def test_the_fired_sets_agree_on_every_crs_rule(corpus, engine_runs):
    # Per rule over the whole corpus at PL4: no rule may be off on more than 2 requests (0 measured).
    oracle = oracle_module.Oracle(paranoia_level=4)
    real = [oracle.run(r).rule_ids for r in corpus]
    engine = CrsEngine(4)
    agreement = compare([set(r) for r in engine_runs], real, engine.scores)
    worst = [r for r in agreement.rules if r.errors > 2]
    assert not worst, worst


@pytest.mark.parametrize(
    "source",
    [
        # CRS 4.28.0's regression requests, written for CRS 4, so new to the 3.3.4
        # translation and its tests: 4,969 of 4,969 fired sets equal (15,771 pairs).
        "crs4",
        # Seeded odd requests (cut bodies, lying lengths, escapes everywhere): 3,000 of
        # 3,000 equal (23,391 pairs); seeds 2 and 3 at 10,000 each gave the same.
        "odd",
    ],
)
def test_the_fired_sets_agree_on_requests_the_translation_never_saw(source):
    if source == "crs4":
        requests = [c.request for c in regression_corpus(CRS4_PATH)]
    else:
        requests = odd_requests(3000, seed=1)
    oracle = oracle_module.Oracle(paranoia_level=4)
    engine = CrsEngine(4)
    agreement = compare(
        [set(engine.run(r).hits) for r in requests],
        [oracle.run(r).rule_ids for r in requests],
        engine.scores,
        label=f"{source}, PL4",
    )
    assert agreement.equal_share >= 0.999, agreement.table(worst=5)
    assert agreement.recall >= 0.999 and agreement.precision >= 0.999
    assert agreement.true_positives > 15_000  # (request, rule) pairs both fire
