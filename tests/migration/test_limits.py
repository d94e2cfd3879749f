"""The limits that need Cloudflare Support: 200 firewall rules, 4096 bytes of UTF-8 per expression."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workbench import Workbench
from workbench.migration import MAX_EXPRESSION_BYTES, MAX_FIREWALL_RULES, propose, read_zone
from workbench.migration.errors import ExpressionTooLong, TooManyFirewallRules
from workbench.rulesets import MANAGED_PHASE

PREFIX = 'http.request.uri.path eq "'  # 26 ASCII bytes, then the text and a closing quote


def long_expression(size: int) -> str:
    """An expression of exactly ``size`` UTF-8 bytes, mostly two-byte characters."""
    room = size - len(PREFIX) - 1
    text = "é" * (room // 2) + "a" * (room % 2)
    made = f'{PREFIX}{text}"'
    assert len(made.encode()) == size and len(made) < 4096
    return made


@pytest.fixture
def wb():
    return Workbench(seed=0, start=datetime(2022, 9, 19, tzinfo=UTC))


@pytest.fixture
def zone(wb):
    return wb.create_zone("example.com", plan="enterprise").id


def _bypass(wb, zone, expressions, paused=False):
    for start in range(0, len(expressions), 25):
        wb.firewall.create_rules(
            zone,
            [
                {
                    "action": "bypass",
                    "products": ["waf"],
                    "paused": paused,
                    "filter": {"expression": e},
                }
                for e in expressions[start : start + 25]
            ],
        )


def _migrate(wb, zone):
    body = propose(read_zone(wb, zone)).result()
    return wb.migration.put_entrypoint(
        zone, MANAGED_PHASE, body, waf_migration="pending", phase_two="1"
    )


def _addresses(count):
    return [f"ip.src eq 10.1.{i // 256}.{i % 256}" for i in range(count)]


def test_the_limits():
    assert (MAX_FIREWALL_RULES, MAX_EXPRESSION_BYTES) == (200, 4096)


def test_200_firewall_rules_migrate(wb, zone):
    _bypass(wb, zone, _addresses(200))
    assert len(_migrate(wb, zone).rules) == 202
    assert wb.migration.status(zone).migration_state == "done"


def test_201_firewall_rules_need_support_and_config_still_lists_them(wb, zone):
    _bypass(wb, zone, _addresses(150))
    _bypass(wb, zone, _addresses(201)[150:], paused=True)  # paused ones are migrated too
    assert len(propose(read_zone(wb, zone)).rules) == 203
    with pytest.raises(TooManyFirewallRules) as info:
        _migrate(wb, zone)
    assert "200" in info.value.message and "Cloudflare Support" in info.value.message
    assert wb.rulesets.find_entrypoint(zone, MANAGED_PHASE) is None
    assert wb.migration.status(zone).migration_state == "start"


def test_a_4096_byte_expression_migrates(wb, zone):
    _bypass(wb, zone, [long_expression(4096)])
    assert _migrate(wb, zone).rules[0].expression == long_expression(4096)


def test_a_4097_byte_expression_needs_support(wb, zone):
    _bypass(wb, zone, [long_expression(4097)])
    config = propose(read_zone(wb, zone))
    assert config.rules[0]["expression"] == long_expression(4097)
    with pytest.raises(ExpressionTooLong) as info:
        _migrate(wb, zone)
    message = info.value.message
    assert "firewall rule expression" in message and "4 KB" in message
    assert "Cloudflare Support" in message and "4097 bytes" in message
    assert wb.migration.status(zone).migration_state == "start"


def test_the_limits_apply_to_validation_too(wb, zone):
    _bypass(wb, zone, [long_expression(4097)])
    body = propose(read_zone(wb, zone)).result()
    with pytest.raises(ExpressionTooLong):
        wb.migration.put_entrypoint(zone, MANAGED_PHASE, body, waf_migration="2", phase_two="1")
    # A plain save (Enterprise may) does not migrate, so no limit applies.
    assert wb.migration.put_entrypoint(zone, MANAGED_PHASE, body).version == "1"
