"""The migration wizard's widgets and how it draws what it read (no API calls here).

:class:`WizardView` builds every widget of the panel (with its ``wb-mw-*``
class, the hooks browser tests select by) and lays them out in two tabs,
"Migration" and "Terraform"; the drawing helpers turn what the wizard read
into HTML. The panel itself (:mod:`workbench.widgets.migration_wizard`)
makes the calls; which steps are open is the core's answer it read
(:meth:`WizardView.enable` shows a closed one's reason as its tooltip).

    >>> view = WizardView()
    >>> view.tabs.get_title(0), view.tabs.get_title(1)
    ('Migration', 'Terraform')
    >>> steps_html(["Check", "Review", "Deploy"], 1).count("class='wb-mw-step'")
    3
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as W

from . import parts
from .parts import HttpLog, StatusLine

#: Columns of the comparison's tables whose long text wraps (the rest stay on one line).
WRAPPED = ("old_rules", "new_events", "path", "query", "description", "example_path")

_HINT = "font-size:12px;line-height:1.35;color:#5f6368"
_BAD = "font-size:12px;line-height:1.35;color:#b71c1c"
_STYLE = (
    "<style>.wb-mw .widget-html-content{min-width:0;line-height:1.4}"
    ".wb-mw-editor textarea{font-family:var(--jp-code-font-family,monospace);font-size:12px}"
    ".wb-mw-steps span{display:inline-block;margin:2px 6px 2px 0;padding:1px 8px;"
    "border-radius:10px;font-size:12px}</style>"
)


def button(label: str, name: str, style: str = "", tooltip: str = "") -> W.Button:
    """A button as wide as its label, with its ``wb-mw-<name>`` hook."""
    made = W.Button(description=label, button_style=style, tooltip=tooltip or label)
    made.layout.width = "auto"
    made.layout.min_width = "max-content"
    made.layout.margin = "2px 8px 2px 0"
    made.add_class(f"wb-mw-{name}")
    return made


def heading(text: str) -> W.HTML:
    return W.HTML(f"<div style='font-weight:600;margin-top:8px'>{html.escape(text)}</div>")


def hint(text: str, bad: bool = False) -> str:
    return f"<div style='{_BAD if bad else _HINT}'>{html.escape(text)}</div>"


def row(*children: W.Widget) -> W.HBox:
    return W.HBox(list(children), layout=W.Layout(flex_flow="row wrap", align_items="center"))


VALIDATION_STEPS = ("Check", "Review configuration", "Deploy", "Validation mode",
                    "Ready to update", "Turn off previous version", "Done")  # fmt: skip
DIRECT_STEPS = ("Check", "Review configuration", "Deploy", "Done")


def progress(
    stage: str | None,
    *,
    reviewed: bool,
    ready: bool,
    validation: bool,
) -> tuple[tuple[str, ...], int, str, str]:
    """The step bar (its steps and the current one) and the state line (kind, text).

    ``stage`` is the core's (:data:`workbench.migration.steps.STAGES`), None when unknown.
    """
    steps = VALIDATION_STEPS if validation else DIRECT_STEPS
    if stage == "done":
        return (
            steps,
            len(steps),
            "success",
            ("done: the new WAF Managed Rules are on and the previous version is off for good"),
        )
    if stage is None:
        return steps, 0, "error", "the zone's state is unknown: Check again"
    if stage == "finishing":
        return (
            steps,
            2,
            "info",
            "deploying: both versions run until the deploy completes; Refresh status",
        )
    if stage == "validation":
        nxt = (
            "Turn off previous version"
            if ready
            else ("replay traffic, apply remedies, then Ready to update")
        )
        current = (5 if ready else 3) if validation else 2
        return (
            steps,
            current,
            "info",
            f"validation mode: both versions run, the new one first. Next: {nxt}",
        )
    if stage == "not_eligible":
        return steps, 0, "refused", "start: this zone cannot migrate now (see why below)"
    nxt = "Deploy" if reviewed else "Review configuration"
    current = 2 if reviewed else 1
    return (
        steps,
        current,
        "info",
        f"start: the previous version runs, the new one is off. Next: {nxt}",
    )


def steps_html(steps: Sequence[str], current: int) -> str:
    """The step bar: steps before ``current`` ticked, ``current`` highlighted, the rest grey."""
    shown = []
    for i, name in enumerate(steps):
        if i < current:
            look, mark = "background:#e8f5e9;color:#1b5e20", "✔ "
        elif i == current:
            look, mark = "background:#1a73e8;color:white;font-weight:600", "▶ "
        else:
            look, mark = "background:#f1f3f4;color:#5f6368", ""
        shown.append(f"<span class='wb-mw-step' style='{look}'>{mark}{html.escape(name)}</span>")
    return "<div class='wb-mw-steps'>" + "".join(shown) + "</div>"


def open_steps_html(actions: Sequence[dict[str, Any]]) -> str:
    """The core's steps (the API's ``actions``): which are open now, and why each other is not."""
    opened = ", ".join(a["label"] for a in actions if a["open"]) or "none"
    rows = [[a["label"], "open" if a["open"] else "closed", a["reason"] or ""] for a in actions]
    table = parts.scroll_table(["step", "now", "why not"], rows, cls="wb-mw-open-steps-table")
    return (
        f"<details><summary style='{_HINT};cursor:pointer'>Open now: {html.escape(opened)} "
        f"(why the other steps are closed)</summary>{table}</details>"
    )


def refusal_html(steps: dict[str, Any]) -> str:
    """Why a migrating save would be refused now, and the remedies (the API's steps)."""
    code, why = steps["refusal"]["code"], steps["refusal"]["message"]
    if steps["stage"] == "not_eligible":
        shown = hint(f"Why (from the API): {why}")
    else:  # eligible, but a limit (or a change since Deploy) would refuse the next step
        shown = hint(f"Refused if it migrates now (from the API, {code}): {why}")
    return shown + "".join(hint(f"Remedy: {r}.") for r in steps["remedies"])


def messages_html(messages: Sequence[dict[str, Any]]) -> str:
    """The configuration's "not migrated" messages, or a line saying there are none."""
    if not messages:
        return hint("Not migrated: nothing (the API's messages list is empty).")
    items = "".join(
        f"<li>{html.escape(str(m.get('code')))}: {html.escape(str(m.get('message')))}</li>"
        for m in messages
    )
    return (
        f"<div style='color:#8a4b00;font-size:12.5px'><b>Not migrated ({len(messages)}), from "
        f"the API's messages:</b><ul style='margin:2px 0 2px 18px;padding:0'>{items}</ul></div>"
    )


def table_html(title: str, columns: Sequence[str], rows: list[list[str]], total: int,
               cls: str) -> str:  # fmt: skip
    """A titled table that scrolls inside the panel, saying how many rows are not shown."""
    head = f"<div style='font-weight:600;font-size:12.5px;margin-top:6px'>{html.escape(title)}"
    head += f" ({total})</div>"
    if not rows:
        return head + hint("none")
    more = hint(f"… and {total - len(rows)} more") if total > len(rows) else ""
    return head + parts.scroll_table(columns, rows, cls=cls, wrap=WRAPPED) + more


class WizardView:
    """Every widget of the wizard, laid out; the panel fills them in."""

    def __init__(self) -> None:
        self.zone_picker = W.Dropdown(description="zone", style={"description_width": "40px"})
        self.clock = W.HTML(layout=W.Layout(margin="0 8px 0 12px"))
        self.clock_button = button("Advance clock 2 minutes", "clock",
                                   tooltip="PUT /workbench/clock {advance_seconds: 120}")  # fmt: skip
        self.steps = W.HTML()
        self.state_line = StatusLine()
        self.banner = StatusLine()
        self.explain = W.HTML()
        self.open_steps = W.HTML()
        self.check_button = button("Check again", "check")
        # 1. Review configuration
        self.review_button = button("Review configuration", "review", "primary")
        self.review_status = StatusLine()
        self.messages = W.HTML()
        self.rules = W.HTML()
        self.editor = W.Textarea(rows=14, layout=W.Layout(width="100%", max_width="900px"))
        self.editor_hint = W.HTML()
        self.restore_button = button("Restore the proposal", "restore")
        # 2. Deploy
        self.procedure = W.Dropdown(
            description="procedure",
            options=[
                ("validation mode (waf_migration=validation)", "validation"),
                ("directly (waf_migration=pending)", "pending"),
            ],  # fmt: skip
            style={"description_width": "70px"},
            layout=W.Layout(width="380px"),
        )
        self.deploy_button = button("Deploy", "deploy", "primary")
        self.refresh_button = button("Refresh status", "refresh")
        self.deploy_status = StatusLine()
        # 3. Validation mode: the comparison and its remedies
        self.replay_count = W.BoundedIntText(value=600, min=1, max=20_000, description="requests",
                                             style={"description_width": "60px"},
                                             layout=W.Layout(width="160px"))  # fmt: skip
        self.replay_seed = W.IntText(value=1, description="seed", style={"description_width": "35px"},
                                     layout=W.Layout(width="110px"))  # fmt: skip
        self.replay_button = button("Replay traffic and compare", "replay", "primary")
        self.compare_status = StatusLine()
        self.chart = W.HTML()
        self.allowed = W.HTML()
        self.custom_button = button("Add a custom rule for this traffic", "custom", "warning")
        self.legit = W.HTML()
        self.rule_picker = W.Dropdown(description="rule", style={"description_width": "35px"},
                                      layout=W.Layout(width="600px", max_width="100%"))  # fmt: skip
        self.log_button = button("Set to log", "log", "warning")
        self.disable_button = button("Disable the rule", "disable", "warning")
        self.remedy_status = StatusLine()
        # 4. Finish
        self.ready_button = button("Ready to update", "ready", "primary")
        self.turn_off_button = button("Turn off previous version", "turn-off", "danger")
        self.old_api_button = button("Try the previous version's API", "old-api")
        self.finish_status = StatusLine()
        # Terraform
        self.provider = W.ToggleButtons(options=[("provider 5", 5), ("provider 4", 4)], value=5,
                                        style={"button_width": "90px"})  # fmt: skip
        self.terraform_button = button("Generate Terraform", "terraform", "primary")
        self.terraform_status = StatusLine()
        self.terraform = W.HTML()
        self.http_log = HttpLog(keep=40)
        self.tabs = parts.Tabs(
            [self._migration_tab(), self._terraform_tab()], ["Migration", "Terraform"]
        )
        for widget, name in [
            (self.zone_picker, "zone"), (self.clock, "clock-now"), (self.steps, "steps-bar"),
            (self.state_line, "state"), (self.banner, "banner"), (self.explain, "explain"),
            (self.open_steps, "open-steps"),
            (self.review_status, "review-status"), (self.messages, "messages"),
            (self.rules, "rules"), (self.editor, "editor"), (self.editor_hint, "editor-hint"),
            (self.procedure, "procedure"), (self.deploy_status, "deploy-status"),
            (self.replay_count, "replay-count"), (self.compare_status, "compare-status"),
            (self.chart, "chart"), (self.allowed, "allowed"), (self.legit, "legit"),
            (self.rule_picker, "rule-picker"), (self.remedy_status, "remedy-status"),
            (self.finish_status, "finish-status"), (self.provider, "provider"),
            (self.terraform_status, "terraform-status"), (self.terraform, "terraform-view"),
            (self.http_log, "http"), (self.tabs, "tabs"),
        ]:  # fmt: skip
            widget.add_class(f"wb-mw-{name}")
        # Each button's own tooltip, shown again once its step opens.
        self._tooltips = {w: w.tooltip for w in vars(self).values() if isinstance(w, W.Button)}

    def enable(self, widget: W.DOMWidget, reason: str) -> None:
        """Enable ``widget``, or disable it when ``reason`` says why: its tooltip says it
        (a button gets its own tooltip back once enabled)."""
        widget.disabled = bool(reason)
        widget.tooltip = f"not available: {reason}" if reason else self._tooltips.get(widget)

    def body(self, status: StatusLine) -> list[W.Widget]:
        """The panel's body, with its main status line under the step bar."""
        return [
            W.HTML(_STYLE),
            row(self.zone_picker, self.clock, self.clock_button),
            self.steps,
            status,
            self.tabs,
            heading("API calls (newest first)"),
            self.http_log,
        ]

    def _migration_tab(self) -> W.VBox:
        return W.VBox([
            row(self.banner, self.check_button), self.explain, self.open_steps,
            heading("1. Review configuration"),
            row(self.review_button, self.restore_button), self.review_status,
            self.messages, self.rules, self.editor, self.editor_hint,
            heading("2. Deploy"),
            row(self.procedure, self.deploy_button, self.refresh_button), self.deploy_status,
            heading("3. Validation mode: compare both versions over replayed traffic"),
            W.HTML(hint("The replay runs in the workbench (the traffic pipeline; no API call); "
                        "each remedy is an API call, shown below.")),
            row(self.replay_count, self.replay_seed, self.replay_button), self.compare_status,
            self.chart, self.allowed, row(self.custom_button), self.legit,
            row(self.rule_picker, self.log_button, self.disable_button), self.remedy_status,
            heading("4. Finish"),
            row(self.ready_button, self.turn_off_button, self.old_api_button), self.finish_status,
        ])  # fmt: skip

    def _terraform_tab(self) -> W.VBox:
        note = hint(
            "Reads the zone's http_request_firewall_managed entry point through the API, then "
            "writes the cloudflare_ruleset resource, its import and the clean-up of the "
            "previous version's resources from Terraform state."
        )
        return W.VBox([W.HTML(note), row(self.provider, self.terraform_button),
                       self.terraform_status, self.terraform])  # fmt: skip


def terraform_html(view: Any) -> str:
    """The Terraform tab's content for a :class:`~._migration_wizard_terraform.TerraformView`."""
    result = view.result

    def block(title: str, text: str, cls: str) -> str:
        body = parts.pre(text)
        return (f"<div style='font-weight:600;margin-top:6px'>{html.escape(title)}</div>"
                f"<div class='{cls}' style='overflow-x:auto;max-width:100%'>{body}</div>")  # fmt: skip

    out = block(f"cloudflare_ruleset (provider {view.provider})", result.hcl, "wb-mw-hcl")
    out += block("Import", "\n".join(result.commands), "wb-mw-import")
    if result.cleanup_steps:
        out += hint("If Terraform manages the previous version, its state holds the resources "
                    "of what the zone changed from the defaults (the starting point, below); "
                    "these steps take them out of Terraform without destroying anything.")  # fmt: skip
        steps = "\n".join(f"{n}. {s}" for n, s in enumerate(result.cleanup_steps, 1))
        out += block("Remove the previous version's resources from state", steps, "wb-mw-cleanup")
    else:
        out += hint("State clean-up: none. The previous version's configuration is at its "
                    "defaults, so a Terraform configuration of it holds no cloudflare_waf_* "
                    "resources.")  # fmt: skip
    if result.warnings:
        out += block("Warnings", "\n".join(f"- {w}" for w in result.warnings), "wb-mw-warnings")
    if view.old_hcl:
        out += (
            "<details style='margin-top:6px'><summary style='cursor:pointer'>The starting "
            "point: the previous version as provider 3.x resources</summary>"
            f"<div class='wb-mw-old-hcl' style='overflow-x:auto'>{parts.pre(view.old_hcl)}</div>"
            "</details>"
        )
    return out
