"""The rules every write must pass: plan features, the active-rule quota,
duplicate expressions and ``products`` with ``bypass``.

Functions here raise the core's errors and change nothing, so the service can
run them all before it stores anything.

    >>> check_products("bypass", ["waf"], "/0")
    >>> check_products("block", ["waf"], "/0")
    Traceback (most recent call last):
    ...
    workbench.firewall.errors.InvalidFirewallInput: /0/products: products are only allowed with the bypass action
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.errors import Conflict
from ..core.plans import plan as plan_named
from ._validate import invalid
from .errors import FeatureNotInPlan, RuleQuotaExceeded, left_behind


def contains(value: str | None, needle: str | None) -> bool:
    """Case-insensitive substring test of the list queries (no needle: always true)."""
    if needle is None:
        return True
    return value is not None and needle.lower() in value.lower()


def uses_matches(compiled: Any) -> bool:
    """True when a compiled expression uses the ``matches`` operator."""
    return "matches" in compiled.operators


def no_matches(plan: str, why: str, suffix: str = "", **extra: Any) -> FeatureNotInPlan:
    """The error for ``matches`` on a plan without it."""
    return FeatureNotInPlan(
        "the matches operator is only available on the Business and Enterprise plans; "
        f"this zone is on the {plan} plan ({why}){suffix}",
        **extra,
    )


def check_products(action: str, products: list[str] | None, pointer: str) -> None:
    """``bypass`` needs products to skip; other actions take none."""
    if action == "bypass" and not products:
        raise invalid(f"{pointer}/products", "bypass needs at least one product to skip")
    if action != "bypass" and products:
        raise invalid(f"{pointer}/products", "products are only allowed with the bypass action")


def check_plan(
    plan: str,
    active_now: int,
    wanted: Iterable[tuple[str, Any, bool, Any]],
    created: Sequence[Any] = (),
) -> None:
    """Refuse rules the plan cannot have: features first, then the active-rule quota.

    ``wanted`` holds ``(action, filter, paused, replaced_rule_or_None)`` for each
    rule being created or updated. A zone already over its quota (after a plan
    change) may still make changes that do not add active rules. ``created``
    names the inline filters already made by a shortened call: the error says
    they exist and lists them in ``meta.filters_created``.
    """
    limits = plan_named(plan)
    extra = left_behind(list(created))
    suffix = (
        f"; the filter(s) {', '.join(f.id for f in created)} were created without "
        "their rule: create the rule against the existing filter once this is fixed"
        if created
        else ""
    )
    after = active_now
    for action, flt, paused, old in wanted:
        if action == "log" and not limits.firewall_log_action:
            raise FeatureNotInPlan(
                "the log action is only available on the Enterprise plan; "
                f"this zone is on the {plan} plan{suffix}",
                **extra,
            )
        if not limits.matches_operator and uses_matches(flt.compiled):
            raise no_matches(plan, f"filter {flt.id} uses it", suffix, **extra)
        after += (0 if paused else 1) - (1 if old is not None and old.active else 0)
    if after > limits.firewall_active_rules and after > active_now:
        meta = {"quota": limits.firewall_active_rules, "active": active_now}
        raise RuleQuotaExceeded(
            f"firewall rule quota exceeded: the {plan} plan allows "
            f"{limits.firewall_active_rules} active rules and this zone has {active_now}{suffix}",
            meta=meta | extra.get("meta", {}),
        )


def refuse_duplicates(
    by_expression: Mapping[str, str],
    specs: Sequence[Mapping[str, Any]],
    error: type[Conflict],
    *,
    inline: bool,
    moving: Iterable[str] = (),
) -> None:
    """Refuse an expression already used by another filter of the zone or of the batch.

    ``moving`` names filters whose expressions the same request changes (their
    old text is free again).
    """
    moving = set(moving)
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        text = spec.get("expression")
        if text is None:
            continue
        where = f"filter at index {i}" if inline else "config"
        existing = by_expression.get(text)
        if existing is not None and existing not in moving:
            raise error(f"{where} duplicates an already existing config", meta={"id": existing})
        if text in seen:
            raise error(f"{where} duplicates the expression at index {seen[text]} of the request")
        seen[text] = i
