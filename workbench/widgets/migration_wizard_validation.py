"""The migration wizard's validation mode: replay and compare both versions, then remedy.

A mixin of :class:`~workbench.widgets.migration_wizard.MigrationWizard`, kept
apart so each module stays small. "Replay traffic and compare" runs
generated traffic through the zone (:mod:`.migration_wizard_replay`); the
two remedies change the zone through the API: custom rules doing what the
previous version did for the requests the new one lets through (a PUT of the
``http_request_firewall_custom`` entry point), and a managed rule set to log
or disabled by a rule override (a PUT of the managed entry point, with
``waf_migration=validation`` while in validation mode).

    >>> from workbench import Workbench
    >>> from workbench.widgets import MigrationWizard
    >>> wb = Workbench(seed=0); zone = wb.create_zone("bank.example", plan="enterprise")
    >>> panel = MigrationWizard(wb, zone.id)
    >>> panel.review(); panel.deploy(); panel.replay_count.value = 100; panel.replay()
    >>> panel.compare_status.kind, panel.compare_status.text.split(":")[0]
    ('partial', 'replayed 100 requests (seed 1)')
    >>> panel.custom_button.disabled, panel.log_button.disabled   # CRS 2 and CRS 3 differ
    (False, False)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import migration_wizard_replay as replay
from . import migration_wizard_rules as rules
from ._migration_wizard_view import hint, table_html
from .migration_wizard_rules import why as _why
from .parts import chart_svg

if TYPE_CHECKING:
    import ipywidgets as W

    from ..api.client import Exchange
    from ..core.platform import Workbench
    from ._migration_wizard_view import WizardView
    from .parts import StatusLine

CUSTOM = "http_request_firewall_custom"
#: The two questions in the status line, shorter than the tables' titles (``replay.ALLOWED``,
#: ``replay.LEGIT``) under it.
SHORT_ALLOWED = "let through that only the previous version stopped"
SHORT_LEGIT = "legitimate blocked by the new version"


class ValidationSteps:
    """Replay, compare and the one-click remedies (see the module docstring)."""

    # Set by the panel; declared here for the type checker.
    wb: Workbench
    zone_id: str
    state: str | None
    view: WizardView
    comparison: replay.Comparison | None
    replay_count: W.BoundedIntText
    replay_seed: W.IntText
    rule_picker: W.Dropdown
    editor: W.Textarea
    steps: dict[str, Any] | None
    compare_status: StatusLine
    remedy_status: StatusLine
    custom_done: bool
    #: The last remedy's outcome, until a replay compares it (then the status says so).
    remedy_done: str

    def _step(self, name: str, action: Callable[[], Any], line: StatusLine) -> None:
        raise NotImplementedError  # the panel's

    def _call(self, method: str, path: str, body: Any = None) -> Exchange:
        raise NotImplementedError  # the panel's

    def _entry(self, phase: str = "http_request_firewall_managed", query: str = "") -> str:
        raise NotImplementedError  # the panel's

    @property
    def previewing(self) -> bool:
        """Nothing deployed yet: a replay is the preview of the draft in the editor."""
        return "preview" in ((self.steps or {}).get("open") or [])

    def replay(self) -> None:
        """Replay generated traffic through the zone and answer the two questions: before
        Deploy, the zone now against the draft (the preview); after, both versions running."""
        self._step("Preview" if self.previewing else "Replay", self._replay, self.compare_status)

    def _replay(self) -> None:
        if replay.REPLAY_MISSING is not None:
            self.compare_status.show("refused", replay.REPLAY_MISSING)
            return
        before = self.comparison
        count, seed = int(self.replay_count.value), int(self.replay_seed.value)
        if self.previewing:
            body, problem = rules.parse_body(self.editor.value)
            if body is None:
                self.compare_status.show("error", f"no preview: the draft is not valid ({problem})")
                return
            found = self.wb.tuning.preview(self.zone_id, count, seed=seed, rules=body["rules"])
        else:
            found = replay.compare(self.wb, self.zone_id, count, seed=seed)
        self.comparison = found
        self.custom_done = False
        if found.allowed or found.legit:
            self.view.chart.value = chart_svg(replay.chart(found))
        else:  # an empty chart says nothing: say it in words
            agree = f"Both questions answer none over {found.requests} replayed requests."
            self.view.chart.value = hint(agree)
        # What each version did first: at 1280 px the answer is in view without scrolling.
        allowed_columns = replay.ordered(replay.ALLOWED_COLUMNS, replay.ALLOWED_FIRST)
        self.view.allowed.value = table_html(
            replay.ALLOWED,
            allowed_columns,
            replay.table(found.allowed, allowed_columns),
            len(found.allowed),
            "wb-mw-allowed-table",
        )
        legit_columns = replay.ordered(replay.LEGIT_COLUMNS, replay.LEGIT_FIRST)
        self.view.legit.value = table_html(
            replay.LEGIT,
            legit_columns,
            replay.table(found.legit, legit_columns),
            len(found.legit),
            "wb-mw-legit-table",
        )
        self._offer(
            [
                (
                    f"{r['rule_id']} {r['description']} ({r['requests']} requests)",
                    f"{r['ruleset_id']}/{r['rule_id']}",
                )
                for r in found.legit
            ]
        )

        # The last remedy is in this replay: its line no longer asks for one.
        if self.remedy_done:
            self.remedy_status.show("info", f"{self.remedy_done}; the replay above includes it.")
            self.remedy_done = ""
        # The outcome line comes last, so once it shows, the chart and tables are drawn.
        # A short headline, then the two answers in plain weight, each with its own "before".
        allowed, legit = found.counts()
        was = before.counts() if before is not None else None
        answers = (
            f"{allowed} {SHORT_ALLOWED}" + (f" (before: {was[0]})" if was else ""),
            f"{legit} {SHORT_LEGIT}" + (f" (before: {was[1]})" if was else ""),
        )
        headline = f"replayed {found.requests} requests (seed {found.seed})"
        if found.preview:
            headline = (
                f"preview of {found.requests} requests (seed {found.seed}): the zone now against "
                "the draft, nothing deployed (the simulator's own help: the platform has none)"
            )
        kind = "success" if not (allowed or legit) else "partial"
        self.compare_status.show(kind, headline, note=" · ".join(answers))

    def _offer(self, options: list[tuple[str, str]]) -> None:
        """The rules the picker offers, the first one picked (ipywidgets picks none by itself)."""
        self.rule_picker.options = options
        self.rule_picker.value = options[0][1] if options else None

    def add_custom_rule(self) -> None:
        """Add custom rules doing what the previous version did for the allowed requests."""
        self._step("Add a custom rule", self._add_custom_rule, self.remedy_status)

    def _add_custom_rule(self) -> None:
        made = rules.custom_rules_for(
            self.comparison.allowed if self.comparison else [], self.wb.waf_legacy.catalog
        )
        if not made:
            self.remedy_status.show("error", "no rule to add: the comparison lists no request")
            return
        read = self._call("GET", self._entry(CUSTOM))
        if not read.success and read.status != 404:
            self.remedy_status.show("refused", f"refused ({_why(read)})")
            return
        existing = rules.writable(read.response["result"]["rules"]) if read.success else []
        put = self._call("PUT", self._entry(CUSTOM), {"rules": existing + made})
        if not put.success:
            self.remedy_status.show("refused", f"refused, nothing changed ({_why(put)})")
            return
        what = "; ".join(f"{r['action']}: {r['description']}" for r in made)
        rule = "custom rule" if len(made) == 1 else "custom rules"
        self._remedied(
            f"added {len(made)} {rule} to the {CUSTOM} entry "
            f"point (version {put.response['result']['version']}): {what}"
        )
        self.custom_done = True
        self.compare_status.mark_stale()

    def _remedied(self, text: str) -> None:
        """A remedy went through: say so, and that a replay shows what it changed."""
        self.remedy_done = text
        self.remedy_status.show("success", f"{text}. Replay again to compare.")

    def override_rule(self, how: str) -> None:
        """Set the picked managed rule to log (``how="log"``) or disable it, by a rule override."""
        self._step(f"Rule override: {how}", lambda: self._override_rule(how), self.remedy_status)

    def _override_rule(self, how: str) -> None:
        if not self.rule_picker.value:
            self.remedy_status.show("error", "no rule picked: replay traffic first")
            return
        picked = str(self.rule_picker.value)
        ruleset_id, rule_id = picked.split("/")
        if self.previewing:
            self._override_in_draft(picked, ruleset_id, rule_id, how)
            return
        read = self._call("GET", self._entry())
        if not read.success:
            self.remedy_status.show("refused", f"refused ({_why(read)})")
            return
        try:
            changed = rules.with_override(
                read.response["result"]["rules"], ruleset_id, rule_id, how
            )
        except ValueError as exc:
            self.remedy_status.show("error", f"not sent: {exc}")
            return
        # While validating, the save names the mode again, as the dashboard's does (a plain
        # save would keep the state too); after the migration only a plain save is taken.
        query = "?waf_migration=validation&phase_two=1" if self.state == "validation" else ""
        put = self._call("PUT", self._entry(query=query), {"rules": changed})
        if not put.success:
            self.remedy_status.show("refused", f"refused, nothing changed ({_why(put)})")
            return
        done = "set to log" if how == "log" else "disabled"
        self._remedied(
            f"managed rule {rule_id} {done} by a rule override of the "
            f"entry point (version {put.response['result']['version']})"
        )
        # That rule is remedied: the picker keeps the others until the next replay.
        self._offer([o for o in self.rule_picker.options if o[1] != picked])
        self.compare_status.mark_stale()

    def _override_in_draft(self, picked: str, ruleset_id: str, rule_id: str, how: str) -> None:
        """Before Deploy the remedy goes into the draft in the editor: Deploy sends it."""
        body, problem = rules.parse_body(self.editor.value)
        if body is None:
            self.remedy_status.show("error", f"not changed: the draft is not valid ({problem})")
            return
        try:
            body["rules"] = rules.with_override(body["rules"], ruleset_id, rule_id, how)
        except ValueError as exc:
            self.remedy_status.show("error", f"not changed: {exc}")
            return
        self.editor.value = json.dumps(body, indent=2)
        done = "set to log" if how == "log" else "disabled"
        self._remedied(f"managed rule {rule_id} {done} in the draft (the editor); Deploy sends it")
        self._offer([o for o in self.rule_picker.options if o[1] != picked])
        self.compare_status.mark_stale()
