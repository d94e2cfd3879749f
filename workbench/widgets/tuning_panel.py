"""TuningPanel: find the requests the new WAF would wrongly block, and the narrowest exception.

Given a Workbench, a zone and its traffic (generated, or imported with
:mod:`workbench.traffic.importers`), the panel runs ``wb.tuning.whatif`` and
shows, top to bottom: the what-if summary; the sweep chart (share of
legitimate traffic and of attacks the OWASP ruleset blocks at each paranoia
level and threshold) with a level and threshold picker; the requests the new
side blocks, to mark as wrongly blocked, each with its score breakdown; the
candidate exceptions, narrowest first, with their blast radius, JSON and
Terraform; and Apply, which asks for an explicit confirmation when a
candidate lets a labelled attack through, then shows before and after side
by side. Every action calls the core (``wb.tuning``); nothing here decides.

    >>> from workbench import Workbench
    >>> from workbench.traffic import generate
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> panel = TuningPanel(wb, zone.id, generate(30, seed=3))
    >>> panel.threshold.value = "25"; panel.sweep_button.click()
    >>> panel.sweep_status.kind, panel.sweep_status.text.split(":")[0]
    ('success', 'paranoia level 2, threshold 25')
    >>> panel.threshold.value = "0"; panel.sweep_button.click()
    >>> panel.sweep_status.text
    'threshold must be a whole number from 1 to 10000, got 0'
    >>> print(repr(panel))
    Tuning panel: drives the what-if, OWASP sweep, exceptions and their blast radius of one zone. Run this cell to open the panel.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as W

from ..tuning import RiskNotAccepted
from ..tuning.breakdown import LEVELS, MAX_THRESHOLD, THRESHOLDS
from ..tuning.whatif import stops
from . import parts
from ._tuning_view import (
    ATTACK_MARK,
    before_after_html,
    blast_html,
    candidate_label,
    candidates_html,
    explain_html,
    is_attack,
    request_label,
    summary_html,
)
from .tuning_charts import sweep_chart

__all__ = ["TuningPanel"]

#: Breakdowns shown at once for the marked requests.
MAX_EXPLAINED = 5
_NOTE = "<div style='color:#5f6368;font-size:12px'>{}</div>"
_HEAD = "<div style='font-weight:600;margin-top:8px'>{}</div>"


_classed = parts.hooks("wb-tuning")


def _scrolled(inner: str, tall: int = 320) -> str:
    """``inner`` in a box ``tall`` pixels high at most; the rest scrolls."""
    return f"<div style='max-height:{tall}px;overflow:auto'>{inner}</div>" if inner else ""


def parse_threshold(text: str) -> int:
    """A threshold typed in the picker, or a ValueError naming the field and the limit."""
    value = text.strip()
    ok = value.isdigit() and 1 <= int(value) <= MAX_THRESHOLD
    if not ok:
        raise ValueError(
            f"threshold must be a whole number from 1 to {MAX_THRESHOLD}, got {value or 'nothing'}"
        )
    return int(value)


class TuningPanel(parts.Panel):
    """What-if, sweep, score breakdown, candidates with blast radius, apply with before/after."""

    title = "Tuning"
    drives = "the what-if, OWASP sweep, exceptions and their blast radius of one zone"

    def __init__(
        self, wb: Any, zone: str, requests: Iterable[Any] | None = None, *, whatif: Any = None
    ) -> None:
        self.wb = wb
        self.zone_id = wb.zone(zone).id
        if whatif is None:
            if requests is None:
                raise ValueError("requests: give the traffic to replay (or a what-if as whatif=)")
            whatif = wb.tuning.whatif(self.zone_id, requests, progress=False)
        elif whatif.zone_id != self.zone_id:
            raise ValueError(f"whatif: it was made for zone {whatif.zone_id}, not {self.zone_id}")
        self.whatif = whatif
        self.candidates: list[Any] = []
        self.applied: Any = None

        self.summary = _classed(W.HTML(), "summary")
        settings = whatif.config.owasp_settings()
        level = int(settings["paranoia_level"]) or 2
        self.level = _classed(
            W.Dropdown(options=list(LEVELS), value=level, description="Paranoia"), "level"
        )
        self.level.layout.width = "160px"
        self.threshold = _classed(
            W.Text(value=str(settings["threshold"]), description="Threshold"), "threshold"
        )
        self.threshold.layout.width = "180px"
        self.sweep_button = _classed(W.Button(description="Sweep"), "sweep-button")
        self.sweep_status = _classed(parts.StatusLine(), "sweep-status")
        self.chart = _classed(W.HTML(), "chart")
        self.sweep_table = _classed(W.HTML(), "sweep-table")

        self.blocked = _classed(
            W.SelectMultiple(options=[], rows=8, layout=W.Layout(width="auto")), "blocked"
        )
        self.explain = _classed(W.HTML(), "explain")
        self.propose_button = _classed(
            W.Button(description="Propose exceptions", button_style="primary"), "propose"
        )
        self.candidates_table = _classed(W.HTML(), "candidates")
        self.pick = _classed(W.Dropdown(options=[], layout=W.Layout(width="auto")), "pick")
        self.blast = _classed(W.HTML(), "blast")
        self.code = _classed(
            parts.Tabs(
                [W.HTML(), W.HTML(), W.HTML()], ["JSON (PUT body)", "Terraform v5", "Terraform v4"]
            ),
            "code",
        )
        self.apply_button = _classed(W.Button(description="Apply", icon="check"), "apply")
        self.confirm_note = _classed(W.HTML(), "confirm-note")
        self.accept = _classed(
            W.Checkbox(value=False, description="I accept letting these attacks through",
                       indent=False),
            "accept",
        )  # fmt: skip
        self.confirm_button = _classed(
            W.Button(description="Apply anyway", button_style="danger"), "confirm-apply"
        )
        self.confirm = _classed(
            W.VBox([self.confirm_note, self.accept, self.confirm_button]), "confirm"
        )
        self.confirm.layout.display = "none"
        self.before_after = _classed(W.HTML(), "before-after")
        note = _NOTE.format
        super().__init__(
            [
                self.summary,
                W.HTML(_HEAD.format("The OWASP ruleset at each paranoia level and threshold")),
                W.HBox([self.level, self.threshold, self.sweep_button]),
                self.sweep_status,
                self.chart,
                self.sweep_table,
                W.HTML(_HEAD.format("Requests the new side blocks: mark the wrongly blocked")),
                W.HTML(
                    note(
                        "Ctrl- or Shift-click to mark several; benign and unlabelled first, attacks last."
                    )
                ),
                self.blocked,
                self.explain,
                self.propose_button,
                self.candidates_table,
                W.HTML(note("The candidate to look at and apply:")),
                self.pick,
                self.blast,
                self.code,
                self.apply_button,
                self.status,
                self.confirm,
                self.before_after,
            ]
        )
        self.status.add_class("wb-tuning-status")
        self.add_class("wb-tuning-panel")
        self.sweep_button.on_click(lambda _b: self._act(self.sweep_status, self.draw_sweep))
        self.on_enter(self.threshold, lambda: self._act(self.sweep_status, self.draw_sweep))
        self.level.observe(lambda _c: self._act(self.sweep_status, self.draw_sweep), "value")
        self.blocked.observe(lambda _c: self._act(self.status, self.explain_marked), "value")
        self.propose_button.on_click(lambda _b: self._act(self.status, self.propose))
        self.pick.observe(lambda _c: self._act(self.status, self.show_candidate), "value")
        self.apply_button.on_click(lambda _b: self._act(self.status, self.apply))
        self.confirm_button.on_click(lambda _b: self._act(self.status, self.apply_anyway))
        self.watch_inputs(self.blocked)
        self._load()

    # -- plumbing ----------------------------------------------------------------------------
    def _act(self, line: parts.StatusLine, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the busy state; a refusal or failure becomes ``line``'s outcome."""

        def guarded() -> None:
            try:
                fn()
            except (ValueError, LookupError) as exc:
                line.show("refused", str(exc))
            except Exception as exc:  # noqa: BLE001 - shown in the panel, never raised into the kernel
                line.show("error", f"unexpected failure: {exc}", f"{type(exc).__name__}: {exc}")

        self.run(guarded)

    def _load(self) -> None:
        """Show the current what-if: summary, sweep, and the requests its new side blocks."""
        self.summary.value = summary_html(self.whatif)
        try:
            self.draw_sweep()
        except ValueError as exc:  # a threshold typed wrong stays the sweep's own outcome
            self.sweep_status.show("refused", str(exc))
        r = self.whatif.requests
        stopped = r[r.new_action.map(stops)]
        # Benign or unlabelled requests first, then the other legitimate labels (API, bots),
        # attacks last: the first are the ones a person marks.
        order = sorted(
            stopped.itertuples(),
            key=lambda row: (is_attack(row.label), row.label not in ("benign", ""), row.Index),
        )
        self.blocked.value = ()
        self.blocked.options = [(request_label(row), row.ray_id) for row in order]
        self.explain.value = ""

    # -- the sweep ---------------------------------------------------------------------------
    def draw_sweep(self) -> None:
        """The sweep chart and table at the picked paranoia level and threshold."""
        threshold = parse_threshold(self.threshold.value)
        level = int(self.level.value)
        sweep = self.wb.tuning.sweep(
            self.whatif, levels=list(LEVELS), thresholds=sorted({*THRESHOLDS, threshold})
        )
        self.chart.value = parts.chart_svg(sweep_chart(sweep, level, threshold))
        here = sweep[(sweep.paranoia_level == level) & (sweep.threshold == threshold)]
        rows = [
            [r.label or "no label", "attack" if r.attack else "", int(r.blocked), int(r.total),
             f"{r.share:.1%}"]
            for r in here.itertuples()
        ]  # fmt: skip
        self.sweep_table.value = parts.scroll_table(
            ["label", "", "blocked", "requests", "share"], rows, cls="wb-tuning-sweep-rows"
        )
        legit = here[~here.attack]
        attacks = here[here.attack]
        self.sweep_status.show(
            "success",
            f"paranoia level {level}, threshold {threshold}: the OWASP ruleset blocks "
            f"{int(legit.blocked.sum())} of {int(legit.total.sum())} legitimate requests and "
            f"{int(attacks.blocked.sum())} of {int(attacks.total.sum())} attacks",
        )

    # -- marking and explaining -----------------------------------------------------------------
    def explain_marked(self) -> None:
        """The score breakdown of the first marked requests."""
        marked = list(self.blocked.value)
        shown = [
            explain_html(self.wb.tuning.explain(self.whatif, ray), self.whatif.ended_by(ray))
            for ray in marked[:MAX_EXPLAINED]
        ]
        more = len(marked) - len(shown)
        self.explain.value = _scrolled("".join(shown)) + (
            _NOTE.format(f"and {more} more marked (breakdowns of the first {MAX_EXPLAINED})")
            if more > 0
            else ""
        )

    # -- candidates ------------------------------------------------------------------------------
    def propose(self) -> None:
        """Candidate exceptions for the marked requests, narrowest first."""
        marked = list(self.blocked.value)
        if not marked:
            raise ValueError("mark at least one wrongly blocked request in the list first")
        self._clear_candidates()  # a refusal below must not leave older candidates on show
        self.candidates = self.wb.tuning.propose(self.whatif, marked)
        self.candidates_table.value = candidates_html(self.candidates)
        self.pick.options = [(candidate_label(i, c), i) for i, c in enumerate(self.candidates)]
        n = len(self.candidates)
        reason = getattr(self.candidates, "reason", "")
        if not n:
            self.status.show(
                "info", reason or f"no candidate clears the {len(marked)} marked requests"
            )
            return
        # The narrowest candidate that lets no labelled attack through is shown first.
        safe = [i for i, c in enumerate(self.candidates) if not c.lets_attack_through]
        self.pick.value = safe[0] if safe else 0
        self.show_candidate()
        risky = n - len(safe)
        said = (
            f"{n} candidate{'s' * (n != 1)} for {len(marked)} marked request"
            f"{'s' * (len(marked) != 1)}, narrowest first; {risky} let a labelled attack through"
        )
        self.status.show("info" if reason else "success", f"{reason} {said}" if reason else said)

    def chosen(self) -> Any:
        """The candidate picked in the list."""
        if self.pick.value is None or not self.candidates:
            raise ValueError("propose exceptions first, then pick one")
        return self.candidates[self.pick.value]

    def show_candidate(self) -> None:
        """The picked candidate's blast radius, JSON and Terraform."""
        if self.pick.value is None or not self.candidates:
            return
        self._hide_confirm()
        cand = self.chosen()
        self.blast.value = _HEAD.format(
            html.escape(f"blast radius of candidate {self.pick.value + 1}: {cand.title}")
        ) + _scrolled(blast_html(cand), 360)
        json_box, v5, v4 = self.code.pages
        json_box.value = _scrolled(parts.pre(cand.to_json()))
        v5.value = _scrolled(parts.pre(cand.hcl(5)))
        v4.value = _scrolled(parts.pre(cand.hcl(4)))

    # -- apply -----------------------------------------------------------------------------------
    def _clear_candidates(self) -> None:
        """No candidate shown: their table, blast radius, code and confirmation go."""
        self.candidates = []
        self.candidates_table.value = self.blast.value = ""
        self.pick.options = []
        for box in self.code.pages:
            box.value = ""
        self._hide_confirm()

    def _hide_confirm(self) -> None:
        self.confirm.layout.display = "none"
        self.accept.value = False

    def apply(self) -> None:
        """Apply the picked candidate; a risky one asks for confirmation first."""
        cand = self.chosen()
        if cand.lets_attack_through:
            attacks = cand.blast[(cand.blast.effect == "stops blocking") & cand.blast.attack]
            by_label = attacks.label.value_counts().sort_index()
            listed = ", ".join(f"{lab} {n}" for lab, n in by_label.items())
            self.confirm_note.value = (
                f"<div style='color:#b71c1c'>{ATTACK_MARK} candidate {self.pick.value + 1} would "
                f"stop blocking {len(attacks)} labelled attacks ({html.escape(listed)}). Tick the "
                "box and press Apply anyway to apply it regardless.</div>"
            )
            self.accept.value = False
            self.confirm.layout.display = "flex"
            self.status.show(
                "refused",
                f"not applied: candidate {self.pick.value + 1} lets {len(attacks)} labelled "
                "attacks through; confirm below to apply it anyway",
            )
            return
        self._apply(cand, accept_risk=False)

    def apply_anyway(self) -> None:
        """Apply a risky candidate once the box is ticked."""
        if not self.accept.value:
            raise ValueError("tick 'I accept letting these attacks through' first")
        self._apply(self.chosen(), accept_risk=True)

    def _apply(self, cand: Any, accept_risk: bool) -> None:
        number = self.pick.value + 1
        try:
            applied = self.wb.tuning.apply(self.zone_id, cand, self.whatif, accept_risk=accept_risk)
        except RiskNotAccepted as exc:
            raise ValueError(str(exc)) from None
        self._hide_confirm()
        self.applied = applied
        self.before_after.value = _HEAD.format("Before and after") + before_after_html(applied)
        changed = int(applied.comparison.changed.sum())
        where = (
            "through the entry point PUT"
            if applied.stored == "entrypoint"
            else "as the zone's tuning draft (the migration deploys it: wb.tuning.config)"
        )
        check = "as predicted" if applied.as_predicted else "NOT as predicted"
        # The applied configuration is now the one to tune further.
        self.whatif = applied.after
        self._clear_candidates()
        self._load()
        self.status.show(
            "success" if applied.as_predicted else "partial",
            f"applied candidate {number} ({cand.kind}) {where}; replayed "
            f"{len(applied.after.requests)} requests: {changed} changed, {check}",
        )

    def reset(self) -> None:
        """Back to how the panel opened on its current what-if: nothing marked or proposed."""
        self.applied = None
        self.before_after.value = ""
        self._clear_candidates()
        self.status.clear()
        self._load()
