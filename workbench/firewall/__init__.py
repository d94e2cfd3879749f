"""Filters, firewall rules and page rules: the firewall service of a Workbench.

No HTTP here: the API and the widgets call these methods and render what they
return or raise. ``service_for(wb)`` (also ``wb.firewall``) gives the one
service of a Workbench.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="free")
    >>> [rule] = service_for(wb).create_rules(zone.id, [
    ...     {"filter": {"expression": 'ip.src eq 192.0.2.1'}, "action": "block"}])
    >>> rule.filter.expression, service_for(wb) is wb.firewall
    ('ip.src eq 192.0.2.1', True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .models import (
    ACTION_PRECEDENCE,
    ACTIONS,
    BYPASS_PRODUCTS,
    Evaluation,
    Filter,
    FirewallRule,
)
from .pagerules import SECURITY_ACTIONS, PageRule, PageRules
from .service import FirewallService

if TYPE_CHECKING:
    from ..core.platform import Workbench

__all__ = [
    "ACTIONS",
    "ACTION_PRECEDENCE",
    "BYPASS_PRODUCTS",
    "SECURITY_ACTIONS",
    "Evaluation",
    "Filter",
    "FirewallService",
    "FirewallRule",
    "PageRule",
    "PageRules",
    "service_for",
]


def service_for(wb: Workbench) -> FirewallService:
    """The firewall service of ``wb`` (same as ``wb.firewall``)."""
    return wb.firewall
