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

from typing import TYPE_CHECKING

from .backend import FirewallBackend
from .models import (
    ACTION_PRECEDENCE,
    ACTIONS,
    BYPASS_PRODUCTS,
    Evaluation,
    Filter,
    FirewallRule,
)
from .pagerules import SECURITY_ACTIONS, PageRule, PageRules

if TYPE_CHECKING:
    from ..core.platform import Workbench

__all__ = [
    "ACTIONS",
    "ACTION_PRECEDENCE",
    "BYPASS_PRODUCTS",
    "SECURITY_ACTIONS",
    "Evaluation",
    "Filter",
    "FirewallBackend",
    "FirewallRule",
    "PageRule",
    "PageRules",
    "backend_for",
]


def backend_for(wb: Workbench) -> FirewallBackend:
    """The firewall backend of ``wb`` (same as ``wb.firewall``)."""
    return wb.firewall
