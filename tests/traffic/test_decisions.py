"""One spelling for the platform's actions and sources, and what each action did to a request."""

from __future__ import annotations

import pytest

from workbench.traffic.decisions import (
    ACTIONS,
    CHALLENGE_PAGE,
    CHALLENGES,
    OUTCOMES,
    SIMULATED_SOURCES,
    SOURCES,
    Recorded,
    RuleMatch,
    action_spelling,
    logged_spelling,
    outcome,
    simulated_outcome,
    source_spelling,
)

# (http_requests Security fields, Logpush firewall_events, API / GraphQL / workbench) -> one
SPELLINGS = [
    ("managedChallenge", "managedchallenge", "managed_challenge", "managed_challenge"),
    ("jschallenge", "jschallenge", "js_challenge", "js_challenge"),
    ("connectionClose", "connectionclose", "connection_close", "connection_close"),
    ("challengeSolved", "challengesolved", "challenge_solved", "challenge_solved"),
    (
        "managedChallengeNonInteractiveSolved",
        "managedchallengenoninteractivesolved",
        "managed_challenge_non_interactive_solved",
        "managed_challenge_non_interactive_solved",
    ),
    ("block", "block", "block", "block"),
    ("log", "log", "log", "log"),
    ("bypass", "bypass", "bypass", "bypass"),
]


@pytest.mark.parametrize(("http", "logpush", "api", "one"), SPELLINGS)
def test_every_spelling_of_an_action_folds_to_one(http, logpush, api, one):
    assert action_spelling(http) == action_spelling(logpush) == action_spelling(api) == one
    assert logged_spelling(one, "http_requests") == http
    assert logged_spelling(one, "firewall_events") == logpush
    assert logged_spelling(http, "graphql") == api


@pytest.mark.parametrize(
    ("sources", "one"),
    [
        (("firewallManaged", "firewallmanaged", "FirewallManaged"), "firewallManaged"),
        (("firewallCustom", "firewallcustom"), "firewallCustom"),
        (("rateLimit", "ratelimit"), "rateLimit"),
        (("botManagement", "botmanagement"), "botManagement"),
        (("waf", "WAF"), "waf"),
        (("firewallRules", "firewallrules"), "firewallRules"),
    ],
)
def test_every_spelling_of_a_source_folds_to_one(sources, one):
    assert {source_spelling(s) for s in sources} == {one}


def test_a_source_the_table_does_not_know_is_kept_as_written():
    assert source_spelling(" linkMaze ") == "linkMaze"


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("log", "allow"),
        ("skip", "allow"),
        ("bypass", "allow"),
        ("allow", "allow"),
        ("unknown", "allow"),
        ("block", "block"),
        ("drop", "drop"),
        ("connectionclose", "connection_close"),
        ("challengeFailed", "challenge"),
        ("challengebypassed", "challenge"),
        ("jschallengeSolved", "js_challenge"),
        ("managedChallengeBypassed", "managed_challenge"),
        ("managedchallengeskipped", "managed_challenge"),
    ],
)
def test_an_action_s_outcome(action, expected):
    assert outcome(action) == expected


def test_the_tables_are_consistent():
    spellings = [one for one, _, _ in ACTIONS]
    assert len(spellings) == len(set(spellings))
    # Every outcome is some action's, but a HAR's challenge page of unknown kind.
    assert {result for _, _, result in ACTIONS} | {CHALLENGE_PAGE} == set(OUTCOMES)
    assert CHALLENGES < set(OUTCOMES)
    assert SIMULATED_SOURCES <= set(SOURCES)
    # The simulator's own final actions all have an outcome of the same spelling.
    for action in ("block", "challenge", "managed_challenge", "js_challenge"):
        assert simulated_outcome(action) == action
    assert simulated_outcome(None) == "allow"


def test_an_action_no_log_writes_is_an_error_naming_it():
    with pytest.raises(ValueError, match="'explode' is not an action the platform logs"):
        action_spelling("explode")
    with pytest.raises(ValueError, match="format must be one of"):
        logged_spelling("block", "csv")


def test_a_decision_ends_with_its_last_terminating_rule_unless_the_log_names_one():
    rules = [
        RuleMatch("r1", "firewallManaged", "log"),
        RuleMatch("r2", "waf", "challenge"),
        RuleMatch("r3", "waf", "block"),
    ]
    decided = Recorded.of(rules)
    assert (decided.outcome, decided.ending.rule_id) == ("block", "r3")
    # The old WAF's strongest action wins: the log's final action names which.
    named = Recorded.of(rules, final="challenge", final_rule="r2")
    assert (named.outcome, named.ending.rule_id) == ("challenge", "r2")
    assert Recorded.of(rules, final="").outcome == "allow"
    assert Recorded.of([]).outcome == "allow" and Recorded.of([]).ending is None
    # A final action whose rule is not in the lists still ends the request.
    alone = Recorded.of([], final="block", final_rule="r9")
    assert (alone.outcome, alone.ending.rule_id, alone.ending.source) == ("block", "r9", "unknown")
