"""Write notebooks/02-migration-walkthrough.ipynb from the cells below (sources only, no outputs).

The notebook is committed *with* outputs so nbval compares them, and
tests/test_notebooks_sync.py checks that its cells match this script. After
editing this script, rebuild and re-execute every notebook from the repo root:

    make notebooks

or this one only:

    python notebooks/build/build_02_migration.py
    jupyter nbconvert --to notebook --execute --inplace notebooks/02-migration-walkthrough.ipynb
    python -m pytest --nbval --nbval-current-env notebooks/02-migration-walkthrough.ipynb

Cell ids are fixed (``migration-01``...), so a rebuild does not churn them.
Everything runs in process (the wizard's API client calls the workbench's app
without a socket), on the workbench's virtual clock and seeded ids, so the
outputs are the same on every run: no port, no real time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbbuild

PATH = Path(__file__).resolve().parent.parent / "02-migration-walkthrough.ipynb"
PREFIX = "migration"

CELLS: list[tuple[str, str]] = [
    (
        "md",
        """\
# Migrating a zone to the new WAF Managed Rules

The previous version of the WAF managed rules (packages, groups, rules, URI-based
overrides) gives way to **managed rulesets** run from the zone's
`http_request_firewall_managed` entry point. The migration cannot be undone, so the
workbench lets you try it first: on a simulated zone, through the same v4 API calls
the dashboard makes, with replayed traffic to see what would change.

This notebook walks through it with the **migration wizard** panel:

1. a **Business** zone migrated directly (Pro and Business have no validation mode);
2. an **Enterprise** zone through **validation mode**, where both versions run (the new
   one first) and replayed traffic shows where they disagree, with one-click fixes;
3. the **Terraform** that describes the result.

The cells below drive separate wizard instances from code, so the saved outputs record
what each step did; none of them is displayed. The panel shown at the very end is a
**fresh** one, on a zone nobody touched, for you to click through.""",
    ),
    (
        "code",
        """\
import json

from workbench import Workbench
from workbench.waf_legacy import CLOUDFLARE_PACKAGE
from workbench.widgets import MigrationWizard

wb = Workbench(seed=0)
shop = wb.create_zone("shop.example", plan="business")
blog = wb.create_zone("blog.example", plan="pro")
bank = wb.create_zone("bank.example", plan="enterprise")
fresh = wb.create_zone("try.example", plan="enterprise")
# The bank once set rule 100013 (scripting-library user agents) to block; the new
# Cloudflare Managed Ruleset has no equivalent of it.
wb.waf_legacy.edit_rule(bank.id, CLOUDFLARE_PACKAGE, "100013", {"mode": "block"})
print(wb)


def outcome(*lines):
    \"\"\"Status lines as a person reads them: [kind] text.\"\"\"
    for line in lines:
        print(f"[{line.kind}] {line.text}")


def calls(panel):
    \"\"\"The API calls the panel's last step made.\"\"\"
    for ex in panel.exchanges:
        print(f"{ex.method} {ex.path} -> {ex.status}")""",
    ),
    (
        "md",
        """\
## A Business zone, migrated directly

Opening the wizard checks the zone like the dashboard does before it shows the update
banner: `GET .../waf_migration/check?phase_two=1` (phase 2: every zone without
URI-based overrides may migrate), then `GET .../workbench/waf_migration/steps`, the
workbench's own route (the platform has none for this): the zone's stage and API state,
the dashboard steps open now and why each other one is closed. The panel's buttons
follow it, and a disabled one says why.""",
    ),
    (
        "code",
        """\
business = MigrationWizard(wb, shop.id)  # driven from code; not displayed
outcome(business.banner, business.status)
calls(business)""",
    ),
    (
        "md",
        """\
**Review configuration** reads the proposed configuration (`GET .../waf_migration/config`):
a ruleset named `default` that executes the Cloudflare Managed Ruleset and the OWASP
Core Ruleset, with overrides computed from the previous version's settings. It lands in
the panel's JSON editor, where it can be changed before it is deployed.""",
    ),
    (
        "code",
        """\
business.review()
outcome(business.review_status)
for rule in json.loads(business.editor.value)["rules"]:
    print(rule["action"], rule["expression"], json.dumps(rule["action_parameters"]))""",
    ),
    (
        "md",
        """\
**Preview the draft on traffic** comes before Deploy, on every plan. It is the
simulator's own help: the platform has no preview, and on Pro and Business *Deploy*
finishes the migration at once and for good. The panel replays generated traffic (sent
to the zone's own hosts) through the zone as it runs now and through the draft in the
editor, side by side, and answers validation mode's two questions. Nothing is deployed;
a remedy clicked now goes into the draft.""",
    ),
    (
        "code",
        """\
business.replay_count.value = 600
business.replay()
outcome(business.compare_status)
print("still:", wb.migration.steps(shop.id).stage)""",
    ),
    (
        "md",
        """\
**Deploy** saves it with `waf_migration=pending`: on Pro and Business the new version
goes on and the previous one off in the same step. The HTTP log keeps each exchange
with its curl line (`python -m workbench serve` prints the variables it uses).""",
    ),
    (
        "code",
        """\
business.deploy()
outcome(business.deploy_status, business.status)
calls(business)
print(business.exchanges[0].curl()[:200], "...")""",
    ),
    (
        "code",
        """\
business.try_old_api()  # the previous version's endpoints refuse from now on
outcome(business.finish_status)""",
    ),
    (
        "md",
        """\
A plan that cannot do a step is refused by the API, and the wizard shows the reason
from the envelope. Validation mode on a Pro zone:""",
    ),
    (
        "code",
        """\
pro = MigrationWizard(wb, blog.id)
pro.review()
pro.procedure.value = "validation"
pro.deploy()
outcome(pro.deploy_status)
print("state:", pro.state)""",
    ),
    (
        "md",
        """\
## An Enterprise zone, through validation mode

The review lists what the migration leaves out (the API's `messages`): here the bank's
rule 100013. Suppose that while reviewing you also change two things in the editor:
you set *XSS - JavaScript Events* to **log** (you believe it noisy), and you make
*Command Injection - Generic Separator* **block** (the previous version only simulated
it). Validation mode is where such decisions are checked before they count.""",
    ),
    (
        "code",
        """\
demo = MigrationWizard(wb, bank.id)  # driven from code; not displayed
demo.review()
outcome(demo.review_status)
for message in demo.messages:
    print(message["code"], message["message"])

XSS_EVENTS, SEPARATOR = "aa6276dd688f6f3648c3de66a991a5c4", "332497eaeea9e6879ce6205af2b86bff"
body = json.loads(demo.editor.value)
body["rules"][0]["action_parameters"]["overrides"] = {
    "rules": [{"id": XSS_EVENTS, "action": "log"}, {"id": SEPARATOR, "action": "block"}]}
demo.editor.value = json.dumps(body, indent=2)

demo.deploy()  # Enterprise: waf_migration=validation
outcome(demo.deploy_status, demo.status)
calls(demo)""",
    ),
    (
        "md",
        """\
### Replayed traffic, two questions

**Replay traffic and compare** sends 600 generated, labelled requests (browsers, APIs,
bots and attacks) through the zone as it is now: the new version first, then the
previous one for what the new one let through. Two canned queries over the events
answer what matters before switching:

* requests the new version **allowed** that the previous one **blocked or challenged**;
* **legitimate** requests the new version **blocked**.""",
    ),
    (
        "code",
        """\
demo.replay_count.value = 600
demo.replay()
outcome(demo.compare_status)
print("\\nallowed by the new version, stopped by the previous one:")
for row in demo.comparison.allowed[:5]:
    print(" ", row["label"], row["path"], row["old_action"], "by", row["old_rules"], "| new:", row["new_events"][:50])
print("\\nlegitimate requests blocked by the new version:")
for row in demo.comparison.legit:
    print(" ", row["rule_id"], row["description"], row["requests"], "requests, e.g.", row["example_path"])""",
    ),
    (
        "code",
        """\
import altair as alt

from workbench.widgets.migration_wizard_replay import chart

# The Vega-Lite JSON alone (no HTML with a random element id), so nbval compares it exactly.
alt.renderers.enable("mimetype")
chart(demo.comparison)""",
    ),
    (
        "md",
        """\
### One-click fixes, each followed by a new comparison

*Add a custom rule for this traffic* writes a rule into the zone's
`http_request_firewall_custom` entry point that does what the previous version's rule
did for these requests. *Set to log* changes the picked managed rule with a rule
override in the managed entry point, saved again with `waf_migration=validation`.""",
    ),
    (
        "code",
        """\
demo.add_custom_rule()
outcome(demo.remedy_status)
calls(demo)
demo.replay()
outcome(demo.compare_status)""",
    ),
    (
        "code",
        """\
print("picked:", demo.rule_picker.value)
demo.override_rule("log")
outcome(demo.remedy_status)
calls(demo)
demo.replay()
outcome(demo.compare_status)""",
    ),
    (
        "md",
        """\
### Ready to update, then Turn off previous version

*Ready to update* (the dashboard's step, over HTTP a workbench route:
`POST .../workbench/waf_migration/ready_to_update`) opens *Turn off previous version*,
which saves the entry point again with `waf_migration=pending` and finishes the migration
for good. Afterwards the previous version's endpoints refuse, and so does any attempt
to go back.""",
    ),
    (
        "code",
        """\
demo.ready_to_update()
outcome(demo.finish_status)
demo.turn_off_previous()
outcome(demo.finish_status, demo.status, demo.banner)
calls(demo)
demo.try_old_api()
outcome(demo.finish_status)""",
    ),
    (
        "md",
        """\
## Terraform

The Terraform tab reads the entry point through the API and writes the
`cloudflare_ruleset` resource that describes it, the commands that import it (the
entry point exists, so it is imported, not created), and, because the bank had changed
a rule of the previous version, the steps that take the old `cloudflare_waf_rule` out
of Terraform's state. Provider 5 first, then provider 4's block syntax.""",
    ),
    (
        "code",
        """\
demo.generate_terraform()
outcome(demo.terraform_status)
result = demo.terraform_view.result
print(result.hcl)
print("\\n".join(result.commands))
print()
for number, step in enumerate(result.cleanup_steps, 1):
    print(f"{number}. {step}")""",
    ),
    (
        "code",
        """\
import hcl2

demo.provider.value = 4
result = demo.terraform_view.result
print(result.hcl[:420], "...")
print(result.commands[-1])
print("parses:", sorted(hcl2.loads(result.hcl)))""",
    ),
    (
        "md",
        """\
The custom rule added in validation mode lives in the zone's
`http_request_firewall_custom` entry point, a `cloudflare_ruleset` of its own
(`cf-terraforming generate` writes it too).""",
    ),
    (
        "md",
        """\
## The wizard for you

A fresh panel on `try.example`, an Enterprise zone nobody touched (the instances above
were never displayed). Its banner and first two calls come from the check it makes when
it opens. Click *Review configuration*, *Preview the draft on traffic* to see what it
would change, edit the JSON if you like, *Deploy*, then *Replay traffic and compare*; the **Terraform** tab works once the entry point exists.
`panel.reset()` brings it back to this state; the zone picker switches to the other
zones (shop.example and bank.example have migrated, so their banner says so).""",
    ),
    (
        "code",
        """\
panel = MigrationWizard(wb, fresh.id)
panel""",
    ),
]


if __name__ == "__main__":
    sys.exit(nbbuild.write(CELLS, PREFIX, PATH))
