"""Write notebooks/01-rules-and-filters.ipynb from the cells below (sources only, no outputs).

The notebook is committed *with* outputs so nbval compares them, and
tests/test_notebooks_sync.py checks that its cells match this script. After
editing this script, rebuild and re-execute every notebook from the repo root:

    make notebooks

or this one only:

    python notebooks/build/build_01_rules.py
    jupyter nbconvert --to notebook --execute --inplace notebooks/01-rules-and-filters.ipynb
    python -m pytest --nbval --nbval-current-env notebooks/01-rules-and-filters.ipynb

Cell ids are fixed (``rules-01``...), so a rebuild does not churn them.
The API server's port is chosen by the kernel, so no cell prints it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbbuild

PATH = Path(__file__).resolve().parent.parent / "01-rules-and-filters.ipynb"
PREFIX = "rules"

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# Filters and firewall rules

A **filter** is a standalone match expression in the Rules language. A
**firewall rule** points at one filter and says what to do with the requests it
matches (`block`, `challenge`, `allow`, `log`, `bypass`...). Because the filter
stands alone, **several rules can share one filter**, and other features of the
platform can use it too.

This notebook walks through the model with the workbench's firewall service
directly, then does the same over HTTP with the official `cloudflare` SDK, and
ends with the rule builder panel.""",
    ),
    (
        "code",
        """\
import json
import warnings

from workbench import Workbench

# The SDK marks the Filters and Firewall Rules APIs deprecated; that is what we teach here.
warnings.filterwarnings("ignore", message="The .* API is deprecated")


def show(obj):
    print(json.dumps(obj, indent=2))


wb = Workbench(seed=0)
free = wb.create_zone("shop.example", plan="free")
ent = wb.create_zone("bank.example", plan="enterprise")
fw = wb.firewall
print(free.id, free.plan)
print(ent.id, ent.plan)""",
    ),
    (
        "md",
        """\
## The recommended sequence: filter first, then the rule

Step one creates the filter through the Filters API (a batch: the body is an
array). Step two creates the rule that refers to the filter by id.""",
    ),
    (
        "code",
        """\
[admin] = fw.create_filters(free.id, [{"expression": 'http.request.uri.path contains "/admin"',
                                       "description": "admin area"}])
show(admin.to_dict())""",
    ),
    (
        "code",
        """\
block, allow = fw.create_rules(free.id, [
    {"filter": {"id": admin.id}, "action": "block", "description": "no admin from outside"},
    {"filter": {"id": admin.id}, "action": "allow", "priority": 1, "description": "office"},
])
show(block.to_dict())
print("rules sharing the filter:", fw.filter_usage(free.id))""",
    ),
    (
        "md",
        """\
## Which rule runs first

Rules run by `priority` (a lower number first; rules without a priority after
all the others), then by **action precedence**: log, bypass, allow, challenge,
managed_challenge, js_challenge, block. `log` and `bypass` do not stop the
evaluation; the first other action that matches decides.""",
    ),
    (
        "code",
        """\
for rule in fw.evaluation_order(free.id):
    print(rule.priority, rule.action, rule.description)
print(fw.evaluate(free.id, {"http.request.uri.path": "/admin/users"}).to_dict())
print(fw.evaluate(free.id, {"http.request.uri.path": "/blog"}).to_dict())""",
    ),
    (
        "md",
        """\
## The shortened sequence: one call, filter inline

For emergencies (curl-style), one POST to the rules endpoint can carry the
filter inline. The service creates the filter, then the rule.""",
    ),
    (
        "code",
        """\
[quick] = fw.create_rules(free.id, [{"filter": {"expression": 'ip.src in {192.0.2.0/24}'},
                                     "action": "managed_challenge"}])
show(quick.to_dict())""",
    ),
    (
        "md",
        """\
If the filter **or** the rule is invalid, nothing is created:""",
    ),
    (
        "code",
        """\
from workbench.core.errors import WorkbenchError

try:
    fw.create_rules(free.id, [{"filter": {"expression": 'http.host eq "a.example"'}, "action": "deny"}])
except WorkbenchError as err:
    show(err.to_error())
try:
    fw.create_rules(free.id, [{"filter": {"expression": 'http.host eq'}, "action": "block"}])
except WorkbenchError as err:
    print(err.to_error()["message"])
print(fw.list_filters(free.id).total_count, "filters,", fw.list_rules(free.id).total_count, "rules")""",
    ),
    (
        "md",
        """\
## The partial outcome at the quota

A free zone may have 5 active rules. When the quota stops the shortened call,
the filter **is** created (it came first) and the rule is not; the error says
which filter was left behind.""",
    ),
    (
        "code",
        """\
fw.create_rules(free.id, [{"filter": {"expression": f'http.host eq "h{i}.shop.example"'},
                           "action": "block"} for i in range(2)])
print(fw.usage(free.id))
try:
    fw.create_rules(free.id, [{"filter": {"expression": 'http.user_agent contains "sqlmap"'},
                               "action": "block"}])
except WorkbenchError as err:
    partial = err.to_error()
show(partial)""",
    ),
    (
        "md",
        """\
To finish, fix the quota problem (here: pause a rule; paused rules do not
count) and create the rule against the **existing** filter with the recommended
sequence. Retrying the one-call form would be refused, because the expression
is now taken.""",
    ),
    (
        "code",
        """\
left_behind = partial["meta"]["filters_created"][0]["id"]
fw.update_rule(free.id, quick.id, {"paused": True})
[finished] = fw.create_rules(free.id, [{"filter": {"id": left_behind}, "action": "block"}])
print(finished.filter.expression, "->", finished.action)
try:
    fw.create_rules(free.id, [{"filter": {"expression": 'http.user_agent contains "sqlmap"'},
                               "action": "block"}])
except WorkbenchError as err:
    show(err.to_error())""",
    ),
    (
        "md",
        """\
A feature the plan lacks behaves like the quota: `matches` needs Business or
Enterprise, `log` needs Enterprise. (The filter is again left behind: you will
see it in the list of filters further down.)""",
    ),
    (
        "code",
        """\
try:
    fw.create_rules(free.id, [{"filter": {"expression": 'http.request.uri.path matches "^/wp-"'},
                               "action": "block"}])
except WorkbenchError as err:
    print(err.code, err.message.split(";")[0])
[log] = fw.create_rules(ent.id, [{"filter": {"expression": 'http.request.uri.path matches "^/wp-"'},
                                  "action": "log"}])
print(log.action, "on", wb.zone(ent.id).plan)""",
    ),
    (
        "md",
        """\
## Deleting: rules first, then the filter

Deleting a rule never deletes its filter, and a filter that a rule still uses
cannot be deleted.""",
    ),
    (
        "code",
        """\
try:
    fw.delete_filter(free.id, admin.id)
except WorkbenchError as err:
    print(err.code, err.message)
fw.delete_rules(free.id, [block.id, allow.id])
print("filter still there:", fw.get_filter(free.id, admin.id).id == admin.id)
print("deleted filter:", fw.delete_filter(free.id, admin.id) == admin.id)""",
    ),
    (
        "md",
        """\
## Page rules with security settings

Page rules match a URL pattern; the security-related actions are simulated
(`waf` on/off, `security_level`, `browser_check`, `disable_security`). The WAF
migration reads them.""",
    ),
    (
        "code",
        """\
pr = fw.page_rules.create(free.id, {
    "targets": [{"target": "url", "constraint": {"operator": "matches", "value": "*shop.example/admin/*"}}],
    "actions": [{"id": "waf", "value": "off"}, {"id": "security_level", "value": "high"}],
    "status": "active",
})
show(pr.to_dict())
print(fw.page_rules.for_url(free.id, "https://shop.example/admin/login").id == pr.id)""",
    ),
    (
        "md",
        """\
## The same over HTTP, with the official SDK

`workbench.api.serve(wb)` starts the v4 API of this workbench on a background
thread and returns its base URL (`http://127.0.0.1:<port>/client/v4`; the port is picked
by the system, so it is not printed here). Any client works: curl, the SDK, a
script.""",
    ),
    (
        "code",
        """\
import cloudflare
from workbench.api import serve, stop

url = serve(wb)
print(url.startswith("http://127.0.0.1:"), url.endswith("/client/v4"))
cf = cloudflare.Cloudflare(base_url=url, api_email=wb.account.email,
                           api_key=wb.account.api_key, max_retries=0)
for f in cf.filters.list(zone_id=free.id, per_page=5):  # automatic pagination
    print(f.id, f.expression)""",
    ),
    (
        "md",
        """\
The SDK's typed `firewall.rules.create` sends one object; the documented
body is an array, which a raw POST sends. The partial outcome arrives as an
HTTP 400 that the SDK raises, with the left-behind filter in the envelope.""",
    ),
    (
        "code",
        """\
path = f"/zones/{free.id}/firewall/rules"
cf.post(path, cast_to=object, body=[{"filter": {"expression": f'ip.src eq 198.51.100.{i}'},
                                     "action": "block"} for i in range(2)])
print(fw.usage(free.id))
try:
    cf.post(path, cast_to=object, body=[{"filter": {"expression": 'http.referer contains "spam"'},
                                         "action": "block"}])
except cloudflare.BadRequestError as err:
    print(err.status_code)
    refused = err.body
show(refused)""",
    ),
    (
        "code",
        """\
orphan = refused["errors"][0]["meta"]["filters_created"][0]["id"]
cf.firewall.rules.update(finished.id, zone_id=free.id, action="block",
                         filter={"id": finished.filter.id}, extra_body={"paused": True})
envelope = cf.post(path, cast_to=object, body=[{"filter": {"id": orphan}, "action": "js_challenge"}])
print(envelope["success"], envelope["result"][0]["action"], envelope["result"][0]["filter"]["id"] == orphan)""",
    ),
    (
        "code",
        """\
bad = cloudflare.Cloudflare(base_url=url, api_email=wb.account.email, api_key="0" * 37, max_retries=0)
try:
    bad.filters.list(zone_id=free.id)
except cloudflare.PermissionDeniedError as err:
    print(err.status_code, err.body["errors"])""",
    ),
    (
        "md",
        """\
## The rule builder panel

Pick fields, operators allowed for the field's type, and values; the field box
is a type-ahead list (the common fields first, then the rest by family), and
the text beside the value box says what the operator takes. The preview shows
the expression or the parser's error with its caret, and the table shows which
sample requests match. The two buttons create through the API above; the
status line says which objects now exist, by id, and the HTTP log shows each
request as JSON and as curl, with the envelope that came back.

The next cells drive a **separate instance, `demo`**, from code, so the saved
outputs record what it did; it is never displayed. The panel shown at the end
of this section, `panel`, is a **fresh** one for you: one empty condition, no
outcome, an empty HTTP log.""",
    ),
    (
        "code",
        """\
from workbench.widgets import RuleBuilder

demo = RuleBuilder(wb, ent.id)  # driven from code below; not displayed
demo.set_condition(0, "http.request.uri.path", "contains", "/admin")
demo.add_condition("ip.src.country", "in", "GB FR", join="and")
print(demo.expression)
print(demo.rows[1].syntax)
for row in demo.match_table():
    print(*row)""",
    ),
    (
        "code",
        """\
demo.action.value = "challenge"
demo.create_button.click()
print(demo.status.kind, "-", demo.summary())
print(demo.exchanges[0].curl())
print(demo.exchanges[1].request_json())""",
    ),
    (
        "md",
        """\
The priority box takes a whole number and sends it as an integer; anything
else is stopped in the panel before a request goes out. A negative priority is
an integer, so it is sent, and the API refuses the rule *after* the filter was
created: the status names that filter and how to finish.""",
    ),
    (
        "code",
        """\
demo.rows[1].value.value = "GB FR DE"
demo.priority.value = "high"
demo.create_button.click()
print(demo.status.kind, "-", demo.summary())
demo.priority.value = "-3"
demo.create_button.click()
print(demo.status.kind, "-", demo.summary())
demo.priority.value = ""
demo.create_button.click()  # finishing: the existing filter is reused
print(demo.status.kind, "-", demo.summary())""",
    ),
    (
        "code",
        """\
demo.rows[1].value.value = "GB FR DE NL"
demo.action.value = "block"
demo.one_call_button.click()
print(demo.status.kind, "-", demo.summary())
for filter_id, expression, rules in demo.filters_table():
    print(filter_id, expression, "<-", rules)""",
    ),
    (
        "code",
        """\
demo.set_condition(0, "http.request.uri.path", "contains", "/admin")
demo.set_condition(1, "ip.src", "eq", "192.0.2", join="or")
print(demo.error)
demo.rows[1].field.value = "ip.scr"
print(demo.rows[1].syntax)""",
    ),
    (
        "md",
        """\
The panel for you, fresh, on the same zone (the filters and rules made above
are listed at its bottom). `panel.reset()` brings it back to this state.""",
    ),
    (
        "code",
        """\
panel = RuleBuilder(wb, ent.id)
panel""",
    ),
    (
        "code",
        """\
stop(wb)
print("server stopped")""",
    ),
]


if __name__ == "__main__":
    sys.exit(nbbuild.write(CELLS, PREFIX, PATH))
