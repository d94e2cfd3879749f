"""The firewall service's errors, each with its v4 code (written here and nowhere else).

Three take their kind's code: a duplicate filter is a plain conflict, the rule
quota the plain quota, a missing plan feature the plain one.

>>> err = FilterNotFound("filter abc does not exist in this zone")
>>> err.code, isinstance(err, NotFound)
(10101, True)
>>> DuplicateFilter.code, RuleQuotaExceeded.code, FeatureNotInPlan.code
(10102, 10200, 10201)
"""

from __future__ import annotations

from typing import Any

from ..core.errors import Conflict, FeatureUnavailable, InvalidInput, NotFound, QuotaExceeded


class InvalidFirewallInput(InvalidInput):
    """A filter, rule or page rule field that breaks a documented rule (``source.pointer`` names it)."""


class FilterNotFound(NotFound, code=10101): ...


class RuleNotFound(NotFound, code=10301): ...


class PageRuleNotFound(NotFound, code=10401): ...


class DuplicateFilter(Conflict):
    """A filter's expression is already used by another filter of the zone (``meta.id`` names it)."""


class DuplicateInlineFilter(Conflict, code=10202):
    """The shortened call's inline filter duplicates an existing filter's expression."""


class FilterInUse(Conflict, code=10103):
    """A filter still referred to by rules cannot be deleted."""


class RuleQuotaExceeded(QuotaExceeded):
    """The plan's active-rule quota would be exceeded.

    ``meta.filters_created`` lists the inline filters the shortened call created
    before its rules were refused (the seed's partial outcome).
    """


class PageRuleQuotaExceeded(QuotaExceeded, code=10400): ...


class FeatureNotInPlan(FeatureUnavailable):
    """The zone's plan lacks a feature a rule asks for (``log``, ``matches``)."""


def left_behind(filters: list[Any]) -> dict[str, Any]:
    """The ``meta`` of a refusal that leaves the shortened call's filters created."""
    return {"meta": {"filters_created": [f.to_dict() for f in filters]}} if filters else {}
