"""Candidates: they clear the marked requests, nothing wider than their blast radius, in order."""

from __future__ import annotations

import copy

import hcl2
import numpy as np
import pytest
from tuning_helpers import ENTRY

from workbench import Workbench
from workbench.api import ApiClient
from workbench.replay import Pipeline
from workbench.rulesets import MANAGED_PHASE
from workbench.traffic import generate
from workbench.tuning import KINDS, RiskNotAccepted
from workbench.tuning.candidates import predict
from workbench.tuning.config import NewConfig


@pytest.fixture(scope="module")
def candidates(strict, false_positives):
    wb, _, w = strict
    return wb.tuning.propose(w, false_positives)


def test_every_kind_is_proposed_narrowest_first(candidates):
    kinds = [c.kind for c in candidates]
    assert set(kinds) == set(KINDS)
    assert kinds == sorted(kinds, key=KINDS.index)
    for c in candidates:
        attacks = c.blast[c.blast.attack]
        assert c.blast.attack.tolist()[: len(attacks)] == [True] * len(attacks)  # attacks first
        assert c.lets_attack_through == bool(
            ((c.blast.effect == "stops blocking") & c.blast.attack).any()
        )


def test_each_candidate_applied_clears_the_marked_and_nothing_beyond_its_blast_radius(
    strict, false_positives, candidates
):
    wb, zone, w = strict
    restore = w.config.body()
    for c in candidates:
        applied = wb.tuning.apply(zone.id, c, w, accept_risk=True)
        try:
            after = applied.after.requests.set_index("ray_id").new_action
            assert all(after[r] == "pass" for r in false_positives), c.title
            assert applied.as_predicted, c.title
            before = w.requests.set_index("ray_id").new_action
            stopped = set(before.index[(before != "pass") & (after == "pass")])
            declared = set(c.blast.ray_id[c.blast.effect == "stops blocking"])
            assert stopped - set(false_positives) == declared, c.title
        finally:
            wb.migration.put_entrypoint(zone.id, MANAGED_PHASE, copy.deepcopy(restore))


def test_a_risky_candidate_needs_accept_risk(strict, candidates):
    wb, zone, w = strict
    risky = next(c for c in candidates if c.lets_attack_through)
    version = wb.rulesets.get_entrypoint(zone.id, MANAGED_PHASE).version
    with pytest.raises(RiskNotAccepted, match="accept_risk=True"):
        wb.tuning.apply(zone.id, risky, w)
    assert wb.rulesets.get_entrypoint(zone.id, MANAGED_PHASE).version == version


def test_skip_rule_comes_before_the_execute_rules_and_order_matters(
    strict, false_positives, candidates
):
    wb, zone, w = strict
    skip = next(c for c in candidates if c.kind == "skip")
    rules = skip.body["rules"]
    position = next(i for i, r in enumerate(rules) if r["action"] == "skip")
    assert all(r["action"] == "execute" for r in rules[position + 1 :])
    # Moved after the execute rules, the same skip clears nothing.
    moved = [r for r in rules if r["action"] != "skip"] + [rules[position]]
    actions, _ = predict(w, NewConfig(wb, zone.id, moved, "test"))
    idx = [w.requests.ray_id.tolist().index(r) for r in false_positives]
    assert all(actions[i] == "block" for i in idx)
    wb.migration.put_entrypoint(zone.id, MANAGED_PHASE, {"rules": moved})
    try:
        run = Pipeline(wb, zone.id).replay([w.reqs[i] for i in idx], progress=False)
        assert run.actions == ["block"] * len(idx)
    finally:
        wb.migration.put_entrypoint(zone.id, MANAGED_PHASE, w.config.body())


def test_json_is_accepted_by_the_entry_point_put_and_hcl_parses(strict, candidates):
    wb, zone, w = strict
    api = ApiClient(wb)
    try:
        for c in candidates:
            assert wb.rulesets.put_entrypoint(zone.id, MANAGED_PHASE, c.body, dry_run=True)
            for provider in (4, 5):
                (resource,) = hcl2.loads(c.hcl(provider))["resource"]
                [(kind, named)] = resource.items()
                assert kind.strip('"') == "cloudflare_ruleset"
                [(_, block)] = named.items()
                assert len(block["rules"]) == len(c.body["rules"]), (provider, c.title)
        answer = api.call("PUT", f"/zones/{zone.id}/{ENTRY}", candidates[0].body)
        assert answer.success, answer.summary()
    finally:
        wb.migration.put_entrypoint(zone.id, MANAGED_PHASE, w.config.body())
        api.close()


def test_marked_requests_must_be_blocked_by_managed_rules(strict):
    wb, _, w = strict
    passed = w.requests.ray_id[w.requests.new_action == "pass"].iloc[0]
    with pytest.raises(ValueError, match="is not blocked by the managed rules"):
        wb.tuning.propose(w, [passed])
    with pytest.raises(ValueError, match="marked must be a non-empty list"):
        wb.tuning.propose(w, [])


def test_pro_zone_before_migrating_gets_a_draft_then_migrates_with_it():
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan="pro")
    reqs = generate(800, seed=3)
    w = wb.tuning.whatif(zone.id, reqs, progress=False)
    newly = w.requests[(w.requests.change == "newly blocked")]
    marked = list(newly.ray_id[:1])
    (first, *_) = wb.tuning.propose(w, marked)
    applied = wb.tuning.apply(zone.id, first, w, accept_risk=True)
    assert applied.stored == "draft" and applied.as_predicted
    assert wb.rulesets.find_entrypoint(zone.id, MANAGED_PHASE) is None  # the zone is untouched
    assert wb.migration.status(zone.id).to_dict()["migration_state"] == "start"
    wb.migration.put_entrypoint(
        zone.id, MANAGED_PHASE, wb.tuning.config(zone.id), waf_migration="pending", phase_two="1"
    )
    run = Pipeline(wb, zone.id).replay(reqs, progress=False)
    assert np.array_equal(np.array([a or "pass" for a in run.actions], dtype=object), first.actions)
