"""Firewall choices recorded in docs/decisions.md: the page-rule quota of every plan."""

import pytest

from workbench import Workbench
from workbench.core.errors import QuotaExceeded
from workbench.firewall.errors import PageRuleQuotaExceeded


def body(i):
    target = {"target": "url", "constraint": {"operator": "matches", "value": f"example.com/{i}/*"}}
    return {"targets": [target], "actions": [{"id": "security_level", "value": "high"}]}


@pytest.mark.parametrize(("plan", "quota"), [("pro", 20), ("business", 50), ("enterprise", 125)])
def test_page_rule_quota_of_the_paid_plans(plan, quota):
    wb = Workbench(seed=0)
    zone = wb.create_zone("example.com", plan=plan).id
    rules = wb.firewall.page_rules
    for i in range(quota):
        rules.create(zone, body(i))
    with pytest.raises(QuotaExceeded) as info:
        rules.create(zone, body(quota))
    assert isinstance(info.value, PageRuleQuotaExceeded) and info.value.code == 10400
    assert f"the {plan} plan allows {quota} page rules" in info.value.message
    assert len(rules.list(zone)) == quota
    # Disabled rules count too, and freeing one slot lets the next one in.
    rules.delete(zone, rules.list(zone)[0].id)
    assert rules.create(zone, body(quota)).status == "disabled"
