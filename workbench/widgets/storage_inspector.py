"""StorageInspector: browse and drive Durable Object storage, alarms, bookmarks and billing.

Pick a namespace and an object; five tabs act on it:

- **KV**: list the pairs (prefix, start, end, reverse, limit), with values as
  JSON; get a key's value into the editor, put a JSON value, delete a key.
  Values JSON has no form for (bytes, dates, sets, maps with non-string keys,
  tuples, NaN...) are written as tagged objects such as ``{"$bytes": "aGk="}``
  (the table is in :mod:`workbench.storage.json_form`), both ways.
- **SQL**: run statements; rows, columnNames, rowsRead and rowsWritten.
- **Alarm**: virtual time, set and delete the alarm, advance the clock, the handler's runs.
- **Bookmarks**: a chart of every committed batch over virtual time, each
  labelled with what it changed; pick "from" (say, the moment before a
  mistake) and "to", see the diff with values on both sides, restore to
  "from", restart the object, undo the restore.
- **Billing**: statements, rowsRead and rowsWritten per statement kind, as a
  table and a bar chart, with the monthly cost estimate.

Give it a runtime, or a Workbench to inspect ``wb.storage``: then the Billing
tab reads the ``sql_billing`` table of ``wb.logs``, where that runtime bills.

    >>> from workbench.storage import Runtime, DurableObject
    >>> from workbench.widgets import StorageInspector
    >>> class Notes(DurableObject):
    ...     async def fetch(self, request):
    ...         await self.ctx.storage.put("greeting", request)
    >>> rt = Runtime()
    >>> ns = rt.namespace(Notes)
    >>> rt.run(ns.get(ns.id_from_name("n")).fetch({"text": "hello"}))
    >>> panel = StorageInspector(rt)
    >>> panel.kv_status.text, panel.kv_rows
    ('1 pair', [['greeting', '{"text": "hello"}']])
    >>> panel.kv_key.value, panel.kv_value.value = "n", '{"a": 1,}'
    >>> panel.kv_put_button.click()
    >>> panel.kv_edit_status.kind, panel.kv_edit_status.text
    ('error', "value (JSON), line 1, column 9: a comma before '}': remove the trailing comma")
    >>> print(repr(panel))  # doctest: +NORMALIZE_WHITESPACE
    Storage inspector panel: drives Durable Object storage of a runtime: KV, SQL, alarms,
    bookmarks, billing. Run this cell to open the panel.

Every button runs through ``Panel.run`` (the panel's buttons are disabled
while it works), each outcome goes to the status line of its tab, a status
whose inputs change goes stale, and callbacks only set widget values (never
``print``), so the panel behaves the same in JupyterLab, Voila, nbval and
plain pytest. ``reset()`` puts the panel back as it opened.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import ipywidgets as W

from workbench.core.errors import ValidationError
from workbench.core.platform import Workbench
from workbench.storage import Runtime
from workbench.storage.billing import (
    INCLUDED_ROWS_READ,
    INCLUDED_ROWS_WRITTEN,
    USD_PER_MILLION_READ,
    USD_PER_MILLION_WRITTEN,
)
from workbench.storage.errors import SqlError, StorageError
from workbench.storage.history import History
from workbench.storage.json_form import JsonInputError, dumps, loads, sql_cell
from workbench.storage.runtime import ObjectHost
from workbench.storage.views import (
    billing_by_kind,
    diff_bookmarks,
    diff_lines,
    row_counts,
    time_label,
    timeline,
)

from . import parts
from ._storage_inspector_view import StorageWidgets
from .storage_charts import billing_chart, svg, timeline_chart

__all__ = ["StorageInspector"]

BOOKMARKS_TAB, BILLING_TAB = 3, 4
#: Longest value text shown in a KV table cell (Get loads the whole value into the editor).
CELL_CHARS = 300
_BOOKMARKS_NOTE = (
    "Each row is one committed batch, labelled with what it changed; rows that share a time "
    "stay apart. To undo a mistake, pick the row just before it as <b>from</b>: <b>Diff</b> "
    "shows what changed since, <b>Restore to 'from'</b> goes back there on the next restart."
)

_IN_THE_LOG = (
    " These records are the sql_billing table of wb.logs, next to the security events"
    " (sql_billing_costs: the cost per object)."
)


def _when(ms: int | None) -> str:
    if ms is None:
        return "none"
    text = datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def _cut(text: str, limit: int = CELL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + f"… ({len(text)} characters)"


class StorageInspector(StorageWidgets, parts.Panel):
    """The storage, bookmark and billing inspector of one :class:`~workbench.storage.Runtime`
    (a Workbench's: ``wb.storage``)."""

    title = "Storage inspector"
    drives = "Durable Object storage of a runtime: KV, SQL, alarms, bookmarks, billing"

    def __init__(
        self,
        runtime: Runtime | Workbench,
        namespace: str | None = None,
        object_name: str | None = None,
    ) -> None:
        self.wb = runtime if isinstance(runtime, Workbench) else None
        self.rt = runtime.storage if isinstance(runtime, Workbench) else runtime
        self._start = (namespace, object_name)
        self.undo_bookmark = ""
        self.kv_rows: list[list[str]] = []
        self.sql_rows: list[list[str]] = []
        self.diff: dict[str, Any] | None = None
        self.diff_lines: list[str] = []
        self.entries: list[dict[str, Any]] = []
        self.billing_rows: list[dict[str, Any]] = []
        self._quiet = False
        self._undrawn: set[int] = set()  # tabs whose chart waits until the tab is shown
        self.build()
        status_box = W.VBox()  # the panel's status line exists once Panel.__init__ has run
        super().__init__(
            [
                W.HBox([self.namespace, self.object, self.refresh_button]),
                W.HBox([self.object_name, self.open_button]),
                status_box,
                self.tabs,
            ]
        )
        status_box.children = (self.status,)
        self.status.add_class("wb-storage-status")
        self.add_class("wb-storage-inspector")

        # behaviour
        actions: list[tuple[W.Button, parts.StatusLine, Callable[[], None]]] = [
            (self.open_button, self.status, self.open_by_name),
            (self.refresh_button, self.status, self.reload),
            (self.kv_list_button, self.kv_status, self.kv_list),
            (self.kv_get_button, self.kv_edit_status, self.kv_get),
            (self.kv_put_button, self.kv_edit_status, self.kv_put),
            (self.kv_delete_button, self.kv_edit_status, self.kv_delete),
            (self.sql_run_button, self.sql_status, self.sql_run),
            (self.alarm_set_button, self.alarm_status, self.alarm_set),
            (self.alarm_delete_button, self.alarm_status, self.alarm_delete),
            (self.advance_button, self.alarm_status, self.advance),
            (self.diff_button, self.diff_status, self.show_diff),
            (self.restore_button, self.restore_status, self.restore),
            (self.restart_button, self.restore_status, self.restart),
            (self.undo_button, self.restore_status, self.undo_restore),
        ]
        for button, line, fn in actions:
            button.on_click(lambda _b, line=line, fn=fn: self._act(line, fn))
        self.watch_inputs(
            self.kv_prefix, self.kv_start, self.kv_end, self.kv_reverse, self.kv_limit,
            status=self.kv_status,
        )  # fmt: skip
        self.watch_inputs(self.kv_key, self.kv_value, status=self.kv_edit_status)
        self.watch_inputs(self.sql_text, status=self.sql_status)
        self.watch_inputs(self.alarm_offset, self.advance_ms, status=self.alarm_status)
        self.watch_inputs(self.bookmark_a, self.bookmark_b, status=self.diff_status)
        self.on_enter(
            self.object_name, self._enter(self.object_name, self.status, self.open_by_name)
        )
        for box in (self.kv_prefix, self.kv_start, self.kv_end):
            self.on_enter(box, self._enter(box, self.kv_status, self.kv_list))
        self.namespace.observe(self._namespace_changed, "value")
        self.object.observe(self._object_changed, "value")
        self.bookmark_a.observe(self._picks_changed, "value")
        self.bookmark_b.observe(self._picks_changed, "value")
        self.tabs.observe(self._tab_shown, "selected_index")
        self._act(self.status, self._open_start)

    # -- plumbing -------------------------------------------------------------------------
    @property
    def message(self) -> str:
        """The panel's main status as plain text (which object, or what went wrong)."""
        return self.status.text

    def _act(self, line: parts.StatusLine, fn: Callable[[], None], busy: bool = True) -> None:
        """Run ``fn`` (in the busy state unless ``busy`` is false); a failure becomes ``line``'s
        outcome, in plain words."""

        def guarded() -> None:
            try:
                fn()
            except JsonInputError as exc:
                line.show("error", str(exc), exc.detail)
            except SqlError as exc:
                line.show("error", f"SQL error ({exc.sqlite_code}): the engine says", str(exc))
            except (StorageError, ValidationError, ValueError, TypeError, LookupError) as exc:
                line.show("refused", str(exc))
            except Exception as exc:  # noqa: BLE001 - shown in the panel, never raised into the kernel
                line.show("error", f"unexpected failure: {exc}", f"{type(exc).__name__}: {exc}")

        if busy:
            self.run(guarded)
        else:
            guarded()

    @contextlib.contextmanager
    def _quieted(self) -> Iterator[None]:
        """Widget values set inside are the panel's own: their observers stay quiet."""
        quiet, self._quiet = self._quiet, True
        try:
            yield
        finally:
            self._quiet = quiet

    def _enter(
        self, box: W.Text, line: parts.StatusLine, fn: Callable[[], None]
    ) -> Callable[[], None]:
        """Enter in ``box`` runs ``fn`` (not when the panel itself empties the box)."""

        def submit() -> None:
            if not self._quiet and (box.value or box is not self.object_name):
                self._act(line, fn)

        return submit

    @property
    def host(self) -> ObjectHost:
        """The object picked in the panel."""
        if not self.namespace.value or not self.object.value:
            raise LookupError("no object yet: create one, or type a name and press Open")
        ns = self.rt.namespaces[self.namespace.value]
        for host in ns.hosts.values():
            if str(host.id) == self.object.value:
                return host
        raise LookupError("that object is gone: press Reload")

    def _storage(self) -> Any:
        return self.host.storage()

    def _open_start(self) -> None:
        namespace, object_name = self._start
        names = sorted(self.rt.namespaces)
        with self._quieted():
            self.namespace.options = names
            if names:
                self.namespace.value = namespace if namespace in names else names[0]
            self._load_objects()
            if object_name is not None and self.namespace.value:
                ns = self.rt.namespaces[self.namespace.value]
                wanted = str(ns.id_from_name(object_name))
                if wanted in [v for _, v in self.object.options]:
                    self.object.value = wanted
        self.refresh()

    def _load_objects(self) -> None:
        if not self.namespace.value:
            self.object.options = []
            return
        ns = self.rt.namespaces[self.namespace.value]
        current = self.object.value
        options = [(i.name or str(i)[:16], str(i)) for i in ns.object_ids()]
        with self._quieted():
            self.object.options = options
            values = [v for _, v in options]
            self.object.value = current if current in values else (values[0] if values else None)

    def _namespace_changed(self, _change: Any) -> None:
        if self._quiet:
            return
        with self._quieted():
            self._load_objects()
        self._switched()

    def _object_changed(self, _change: Any) -> None:
        if not self._quiet:
            self._switched()

    def _switched(self) -> None:
        """Another object: outcomes about the last one no longer apply."""
        self._clear_outcomes()
        self._act(self.status, self.refresh)

    def _clear_outcomes(self) -> None:
        for line in (
            self.kv_edit_status, self.sql_status, self.alarm_status, self.diff_status,
            self.restore_status,
        ):  # fmt: skip
            line.clear()
        self.sql_table.value = self.diff_html.value = ""
        self.sql_rows, self.diff, self.diff_lines = [], None, []
        self.undo_bookmark = ""

    def _tab_shown(self, _change: Any) -> None:
        """Draw the shown tab's chart if it changed while hidden (a chart takes a moment)."""
        if self.tabs.selected_index in self._undrawn:
            self._act(self.status, self._draw_charts)

    def _draw_charts(self) -> None:
        if self.tabs.selected_index == BOOKMARKS_TAB:
            self._draw_timeline()
        elif self.tabs.selected_index == BILLING_TAB:
            self._draw_billing()

    def _picks_changed(self, _change: Any) -> None:
        """A new "from" or "to": move its mark on the chart."""
        if not self._quiet:
            # Not the busy state: a redraw is no action, and disabling the buttons for it
            # would swallow a click on Diff or Restore that lands while the chart redraws.
            self._act(self.status, self._draw_timeline, busy=False)

    # -- the object ------------------------------------------------------------------------
    def open_by_name(self) -> None:
        """Open (creating if needed) the object named in "By name"."""
        name = self.object_name.value
        if not self.namespace.value:
            raise LookupError("no namespace yet: bind a class with rt.namespace(...) and Reload")
        ns = self.rt.namespaces[self.namespace.value]
        object_id = ns.id_from_name(name)
        ns.host(object_id)
        with self._quieted():
            self._load_objects()
            self.object.value = str(object_id)
        self._clear_outcomes()
        self.refresh()

    def reload(self) -> None:
        """Pick up namespaces and objects created since the panel was built."""
        current = self.namespace.value
        names = sorted(self.rt.namespaces)
        with self._quieted():
            self.namespace.options = names
            if names:
                self.namespace.value = current if current in names else names[0]
            self._load_objects()
        self.refresh()

    def refresh(self) -> None:
        """Redraw every view of the picked object from its current state."""
        if not self.namespace.value or not self.object.value:
            self.status.show("info", "no object yet: create one, or type a name and press Open")
            self.kv_status.clear()
            self.kv_rows, self.entries = [], []
            for widget in (
                self.kv_table, self.alarm_state, self.alarm_log, self.timeline_html,
                self.log_table, self.billing_table, self.billing_chart_html, self.billing_cost,
            ):  # fmt: skip
                widget.value = ""
            self.timeline_note.value = ""
            return
        host = self.host
        backend = "SQLite backend" if host.sql_backend else "KV backend (no SQL, no bookmarks)"
        name = host.id.name or str(host.id)
        self.status.show("info", f"{host.namespace.name} / {name} · {backend}")
        self.kv_list()
        self._show_alarm()
        self._show_timeline()
        self._show_billing()

    def reset(self) -> None:
        """Back to how the panel opened: inputs emptied, outcomes cleared, first tab shown."""
        with self._quieted():
            for box in (self.kv_prefix, self.kv_start, self.kv_end, self.kv_key, self.kv_value):
                box.value = ""
            self.kv_reverse.value = False
            self.kv_limit.value = 0
            self.sql_text.value = ""
            self.alarm_offset.value = self.advance_ms.value = 1000
            self.object_name.value = ""
            self.bookmark_a.options = self.bookmark_b.options = []
        self.kv_status.clear()
        self._clear_outcomes()
        self.tabs.selected_index = 0
        self._act(self.status, self._open_start)

    # -- KV ----------------------------------------------------------------------------------
    def kv_list(self) -> None:
        """List the pairs the options pick, values as JSON."""
        opts: dict[str, Any] = {}
        for name, box in (
            ("prefix", self.kv_prefix),
            ("start", self.kv_start),
            ("end", self.kv_end),
        ):
            if box.value:
                opts[name] = box.value
        if self.kv_reverse.value:
            opts["reverse"] = True
        if self.kv_limit.value:
            opts["limit"] = self.kv_limit.value
        pairs = self._storage().list(opts).result()
        self.kv_rows = [[key, dumps(value)] for key, value in pairs.items()]
        self.kv_table.value = parts.scroll_table(
            ["key", "value (JSON)"], [[k, _cut(v)] for k, v in self.kv_rows], cls="wb-kv-rows"
        )
        shown = ", ".join(f"{k} {v}" for k, v in opts.items())
        self.kv_status.show(
            "info", parts.plural(len(pairs), "pair") + (f" ({shown})" if shown else "")
        )

    def kv_get(self) -> None:
        """Load the key's value into the editor, as JSON."""
        key = self.kv_key.value
        found = self._storage().get([key]).result()
        if key not in found:
            # The last key's value must not stay in the box: Put would write it under this key.
            self.kv_value.value = ""
            self.kv_edit_status.show(
                "refused",
                f"key {dumps(key)} does not exist: the value box is empty; type a value, "
                "then Put to create it",
            )
            return
        self.kv_value.value = dumps(found[key], indent=2)
        self.kv_edit_status.show("success", f"loaded {dumps(key)}: edit the JSON, then Put")

    def kv_put(self) -> None:
        """Store the editor's JSON value under the key."""
        key = self.kv_key.value
        value = loads(self.kv_value.value, field="value (JSON)")
        self._storage().put(key, value).result()
        self.host.flush()
        self._after_write()
        self.kv_edit_status.show("success", f"put {dumps(key)} = {_cut(dumps(value), 120)}")

    def kv_delete(self) -> None:
        """Delete the key."""
        key = self.kv_key.value
        existed = self._storage().delete(key).result()
        self.host.flush()
        self._after_write()
        if existed:
            self.kv_edit_status.show("success", f"deleted {dumps(key)}")
        else:
            self.kv_edit_status.show("info", f"{dumps(key)} did not exist: nothing deleted")

    # -- SQL ---------------------------------------------------------------------------------
    def sql_run(self) -> None:
        """Run the SQL text; a success replaces any earlier error, an error any earlier rows."""
        self.sql_rows, self.sql_table.value = [], ""
        cursor = self._storage().sql.exec(self.sql_text.value)
        rows = cursor.raw().toArray()
        self.host.flush()
        columns = list(cursor.columnNames)
        self.sql_rows = [[sql_cell(v) for v in row] for row in rows]
        self.sql_table.value = (
            parts.scroll_table(columns, self.sql_rows, cls="wb-sql-rows") if columns else ""
        )
        self.sql_status.show(
            "success",
            f"{parts.plural(len(rows), 'row')} · columnNames {columns} · "
            f"rowsRead {cursor.rowsRead} · rowsWritten {cursor.rowsWritten}",
        )
        self._after_write()

    def _after_write(self) -> None:
        self.kv_list()
        self._show_alarm()
        self._show_timeline()
        self._show_billing()

    # -- alarm -------------------------------------------------------------------------------
    def _show_alarm(self) -> None:
        host = self.host
        self.alarm_state.value = (
            f"<div style='{parts.MONO}'>now {_when(self.rt.now())} · "
            f"alarm {html.escape(_when(host.db.get_alarm()))}</div>"
        )
        rows = [
            [_when(e["t_ms"]), e.get("retryCount"), e.get("result", "running")]
            for e in host.alarm_log
        ]
        self.alarm_log.value = (
            parts.scroll_table(["ran at", "retryCount", "result"], rows)
            if rows
            else "<div style='color:#5f6368'>no alarm has run</div>"
        )

    def alarm_set(self) -> None:
        """Set the alarm ``in ms`` from now (virtual time)."""
        at = self.rt.now() + self.alarm_offset.value
        self._storage().setAlarm(at).result()
        self.host.flush()
        self._after_write()
        self.alarm_status.show("success", f"alarm set for {_when(at)}")

    def alarm_delete(self) -> None:
        """Delete the alarm, if any."""
        had = self.host.db.get_alarm()
        self._storage().deleteAlarm().result()
        self.host.flush()
        self._after_write()
        self.alarm_status.show(
            "success" if had else "info", "alarm deleted" if had else "there was no alarm"
        )

    def advance(self) -> None:
        """Move virtual time on; alarms that fall due run."""
        runs = len(self.host.alarm_log)
        self.rt.run(self.rt.advance(self.advance_ms.value))
        self.refresh()
        ran = len(self.host.alarm_log) - runs
        self.alarm_status.show(
            "success",
            f"clock at {_when(self.rt.now())}; "
            + (
                f"{parts.plural(ran, 'alarm run')} of this object"
                if ran
                else "no alarm of this object ran"
            ),
        )

    # -- bookmarks ---------------------------------------------------------------------------
    def _show_timeline(self) -> None:
        host = self.host
        self.entries = timeline(host)
        if not self.entries:
            self.timeline_note.value = (
                "<div style='color:#5f6368'>no history: the KV backend keeps none "
                "(point-in-time recovery needs storage='sqlite')</div>"
            )
            self.timeline_html.value = self.log_table.value = ""
            with self._quieted():
                self.bookmark_a.options = self.bookmark_b.options = []
            return
        self.timeline_note.value = (
            f"<div style='font-size:12.5px;line-height:1.4'>{_BOOKMARKS_NOTE}</div>"
        )
        options = [(e["label"], e["bookmark"]) for e in self.entries]
        values = [v for _, v in options]
        a, b = self.bookmark_a.value, self.bookmark_b.value
        old = [v for _, v in self.bookmark_b.options]
        if not old or b == old[-1]:
            b = None  # "to" was the newest bookmark: keep following the newest
        with self._quieted():
            if [v for _, v in self.bookmark_a.options] != values:
                self.bookmark_a.options = options
                self.bookmark_b.options = options
            self.bookmark_a.value = a if a in values else values[0]
            self.bookmark_b.value = b if b in values else values[-1]
        self.log_table.value = (
            "<details><summary style='cursor:pointer'>every log record "
            f"({len(self.entries)})</summary>"
            + parts.scroll_table(
                ["seq", "virtual time", "kind", "bytes", "what changed", "bookmark"],
                [
                    [e["seq"], e["time"], e["kind"], e["bytes"], e["summary"], e["bookmark"]]
                    for e in self.entries
                ],
            )
            + "</details>"
        )
        self._draw_timeline()

    def _seq_of(self, bookmark: str | None) -> int | None:
        return History.parse(bookmark)[1] if bookmark else None

    def _label_of(self, bookmark: str) -> str:
        for e in self.entries:
            if e["bookmark"] == bookmark:
                return f"seq {e['seq']} · {e['time']}"
        t_ms, seq = History.parse(bookmark)
        return f"seq {seq} · {time_label(t_ms)}"

    def _draw_timeline(self) -> None:
        if not self.entries:
            return
        if self.tabs.selected_index != BOOKMARKS_TAB:
            self._undrawn.add(BOOKMARKS_TAB)
            self.timeline_html.value = ""  # never an outdated chart; drawn when the tab is shown
            return
        self._undrawn.discard(BOOKMARKS_TAB)
        marks: dict[int, str] = {}
        for name, picker in (("to", self.bookmark_b), ("from", self.bookmark_a)):
            seq = self._seq_of(picker.value)
            if seq is not None:
                marks[seq] = "from = to" if marks.get(seq) else name
        self.timeline_html.value = svg(timeline_chart(self.entries, marks))

    def _need_history(self) -> None:
        if self.host.db.history is None:
            raise StorageError(
                "this object keeps no history: bookmarks need the SQLite backend "
                "(create the namespace with storage='sqlite')"
            )

    def show_diff(self) -> None:
        """What changed from "from" to "to", with values before and after."""
        self._need_history()
        a, b = self.bookmark_a.value, self.bookmark_b.value
        self.diff = diff_bookmarks(self.host, a, b)
        self.diff_lines = diff_lines(self.diff)
        rows: list[list[str]] = []
        for e in self.diff["kv"]["entries"]:
            rows.append(["KV", e["key"], e["change"], e["before"] or "", e["after"] or ""])
        for name in self.diff["schema"]["created"] + self.diff["schema"]["dropped"]:
            if not name.startswith("table "):
                gone = name in self.diff["schema"]["dropped"]
                rows.append(["schema", name, "dropped" if gone else "created", "", ""])
        for name, t in self.diff["tables"].items():
            rows.append([f"table {name}", row_counts(t) or "no rows", t["status"], "", ""])
            for r in t["rows"]:
                rows.append(
                    [f"table {name}", r["key"], r["change"], r["before"] or "", r["after"] or ""]
                )
            hidden = t["rows_added"] + t["rows_removed"] + t["rows_changed"] - len(t["rows"])
            if hidden > 0:
                rows.append([f"table {name}", f"... {hidden} more", "", "", ""])
        if self.diff["alarm"]:
            al = self.diff["alarm"]
            rows.append(["alarm", "", "changed", _when(al["before"]), _when(al["after"])])
        span = f"from {self._label_of(a)} to {self._label_of(b)}"
        if not rows:
            self.diff_html.value = ""
            self.diff_status.show("info", f"no change {span}")
            return
        self.diff_html.value = parts.scroll_table(
            ["where", "key or row", "change", "before (JSON)", "after (JSON)"],
            rows,
            cls="wb-diff-rows",
        )
        kv = self.diff["kv"]
        tables = self.diff["tables"]
        self.diff_status.show(
            "success",
            f"{span}: {parts.plural(len(kv['entries']), 'key')} and "
            f"{parts.plural(len(tables), 'table')} changed",
        )

    def restore(self) -> None:
        """Ask for a restore to "from"; it takes effect when the object restarts."""
        self._need_history()
        target = self.bookmark_a.value
        self.undo_bookmark = self._storage().onNextSessionRestoreBookmark(target).result()
        self.restore_status.show(
            "info",
            f"restore to {self._label_of(target)} is pending: it takes effect when the object "
            "restarts (press Restart object)",
            f"bookmark      {target}\nundo bookmark {self.undo_bookmark}",
        )

    def restart(self) -> None:
        """Restart the object now, applying a pending restore."""
        pending = self.host.pending_restore()
        self.host.restart()
        self.refresh()
        if pending:
            self.restore_status.show(
                "success",
                f"restored to {self._label_of(pending)}; Undo restore goes back to before it",
                f"bookmark      {pending}\nundo bookmark {self.undo_bookmark}",
            )
        else:
            self.restore_status.show("info", "restarted; no restore was pending")

    def undo_restore(self) -> None:
        """Go back to the state before the last restore (restore to its undo bookmark, restart)."""
        self._need_history()
        if not self.undo_bookmark:
            raise StorageError("no restore to undo yet: Restore to 'from' and Restart first")
        undo = self.undo_bookmark
        self.undo_bookmark = self.host.restore_now(undo)
        self.refresh()
        self.restore_status.show(
            "success",
            "restore undone: the object is back as it was before the restore",
            f"bookmark      {undo}\nundo bookmark {self.undo_bookmark}",
        )

    # -- billing -----------------------------------------------------------------------------
    def _show_billing(self) -> None:
        oid = str(self.host.id)
        self.billing_rows = billing_by_kind(self.rt.billing, oid)
        if not self.billing_rows:
            self.billing_table.value = (
                "<div style='color:#5f6368'>no SQL statements yet for this object</div>"
            )
            self.billing_chart_html.value = self.billing_cost.value = ""
            return
        totals = self.rt.billing.totals(oid)
        rows: list[list[Any]] = [
            [k["kind"], k["statements"], k["rows_read"], k["rows_written"]]
            for k in self.billing_rows
        ]
        rows.append(["total", totals["statements"], totals["rows_read"], totals["rows_written"]])
        self.billing_table.value = parts.scroll_table(
            ["statement kind", "statements", "rowsRead", "rowsWritten"], rows, cls="wb-billing-rows"
        )
        self._draw_billing()
        cost = self.rt.billing.cost(oid)
        self.billing_cost.value = (
            f"<div style='line-height:1.4'><b>estimated ${cost['total_usd']:,.2f}/month</b> if this usage repeated every "
            f"month (rows read ${cost['rows_read_usd']:,.6f}, rows written "
            f"${cost['rows_written_usd']:,.6f})</div><div style='color:#5f6368;font-size:12px;line-height:1.4'>"
            f"Workers Paid: {INCLUDED_ROWS_READ / 1e9:,.0f} billion rows read and "
            f"{INCLUDED_ROWS_WRITTEN / 1e6:,.0f} million rows written included per month, then "
            f"${USD_PER_MILLION_READ} per million read and ${USD_PER_MILLION_WRITTEN:.2f} per "
            f"million written.{_IN_THE_LOG if self.wb is not None else ''}</div>"
        )

    def _draw_billing(self) -> None:
        if not self.billing_rows:
            return
        if self.tabs.selected_index != BILLING_TAB:
            self._undrawn.add(BILLING_TAB)
            self.billing_chart_html.value = ""
            return
        self._undrawn.discard(BILLING_TAB)
        self.billing_chart_html.value = svg(billing_chart(self.billing_rows))
