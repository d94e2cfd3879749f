"""After the migration switches the old WAF off for good, it refuses every call and does nothing."""

from __future__ import annotations

import pytest
from waf_helpers import CF, OWASP, SPECIALS, request

from workbench.core.errors import Conflict
from workbench.waf_legacy.errors import OldWafRetired


def test_a_retired_zone_refuses_every_old_waf_call(waf, zone, zones):
    made = waf.create_override(zone, {"urls": ["pro.example/x*"], "rules": {"100015": "disable"}})
    assert waf.retired(zone) is False
    waf.disable_for_good(zone)
    waf.disable_for_good(zone)  # idempotent
    assert waf.retired(zone) is True and waf.enabled(zone) is False
    calls = [
        lambda: waf.list_packages(zone),
        lambda: waf.get_package(zone, CF),
        lambda: waf.edit_package(zone, OWASP, {"sensitivity": "low"}),
        lambda: waf.list_groups(zone, CF),
        lambda: waf.get_group(zone, CF, SPECIALS),
        lambda: waf.edit_group(zone, CF, SPECIALS, {"mode": "off"}),
        lambda: waf.list_rules(zone, CF),
        lambda: waf.get_rule(zone, CF, "100015"),
        lambda: waf.edit_rule(zone, CF, "100015", {"mode": "block"}),
        lambda: waf.list_overrides(zone),
        lambda: waf.get_override(zone, made.id),
        lambda: waf.create_override(zone, {"urls": ["a*"], "rules": {"100015": "disable"}}),
        lambda: waf.replace_override(
            zone, made.id, {"urls": ["a*"], "rules": {"100015": "disable"}}
        ),
        lambda: waf.delete_override(zone, made.id),
        lambda: waf.get_setting(zone),
        lambda: waf.set_setting(zone, {"value": "on"}),
        lambda: waf.config(zone),
    ]
    for call in calls:
        with pytest.raises(OldWafRetired) as caught:
            call()
        assert isinstance(caught.value, Conflict) and caught.value.code == 10607
        assert "Rulesets API" in caught.value.message and zone in caught.value.message
    # Checked before the ids: even an unknown package says the zone migrated.
    with pytest.raises(OldWafRetired):
        waf.get_package(zone, "nope")
    # The pipeline's calls keep working and do nothing.
    assert waf.plan(zone).checks == []
    assert waf.evaluate(zone, request("https://pro.example/admin")).events == []
    # Other zones are untouched.
    assert waf.enabled(zones["business"]) is True
    assert (
        waf.evaluate(zones["business"], request("https://business.example/admin")).action == "block"
    )
