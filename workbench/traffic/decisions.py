"""Decisions the platform recorded, in one spelling: the tables of actions and sources.

The platform spells one action several ways: ``managedChallenge`` in the
http_requests Security fields, ``managedchallenge`` in Logpush
firewall_events, ``managed_challenge`` in the API, the GraphQL export and the
workbench's own events. Sources too: ``firewallManaged`` and
``firewallmanaged``. Every reader folds what it reads to one spelling here:
actions to the API's (snake case), sources to the analytics API's (camel
case, as the workbench's events have them). The tables below are the one place
these spellings live.

Each action also has an *outcome*, what it did to the request, which is what
the agreement compares: ``allow`` (the request went on: ``log``, ``skip``,
``bypass``, ``allow``, ``unknown``), the challenge it was given (a challenge
the visitor solved, failed, or skipped with a clearance cookie is still the
challenge the WAF issued: how the visitor answered is not the WAF's
decision), or the action that ended it (``block``, ``connection_close``,
``drop``). A HAR says only that a response was a challenge page
(:data:`CHALLENGE_PAGE`), which agrees with any challenge.

    >>> action_spelling("managedChallenge"), action_spelling("managedchallenge")
    ('managed_challenge', 'managed_challenge')
    >>> source_spelling("firewallmanaged"), source_spelling("firewallManaged")
    ('firewallManaged', 'firewallManaged')
    >>> outcome("challengeSolved"), outcome("log"), outcome("jschallenge")
    ('challenge', 'allow', 'js_challenge')
    >>> logged_spelling("js_challenge", "http_requests"), logged_spelling("js_challenge", "firewall_events")
    ('jschallenge', 'jschallenge')
    >>> Recorded.of([RuleMatch("r1", "firewallCustom", "log"), RuleMatch("r2", "waf", "block")]).outcome
    'block'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.security import CUSTOM_RULES, FIREWALL_RULES, NEW_WAF, OLD_WAF

if TYPE_CHECKING:
    from ..replay import Replay

#: Every action the logs write: ``(one spelling, the http_requests spelling, outcome)``.
#: Logpush firewall_events writes the http_requests spelling in lower case; the API,
#: the GraphQL export and the workbench write the first. Sources: the Security fields
#: and firewall_events pages of the platform's log reference (``docs/decisions.md``).
ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("unknown", "unknown", "allow"),
    ("allow", "allow", "allow"),
    ("log", "log", "allow"),
    ("skip", "skip", "allow"),
    ("bypass", "bypass", "allow"),
    ("block", "block", "block"),
    ("challenge", "challenge", "challenge"),
    ("js_challenge", "jschallenge", "js_challenge"),
    ("managed_challenge", "managedChallenge", "managed_challenge"),
    ("connection_close", "connectionClose", "connection_close"),
    ("drop", "drop", "drop"),
    ("challenge_solved", "challengeSolved", "challenge"),
    ("challenge_failed", "challengeFailed", "challenge"),
    ("challenge_bypassed", "challengeBypassed", "challenge"),
    ("js_challenge_solved", "jschallengeSolved", "js_challenge"),
    ("js_challenge_failed", "jschallengeFailed", "js_challenge"),
    ("js_challenge_bypassed", "jschallengeBypassed", "js_challenge"),
    ("managed_challenge_skipped", "managedChallengeSkipped", "managed_challenge"),
    (
        "managed_challenge_non_interactive_solved",
        "managedChallengeNonInteractiveSolved",
        "managed_challenge",
    ),
    (
        "managed_challenge_interactive_solved",
        "managedChallengeInteractiveSolved",
        "managed_challenge",
    ),
    ("managed_challenge_bypassed", "managedChallengeBypassed", "managed_challenge"),
    ("managed_challenge_failed", "managedChallengeFailed", "managed_challenge"),
)

#: A challenge page of a kind the log does not say: a HAR response with the platform's
#: ``cf-mitigated: challenge`` header, which every challenge page carries.
CHALLENGE_PAGE = "challenge_page"
#: The outcomes a challenge page may stand for.
CHALLENGES = frozenset({"challenge", "js_challenge", "managed_challenge"})

#: What an outcome may be, the request going on first.
OUTCOMES = (
    "allow",
    "block",
    "challenge",
    "js_challenge",
    "managed_challenge",
    "connection_close",
    "drop",
    CHALLENGE_PAGE,
)

#: Every source the logs write (the analytics API's spelling; Logpush writes it in lower
#: case) and the product it names, as an explanation says it.
SOURCES: dict[str, str] = {
    "unknown": "an unknown product",
    "asn": "IP Access rules (ASN)",
    "country": "IP Access rules (country)",
    "ip": "IP Access rules (IP)",
    "ipRange": "IP Access rules (IP range)",
    "securityLevel": "the Security Level",
    "zoneLockdown": "Zone Lockdown",
    "waf": "the previous WAF's managed rules",
    "firewallRules": "firewall rules",
    "uaBlock": "User Agent Blocking",
    "rateLimit": "rate limiting",
    "bic": "Browser Integrity Check",
    "hot": "Hotlink Protection",
    "l7ddos": "HTTP DDoS protection",
    "validation": "request validation (malformed requests)",
    "sanityCheck": "request validation (malformed requests)",
    "botFight": "Bot Fight Mode",
    "botManagement": "Bot Management",
    "apiShield": "API Shield",
    "apiShieldSchemaValidation": "API Shield schema validation",
    "apiShieldTokenValidation": "API Shield token validation",
    "dlp": "Data Loss Prevention",
    "firewallManaged": "WAF managed rules",
    "firewallCustom": "WAF custom rules",
}

#: The sources the workbench simulates; a decision from any other cannot agree.
SIMULATED_SOURCES = frozenset({FIREWALL_RULES, OLD_WAF, NEW_WAF, CUSTOM_RULES})

#: The formats whose spelling :func:`logged_spelling` writes.
LOGGED_FORMATS = ("http_requests", "firewall_events", "graphql")


def _fold(text: str) -> str:
    return text.strip().lower().replace("_", "")


_ACTION = {_fold(spelling): spelling for spelling, _, _ in ACTIONS}
_ACTION.update({_fold(logged): spelling for spelling, logged, _ in ACTIONS})
_OUTCOME = {spelling: result for spelling, _, result in ACTIONS}
_LOGGED = {spelling: logged for spelling, logged, _ in ACTIONS}
_SOURCE = {_fold(name): name for name in SOURCES}


def action_spelling(raw: str) -> str:
    """The one spelling of an action as any log writes it; ValueError for one no log writes.

    >>> action_spelling("connectionclose"), action_spelling("JSChallengeBypassed")
    ('connection_close', 'js_challenge_bypassed')
    """
    found = _ACTION.get(_fold(raw))
    if found is None:
        known = ", ".join(logged for _, logged, _ in ACTIONS)
        raise ValueError(f"{raw!r} is not an action the platform logs (known: {known})")
    return found


def outcome(action: str) -> str:
    """What ``action`` (any spelling) did to the request: one of :data:`OUTCOMES`."""
    return _OUTCOME[action_spelling(action)]


def outcomes_agree(recorded: str, simulated: str) -> bool:
    """Whether a recorded outcome and a simulated one are the same decision: equal, or a
    challenge page of unknown kind against any challenge.

    >>> outcomes_agree(CHALLENGE_PAGE, "managed_challenge"), outcomes_agree(CHALLENGE_PAGE, "block")
    (True, False)
    """
    return recorded == simulated or (recorded == CHALLENGE_PAGE and simulated in CHALLENGES)


def simulated_outcome(action: str | None) -> str:
    """The outcome of a simulated request: its final action, ``allow`` when nothing ended it."""
    return "allow" if action is None else outcome(action)


def source_spelling(raw: str) -> str:
    """The one spelling of a source; one this table does not know is kept as written.

    >>> source_spelling("ratelimit"), source_spelling("someNewProduct")
    ('rateLimit', 'someNewProduct')
    """
    return _SOURCE.get(_fold(raw), raw.strip())


def logged_spelling(action: str, format: str) -> str:
    """``action`` as ``format`` writes it: http_requests, firewall_events (Logpush), graphql."""
    spelling = action_spelling(action)
    if format == "http_requests":
        return _LOGGED[spelling]
    if format == "firewall_events":
        return _LOGGED[spelling].lower()
    if format == "graphql":
        return spelling
    raise ValueError(f"format must be one of {', '.join(LOGGED_FORMATS)}, got {format!r}")


def product(source: str) -> str:
    """The product a source names, for an explanation."""
    return SOURCES.get(source, f"the source {source!r}")


@dataclass(frozen=True)
class RuleMatch:
    """One rule that acted on a request, in one spelling (see the module docstring)."""

    rule_id: str
    source: str
    action: str
    ruleset_id: str = ""
    description: str = ""

    @property
    def outcome(self) -> str:
        """What this rule's action did to the request."""
        return outcome(self.action)

    def text(self) -> str:
        """``source rule_id action`` (and the description when there is one)."""
        said = f" ({self.description})" if self.description else ""
        return f"{self.source} {self.rule_id or '-'} {self.action}{said}"


@dataclass(frozen=True)
class Recorded:
    """What the platform decided for one request: its outcome and the rules that acted.

    ``outcome`` is one of :data:`OUTCOMES`; ``rules`` are in the order they
    acted (the last is the one that ended the request, when one did);
    ``ending`` is the rule that ended it. ``origin`` is where the decision was
    read: ``http_requests`` (the Security fields) or ``firewall_events``.
    """

    outcome: str
    rules: tuple[RuleMatch, ...] = ()
    ending: RuleMatch | None = None
    origin: str = ""

    @classmethod
    def of(
        cls,
        rules: Iterable[RuleMatch],
        final: str | None = None,
        final_rule: str = "",
        origin: str = "",
    ) -> Recorded:
        """The decision of ``rules``: the last that ended the request, unless ``final`` says.

        ``final`` is the terminating action as the log gave it (``""``: none);
        ``final_rule`` its rule id.
        """
        rules = tuple(rules)
        if final is None:
            ending = next((r for r in reversed(rules) if r.outcome != "allow"), None)
            return cls(ending.outcome if ending else "allow", rules, ending, origin)
        if not final:
            return cls("allow", rules, None, origin)
        action = action_spelling(final)
        fits = [r for r in rules if r.action == action and r.rule_id == (final_rule or r.rule_id)]
        by_id = [r for r in rules if final_rule and r.rule_id == final_rule]
        ending = (fits or by_id or [RuleMatch(final_rule, "unknown", action)])[-1]
        return cls(outcome(action), rules, ending, origin)


def replay_decisions(run: Replay) -> list[Recorded]:
    """Each request of a replay, decided as the workbench decided it (``origin`` "workbench").

    The rules are the request's events in the order they happened; the
    outcome is its final action (``allow`` when nothing ended it).
    """
    frame = run.events
    by_ray: dict[str, list[tuple[int, RuleMatch]]] = {}
    if len(frame):
        columns = ["ray_id", "match_index", "rule_id", "source", "action", "ruleset_id"]
        columns.append("description")
        for ray, index, rule_id, source, action, ruleset_id, description in zip(
            *(frame[c].tolist() for c in columns), strict=True
        ):
            match = RuleMatch(
                str(rule_id or ""),
                source or "unknown",
                _known(action),
                ruleset_id or "",
                description or "",
            )
            by_ray.setdefault(ray, []).append((-int(index), match))
    out = []
    for ray, final in zip(run.ray_ids, run.actions, strict=True):
        rules = [m for _, m in sorted(by_ray.get(ray, []), key=lambda pair: pair[0])]
        out.append(Recorded.of(rules, final or "", origin="workbench"))
    return out


def _known(action: str) -> str:
    """A simulated event's action in the one spelling (one the table lacks is kept)."""
    try:
        return action_spelling(action)
    except ValueError:
        return action
