"""Filters, firewall rules and page rules: the firewall service of a Workbench.

No HTTP here: the API and the widgets call these methods and render what they
return or raise. ``backend_for(wb)`` (also ``wb.firewall``) gives the one
backend of a Workbench.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="free")
    >>> [rule] = backend_for(wb).create_rules(zone.id, [
    ...     {"filter": {"expression": 'ip.src eq 192.0.2.1'}, "action": "block"}])
    >>> rule.filter.expression, backend_for(wb) is wb.firewall
    ('ip.src eq 192.0.2.1', True)
"""

from __future__ import annotations

from typing import Any

from .backend import FirewallBackend
from .models import (
    ACTION_PRECEDENCE,
    ACTIONS,
    BYPASS_PRODUCTS,
    PLAN_LIMITS,
    Evaluation,
    Filter,
    FirewallRule,
    Page,
    PlanLimits,
)
from .pagerules import SECURITY_ACTIONS, PageRule, PageRules

__all__ = [
    "ACTIONS",
    "ACTION_PRECEDENCE",
    "BYPASS_PRODUCTS",
    "PLAN_LIMITS",
    "SECURITY_ACTIONS",
    "Evaluation",
    "Filter",
    "FirewallBackend",
    "FirewallRule",
    "Page",
    "PageRule",
    "PageRules",
    "PlanLimits",
    "backend_for",
]


def backend_for(wb: Any) -> FirewallBackend:
    """The firewall backend of ``wb`` (same as ``wb.firewall``)."""
    return wb.firewall
