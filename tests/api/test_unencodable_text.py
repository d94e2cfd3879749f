"""Text that cannot be encoded as UTF-8 is refused where it enters, and never breaks a zone.

A lone surrogate (``"\\ud800"`` in JSON) once got stored in a filter's
description: the create call answered 500 and every list of the zone answered
500 from then on. Here such text goes into every string field, and every key,
of every resource, over HTTP and through the core; each attempt is refused
with a 400 naming the field, stores nothing, and every list still answers 200.
"""

from __future__ import annotations

import copy
import json

import httpx
import pytest

from workbench.core import ValidationError

BAD = "x\ud800y"  # a lone surrogate: what the JSON escape "x\ud800y" decodes to
BAD_KEY = "\udfff"
BAD_KEY_SHOWN = "\\udfff"  # how a pointer shows the key (escaped, so it can be encoded)


def string_pointers(value, pointer=""):
    """JSON pointers of the strings in ``value``, and of its objects (where a key can go)."""
    if isinstance(value, str):
        yield "string", pointer
    elif isinstance(value, dict):
        yield "object", pointer
        for key, inner in value.items():
            yield from string_pointers(inner, f"{pointer}/{key}")
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from string_pointers(inner, f"{pointer}/{i}")


def _at(body, pointer):
    parts = [p for p in pointer.split("/")[1:]]
    for part in parts[:-1]:
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body, parts[-1] if parts else None


def poisoned(body):
    """``(pointer, body)``: each string replaced by BAD, then a BAD key added to each object."""
    for kind, pointer in list(string_pointers(body)):
        bad = copy.deepcopy(body)
        if kind == "string":
            parent, last = _at(bad, pointer)
            parent[int(last) if isinstance(parent, list) else last] = BAD
            yield pointer, bad
        else:
            target = bad
            if pointer:
                parent, last = _at(bad, pointer)
                target = parent[int(last) if isinstance(parent, list) else last]
            target[BAD_KEY] = "value"
            yield f"{pointer}/{BAD_KEY_SHOWN}", bad


def raw_json(body):
    # json.dumps escapes the surrogates ("\ud800"): the bytes a client would send.
    return json.dumps(body).encode("ascii")


# (method, path, body, core call, prefix of the core's pointer) — ids from the `objects` fixture.
def cases(ids):
    z, f, r, p = ids["zone"], ids["filter"], ids["rule"], ids["page_rule"]
    target = [{"target": "url", "constraint": {"operator": "matches", "value": "*example.com/a*"}}]
    return [
        (
            "POST",
            f"/zones/{z}/filters",
            [
                {"expression": 'http.host eq "a.example"', "description": "d", "ref": "r"},
                {"expression": 'http.host eq "b.example"', "description": "e", "ref": "s"},
            ],
            lambda fw, b: fw.create_filters(z, b),
            "",
        ),
        (
            "PUT",
            f"/zones/{z}/filters",
            [{"id": f, "expression": 'http.host eq "c.example"', "description": "d", "ref": "r"}],
            lambda fw, b: fw.update_filters(z, b),
            "",
        ),
        (
            "PUT",
            f"/zones/{z}/filters/{f}",
            {"id": f, "expression": 'http.host eq "d.example"', "description": "d", "ref": "r"},
            lambda fw, b: fw.update_filter(z, f, b),
            "",
        ),
        (
            "POST",
            f"/zones/{z}/firewall/rules",
            [
                {
                    "filter": {"id": f},
                    "action": "bypass",
                    "products": ["waf", "bic"],
                    "description": "d",
                    "ref": "r",
                }
            ],
            lambda fw, b: fw.create_rules(z, b),
            "",
        ),
        (  # the shortened call: inline filters
            "POST",
            f"/zones/{z}/firewall/rules",
            [
                {
                    "filter": {
                        "expression": 'http.host eq "e.example"',
                        "description": "fd",
                        "ref": "fr",
                    },
                    "action": "block",
                    "description": "d",
                    "ref": "r",
                },
                {"filter": {"expression": "ip.src eq 192.0.2.1"}, "action": "challenge"},
            ],
            lambda fw, b: fw.create_rules(z, b),
            "",
        ),
        (
            "PUT",
            f"/zones/{z}/firewall/rules",
            [{"id": r, "filter": {"id": f}, "action": "allow", "description": "d", "ref": "r"}],
            lambda fw, b: fw.update_rules(z, b),
            "",
        ),
        (
            "PUT",
            f"/zones/{z}/firewall/rules/{r}",
            {
                "id": r,
                "filter": {"id": f},
                "action": "js_challenge",
                "description": "d",
                "ref": "r",
            },
            lambda fw, b: fw.update_rule(z, r, b),
            "",
        ),
        (
            "PATCH",
            f"/zones/{z}/firewall/rules",
            [{"id": r, "priority": 3}],
            lambda fw, b: fw.set_priorities(z, b),
            "",
        ),
        (
            "PATCH",
            f"/zones/{z}/firewall/rules/{r}",
            {"id": r, "priority": 4},
            lambda fw, b: fw.set_priority(z, r, b),
            "",
        ),
        (
            "POST",
            f"/zones/{z}/pagerules",
            {
                "targets": target,
                "actions": [
                    {"id": "waf", "value": "off"},
                    {"id": "security_level", "value": "high"},
                    {"id": "disable_security"},
                ],
                "priority": 2,
                "status": "active",
            },
            lambda fw, b: fw.page_rules.create(z, b),
            "",
        ),
        (
            "PUT",
            f"/zones/{z}/pagerules/{p}",
            {"targets": target, "actions": [{"id": "browser_check", "value": "on"}]},
            lambda fw, b: fw.page_rules.update(z, p, b, full=True),
            "",
        ),
        (
            "PATCH",
            f"/zones/{z}/pagerules/{p}",
            {"actions": [{"id": "security_level", "value": "low"}], "status": "disabled"},
            lambda fw, b: fw.page_rules.update(z, p, b, full=False),
            "",
        ),
        (
            "POST",
            "/filters/validate-expr",
            {"expression": "ssl"},
            lambda fw, b: fw.validate_expression_body(b),
            "",
        ),
    ]


@pytest.fixture
def objects(wb, zones):
    zone = zones["enterprise"]
    [flt] = wb.firewall.create_filters(zone, [{"expression": 'http.host eq "f.example"'}])
    [rule] = wb.firewall.create_rules(zone, [{"filter": {"id": flt.id}, "action": "block"}])
    page_rule = wb.firewall.page_rules.create(
        zone,
        {
            "targets": [{"target": "url", "constraint": {"value": "*example.com/p*"}}],
            "actions": [{"id": "waf", "value": "on"}],
        },
    )
    return {"zone": zone, "filter": flt.id, "rule": rule.id, "page_rule": page_rule.id}


def everything(http, zone_ids):
    """Every list of the account, each checked to be a 200 envelope."""
    seen = {}
    for path in ["/zones?per_page=50"] + [
        f"/zones/{z}/{kind}"
        for z in zone_ids
        for kind in ("filters?per_page=100", "firewall/rules?per_page=100", "pagerules")
    ]:
        r = http.get(path)
        assert r.status_code == 200, (path, r.text)
        assert r.json()["success"] is True
        seen[path] = r.json()["result"]
    return seen


def refused(r, pointer):
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["success"] is False and body["result"] is None
    [error] = body["errors"]
    assert error["source"] == {"pointer": pointer}
    if pointer.endswith(BAD_KEY_SHOWN):
        why = "key holds a lone surrogate (U+DFFF) at character 1"
    else:
        why = "holds a lone surrogate (U+D800) at character 2"
    assert error["message"] == f"{pointer}: {why}, which cannot be encoded as UTF-8"


def test_every_string_and_key_of_every_resource_is_refused_over_http(http, wb, zones, objects):
    before = everything(http, zones.values())
    tried = 0
    for method, path, body, _, _ in cases(objects):
        for pointer, bad in poisoned(body):
            r = http.request(
                method, path, content=raw_json(bad), headers={"Content-Type": "application/json"}
            )
            refused(r, pointer)
            tried += 1
        assert everything(http, zones.values()) == before  # nothing stored, not even in part
        # The same body without the bad text is fine: only the text was refused.
        r = http.request(method, path, json=body)
        assert r.status_code == 200, (method, path, r.text)
        before = everything(http, zones.values())
    assert tried > 80


def test_zone_names_and_plans_are_refused_over_http(http, zones):
    before = everything(http, zones.values())
    body = {"name": "new.example", "plan": {"legacy_id": "pro"}}
    for pointer, bad in poisoned(body):
        refused(
            http.post(
                "/zones", content=raw_json(bad), headers={"Content-Type": "application/json"}
            ),
            pointer,
        )
    assert everything(http, zones.values()) == before
    assert http.post("/zones", json=body).status_code == 200


def test_every_text_field_is_refused_by_the_core_too(http, wb, zones, objects):
    # A Python caller (a notebook, a widget) goes straight to the core: same refusal.
    before = everything(http, zones.values())
    tried = 0
    for _, _, body, call, prefix in cases(objects):
        for pointer, bad in poisoned(body):
            with pytest.raises(ValidationError) as info:
                call(wb.firewall, bad)
            error = info.value.to_error()
            assert error["source"] == {"pointer": prefix + pointer}, error
            assert "cannot be encoded as UTF-8" in error["message"]
            tried += 1
    for name, plan in [(f"a{BAD}.example", "free"), ("b.example", BAD)]:
        with pytest.raises(ValidationError):
            wb.create_zone(name, plan=plan)
    assert tried > 80
    assert everything(http, zones.values()) == before
    for zone in wb.zones:  # what the core holds renders as UTF-8
        fw = wb.firewall
        items = [f.to_dict() for f in fw.list_filters(zone.id, per_page=100).items]
        items += [r.to_dict() for r in fw.list_rules(zone.id, per_page=100).items]
        items += [p.to_dict() for p in fw.page_rules.list(zone.id)]
        json.dumps([zone.to_dict(), *items], ensure_ascii=False).encode("utf-8")


def test_expressions_are_refused_before_the_parser_sees_them(wb, zones):
    with pytest.raises(ValidationError) as info:
        wb.firewall.validate_expression(f'http.host eq "{BAD}"')
    assert info.value.to_error()["source"] == {"pointer": "/expression"}
    assert "lone surrogate (U+D800) at character 16" in info.value.message


@pytest.mark.parametrize(
    "query, name",
    [
        ("description=%ED%A0%80", "description"),  # a surrogate, percent-encoded
        ("expression=ssl%ED%B0%80", "expression"),
        ("ref=%FF", "ref"),  # not UTF-8 at all
        ("page=1&id=%C0%AF", "id"),  # an overlong encoding
    ],
)
def test_query_text_that_is_not_utf8_is_refused_by_name(http, zones, query, name):
    r = http.get(f"/zones/{zones['free']}/filters?{query}")
    assert r.status_code == 400, r.text
    [error] = r.json()["errors"]
    assert error["source"] == {"parameter": name}
    assert error["message"].startswith(f"query parameter {name}: holds ")
    assert http.get(f"/zones/{zones['free']}/filters").status_code == 200


def test_query_parameter_names_and_path_segments_are_checked_too(http, zones):
    r = http.get(f"/zones/{zones['free']}/filters?%ED%A0%80=1")
    assert r.status_code == 400
    assert r.json()["errors"][0]["message"].startswith("query parameter ")
    assert "its name holds a lone surrogate (U+D800)" in r.json()["errors"][0]["message"]
    r = http.get("/zones/%ED%A0%80/filters")
    assert r.status_code == 400
    [error] = r.json()["errors"]
    assert error["source"] == {"parameter": "path"}
    assert error["message"] == (
        "path segment 4: holds a lone surrogate (U+D800) at character 1, "
        "which cannot be encoded as UTF-8"
    )


def test_a_server_that_decodes_paths_to_surrogates_gets_an_envelope(wb, zones):
    # Some ASGI servers decode paths with surrogateescape; the app must still answer.
    from workbench.api import create_app
    from workbench.api.transport import InProcessTransport

    class SurrogatePaths(InProcessTransport):
        def handle_request(self, request):
            app = self.app

            async def decoded(scope, receive, send):
                scope = {**scope, "path": scope["path"].replace("BAD", "\udcff")}
                scope.pop("raw_path")
                await app(scope, receive, send)

            self.app = decoded
            try:
                return super().handle_request(request)
            finally:
                self.app = app

    headers = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
    with httpx.Client(
        transport=SurrogatePaths(create_app(wb)), base_url="http://wb/client/v4", headers=headers
    ) as client:
        r = client.get("/zones/BAD")
        assert r.status_code == 400 and r.json()["errors"][0]["source"] == {"parameter": "path"}
        assert "U+DCFF" in r.json()["errors"][0]["message"]
        assert client.get(f"/zones/{zones['free']}").status_code == 200
