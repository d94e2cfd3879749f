"""The contract between the security systems and the traffic pipeline.

Each system that inspects requests (the zone's firewall rules, the old WAF
managed rules, the new managed rulesets on the ruleset engine) compiles a
zone's configuration into a :class:`SystemPlan`: the list of :class:`Check`
expressions it needs evaluated, and a ``decide`` function that turns which
checks matched into a :class:`Verdict` (its events and its final action).

Nothing else about a request is passed to ``decide``: a page-rule URL pattern,
an override's URLs or "is this an AJAX request" are checks too (Rules-language
expressions). So the per-request path (evaluate each check's compiled
expression against one request) and the whole-table path (compile each check
once to SQL, let DuckDB fill a boolean column per check over the request
table, then decide per distinct row of booleans) give the same events by
construction.

    >>> plan = StaticPlan(
    ...     checks=[Check("admin", 'http.request.uri.path contains "/admin"')],
    ...     rule=lambda matched: Verdict(
    ...         [SecurityEvent("firewallRules", "block", "r1", None, "no admin")] if matched("admin") else [],
    ...         "block" if matched("admin") else None))
    >>> plan.decide(lambda key: key == "admin").action
    'block'
    >>> plan.decide(lambda key: False).events
    []
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

#: Event sources (the analytics API's camelCase names).
FIREWALL_RULES = "firewallRules"
OLD_WAF = "waf"
NEW_WAF = "firewallManaged"
CUSTOM_RULES = "firewallCustom"

#: Actions that end a request, strongest first: nothing after them sees it. A firewall rule's
#: ``allow`` ends only the firewall rules (later rules do not run), the WAF still
#: inspects the request, as the platform documents for that action.
TERMINAL_BY_STRENGTH = ("block", "challenge", "managed_challenge", "js_challenge")
TERMINAL_ACTIONS = frozenset(TERMINAL_BY_STRENGTH)


@dataclass(frozen=True)
class Check:
    """One expression a system needs evaluated, under a key unique within its plan.

    The expression is valid Rules language (it compiles with
    ``compile_expression``). A rule whose expression is the ruleset engine's
    constant ``true`` (all traffic) is not a check: ``decide`` treats it as
    matched without asking.
    """

    key: str
    expression: str


@dataclass
class SecurityEvent:
    """What one rule did to one request (the pipeline adds the request's fields).

    ``rule_id``/``ruleset_id`` as the analytics API shows them: the managed
    ruleset's id for a managed rule, None for the old WAF and firewall rules.
    """

    source: str
    action: str
    rule_id: str
    ruleset_id: str | None
    description: str
    score: int | None = None
    paranoia_level: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Verdict:
    """A system's answer for one request: its events, in order, and its final action.

    ``action`` is the action that ends the request (see :data:`TERMINAL_ACTIONS`),
    or None when the system lets it through (``log`` and ``skip`` events do not
    end a request). ``bypassed`` lists the products a firewall ``bypass`` rule
    skipped (``waf`` turns the old WAF off for this request) and the phases a
    custom-phase skip rule skipped (``http_request_firewall_managed``).
    """

    events: list[SecurityEvent]
    action: str | None = None
    bypassed: frozenset[str] = frozenset()


class SystemPlan(Protocol):
    """A zone's configuration of one system, compiled for evaluation.

    Plans may also expose ``compiled`` (check key -> compiled expression) so a
    per-request caller does not compile again.
    """

    @property
    def checks(self) -> Sequence[Check]: ...

    def decide(self, matched: Callable[[str], bool]) -> Verdict:
        """The verdict, given ``matched(key)`` for this plan's checks.

        ``decide`` may skip asking about checks it does not need (a skipped
        ruleset's rules); it must never ask about a key not in :attr:`checks`.
        """
        ...


@dataclass
class StaticPlan:
    """A :class:`SystemPlan` from a list of checks and a plain function (tests, small systems)."""

    checks: list[Check]
    rule: Callable[[Callable[[str], bool]], Verdict]

    def decide(self, matched: Callable[[str], bool]) -> Verdict:
        """Apply the function."""
        return self.rule(matched)
