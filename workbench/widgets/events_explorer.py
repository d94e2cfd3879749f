"""EventsExplorer: ask the security event log questions, see its actions, compare old and new.

Pick a canned query (``workbench.logs``) or write DuckDB SQL against the
``security_events`` table and its views; the rows show in a table that
scrolls. Pick an event (or type a ray id) to see the request and every rule
that matched it, in the order they acted. The **Charts** tab draws actions
over time and by rule, the **Old vs new** tab the two WAFs side by side, and
**Your traffic** compares an uploaded log's recorded decisions with the zone's
(:mod:`.events_agreement`).

Given a Workbench, the panel reads ``wb.traffic.log`` (every zone), or with
``zone`` a copy of that zone's events taken at open and at each Reload. SQL
runs one read-only statement (SELECT, WITH, EXPLAIN...): the log is shared.

    >>> from workbench.logs import EventLog, add_synthetic_events
    >>> log = EventLog(); _ = add_synthetic_events(log, 40, seed=1)
    >>> panel = EventsExplorer(log)
    >>> panel.query.value = "top_rules"; panel.run_query_button.click()
    >>> panel.status.kind, panel.status.text
    ('success', 'Top rules: 10 rows')
    >>> panel.sql.value = "SELEC 1"; panel.run_sql_button.click()
    >>> panel.status.kind, panel.status.text
    ('error', 'SQL error: the engine says')
    >>> panel.sql.value = "SELECT ray_id FROM security_events ORDER BY datetime, ray_id LIMIT 3"
    >>> panel.run_sql_button.click(); panel.pick.value = panel.pick.options[0][1]
    >>> panel.detail_status.text
    'ray 0000000100000000: 2 events, ended by block (waf rule 100000)'
    >>> print(repr(panel))
    Events explorer panel: drives the security event log in DuckDB: canned queries, SQL, charts, old vs new, your traffic. Run this cell to open the panel.
"""

from __future__ import annotations

import contextlib
import html
import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import duckdb
import ipywidgets as W

from ..logs import (
    EventLog,
    actions_over_time,
    legacy_mapping,
    legit_blocked_by_new,
    new_allows_old_blocked,
    rule_comparison,
    top_rules,
)
from ..logs.explore import (
    EXAMPLE_SQL,
    actions_per_system,
    new_rule_descriptions,
    ray_events,
    requests_seen,
    totals,
    zone_events,
)
from ..logs.schema import ENDING_ACTIONS, TABLE
from ..rulesets.crs.explain import matched_entries
from . import parts
from .events_agreement import AgreementTab
from .events_charts import SYSTEMS, actions_chart, rules_chart, systems_chart

__all__ = ["EventsExplorer"]

#: Canned query name -> (label, function of the log).
CANNED: dict[str, tuple[str, Callable[[EventLog], Any]]] = {
    "new_allows_old_blocked": ("New WAF allows what the old one stopped", new_allows_old_blocked),
    "legit_blocked_by_new": ("Legitimate requests the new WAF stops", legit_blocked_by_new),
    "top_rules": ("Top rules", top_rules),
    "actions_over_time": ("Actions per minute", actions_over_time),
    "rule_comparison": ("Each rule in the old and the new WAF", rule_comparison),
}
DEFAULT_SQL = EXAMPLE_SQL
#: Most rows a table shows (a query may return more; the status says so).
MAX_ROWS = 200
CELL_CHARS = 120
RESULTS_TAB, CHARTS_TAB, COMPARE_TAB, TRAFFIC_TAB = 0, 1, 2, 3
_READ_ONLY = ("SELECT", "EXPLAIN")
NO_EVENTS = "the log holds no events yet: replay traffic, then Reload"
_VALIDATION_NOTE = (
    "When both run (validation mode) the new WAF runs first; the old one sees only the requests "
    "the new one did not end, so its counts are of what is left."
)
#: The columns of "each rule in both" that come first: the rule, its counts, what it is.
_PAIR_FIRST = ("old_rule_id", "rule_id", "old_events", "new_events", "both", "old_only",
               "new_only", "old_ending", "new_ending", "description")  # fmt: skip
#: What the event view shows of the request, and of each rule that matched it.
_REQUEST_FIELDS = (
    "ray_id datetime zone_id method host path query client_ip country user_agent label"
)
_RULE_COLUMNS = (
    "match_index source action rule_id ruleset_id description score paranoia_level metadata"
)


_classed = parts.hooks("wb-events")


def _cell(value: Any) -> str:
    """A value as a table cell shows it: empty for NULL, times to the millisecond, cut when long."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if hasattr(value, "isoformat"):
        text = value.isoformat(sep=" ", timespec="milliseconds")
    else:
        try:
            text = "" if value != value else str(value)  # pandas NA and NaT are not equal to self
        except (TypeError, ValueError):  # pandas NA refuses to be a bool
            text = ""
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _table(
    columns: list[str], rows: list[list[Any]], cls: str, tall: int = 0, wrap: tuple[str, ...] = ()
) -> str:
    """A table of cells; ``tall`` (px) caps its height, the rest scrolls; ``wrap`` columns wrap."""
    cells = [[_cell(v) for v in row] for row in rows]
    inner = parts.scroll_table(columns, cells, cls=cls, wrap=wrap)
    return f"<div style='max-height:{tall}px;overflow-y:auto'>{inner}</div>" if tall else inner


def _described(log: EventLog, frame: Any) -> Any:
    """``frame`` as plain values, a missing description taken from the new rule's events."""
    rows = frame.astype(object).where(frame.notna(), None)
    if "new_rule_id" in rows and len(rows):
        known = new_rule_descriptions(log)
        pairs = zip(rows.description, rows.new_rule_id, strict=True)
        rows["description"] = [d if d is not None else known.get(n) for d, n in pairs]
    return rows


def _matched_rows(events: list[dict[str, Any]]) -> list[list[Any]]:
    """Each explained OWASP event's rules with the field and value they matched."""
    out: list[list[Any]] = []
    for event in events:
        try:
            meta = json.loads(event.get("metadata") or "{}")
        except (TypeError, ValueError):
            continue
        if isinstance(meta, dict):
            for e in matched_entries(meta):
                out.append([event.get("source"), e["rule"], e["field"], e["value"], e["data"]])
    return out


class EventsExplorer(parts.Panel):
    """Canned queries, SQL, one event's rules, charts and old vs new over one event log."""

    title = "Events explorer"
    drives = (
        "the security event log in DuckDB: canned queries, SQL, charts, old vs new, your traffic"
    )

    def __init__(self, wb_or_log: Any, zone: str | None = None) -> None:
        if isinstance(wb_or_log, EventLog):
            self.wb, self._live = None, wb_or_log
        else:
            self.wb, self._live = wb_or_log, wb_or_log.traffic.log
        self.zone_id = None if zone is None or self.wb is None else self.wb.zone(zone).id
        self._zone_filter = zone if self.wb is None else None
        self.event_log = self._snapshot()
        self.columns: list[str] = []
        self.rows: list[list[Any]] = []
        self.event_rows: list[dict[str, Any]] = []
        self._undrawn = {CHARTS_TAB, COMPARE_TAB}

        choices = [(label, name) for name, (label, _fn) in CANNED.items()]
        self.query = _classed(W.Dropdown(options=choices, description="Query"), "query")
        self.query.layout.width = "420px"
        self.run_query_button = _classed(
            W.Button(description="Run query", button_style="primary"), "run-query"
        )
        self.sql = _classed(
            W.Textarea(value=DEFAULT_SQL, rows=6, layout=W.Layout(width="auto")), "sql"
        )
        self.run_sql_button = _classed(W.Button(description="Run SQL"), "run-sql")
        self.reload_button = _classed(W.Button(description="Reload", icon="refresh"), "reload")
        self.summary = _classed(W.HTML(), "summary")
        self.table = _classed(W.HTML(), "table")
        self.pick = _classed(W.Select(options=[], rows=6, layout=W.Layout(width="auto")), "pick")
        self.ray = _classed(W.Text(description="ray id", placeholder="16 hex digits"), "ray")
        self.detail_status = _classed(parts.StatusLine(), "detail-status")
        self.detail = _classed(W.HTML(), "detail")
        self.chart = _classed(W.HTML(), "chart")
        self.compare = _classed(W.HTML(), "compare")
        note = "<div style='color:#5f6368;font-size:12px'>{}</div>"
        results = W.VBox(
            [
                self.table,
                W.HTML(note.format("Pick an event (rows with a ray_id), or type a ray id:")),
                self.pick,
                self.ray,
                self.detail_status,
                self.detail,
            ]
        )
        self.your_traffic = AgreementTab(self.wb, self.zone_id, self.run, self._log_changed)
        self.tabs = _classed(
            parts.Tabs(
                [results, self.chart, self.compare, self.your_traffic],
                ["Results", "Charts", "Old vs new", "Your traffic"],
            ),
            "tabs",
        )
        super().__init__(
            [
                W.HBox([self.summary, self.reload_button]),
                W.HBox([self.query, self.run_query_button]),
                W.HTML(note.format(f"or DuckDB SQL over {TABLE} and its views (read only):")),
                self.sql,
                self.run_sql_button,
                self.status,
                self.tabs,
            ]
        )
        self.status.add_class("wb-events-status")
        self.add_class("wb-events-explorer")
        self.run_query_button.on_click(lambda _b: self._act(self.status, self.run_query))
        self.run_sql_button.on_click(lambda _b: self._act(self.status, self.run_sql))
        self.reload_button.on_click(lambda _b: self._act(self.status, self.reload))
        self.watch_inputs(self.query, self.sql)
        self.pick.observe(self._picked, "value")
        self.on_enter(self.ray, self._typed)
        self.tabs.observe(lambda _c: self._draw_shown(), "selected_index")
        self._count()

    # -- plumbing --------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the traffic service's lock while reading its live log (the API may be writing)."""
        lock = self.wb.traffic.lock if self.wb is not None else contextlib.nullcontext()
        with lock:
            yield

    def _snapshot(self) -> EventLog:
        """The log the panel reads: the live one, or a copy of one zone's events."""
        if self.wb is not None and self.zone_id is not None:
            return self.wb.traffic.zone_log(self.zone_id)
        if self._zone_filter is not None:
            return zone_events(self._live, self._zone_filter)
        return self._live

    def _act(self, line: parts.StatusLine, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the busy state; a failure becomes ``line``'s outcome, in words."""

        def guarded() -> None:
            try:
                with self._locked():
                    fn()
            except duckdb.Error as exc:
                line.show("error", "SQL error: the engine says", str(exc).strip())
            except (ValueError, LookupError) as exc:
                line.show("refused", str(exc))
            except Exception as exc:  # noqa: BLE001 - shown in the panel, never raised into the kernel
                line.show("error", f"unexpected failure: {exc}", f"{type(exc).__name__}: {exc}")

        self.run(guarded)

    def _log_changed(self) -> None:
        """The zone's events grew (Your traffic replayed a log): read them again, redraw later."""
        self.event_log = self._snapshot()
        self._undrawn = {CHARTS_TAB, COMPARE_TAB}
        if self.status.text == NO_EVENTS:  # no longer true
            self.status.clear()
        self._count()

    def _count(self) -> None:
        with self._locked():
            events, rays, first, last = totals(self.event_log)
        where = (
            f" of zone {self.zone_id or self._zone_filter}"
            if self.event_log is not self._live
            else ""
        )
        span = f" · {_cell(first)} to {_cell(last)} UTC" if events else ""
        self.summary.value = (
            f"<div style='padding:4px 0'>{_count_of(events, 'event')}{html.escape(where)} from "
            f"{_count_of(rays, 'request')}{span}</div>"
        )
        if not events:
            self.status.show("info", NO_EVENTS)

    def _show_rows(self, columns: list[str], rows: list[list[Any]]) -> None:
        self.columns, self.rows = columns, rows[:MAX_ROWS]
        self.table.value = _table(columns, self.rows, "wb-events-rows", tall=360)
        options: list[tuple[str, str]] = []
        if "ray_id" in columns:
            wanted = ("ray_id", "datetime", "action", "source", "path")
            at = {c: columns.index(c) for c in wanted if c in columns}
            seen: set[str] = set()
            for row in self.rows:
                ray = row[at["ray_id"]]
                if ray is None or ray in seen:
                    continue
                seen.add(ray)
                shown = [_cell(row[i]) for i in at.values()]
                options.append((" · ".join(s for s in shown if s), ray))
        self.pick.options = options
        self.pick.value = None

    def _clear_results(self) -> None:
        """No rows, no picked event: what a new query shows until it answers (or fails)."""
        self.columns, self.rows, self.event_rows = [], [], []
        self.table.value = self.detail.value = ""
        self.pick.options = []
        self.detail_status.clear()

    # -- queries ---------------------------------------------------------------------------
    def run_query(self) -> None:
        """Run the picked canned query; its rows go to the table."""
        self._clear_results()
        label, fn = CANNED[self.query.value]
        frame = fn(self.event_log)
        rows = frame.astype(object).where(frame.notna(), None).values.tolist()
        self._show_rows([str(c) for c in frame.columns], rows)
        self.tabs.selected_index = RESULTS_TAB
        self.status.show("success" if rows else "info", f"{label}: {_rows(len(rows))}")

    def run_sql(self) -> None:
        """Run the SQL box: one read-only statement; at most MAX_ROWS rows are shown.

        The earlier rows go first, so a refused or failing statement leaves none under its error.
        """
        self._clear_results()
        text = self.sql.value.strip()
        if not text:
            raise ValueError("write a SELECT over security_events first")
        statements = self.event_log.con.extract_statements(text)  # a syntax error raises here
        if len(statements) != 1:
            raise ValueError(f"one statement at a time, got {len(statements)}")
        kind = statements[0].type.name
        if kind not in _READ_ONLY:
            raise ValueError(
                f"only reading statements run here (SELECT, WITH, EXPLAIN...), not {kind}: "
                "the event log is shared"
            )
        cursor = self.event_log.con.execute(text)
        columns = [d[0] for d in cursor.description or []]
        rows = [list(r) for r in cursor.fetchmany(MAX_ROWS + 1)]
        more = len(rows) > MAX_ROWS
        self._show_rows(columns, rows)
        self.tabs.selected_index = RESULTS_TAB
        shown = (
            f"more than {MAX_ROWS} rows (the first {MAX_ROWS} shown)" if more else _rows(len(rows))
        )
        self.status.show("success" if rows else "info", f"SQL: {shown}")

    # -- one event -----------------------------------------------------------------------------
    def _picked(self, change: Any) -> None:
        if change["new"]:
            self._act(self.detail_status, lambda: self.show_event(change["new"]))

    def _typed(self) -> None:
        if self.ray.value.strip():
            self._act(self.detail_status, lambda: self.show_event(self.ray.value.strip()))

    def show_event(self, ray_id: str) -> None:
        """The request of ``ray_id`` and every rule that matched it, in the order they acted."""
        frame = ray_events(self.event_log, ray_id)
        self.event_rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
        if not self.event_rows:
            self.detail.value = ""
            raise LookupError(f"no event has ray id {ray_id!r} in this log")
        first = self.event_rows[0]
        request = _table(
            ["field", "value"],
            [[f, first.get(f)] for f in _REQUEST_FIELDS.split()],
            "wb-events-request",
        )
        rules = _table(
            _RULE_COLUMNS.split(),
            [[e.get(c) for c in _RULE_COLUMNS.split()] for e in self.event_rows],
            "wb-events-rules",
        )
        matched = _matched_rows(self.event_rows)
        why = (
            "<div style='font-weight:600;margin-top:6px'>what each OWASP rule matched</div>"
            + _table(["source", "rule", "field", "value", "matched data"], matched, "wb-events-why")
            if matched
            else ""
        )
        self.detail.value = (
            f"<div style='font-weight:600;margin-top:6px'>request</div>{request}"
            f"<div style='font-weight:600;margin-top:6px'>rules that matched, in order</div>{rules}"
            f"{why}"
        )
        ended = next((e for e in self.event_rows if e["action"] in ENDING_ACTIONS), None)
        how = (
            f"ended by {ended['action']} ({ended['source']} rule {ended['rule_id']})"
            if ended
            else "not ended (allowed)"
        )
        count = len(self.event_rows)
        self.detail_status.show(
            "success", f"ray {ray_id}: {count} event{'s' * (count != 1)}, {how}"
        )

    # -- charts ------------------------------------------------------------------------------
    def _draw_shown(self) -> None:
        if self.tabs.selected_index in self._undrawn:
            draw = self.draw_charts if self.tabs.selected_index == CHARTS_TAB else self.draw_compare
            self._act(self.status, draw)

    def draw_charts(self) -> None:
        """Actions over time (stacked per bucket) and the top rules by action, one SVG each."""
        self._undrawn.discard(CHARTS_TAB)
        charts = [actions_chart(self.event_log), rules_chart(self.event_log)]
        self.chart.value = "".join(parts.chart_svg(c) for c in charts if c is not None) or (
            "<i>no events to chart</i>"
        )

    def draw_compare(self) -> None:
        """The old and the new WAF side by side: actions, then each rule's events in both."""
        self._undrawn.discard(COMPARE_TAB)
        counts = actions_per_system(self.event_log)
        sides = []
        for source, name in SYSTEMS.items():
            mine = counts[counts.source == source]
            rows = [[r.action, int(r.events), int(r.requests)] for r in mine.itertuples()]
            seen = requests_seen(self.event_log, source)
            table = _table(["action", "events", "requests"], rows, f"wb-events-side-{source}")
            sides.append(
                f"<div style='flex:1;min-width:260px'><b>{html.escape(name)}</b>"
                f"<div>requests it logged or acted on: {seen:,}</div>{table}</div>"
            )
        data = [
            {"system": SYSTEMS[r.source], "action": r.action, "events": int(r.events)}
            for r in counts.itertuples()
        ]
        mapping = legacy_mapping(self.wb.waf_legacy.catalog) if self.wb is not None else None
        per_rule = _described(self.event_log, rule_comparison(self.event_log, mapping))
        # The counts answer "each rule in both": they come right after the rule's id, the
        # description (wrapped) and the new rule's 32-digit id after them.
        first = [c for c in _PAIR_FIRST if c in per_rule.columns]
        per_rule = per_rule[first + [c for c in per_rule.columns if c not in first]]
        heading = "each rule in both" + (" (old rule → its new rule)" if mapping else "")
        self.compare.value = (
            f"<div style='color:#5f6368;font-size:12px'>{html.escape(_VALIDATION_NOTE)}</div>"
            "<div style='display:flex;gap:16px;flex-wrap:wrap'>" + "".join(sides) + "</div>"
            + (parts.chart_svg(systems_chart(data)) if data else "")
            + f"<div style='font-weight:600;margin-top:6px'>{html.escape(heading)}</div>"
            + _table([str(c) for c in per_rule.columns], per_rule.values.tolist()[:MAX_ROWS],
                     "wb-events-pairs", 360, wrap=("description",))
        )  # fmt: skip

    # -- the rest --------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the log again (a zone's copy is taken afresh) and redraw what is shown."""
        self.event_log = self._snapshot()
        self._undrawn = {CHARTS_TAB, COMPARE_TAB}
        self.status.clear()
        self._count()
        if self.status.kind == "empty":
            self.status.show("info", "reloaded: run a query to see the rows")
        self._draw_shown()

    def reset(self) -> None:
        """Back to how the panel opened: first query, default SQL, nothing shown, first tab."""
        self.query.value = next(iter(CANNED))
        self.sql.value = DEFAULT_SQL
        self.ray.value = ""
        self.columns, self.rows, self.event_rows = [], [], []
        self.pick.options = []
        self.table.value = self.detail.value = self.chart.value = self.compare.value = ""
        self.detail_status.clear()
        self.status.clear()
        self._undrawn = {CHARTS_TAB, COMPARE_TAB}
        self.your_traffic.clear()
        self.tabs.selected_index = RESULTS_TAB
        self._count()


def _rows(n: int) -> str:
    return parts.plural(n, "row")


def _count_of(n: int, word: str) -> str:
    return f"<b>{n:,}</b> {word}" + ("" if n == 1 else "s")
