"""The rules every write must pass: plan features, the active-rule quota,
duplicate expressions and ``products`` with ``bypass``.

Functions here raise the core's errors and change nothing, so the backend can
run them all before it stores anything.

    >>> check_products("bypass", ["waf"], "/0")
    >>> check_products("block", ["waf"], "/0")
    Traceback (most recent call last):
    ...
    workbench.core.errors.ValidationError: /0/products: products are only allowed with the bypass action
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..core.errors import Conflict, FeatureUnavailable, QuotaExceeded
from .models import PLAN_LIMITS
from .validate import invalid

DUPLICATE_FILTER = 10102
DUPLICATE_INLINE_FILTER = 10202
FILTER_IN_USE = 10103
FILTER_NOT_FOUND = 10101
RULE_NOT_FOUND = 10301
QUOTA = 10200
FEATURE = 10201


def contains(value: str | None, needle: str | None) -> bool:
    """Case-insensitive substring test of the list queries (no needle: always true)."""
    if needle is None:
        return True
    return value is not None and needle.lower() in value.lower()


def uses_matches(compiled: Any) -> bool:
    """True when a compiled expression uses the ``matches`` operator."""
    return "matches" in compiled.operators


def no_matches(plan: str, why: str) -> FeatureUnavailable:
    """The error for ``matches`` on a plan without it."""
    return FeatureUnavailable(
        FEATURE,
        "the matches operator is only available on the Business and Enterprise plans; "
        f"this zone is on the {plan} plan ({why})",
    )


def check_products(action: str, products: list[str] | None, pointer: str) -> None:
    """``bypass`` needs products to skip; other actions take none."""
    if action == "bypass" and not products:
        raise invalid(f"{pointer}/products", "bypass needs at least one product to skip")
    if action != "bypass" and products:
        raise invalid(f"{pointer}/products", "products are only allowed with the bypass action")


def check_plan(plan: str, active_now: int, wanted: Iterable[tuple[str, Any, bool, Any]]) -> None:
    """Refuse rules the plan cannot have: features first, then the active-rule quota.

    ``wanted`` holds ``(action, filter, paused, replaced_rule_or_None)`` for each
    rule being created or updated. A zone already over its quota (after a plan
    change) may still make changes that do not add active rules.
    """
    limits = PLAN_LIMITS[plan]
    after = active_now
    for action, flt, paused, old in wanted:
        if action == "log" and not limits.log_action:
            raise FeatureUnavailable(
                FEATURE,
                f"the log action is only available on the Enterprise plan; this zone is on the {plan} plan",
            )
        if not limits.matches_operator and uses_matches(flt.compiled):
            raise no_matches(plan, f"filter {flt.id} uses it")
        after += (0 if paused else 1) - (1 if old is not None and old.active else 0)
    if after > limits.active_rules and after > active_now:
        raise QuotaExceeded(
            QUOTA,
            f"firewall rule quota exceeded: the {plan} plan allows "
            f"{limits.active_rules} active rules and this zone has {active_now}",
            meta={"quota": limits.active_rules, "active": active_now},
        )


def refuse_duplicates(
    by_expression: Mapping[str, str],
    specs: list[Mapping[str, Any]],
    code: int,
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
            raise Conflict(
                code, f"{where} duplicates an already existing config", meta={"id": existing}
            )
        if text in seen:
            raise Conflict(
                code, f"{where} duplicates the expression at index {seen[text]} of the request"
            )
        seen[text] = i
