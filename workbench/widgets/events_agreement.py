"""The events explorer's "Your traffic" tab: your log's recorded decisions against the zone's.

Upload a log (a HAR, the platform's http_requests NDJSON or a combined log,
told apart by its content) and, if you have them, the zone's firewall events
(Logpush firewall_events NDJSON or a GraphQL export), then Compare: the
requests are replayed through the panel's zone and each simulated outcome is
set against the one the platform recorded
(:func:`workbench.traffic.agreement_files.agreement_of_uploads`, one call).
The tab shows the summary, recorded against simulated outcomes, each rule's
agreement, every disagreement with its explanation, and what the log cannot
tell. A file that cannot be read is named in the status line with its line,
field and reason, and nothing else is shown.

    >>> from datetime import UTC, datetime
    >>> from pathlib import Path
    >>> import workbench
    >>> from workbench.replay.run import demo_zone
    >>> from workbench.widgets import EventsExplorer
    >>> def upload(name, content):  # what ipywidgets 8's FileUpload holds after a browser upload
    ...     return ({"name": name, "type": "", "size": len(content), "content": memoryview(content),
    ...              "last_modified": datetime(2026, 3, 2, tzinfo=UTC)},)
    >>> wb, zone_id = demo_zone("shop.example")
    >>> tab = EventsExplorer(wb, zone_id).your_traffic
    >>> tab.run_button.disabled, tab.run_button.tooltip
    (True, 'not available: upload a log first')
    >>> log = Path(workbench.__file__).parents[1] / "notebooks/data/shop-http_requests.ndjson"
    >>> tab.log_upload.value = upload(log.name, log.read_bytes())
    >>> tab.run_button.click()
    >>> tab.status.kind, tab.status.text
    ('partial', 'compared shop-http_requests.ndjson with zone shop.example: 58 agree, 4 disagree')
    >>> print(tab.agreement.headline())
    62 requests on shop.example: 62 with a recorded decision, 58 agree, 4 disagree (93.5%)
    >>> tab.log_upload.value = upload("bad.ndjson", b'{"ClientRequestURI": 5}\\n')
    >>> tab.run_button.click()
    >>> tab.status.kind, tab.status.text, tab.rules.value
    ('error', 'cannot read bad.ndjson: line 1: ClientRequestURI must be text, got int', '')
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..lab import UPLOAD_LIMIT_MB
from ..traffic.agreement_files import AgreementInputError, agreement_of_uploads
from . import parts

if TYPE_CHECKING:
    from ..core.platform import Workbench
    from ..traffic.agreement import Agreement

#: Most rows a table of the tab shows (the heading says when there are more).
MAX_ROWS = 200
NO_LOG = "not available: upload a log first"
ONLY_LOG = (
    "not available: the panel was opened on an event log; open it as EventsExplorer(wb, zone) "
    "to compare your traffic with a zone"
)
NO_ZONE = (
    "not available: the panel was opened on every zone; open it as EventsExplorer(wb, zone) "
    "to compare your traffic with one"
)
NOTHING_UPLOADED = "not available: no file uploaded"
_NOTE = "<div style='color:#5f6368;font-size:12px;line-height:1.5;margin:2px 0'>{}</div>"
_HEADING = "<div style='font-weight:600;margin-top:8px'>{}</div>"
_INTRO = (
    "Your traffic, with the decisions the platform recorded, against the zone set up here. "
    "<b>Log</b>: a HAR (the browser's devtools), the zone's http_requests log (NDJSON, with "
    "its Security fields) or a combined log (nginx, Apache), told apart by content. "
    "<b>Firewall events</b> (optional): Logpush firewall_events NDJSON or a GraphQL "
    "firewallEventsAdaptive export; they give the decisions a HAR or a combined log lacks, "
    "joined by ray id (else by time, path and query). A file reaches the kernel whole, in one "
    f"message: up to {UPLOAD_LIMIT_MB} MB in the JupyterLab that <code>make lab</code> or "
    "<code>python -m workbench lab</code> starts (and on Binder), 10 MB in a Jupyter server "
    "started otherwise (its default; a larger file never arrives). Give a larger log to "
    "<code>python -m workbench agreement</code> in a terminal."
)
_REPLAYED = (
    "Each request was replayed through the zone, and its events joined the panel's log (the "
    "count at the top): type its 'replayed as ray' id under Results to see every rule that "
    "matched it here."
)


_classed = parts.hooks("wb-events-agreement")


def _uploaded(upload: W.FileUpload) -> tuple[str, bytes] | None:
    """The uploaded file's name and bytes, or None when there is none."""
    if not upload.value:
        return None
    first = upload.value[0]
    return str(first["name"]), bytes(first["content"])


def _size(n: int) -> str:
    """A file's size as a person reads it: ``812 bytes``, ``46.9 kB``, ``9.6 MB``."""
    if n < 10_000:
        return f"{n:,} bytes"
    return f"{n / 1000:,.1f} kB" if n < 1_000_000 else f"{n / 1_000_000:,.1f} MB"


def _table(columns: list[str], rows: list[list[Any]], name: str, wrap: dict[str, int]) -> str:
    """A table of the tab (at most MAX_ROWS rows); ``wrap`` maps the columns that wrap to widths."""
    cells = [["" if v is None else str(v) for v in row] for row in rows[:MAX_ROWS]]
    return parts.scroll_table(columns, cells, cls=f"wb-events-agreement-{name}-table", wrap=wrap)


def _heading(text: str, total: int) -> str:
    more = f" (the first {MAX_ROWS} of {total:,})" if total > MAX_ROWS else ""
    return _HEADING.format(html.escape(text + more))


class AgreementTab(W.VBox):
    """Upload, Compare, and the agreement's tables (see the module docstring).

    ``run`` is the panel's busy state (:meth:`parts.Panel.run`); ``replayed``
    is called after each comparison, whose replay added to the zone's events.
    """

    def __init__(
        self,
        wb: Workbench | None,
        zone_id: str | None,
        run: Callable[[Callable[[], None]], Any],
        replayed: Callable[[], None] = lambda: None,
    ) -> None:
        self.wb, self.zone_id, self._run, self._replayed = wb, zone_id, run, replayed
        self.agreement: Agreement | None = None
        self.zone_name = wb.zone(zone_id).name if wb is not None and zone_id else ""
        self.log_upload = _classed(W.FileUpload(description="Log", icon="upload"), "log")
        self.events_upload = _classed(
            W.FileUpload(description="Firewall events", icon="upload"), "events"
        )
        self.events_upload.layout.width = "auto"
        self.files = _classed(W.HTML(), "files")
        where = f"zone {self.zone_name}" if self.zone_name else "the zone"
        self.run_button = _classed(
            W.Button(description=f"Compare with {where}", button_style="primary"), "run"
        )
        self.run_button.layout.width = "auto"  # the zone's name in full; its HBox keeps it short
        self.clear_button = _classed(W.Button(description="Clear", icon="times"), "clear")
        self.status = _classed(parts.StatusLine(), "status")
        self.summary = _classed(W.HTML(), "summary")
        self.actions = _classed(W.HTML(), "actions")
        self.rules = _classed(W.HTML(), "rules")
        self.disagreements = _classed(W.HTML(), "disagreements")
        self.unknown = _classed(W.HTML(), "unknown")
        super().__init__(
            [
                W.HTML(_NOTE.format(_INTRO)),
                W.HBox([self.log_upload, self.events_upload, self.clear_button]),
                self.files,
                W.HBox([self.run_button]),
                self.status,
                self.summary,
                self.actions,
                self.rules,
                self.disagreements,
                self.unknown,
            ]
        )
        self.add_class("wb-events-agreement")
        self.run_button.on_click(lambda _b: self._act(self._guarded))
        self.clear_button.on_click(lambda _b: self._act(self.clear))
        for upload in (self.log_upload, self.events_upload):
            upload.observe(self._changed, "value")
        self._changed(None)

    # -- state ---------------------------------------------------------------------------
    @property
    def why_not(self) -> str:
        """Why Compare cannot run now (``""``: it can)."""
        if self.wb is None:
            return ONLY_LOG
        if self.zone_id is None:
            return NO_ZONE
        return "" if self.log_upload.value else NO_LOG

    def _act(self, action: Callable[[], None]) -> None:
        """``action`` in the panel's busy state; then the buttons as the files allow."""
        self._run(action)
        self._buttons()

    def _changed(self, _change: Any) -> None:
        """A file was uploaded or cleared: say which are loaded, enable what can run."""
        shown = []
        for label, upload in (("log", self.log_upload), ("firewall events", self.events_upload)):
            got = upload.value[0] if upload.value else None
            shown.append(
                f"{label}: <b>{html.escape(str(got['name']))}</b> ({_size(int(got['size']))})"
                if got
                else f"{label}: <i>none</i>"
            )
        self.files.value = _NOTE.format(" · ".join(shown))
        self._buttons()
        self.status.mark_stale()

    def _buttons(self) -> None:
        """Compare and Clear enabled when they can run, else disabled with the reason."""
        reason = self.why_not
        self.run_button.disabled = bool(reason)
        self.run_button.tooltip = (
            reason or f"replay the log through zone {self.zone_name} and compare"
        )
        nothing = not (self.log_upload.value or self.events_upload.value)
        self.clear_button.disabled = nothing or self.wb is None
        self.clear_button.tooltip = (
            NOTHING_UPLOADED if nothing else "forget both files and the report"
        )

    def _clear_report(self) -> None:
        self.agreement = None
        for widget in (self.summary, self.actions, self.rules, self.disagreements, self.unknown):
            widget.value = ""

    # -- actions ---------------------------------------------------------------------------
    def _guarded(self) -> None:
        try:
            self.compare()
        except AgreementInputError as exc:
            self._clear_report()
            field = f", field {exc.field}" if exc.field and exc.field not in exc.reason else ""
            where = f"line {exc.line}{field}: " if exc.line else ""
            self.status.show("error", f"cannot read {exc.source}", note=where + exc.reason)
        except Exception as exc:  # noqa: BLE001 - shown in the panel, never raised into the kernel
            self._clear_report()
            self.status.show("error", f"unexpected failure: {exc}", f"{type(exc).__name__}: {exc}")

    def compare(self) -> None:
        """Read the uploads, replay them through the zone and show the agreement."""
        self._clear_report()
        self.status.clear()
        log = _uploaded(self.log_upload)
        if self.why_not or log is None or self.wb is None or self.zone_id is None:
            self.status.show("refused", "cannot compare", note=self.why_not.split(": ", 1)[-1])
            return
        events = _uploaded(self.events_upload)
        done = agreement_of_uploads(
            self.wb,
            self.zone_id,
            log[1],
            name=log[0],
            events=events[1] if events else None,
            events_name=events[0] if events else "",
        )
        self.agreement = done
        self._replayed()
        self._show(done)
        s = done.summary
        if not s["compared"]:
            kind, note = (
                "info",
                "no request has a recorded decision: add the zone's firewall events",
            )
        else:
            kind = "partial" if s["disagree"] else "success"
            note = f"{s['agree']:,} agree, {s['disagree']:,} disagree"
        self.status.show(kind, f"compared {log[0]} with zone {self.zone_name}", note=note)

    def clear(self) -> None:
        """Forget both files and the report."""
        self.log_upload.value = ()
        self.events_upload.value = ()
        self._clear_report()
        self.status.clear()

    # -- the report -------------------------------------------------------------------------
    def _show(self, done: Agreement) -> None:
        self.summary.value = (
            f"<div style='margin-top:6px'><b>{html.escape(done.headline())}</b></div>"
            + _NOTE.format(html.escape(done.provenance()))
        )
        if len(done.by_action):
            sims = [str(c) for c in done.by_action.columns]
            rows = [[str(rec), *(int(n) for n in row)] for rec, row in done.by_action.iterrows()]
            self.actions.value = _HEADING.format(
                "recorded (rows) against simulated (columns)"
            ) + _table(["recorded \\ simulated", *sims], rows, "actions", {})
        if len(done.by_rule):
            rows = [
                [r.description or "(no description)", r.source, r.recorded, r.simulated,
                 r.both, f"{r.agreement:.0%}", r.rule_id]
                for r in done.by_rule.itertuples()
            ]  # fmt: skip
            columns = ["rule", "source", "recorded", "simulated", "both", "agreement", "rule id"]
            self.rules.value = _heading(
                "each rule of the systems simulated here", len(rows)
            ) + _table(columns, rows, "rules", {"rule": 260})
        off = done.disagreements
        if len(off):
            rows = [
                [r.line, f"{r.method} {r.uri}", r.recorded, r.simulated, r.reason,
                 r.recorded_rules or "none", r.simulated_rules or "none", r.ray_id,
                 r.simulated_ray_id]
                for r in off.itertuples()
            ]  # fmt: skip
            columns = ["line", "request", "recorded", "simulated", "why",
                       "recorded rules", "simulated rules", "ray id", "replayed as ray"]  # fmt: skip
            wrap = {"request": 220, "why": 480, "recorded rules": 260, "simulated rules": 260}
            self.disagreements.value = (
                _heading("the requests that disagree, and why", len(rows))
                + _table(columns, rows, "disagreements", wrap)
                + _NOTE.format(html.escape(_REPLAYED))
            )
        if len(done.cannot_tell):
            rows = [
                [f"{r.requests:,} of {r.of:,}", r.what, r.note]
                for r in done.cannot_tell.itertuples()
            ]
            self.unknown.value = _HEADING.format("what the log cannot tell") + _table(
                ["requests", "part", "what it means"], rows, "unknown", {"what it means": 560}
            )
