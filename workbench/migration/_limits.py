"""The two limits that need Cloudflare Support: 200 firewall rules, 4 KB per expression.

The firewall rules to migrate are those with Bypass > WAF Managed Rules (each
becomes a skip rule), paused ones included since they are migrated too. 4 KB
is 4096 bytes of UTF-8: the Rules language counts 4096 *characters*, so an
expression in between is a valid filter that only the migration refuses.
The PUT that migrates applies them (pending or validation); the generated
configuration still lists every rule.

    >>> check_limits([])
    >>> text = 'http.host eq "é"'
    >>> len(text), expression_bytes(text)
    (16, 17)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .errors import ExpressionTooLong, TooManyFirewallRules

if TYPE_CHECKING:
    from ..firewall.models import FirewallRule

MAX_FIREWALL_RULES = 200
MAX_EXPRESSION_BYTES = 4096


def expression_bytes(expression: str) -> int:
    """The length of ``expression`` in bytes of UTF-8."""
    return len(expression.encode("utf-8"))


def check_limits(rules: Sequence[FirewallRule]) -> None:
    """Refuse more than 200 firewall rules to migrate, or an expression over 4096 bytes."""
    if len(rules) > MAX_FIREWALL_RULES:
        raise TooManyFirewallRules(len(rules))
    for rule in rules:
        size = expression_bytes(rule.filter.expression)
        if size > MAX_EXPRESSION_BYTES:
            raise ExpressionTooLong(rule.id, size)
