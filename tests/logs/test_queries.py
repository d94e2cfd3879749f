"""Canned queries find cases planted among synthetic events."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from workbench.logs import (
    EventLog,
    actions_over_time,
    add_synthetic_events,
    legacy_mapping,
    legit_blocked_by_new,
    new_allows_old_blocked,
    rule_comparison,
    top_rules,
)
from workbench.logs.queries import bucket_seconds

T0 = datetime(2030, 1, 1)  # after every synthetic event


def _e(ray, source, action, rule, index, label="benign", minute=0, path="/p", ruleset=None):
    return {
        "ray_id": ray,
        "datetime": T0 + timedelta(minutes=minute),
        "source": source,
        "action": action,
        "rule_id": rule,
        "match_index": index,
        "label": label,
        "path": path,
        "ruleset_id": ruleset,
        "description": f"rule {rule}",
        "kind": "firewall",
        "host": "example.com",
    }


PLANTED = [
    # Old blocked, new only logged: found.
    _e("p1", "firewallManaged", "log", "n1", 1, "sqli", ruleset="rs"),
    _e("p1", "waf", "block", "100001", 0, "sqli"),
    # Old challenged, the new WAF not involved at all: found.
    _e("p2", "waf", "challenge", "100002", 0, "xss", minute=1),
    # Old blocked but the new WAF blocked too (not in validation order, but possible in imports): not found.
    _e("p3", "firewallManaged", "block", "n2", 1, "sqli", minute=2, ruleset="rs"),
    _e("p3", "waf", "block", "100001", 0, "sqli", minute=2),
    # Old only logged: not found.
    _e("p4", "waf", "log", "100004", 0, minute=3),
    # Legit traffic blocked or challenged by the new WAF.
    _e("p5", "firewallManaged", "block", "n2", 0, "benign", minute=4, path="/search", ruleset="rs"),
    _e(
        "p6",
        "firewallManaged",
        "managed_challenge",
        "n3",
        0,
        "api",
        minute=5,
        path="/api/x",
        ruleset="rs",
    ),
    _e("p7", "firewallManaged", "block", "n2", 0, "bot", minute=6, path="/robots", ruleset="rs"),
    _e("p8", "firewallManaged", "log", "n2", 0, "benign", minute=7, ruleset="rs"),
]


@pytest.fixture
def log():
    events = EventLog()
    add_synthetic_events(events, 4_000, seed=2)
    events.append(PLANTED)
    return events


def test_new_allows_old_blocked_finds_the_planted_rays(log):
    found = new_allows_old_blocked(log)
    planted = found[found.ray_id.str.startswith("p")]
    assert planted.ray_id.tolist() == ["p1", "p2"]
    assert planted[["old_action", "old_rules", "new_events", "label"]].values.tolist() == [
        ["block", "100001", "n1:log", "sqli"],
        ["challenge", "100002", "", "xss"],
    ]
    # Synthetic rays of that shape are found too, and no ray the new WAF stopped.
    stopped = set(log.query("select ray_id from new_waf_events where action = 'block'").ray_id)
    assert len(found) > 2 and not (set(found.ray_id) & stopped)


def test_legit_blocked_by_new_groups_by_rule(log):
    only = EventLog()
    only.append(PLANTED)
    got = legit_blocked_by_new(only)
    assert got[["rule_id", "requests", "benign", "api", "bot"]].values.tolist() == [
        ["n2", 2, 1, 0, 1],
        ["n3", 1, 0, 1, 0],
    ]
    assert got.example_path.tolist() == ["/robots", "/api/x"]
    blocks = legit_blocked_by_new(only, actions=["block"])
    assert blocks.rule_id.tolist() == ["n2"]
    assert len(legit_blocked_by_new(log)) > 2


def test_top_rules_counts_and_filters(log):
    top = top_rules(log, 3)
    assert len(top) == 3 and top.events.is_monotonic_decreasing
    planted = top_rules(log, 5, since=T0)
    assert planted[["source", "rule_id", "events"]].values.tolist()[:2] == [
        ["firewallManaged", "n2", 4],
        ["waf", "100001", 2],
    ]
    assert top_rules(log, 10, source="waf", action="challenge", since=T0).rule_id.tolist() == [
        "100002"
    ]
    assert top_rules(log, 10, until=T0 - timedelta(days=2000)).empty


def test_actions_over_time_buckets_events(log):
    only = EventLog()
    only.append(PLANTED)
    long = actions_over_time(only, "5 minutes")
    assert long.events.sum() == len(PLANTED)
    first = long[long.bucket == T0]
    assert dict(zip(first.action, first.events, strict=True)) == {
        "block": 4,
        "challenge": 1,
        "log": 2,
    }
    wide = actions_over_time(only, timedelta(hours=1), wide=True)
    assert wide.loc[T0].to_dict() == {"block": 5, "challenge": 1, "log": 3, "managed_challenge": 1}
    assert actions_over_time(only, 60, source="waf").events.sum() == 4
    assert bucket_seconds("2 hours") == 7200
    with pytest.raises(ValueError, match="bucket"):
        actions_over_time(only, "1 fortnight")
    with pytest.raises(ValueError, match="bucket"):
        actions_over_time(only, 0)


def test_rule_comparison_per_rule_and_by_mapping():
    only = EventLog()
    only.append(PLANTED)
    per_rule = rule_comparison(only).set_index("rule_id")
    assert per_rule.loc["100001", ["old_events", "new_events", "old_ending"]].tolist() == [2, 0, 2]
    assert per_rule.loc["n2", ["old_events", "new_events", "new_ending"]].tolist() == [0, 4, 3]
    paired = rule_comparison(only, {"100001": "n2", "100002": "n9"}).set_index("old_rule_id")
    assert paired.loc[
        "100001", ["new_rule_id", "old_events", "new_events", "both", "old_only", "new_only"]
    ].tolist() == ["n2", 2, 4, 1, 1, 3]
    assert paired.loc["100002", ["old_events", "new_events", "both"]].tolist() == [1, 0, 0]


def test_legacy_mapping_reads_new_ids_from_an_old_catalogue():
    from workbench.waf_legacy import CLOUDFLARE_PACKAGE, load_catalog

    def rule(rule_id, new_id):
        return {
            "id": rule_id,
            "description": "",
            "priority": "1",
            "kind": "deny",
            "default_mode": "block",
            "expression": "ssl",
            "new_id": new_id,
        }

    catalog = load_catalog(
        [
            {
                "id": CLOUDFLARE_PACKAGE,
                "name": "CloudFlare",
                "description": "",
                "detection_mode": "traditional",
                "groups": [
                    {
                        "id": "a" * 32,
                        "name": "g",
                        "description": "",
                        "default_mode": "on",
                        "rules": [rule("100001", "01" * 16), rule("100002", None)],
                    }
                ],
            }
        ]
    )
    assert legacy_mapping(catalog) == {"100001": "01" * 16}
