"""The firewall refuses text that cannot be encoded as UTF-8, whoever calls it (issue 10).

A Python caller reaches the core without the HTTP face's checks; a lone
surrogate in any text field must still be refused before anything is stored,
so the zone's lists keep rendering.
"""

import json

import pytest

from workbench import Workbench
from workbench.firewall.errors import InvalidFirewallInput

BAD = "a\udc80b"


@pytest.fixture
def fw_zone():
    wb = Workbench(seed=5)
    zone = wb.create_zone("example.com", plan="enterprise")
    [flt] = wb.firewall.create_filters(zone.id, [{"expression": 'http.host eq "a.example"'}])
    return wb, zone.id, flt.id


def rendered(wb, zone):
    fw = wb.firewall
    items = [f.to_dict() for f in fw.list_filters(zone, per_page=100).items]
    items += [r.to_dict() for r in fw.list_rules(zone, per_page=100).items]
    items += [p.to_dict() for p in fw.page_rules.list(zone)]
    return json.dumps(items, ensure_ascii=False).encode("utf-8")  # never raises


@pytest.mark.parametrize(
    "call, pointer",
    [
        (
            lambda fw, z, f: fw.create_filters(z, [{"expression": f'http.host eq "{BAD}"'}]),
            "/0/expression",
        ),
        (
            lambda fw, z, f: fw.create_filters(z, [{"expression": "ssl", "description": BAD}]),
            "/0/description",
        ),
        (lambda fw, z, f: fw.create_filters(z, [{"expression": "ssl", "ref": BAD}]), "/0/ref"),
        (lambda fw, z, f: fw.update_filter(z, f, {"description": BAD}), "/description"),
        (lambda fw, z, f: fw.update_filters(z, [{"id": f, "ref": BAD}]), "/0/ref"),
        (
            lambda fw, z, f: fw.create_rules(
                z, [{"filter": {"id": f}, "action": "block", "ref": BAD}]
            ),
            "/0/ref",
        ),
        (
            lambda fw, z, f: fw.create_rules(
                z, [{"filter": {"expression": "ssl", "description": BAD}, "action": "block"}]
            ),
            "/0/filter/description",
        ),
        (
            lambda fw, z, f: fw.create_rules(z, [{"filter": {"id": BAD}, "action": "block"}]),
            "/0/filter/id",
        ),
        (
            lambda fw, z, f: fw.create_rules(
                z, [{"filter": {"id": f}, "action": "bypass", "products": ["waf", BAD]}]
            ),
            "/0/products/1",
        ),
        (
            lambda fw, z, f: fw.page_rules.create(
                z,
                {
                    "targets": [{"target": "url", "constraint": {"value": f"*{BAD}*"}}],
                    "actions": [{"id": "waf", "value": "off"}],
                },
            ),
            "/targets/0/constraint/value",
        ),
        (
            lambda fw, z, f: fw.page_rules.create(
                z,
                {
                    "targets": [{"target": "url", "constraint": {"value": "*x*"}}],
                    "actions": [{"id": "waf", "value": BAD}],
                },
            ),
            "/actions/0/value",
        ),
        (lambda fw, z, f: fw.validate_expression(BAD), "/expression"),
    ],
)
def test_unencodable_text_is_refused_and_nothing_is_stored(fw_zone, call, pointer):
    wb, zone, flt = fw_zone
    before = rendered(wb, zone)
    with pytest.raises(InvalidFirewallInput) as info:
        call(wb.firewall, zone, flt)
    assert info.value.extra["source"] == {"pointer": pointer}
    message = info.value.message
    assert message.startswith(f"{pointer}: holds a lone surrogate (U+DC80) at character ")
    assert message.endswith(", which cannot be encoded as UTF-8")
    assert rendered(wb, zone) == before


def test_a_bad_key_is_refused_too(fw_zone):
    wb, zone, _ = fw_zone
    with pytest.raises(InvalidFirewallInput) as info:
        wb.firewall.create_filters(zone, [{"expression": "ssl", "\ud800": 1}])
    assert info.value.extra["source"] == {"pointer": "/0/\\ud800"}
    assert "key holds a lone surrogate (U+D800)" in info.value.message
