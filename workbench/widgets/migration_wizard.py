"""The migration wizard: a zone's move from the previous WAF to the new managed rules, step by step.

It mirrors the dashboard: the update banner (only for an eligible zone;
otherwise why not, and the remedy), Review configuration (the proposal,
editable as JSON, with what is not migrated), Deploy (Pro and Business
finish at once; Enterprise enters validation mode), the comparison of both
versions over replayed traffic with one-click remedies, Ready to update,
Turn off previous version, done; and a Terraform tab. Every step calls the
v4 API through the panels' :class:`~workbench.api.client.ApiClient` (in
process by default) and shows each exchange, with its curl line, in the HTTP
log. The API decides: a step the plan cannot take is refused with the
envelope's reason. Which steps are open is the core's answer too (``GET
.../workbench/waf_migration/steps``, read after each step that may change
it): a button is available only when its step is, and a closed one says why
(its tooltip, and the table of steps under the banner).

    >>> from workbench import Workbench
    >>> from workbench.widgets import MigrationWizard
    >>> wb = Workbench(seed=0); zone = wb.create_zone("shop.example", plan="business")
    >>> panel = MigrationWizard(wb, zone.id)       # display(panel) in a notebook
    >>> panel.banner.kind, panel.review_button.disabled, panel.deploy_button.disabled
    ('success', False, True)
    >>> panel.review_button.click(); panel.deploy_button.click()
    >>> panel.deploy_status.kind, panel.state
    ('success', 'done')
    >>> [f"{e.method} {e.path.split('/')[-1]}" for e in panel.exchanges]
    ['PUT entrypoint?waf_migration=pending&phase_two=1', 'GET steps']
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx

from ..api.client import ApiClient, Exchange
from ..core.clock import iso
from . import migration_wizard_replay as replay
from . import migration_wizard_rules as rules
from ._migration_wizard_terraform import TerraformView, old_terraform_config, terraform_view
from ._migration_wizard_view import (
    WizardView,
    hint,
    messages_html,
    open_steps_html,
    progress,
    refusal_html,
    steps_html,
)
from ._migration_wizard_view import terraform_html as _terraform_html
from .migration_wizard_rules import why as _why
from .migration_wizard_validation import ValidationSteps
from .parts import Panel, StatusLine, scroll_table

if TYPE_CHECKING:
    from ..core.platform import Workbench

MANAGED = "http_request_firewall_managed"
AVAILABLE = "An update to WAF Managed Rules is available for this zone: review, then deploy."
UNDER_WAY = "The update is under way: both versions run, the new one first."
DONE_BANNER = "No update banner: this zone uses the new WAF Managed Rules (migration done)."
UNKNOWN = "the zone's state is unknown: Check again"


class MigrationWizard(ValidationSteps, Panel):
    """A panel that walks one zone of ``wb`` through the WAF managed rules migration."""

    title = "Migration wizard"
    drives = "the WAF managed rules migration of one zone, through the v4 API"

    def __init__(
        self, wb: Workbench, zone: str | None = None, client: ApiClient | None = None
    ) -> None:
        self.wb = wb
        self.client = client if client is not None else ApiClient(wb)
        self.zone_id = wb.zone(zone).id if zone else wb.zones[0].id
        self._first_zone = self.zone_id
        self.exchanges: list[Exchange] = []
        self._made: list[Exchange] = []
        self._old: dict[str, dict[str, Any]] = {}  # previous-version config, for Terraform
        self.view = v = WizardView()
        # The widgets people and tests use, under short names.
        self.banner, self.explain, self.check_button = v.banner, v.explain, v.check_button
        self.review_button, self.restore_button = v.review_button, v.restore_button
        self.review_status, self.editor, self.editor_hint = v.review_status, v.editor, v.editor_hint
        self.procedure, self.deploy_button = v.procedure, v.deploy_button
        self.refresh_button, self.deploy_status = v.refresh_button, v.deploy_status
        self.clock_button, self.replay_button = v.clock_button, v.replay_button
        self.replay_count, self.replay_seed = v.replay_count, v.replay_seed
        self.compare_status, self.custom_button = v.compare_status, v.custom_button
        self.rule_picker, self.log_button = v.rule_picker, v.log_button
        self.disable_button, self.remedy_status = v.disable_button, v.remedy_status
        self.ready_button, self.turn_off_button = v.ready_button, v.turn_off_button
        self.old_api_button, self.finish_status = v.old_api_button, v.finish_status
        self.provider, self.terraform_button = v.provider, v.terraform_button
        self.terraform_status, self.http_log, self.tabs = v.terraform_status, v.http_log, v.tabs
        super().__init__(v.body(self.status))
        self.add_class("wb-mw")
        self.status.add_class("wb-mw-state")
        v.zone_picker.options = [(f"{z.name} ({z.plan})", z.id) for z in wb.zones]
        v.zone_picker.value = self.zone_id
        v.zone_picker.observe(self._zone_changed, "value")
        self.editor.observe(lambda _: self._editor_changed(), "value")
        self.provider.observe(lambda _: self._draw_terraform(), "value")
        self.procedure.observe(lambda _: self._procedure_changed(), "value")
        self.watch_inputs(self.replay_count, self.replay_seed, status=self.compare_status)
        clicks: list[tuple[Any, Callable[[], Any]]] = [
            (self.check_button, self.check), (self.review_button, self.review),
            (self.restore_button, self.restore), (self.deploy_button, self.deploy),
            (self.refresh_button, self.refresh), (self.clock_button, self.advance_clock),
            (self.replay_button, self.replay), (self.custom_button, self.add_custom_rule),
            (self.log_button, lambda: self.override_rule("log")),
            (self.disable_button, lambda: self.override_rule("disable")),
            (self.ready_button, self.ready_to_update), (self.turn_off_button, self.turn_off_previous),
            (self.old_api_button, self.try_old_api), (self.terraform_button, self.generate_terraform),
        ]  # fmt: skip
        for widget, action in clicks:
            widget.on_click(lambda _, act=action: act())
        self._fresh()

    # -- text form, reset --------------------------------------------------------
    def describe(self) -> str:
        """The panel's ``text/plain`` form: what it drives, on which zone."""
        zone = self.wb.zone(self.zone_id)
        return (f"{self.title} panel: drives {self.drives} (zone {zone.name}, {zone.plan}). "
                "Run this cell to open the panel.")  # fmt: skip

    def reset(self) -> None:
        """Back to a fresh panel: its first zone, checked afresh, nothing else shown."""
        if self.view.zone_picker.value != self._first_zone:
            self.view.zone_picker.value = self._first_zone  # the observer starts afresh
        else:
            self._fresh()

    def _fresh(self) -> None:
        self.state: str | None = None
        self.compatible: bool | None = None
        self.steps: dict[str, Any] | None = None  # the API's answer: stage, open steps, why
        self.proposal: dict[str, Any] | None = None
        self.ruleset_names: dict[str, str] = {}
        self.messages: list[dict[str, Any]] = []
        self.comparison: replay.Comparison | None = None
        self.entrypoint: dict[str, Any] | None = None
        self.terraform_view: TerraformView | None = None
        self.exchanges = []
        self.http_log.clear()
        self.custom_done = False
        self.remedy_done = ""
        lines = [self.status, self.banner, self.review_status, self.deploy_status]
        lines += [self.compare_status, self.remedy_status, self.finish_status]
        for line in [*lines, self.terraform_status]:
            line.clear()
        v = self.view
        shown = (v.explain, v.open_steps, v.messages, v.rules, v.chart, v.allowed, v.legit)
        for html_widget in (*shown, v.terraform):
            html_widget.value = ""
        self.editor.value = ""
        self.rule_picker.options = []
        self.check()
        if self.steps is not None:  # the plan's procedure, as the core names it
            direct = self.steps["procedure"] == "direct"
            self.procedure.value = "pending" if direct else "validation"

    def _procedure_changed(self) -> None:
        """A refusal of the other procedure says nothing about this one: clear it."""
        if self.deploy_status.kind in ("refused", "error"):
            self.deploy_status.clear()
        else:
            self.deploy_status.mark_stale()
        self._draw_state()

    def _zone_changed(self, change: Any) -> None:
        self.zone_id = change["new"]
        self._fresh()

    # -- calls and steps ---------------------------------------------------------
    @property
    def _base(self) -> str:
        return f"/zones/{self.zone_id}"

    def _entry(self, phase: str = MANAGED, query: str = "") -> str:
        return f"{self._base}/rulesets/phases/{phase}/entrypoint{query}"

    def _call(self, method: str, path: str, body: Any = None) -> Exchange:
        ex = self.client.call(method, path, body)
        self._made.append(ex)
        return ex

    def _step(self, name: str, action: Callable[[], Any], line: StatusLine) -> None:
        """Run one step in the busy state; log its exchanges; then set what is available."""
        self._made = []
        try:
            self.run(action)
        except httpx.TransportError as exc:
            line.show("error", f"could not reach the API at {self.client.base_url} ({exc})")
        finally:
            if self._made:
                self.http_log.add(self._made, heading=name)
                self.exchanges = list(self._made)
            self._sync()

    def _read_steps(self) -> Exchange:
        """GET the core's steps: the stage, the API's state, what is open and why the rest is not."""
        ex = self._call("GET", f"{self._base}/workbench/waf_migration/steps")
        if ex.success:
            self.steps = ex.response["result"]
            self.state = self.steps["migration_state"]
            if self.state == "done":
                self.compatible = False  # nothing left to migrate
        return ex

    @property
    def stage(self) -> str | None:
        """The core's stage (None until the steps were read)."""
        return self.steps["stage"] if self.steps else None

    @property
    def finishing(self) -> bool:
        """A direct deploy still completing (both versions on, on a plan without validation mode)."""
        return self.stage == "finishing"

    @property
    def ready(self) -> bool:
        """Ready to update was selected (validation mode)."""
        return bool(self.steps and self.steps["ready"])

    # Check: the banner ---------------------------------------------------------
    def check(self) -> None:
        """GET check (phase_two=1) and the steps; when not eligible, why and the remedy."""
        self._step("Check", self._check, self.banner)

    def _check(self) -> None:
        self.explain.value = ""
        found = self._call("GET", f"{self._base}/waf_migration/check?phase_two=1")
        steps = self._read_steps()
        if not (found.success and steps.success):
            self.banner.show(
                "error", f"the check failed ({_why(found if not found.success else steps)})"
            )
            return
        self.compatible = bool(found.response["result"]["compatible"])
        if self.state != "done":
            self._old[self.zone_id] = old_terraform_config(self.wb.waf_legacy.config(self.zone_id))
        self._why_not()

    def _why_not(self) -> None:
        """The refusal a migrating save would get now, and its remedies (from the steps)."""
        steps = self.steps or {}
        refusal = steps.get("refusal")
        if not refusal:
            return
        if self.stage == "not_eligible":
            text = f"No update banner: this zone cannot migrate now ({refusal['code']})."
            self.banner.show("refused", text)
        self.explain.value = refusal_html(steps)

    # 1. Review configuration ---------------------------------------------------------
    def review(self) -> None:
        """GET config (the proposed rules into the editor, what is not migrated), GET rulesets."""
        self._step("Review configuration", self._review, self.review_status)

    def _review(self) -> None:
        """GET config, then GET the rulesets for their names."""
        config = self._call("GET", f"{self._base}/waf_migration/config?phase_two=1")
        if not config.success:
            self.review_status.show("refused", f"refused ({_why(config)})")
            return
        self.proposal = config.response["result"]
        self.messages = list(config.response.get("messages") or [])
        # The rulesets' names, so the table says what each rule runs (the JSON keeps the ids).
        listed = self._call("GET", f"{self._base}/rulesets")
        found = listed.response["result"] if listed.success else []
        self.ruleset_names = {r["id"]: r["name"] for r in found if r.get("name")}
        self.view.messages.value = messages_html(self.messages)
        self.restore()
        count = len(self.proposal["rules"])
        left = len(self.messages)
        settings = "setting" if left == 1 else "settings"
        text = f"proposed configuration: {count} rules, {left} {settings} not migrated"
        self.review_status.show("success", f"{text}; edit the JSON if needed, then Deploy")

    def restore(self) -> None:
        """Put the proposal back into the editor."""
        if self.proposal is not None:
            self.editor.value = json.dumps(self.proposal, indent=2)

    def _editor_changed(self) -> None:
        if not self.editor.value:
            self.view.editor_hint.value = self.view.rules.value = ""
            return
        body, problem = rules.parse_body(self.editor.value)
        if body is None:
            self.view.editor_hint.value = hint(
                f"{problem}; Deploy sends nothing until it is fixed", bad=True
            )
            return
        edited = self.proposal is not None and body != self.proposal
        note = " (edited: differs from the proposal)" if edited else ""
        self.view.editor_hint.value = hint(f"valid JSON: {len(body['rules'])} rules{note}")
        self.view.rules.value = scroll_table(
            ["#", "action", "enabled", "runs / parameters", "overrides", "expression"],
            rules.rules_table(body["rules"], self.ruleset_names),
            cls="wb-mw-rules-table",
        )
        self.deploy_status.mark_stale()

    # 2. Deploy ----------------------------------------------------------------------
    def deploy(self) -> None:
        """PUT the editor's rules with waf_migration=validation or pending, then GET status."""
        self._step("Deploy", self._deploy, self.deploy_status)

    def _deploy(self) -> None:
        body, problem = rules.parse_body(self.editor.value)
        if body is None:
            self.deploy_status.show("error", f"not sent: {problem}. Nothing was deployed.")
            return
        mode = self.procedure.value
        put = self._call("PUT", self._entry(query=f"?waf_migration={mode}&phase_two=1"), body)
        if not put.success:
            remedy = rules.remedy_for((put.error or {}).get("code"))
            text = f"refused, nothing changed ({_why(put)})"
            self.deploy_status.show("refused", text + (f"; remedy: {remedy}" if remedy else ""))
            return
        version = put.response["result"]["version"]
        self._read_steps()
        self._show_deploy(f"entry point version {version}")

    def _show_deploy(self, what: str) -> None:
        if self.state == "done":
            text = "the new WAF Managed Rules are on and the previous version is off"
            self.deploy_status.show("success", f"deployed ({what}): {text}; the migration is done")
        elif self.finishing:
            text = "this may take a couple of minutes (of the virtual clock)"
            self.deploy_status.show("partial", f"deploying ({what}): {text}; Refresh status")
        elif self.state == "validation":
            text = "both versions run, the new one first; replay traffic to compare them"
            self.deploy_status.show("success", f"validation mode ({what}): {text}")
        else:
            self.deploy_status.show("info", f"status ({what}): state {self.state}")

    def refresh(self) -> None:
        """GET the steps: shows a deploy completing."""

        def read() -> None:
            self._read_steps()
            self._show_deploy("refreshed")

        self._step("Refresh status", read, self.deploy_status)

    def advance_clock(self, seconds: int = 120) -> None:
        """PUT /workbench/clock to move the virtual clock, then GET the steps."""

        def move() -> None:
            moved = self._call("PUT", "/workbench/clock", {"advance_seconds": seconds})
            if not moved.success:
                self.status.show("error", f"the clock did not move ({_why(moved)})")
                return
            self._read_steps()
            if self.deploy_status.kind != "empty":
                self._show_deploy(f"clock {moved.response['result']['now']}")

        self._step("Advance the clock", move, self.deploy_status)

    # 4. Finish ----------------------------------------------------------------------------
    def ready_to_update(self) -> None:
        """POST Ready to update (validation mode), then GET the steps: unlocks Turn off previous."""
        self._step("Ready to update", self._ready, self.finish_status)

    def _ready(self) -> None:
        made = self._call("POST", f"{self._base}/workbench/waf_migration/ready_to_update")
        if not made.success:
            self.finish_status.show("refused", f"refused ({_why(made)})")
            return
        self._read_steps()
        text = "Turn off previous version finishes the migration (PUT ...?waf_migration=pending)"
        self.finish_status.show("success", f"ready to update: {text}; it cannot be undone")

    def turn_off_previous(self) -> None:
        """GET the entry point, PUT it again with waf_migration=pending, then GET the steps."""
        self._step("Turn off previous version", self._turn_off, self.finish_status)

    def _turn_off(self) -> None:
        read = self._call("GET", self._entry())
        if not read.success:
            self.finish_status.show("refused", f"refused ({_why(read)})")
            return
        body = {"rules": rules.writable(read.response["result"]["rules"])}
        put = self._call("PUT", self._entry(query="?waf_migration=pending&phase_two=1"), body)
        if not put.success:
            self.finish_status.show("refused", f"refused, nothing changed ({_why(put)})")
            return
        self._read_steps()
        version = put.response["result"]["version"]
        text = f"the previous version is off for good (entry point version {version})"
        self.finish_status.show(
            "success", f"done: {text}; exceptions (skip rules) now turn managed rules off"
        )

    def try_old_api(self) -> None:
        """GET the previous version's packages: refused once the migration is done."""
        self._step("The previous version's API", self._try_old_api, self.finish_status)

    def _try_old_api(self) -> None:
        ex = self._call("GET", f"{self._base}/firewall/waf/packages")
        if ex.success:
            self.finish_status.show(
                "info",
                f"the previous version's API still answers ({len(ex.response['result'])} packages)",
            )
        else:
            self.finish_status.show(
                "refused", f"the previous version's API refuses now ({_why(ex)})"
            )

    # Terraform ---------------------------------------------------------------------------
    def generate_terraform(self) -> None:
        """GET the managed entry point, then generate its Terraform (provider 4 or 5)."""
        self._step("Terraform", self._generate_terraform, self.terraform_status)

    def _generate_terraform(self) -> None:
        read = self._call("GET", self._entry())
        if not read.success:
            self.entrypoint = self.terraform_view = None
            self.view.terraform.value = ""
            self.terraform_status.show(
                "refused", f"no entry point to describe ({_why(read)}); deploy first"
            )
            return
        self.entrypoint = read.response["result"]
        self._draw_terraform()

    def _draw_terraform(self) -> None:
        if self.entrypoint is None:
            return
        provider = int(self.provider.value)
        old = self._old.get(self.zone_id)
        self.terraform_view = terraform_view(self.entrypoint, self.zone_id, provider, old)
        self.view.terraform.value = _terraform_html(self.terraform_view)
        entry = f"the entry point {self.entrypoint['id']} at version {self.entrypoint['version']}"
        self.terraform_status.show("success", f"provider {provider}: {entry}")

    # -- what is available -------------------------------------------------------------------
    def _sync(self) -> None:
        """Open what the core's steps open, saying why the rest is closed; redraw the bar and clock."""
        actions = self.steps["actions"] if self.steps else []
        closed = {a["action"]: a["reason"] for a in actions if not a["open"]}

        def step(name: str) -> str:
            """Why the core's step ``name`` is closed ("" when it is open)."""
            return closed.get(name, "") if self.steps else UNKNOWN

        def unless(ok: bool, why: str) -> str:
            return "" if ok else why

        # What the panel itself still needs, once the core's step is open.
        proposal = unless(self.proposal is not None, "Review configuration first: no proposal yet")
        found = self.comparison
        allowed = (
            "replay traffic first" if found is None
            else "the last comparison lists no request the new version lets through"
            if not found.allowed
            else "added already: replay to compare again" if self.custom_done else ""
        )  # fmt: skip
        legit = unless(bool(self.rule_picker.options), "no managed rule to remedy: replay first")
        # Before Deploy the replay is the preview of the draft (every plan); after, the compare.
        before = self.stage in ("start", "not_eligible")
        replaying = (step("preview") or proposal) if before else step("compare")
        self.replay_button.description = (
            "Preview the draft on traffic" if before else "Replay traffic and compare"
        )
        deployed = unless(self.stage in ("validation", "finishing", "done"), "nothing deployed yet")
        done = unless(self.stage == "done", "the previous version's API answers until it is done")
        why_not = {
            self.review_button: step("review"),
            self.restore_button: step("deploy") or proposal,
            self.deploy_button: step("deploy") or proposal,
            self.procedure: step("deploy"),
            self.editor: step("deploy") or proposal,
            self.refresh_button: deployed,
            self.replay_button: replaying,
            self.replay_count: replaying,
            self.replay_seed: replaying,
            # A remedy is offered once per comparison: replay again to see what it changed.
            self.custom_button: replaying or allowed,
            self.rule_picker: replaying or legit,
            self.log_button: replaying or legit,
            self.disable_button: replaying or legit,
            self.ready_button: step("ready_to_update"),
            self.turn_off_button: step("turn_off_previous"),
            self.old_api_button: done,
        }
        for widget, reason in why_not.items():
            self.view.enable(widget, reason)
        self.view.open_steps.value = open_steps_html(self.steps["actions"]) if self.steps else ""
        self.view.clock.value = hint(f"virtual clock: {iso(self.wb.now())}")
        # The editor shows once there is a proposal to edit.
        self.editor.layout.display = None if self.proposal is not None else "none"
        self._draw_banner()
        self._draw_state()

    def _draw_banner(self) -> None:
        """The banner follows the state; a refusal (set by the check) stays until checked again."""
        if self.state == "done":
            self.banner.show("success", DONE_BANNER)
        elif self.state == "validation":
            self.banner.show("info", UNDER_WAY)
        elif self.state == "start" and self.compatible:
            self.banner.show("success", AVAILABLE)

    def _draw_state(self) -> None:
        steps, current, kind, text = progress(
            self.stage,
            reviewed=self.proposal is not None,
            ready=self.ready,
            validation=self.procedure.value == "validation",
        )
        self.view.steps.value = steps_html(steps, current)
        self.status.show(kind, text)
