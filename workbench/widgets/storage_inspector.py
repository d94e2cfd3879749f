"""StorageInspector: browse and drive Durable Object storage, alarms and bookmarks.

Pick a namespace and an object; the tabs hold a KV browser (list options, put,
delete), a SQL console (rows, columnNames, rowsRead, rowsWritten), the alarm
(virtual time, set, delete, advance the clock, handler log), the bookmark
timeline (diff two bookmarks, restore: pending, restart, restored, with the
undo bookmark) and the SQL billing summary.

    >>> from workbench.storage import Runtime, DurableObject
    >>> from workbench.widgets import StorageInspector
    >>> class Notes(DurableObject):
    ...     async def fetch(self, request):
    ...         await self.ctx.storage.put("greeting", request)
    >>> rt = Runtime()
    >>> ns = rt.namespace(Notes)
    >>> rt.run(ns.get(ns.id_from_name("n")).fetch("hello"))
    >>> panel = StorageInspector(rt)
    >>> panel.kv_list_button.click()
    >>> panel.kv_status.value
    '1 pair'

Callbacks only set widget values (never ``print``), so the panel behaves the
same in JupyterLab, Voila, nbval and plain pytest.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from workbench.core.clock import iso
from workbench.storage import Runtime
from workbench.storage.runtime import ObjectHost
from workbench.storage.views import diff_bookmarks, timeline

__all__ = ["StorageInspector"]


def _table(columns: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(repr(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    return f"<table class='wb-table'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _when(ms: int | None) -> str:
    from datetime import UTC, datetime

    if ms is None:
        return "none"
    return iso(datetime.fromtimestamp(ms / 1000, tz=UTC)) + f" ({ms})"


class StorageInspector:
    """The storage and bookmark inspector for one :class:`~workbench.storage.Runtime`."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.message = ""
        w = widgets
        names = sorted(runtime.namespaces)
        self.namespace = w.Dropdown(
            description="Namespace", options=names, value=names[0] if names else None
        )
        self.object = w.Dropdown(description="Object", options=[])
        self.object_name = w.Text(placeholder="object name", description="By name")
        self.open_button = w.Button(description="Open")
        self.refresh_button = w.Button(description="Refresh")
        self.status = w.HTML()

        # KV browser
        self.kv_prefix = w.Text(description="prefix")
        self.kv_start = w.Text(description="start")
        self.kv_end = w.Text(description="end")
        self.kv_reverse = w.Checkbox(description="reverse")
        self.kv_limit = w.IntText(description="limit", value=0)
        self.kv_list_button = w.Button(description="List")
        self.kv_key = w.Text(description="key")
        self.kv_value = w.Text(description="value (JSON)")
        self.kv_put_button = w.Button(description="Put")
        self.kv_delete_button = w.Button(description="Delete")
        self.kv_status = w.HTML()
        self.kv_table = w.HTML()

        # SQL console
        self.sql_text = w.Textarea(description="SQL", layout=w.Layout(width="100%"))
        self.sql_run_button = w.Button(description="Run")
        self.sql_status = w.HTML()
        self.sql_table = w.HTML()

        # Alarm
        self.alarm_status = w.HTML()
        self.alarm_offset = w.IntText(description="in ms", value=1000)
        self.alarm_set_button = w.Button(description="Set alarm")
        self.alarm_delete_button = w.Button(description="Delete alarm")
        self.advance_ms = w.IntText(description="advance ms", value=1000)
        self.advance_button = w.Button(description="Advance clock")
        self.alarm_log = w.HTML()

        # Bookmarks
        self.timeline_html = w.HTML()
        self.bookmark_a = w.Dropdown(description="from", options=[])
        self.bookmark_b = w.Dropdown(description="to", options=[])
        self.diff_button = w.Button(description="Diff")
        self.diff_html = w.HTML()
        self.diff_lines: list[str] = []
        self.restore_button = w.Button(description="Restore to 'to'")
        self.restart_button = w.Button(description="Restart object")
        self.restore_status = w.HTML()
        self.undo_bookmark = ""

        # Billing
        self.billing_html = w.HTML()

        tabs = w.Tab(
            children=[
                w.VBox(
                    [
                        w.HBox([self.kv_prefix, self.kv_start, self.kv_end]),
                        w.HBox([self.kv_reverse, self.kv_limit, self.kv_list_button]),
                        w.HBox(
                            [self.kv_key, self.kv_value, self.kv_put_button, self.kv_delete_button]
                        ),
                        self.kv_status,
                        self.kv_table,
                    ]
                ),
                w.VBox([self.sql_text, self.sql_run_button, self.sql_status, self.sql_table]),
                w.VBox(
                    [
                        self.alarm_status,
                        w.HBox(
                            [self.alarm_offset, self.alarm_set_button, self.alarm_delete_button]
                        ),
                        w.HBox([self.advance_ms, self.advance_button]),
                        self.alarm_log,
                    ]
                ),
                w.VBox(
                    [
                        self.timeline_html,
                        w.HBox([self.bookmark_a, self.bookmark_b, self.diff_button]),
                        self.diff_html,
                        w.HBox([self.restore_button, self.restart_button]),
                        self.restore_status,
                    ]
                ),
                self.billing_html,
            ]
        )
        for i, title in enumerate(["KV", "SQL", "Alarm", "Bookmarks", "Billing"]):
            tabs.set_title(i, title)
        self.tabs = tabs
        header = w.HBox([self.namespace, self.object, self.refresh_button])
        self.widget = w.VBox(
            [
                w.HTML("<b>Durable Object storage</b>"),
                header,
                w.HBox([self.object_name, self.open_button]),
                self.status,
                tabs,
            ]
        )
        self.widget.add_class("wb-storage-inspector")

        handlers: list[tuple[widgets.Button, Callable[[], None]]] = [
            (self.open_button, self.open_by_name),
            (self.refresh_button, self.reload),
            (self.kv_list_button, self.kv_list),
            (self.kv_put_button, self.kv_put),
            (self.kv_delete_button, self.kv_delete),
            (self.sql_run_button, self.sql_run),
            (self.alarm_set_button, self.alarm_set),
            (self.alarm_delete_button, self.alarm_delete),
            (self.advance_button, self.advance),
            (self.diff_button, self.diff),
            (self.restore_button, self.restore),
            (self.restart_button, self.restart),
        ]
        for button, fn in handlers:
            button.on_click(lambda _b, fn=fn: self._guard(fn))
        self.namespace.observe(lambda _c: self._guard(self._load_objects), names="value")
        self.object.observe(lambda _c: self._guard(self.refresh), names="value")
        self._load_objects()

    # -- plumbing -------------------------------------------------------------------
    def _guard(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - shown in the panel, not raised into the kernel
            self._say(f"{type(exc).__name__}: {exc}", error=True)

    def _say(self, text: str, error: bool = False) -> None:
        self.message = text
        color = "#b00020" if error else "inherit"
        self.status.value = f"<span style='color:{color}'>{html.escape(text)}</span>"

    @property
    def host(self) -> ObjectHost:
        ns = self.rt.namespaces[self.namespace.value]
        for host in ns.hosts.values():
            if str(host.id) == self.object.value:
                return host
        raise LookupError("pick an object first")

    def _storage(self) -> Any:
        return self.host.storage()

    def _load_objects(self) -> None:
        if not self.namespace.value:
            self.object.options = []
            return
        ns = self.rt.namespaces[self.namespace.value]
        current = self.object.value
        options = [(i.name or str(i)[:16], str(i)) for i in ns.object_ids()]
        self.object.options = options
        values = [v for _, v in options]
        if values:
            self.object.value = current if current in values else values[0]
        self.refresh()

    # -- actions ------------------------------------------------------------------------
    def open_by_name(self) -> None:
        ns = self.rt.namespaces[self.namespace.value]
        object_id = ns.id_from_name(self.object_name.value)
        ns.host(object_id)
        self._load_objects()
        self.object.value = str(object_id)

    def reload(self) -> None:
        """Pick up namespaces and objects created since the panel was built."""
        current = self.namespace.value
        names = sorted(self.rt.namespaces)
        self.namespace.options = names
        if names:
            self.namespace.value = current if current in names else names[0]
        self._load_objects()

    def refresh(self) -> None:
        """Redraw every view from the current state."""
        if not self.object.value:
            self._say("no object yet")
            return
        host = self.host
        self._say(f"{host.namespace.name} / {host.id.name or host.id} ({host.namespace.storage})")
        self.kv_list()
        self._show_alarm()
        self._show_timeline()
        self._show_billing()

    def kv_list(self) -> None:
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
        self.kv_status.value = f"{len(pairs)} pair" + ("" if len(pairs) == 1 else "s")
        self.kv_table.value = _table(["key", "value"], [[k, v] for k, v in pairs.items()])

    def kv_put(self) -> None:
        value = json.loads(self.kv_value.value) if self.kv_value.value else None
        self._storage().put(self.kv_key.value, value).result()
        self.host.flush()
        self.kv_list()
        self._show_timeline()

    def kv_delete(self) -> None:
        existed = self._storage().delete(self.kv_key.value).result()
        self.host.flush()
        self.kv_list()
        self._show_timeline()
        self._say(
            f"deleted {self.kv_key.value!r}" if existed else f"{self.kv_key.value!r} did not exist"
        )

    def sql_run(self) -> None:
        cursor = self._storage().sql.exec(self.sql_text.value)
        rows = cursor.raw().toArray()
        self.host.flush()
        self.sql_status.value = (
            f"{len(rows)} rows · columnNames {cursor.columnNames} · "
            f"rowsRead {cursor.rowsRead} · rowsWritten {cursor.rowsWritten}"
        )
        self.sql_table.value = _table(cursor.columnNames, rows) if cursor.columnNames else ""
        self._show_timeline()
        self._show_billing()

    def _show_alarm(self) -> None:
        host = self.host
        self.alarm_status.value = f"now {_when(self.rt.now())} · alarm {_when(host.db.get_alarm())}"
        rows = [
            [_when(e["t_ms"]), e.get("retryCount"), e.get("result", "running")]
            for e in host.alarm_log
        ]
        self.alarm_log.value = (
            _table(["ran at", "retryCount", "result"], rows) if rows else "no alarm has run"
        )

    def alarm_set(self) -> None:
        self._storage().setAlarm(self.rt.now() + self.alarm_offset.value).result()
        self.host.flush()
        self._show_alarm()

    def alarm_delete(self) -> None:
        self._storage().deleteAlarm().result()
        self.host.flush()
        self._show_alarm()

    def advance(self) -> None:
        self.rt.run(self.rt.advance(self.advance_ms.value))
        self.refresh()

    def _show_timeline(self) -> None:
        entries = timeline(self.host)
        if not entries:
            self.timeline_html.value = "no history (the KV backend keeps none)"
            self.bookmark_a.options = self.bookmark_b.options = []
            return
        self.timeline_html.value = _table(
            ["seq", "virtual time", "kind", "bytes"],
            [[e["seq"], _when(e["t_ms"]), e["kind"], e["bytes"]] for e in entries],
        )
        options = [(f"#{e['seq']} {iso_short(e['t_ms'])}", e["bookmark"]) for e in entries]
        a, b = self.bookmark_a.value, self.bookmark_b.value
        old = [v for _, v in self.bookmark_b.options]
        if old and b == old[-1]:
            b = None  # "to" was the newest bookmark: keep following the newest
        self.bookmark_a.options = options
        self.bookmark_b.options = options
        values = [v for _, v in options]
        self.bookmark_a.value = a if a in values else values[0]
        self.bookmark_b.value = b if b in values else values[-1]

    def diff(self) -> None:
        d = diff_bookmarks(self.host, self.bookmark_a.value, self.bookmark_b.value)
        kv = d["kv"]
        lines = [
            f"KV: {len(kv['added'])} added {kv['added']}, {len(kv['removed'])} removed "
            f"{kv['removed']}, {len(kv['changed'])} changed {kv['changed']}"
        ]
        for name, t in d["tables"].items():
            lines.append(
                f"table {name}: {t['status']}, +{t['rows_added']} rows, -{t['rows_removed']} rows"
            )
        self.diff_lines = lines
        self.diff_html.value = "<br>".join(html.escape(line) for line in lines)

    def restore(self) -> None:
        self.undo_bookmark = (
            self._storage().onNextSessionRestoreBookmark(self.bookmark_b.value).result()
        )
        self.restore_status.value = (
            f"restore pending to {self.bookmark_b.value}; it takes effect when the object "
            f"restarts · undo bookmark {self.undo_bookmark}"
        )

    def restart(self) -> None:
        pending = self.host.db.history.pending() if self.host.db.history else None
        self.host.restart()
        state = f"restored to {pending}" if pending else "restarted (no restore was pending)"
        undo = f" · undo bookmark {self.undo_bookmark}" if pending and self.undo_bookmark else ""
        self.restore_status.value = state + undo
        self.refresh()

    def _show_billing(self) -> None:
        oid = str(self.host.id)
        totals = self.rt.billing.totals(oid)
        cost = self.rt.billing.cost(oid)
        self.billing_html.value = (
            f"{totals['statements']} statements · rowsRead {totals['rows_read']} · "
            f"rowsWritten {totals['rows_written']} · estimated ${cost['total_usd']:.2f}/month "
            "(Workers Paid, after included usage)"
        )

    # -- display -------------------------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def iso_short(ms: int) -> str:
    """``HH:MM:SS.mmm`` of a virtual time, for dropdown labels."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%m-%d %H:%M:%S.%f")[:-3]
