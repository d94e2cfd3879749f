"""The firewall service's errors, each with its v4 code (written here and nowhere else).

>>> err = FilterNotFound("filter abc does not exist in this zone")
>>> err.code, isinstance(err, NotFound)
(10101, True)
"""

from __future__ import annotations

from typing import Any

from ..core.errors import Conflict, FeatureUnavailable, NotFound, QuotaExceeded, ValidationError


class InvalidFirewallInput(ValidationError):
    """A filter, rule or page rule field that breaks a documented rule (``source.pointer`` names it)."""

    def __init__(self, pointer: str, message: str) -> None:
        text = f"{pointer}: {message}" if pointer else message
        super().__init__(text, source={"pointer": pointer or "/"})

    @classmethod
    def at(cls, pointer: str, message: str) -> InvalidFirewallInput:
        """The error with ``message`` shown as is (the engine's own text), pointing at ``pointer``."""
        err = cls("", message)
        err.extra["source"] = {"pointer": pointer or "/"}
        return err


class FilterNotFound(NotFound):
    code = 10101


class RuleNotFound(NotFound):
    code = 10301


class PageRuleNotFound(NotFound):
    code = 10401


class DuplicateFilter(Conflict):
    """A filter's expression is already used by another filter of the zone (``meta.id`` names it)."""

    code = 10102


class DuplicateInlineFilter(Conflict):
    """The shortened call's inline filter duplicates an existing filter's expression."""

    code = 10202


class FilterInUse(Conflict):
    """A filter still referred to by rules cannot be deleted."""

    code = 10103


class RuleQuotaExceeded(QuotaExceeded):
    """The plan's active-rule quota would be exceeded.

    ``meta.filters_created`` lists the inline filters the shortened call created
    before its rules were refused (the seed's partial outcome).
    """

    code = 10200


class PageRuleQuotaExceeded(QuotaExceeded):
    code = 10400


class FeatureNotInPlan(FeatureUnavailable):
    """The zone's plan lacks a feature a rule asks for (``log``, ``matches``)."""

    code = 10201


def left_behind(filters: list[Any]) -> dict[str, Any]:
    """The ``meta`` of a refusal that leaves the shortened call's filters created."""
    return {"meta": {"filters_created": [f.to_dict() for f in filters]}} if filters else {}
