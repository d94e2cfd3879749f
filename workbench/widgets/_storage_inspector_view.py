"""The storage inspector's widgets and their layout (no storage calls here).

:class:`StorageWidgets` builds every widget of the panel, each with its
``wb-storage-*`` class (the hooks browser tests select by), and lays them out
in five tabs; :class:`~workbench.widgets.storage_inspector.StorageInspector`
inherits them and drives the storage.

    >>> widgets = StorageWidgets()
    >>> widgets.build()
    >>> [widgets.tabs.get_title(i) for i in range(5)]
    ['KV', 'SQL', 'Alarm', 'Bookmarks', 'Billing']
"""

from __future__ import annotations

import html

import ipywidgets as W

from workbench.storage.sql_storage import EXAMPLE_QUERY

from . import parts

_TAGS_NOTE = (
    'Values are JSON. Types JSON lacks are tagged objects: {"$bytes": "<base64>"}, '
    '{"$datetime": "2026-01-01T00:00:00+00:00"}, {"$date": "2026-01-01"}, {"$set": [...]}, '
    '{"$map": [[key, value], ...]}, {"$tuple": [...]}, {"$float": "NaN"}, '
    '{"$regexp": "a+", "flags": "i"}, {"$error": "ValueError", "message": "..."}.'
)

classed = parts.hooks("wb-storage")


class StorageWidgets:
    """The inspector's widgets by name: the object picker, then each tab's inputs and outputs."""

    def build(self) -> None:
        """Make every widget and :attr:`tabs`, the five tabs laid out."""
        wide = W.Layout(width="100%")
        label_style = {"description_width": "initial"}

        # which object
        self.namespace = classed(W.Dropdown(description="Namespace", options=[]), "namespace")
        self.object = classed(W.Dropdown(description="Object", options=[]), "object")
        self.refresh_button = classed(W.Button(description="Reload", icon="refresh"), "reload")
        self.object_name = classed(
            W.Text(placeholder="object name", description="By name"), "object-name"
        )
        self.open_button = classed(W.Button(description="Open"), "open")

        # KV
        self.kv_prefix = classed(W.Text(description="prefix"), "kv-prefix")
        self.kv_start = classed(W.Text(description="start"), "kv-start")
        self.kv_end = classed(W.Text(description="end"), "kv-end")
        self.kv_reverse = classed(W.Checkbox(description="reverse"), "kv-reverse")
        self.kv_limit = classed(W.IntText(description="limit (0: all)", value=0), "kv-limit")
        self.kv_limit.style = label_style
        self.kv_list_button = classed(W.Button(description="List"), "kv-list")
        self.kv_status = classed(parts.StatusLine(), "kv-status")
        self.kv_table = classed(W.HTML(), "kv-table")
        self.kv_key = classed(W.Text(description="key"), "kv-key")
        self.kv_get_button = classed(W.Button(description="Get"), "kv-get")
        self.kv_delete_button = classed(W.Button(description="Delete"), "kv-delete")
        self.kv_value = classed(
            W.Textarea(
                description="value (JSON)",
                placeholder='{"items": ["pen"], "total": 3}',
                rows=4,
                layout=wide,
                style=label_style,
            ),
            "kv-value",
        )
        self.kv_put_button = classed(W.Button(description="Put", button_style="primary"), "kv-put")
        self.kv_edit_status = classed(parts.StatusLine(), "kv-edit-status")
        kv_tab = W.VBox(
            [
                W.HBox([self.kv_prefix, self.kv_start, self.kv_end]),
                W.HBox([self.kv_reverse, self.kv_limit, self.kv_list_button]),
                self.kv_status,
                self.kv_table,
                W.HTML("<div style='margin-top:8px;font-weight:600'>Edit a value</div>"),
                W.HBox([self.kv_key, self.kv_get_button, self.kv_delete_button]),
                self.kv_value,
                self.kv_put_button,
                self.kv_edit_status,
                W.HTML(
                    f"<div style='color:#5f6368;font-size:12px;line-height:1.4'>{html.escape(_TAGS_NOTE)}</div>"
                ),
            ]
        )

        # SQL
        self.sql_text = classed(
            W.Textarea(
                description="SQL",
                placeholder=EXAMPLE_QUERY,
                rows=3,
                layout=wide,
            ),
            "sql-text",
        )
        self.sql_run_button = classed(
            W.Button(description="Run", button_style="primary"), "sql-run"
        )
        self.sql_status = classed(parts.StatusLine(), "sql-status")
        self.sql_table = classed(W.HTML(), "sql-table")
        sql_tab = W.VBox(
            [
                self.sql_text,
                self.sql_run_button,
                self.sql_status,
                self.sql_table,
                W.HTML(
                    "<div style='color:#5f6368;font-size:12px;line-height:1.4'>Statements separated by ';' run "
                    "in order; the rows and counters shown are the last statement's.</div>"
                ),
            ]
        )

        # Alarm
        self.alarm_state = classed(W.HTML(), "alarm-state")
        self.alarm_offset = classed(W.IntText(description="in ms", value=1000), "alarm-offset")
        self.alarm_set_button = classed(W.Button(description="Set alarm"), "alarm-set")
        self.alarm_delete_button = classed(W.Button(description="Delete alarm"), "alarm-delete")
        self.advance_ms = classed(W.IntText(description="advance ms", value=1000), "advance-ms")
        self.advance_ms.style = label_style
        self.advance_button = classed(W.Button(description="Advance clock"), "advance")
        self.alarm_status = classed(parts.StatusLine(), "alarm-status")
        self.alarm_log = classed(W.HTML(), "alarm-log")
        alarm_tab = W.VBox(
            [
                self.alarm_state,
                W.HBox([self.alarm_offset, self.alarm_set_button, self.alarm_delete_button]),
                W.HBox([self.advance_ms, self.advance_button]),
                self.alarm_status,
                self.alarm_log,
            ]
        )

        # Bookmarks
        picker = W.Layout(width="100%", max_width="900px")
        self.timeline_note = classed(W.HTML(), "timeline-note")
        self.timeline_html = classed(W.HTML(), "timeline")
        self.bookmark_a = classed(
            W.Dropdown(description="from", options=[], layout=picker), "bookmark-from"
        )
        self.bookmark_b = classed(
            W.Dropdown(description="to", options=[], layout=picker), "bookmark-to"
        )
        self.diff_button = classed(W.Button(description="Diff", button_style="primary"), "diff")
        self.restore_button = classed(W.Button(description="Restore to 'from'"), "restore")
        self.restart_button = classed(W.Button(description="Restart object"), "restart")
        self.undo_button = classed(W.Button(description="Undo restore"), "undo")
        for button in (self.restore_button, self.restart_button, self.undo_button):
            button.layout.width = "auto"
        self.diff_status = classed(parts.StatusLine(), "diff-status")
        self.diff_html = classed(W.HTML(), "diff")
        self.restore_status = classed(parts.StatusLine(), "restore-status")
        self.log_table = classed(W.HTML(), "log-table")
        bookmarks_tab = W.VBox(
            [
                self.timeline_note,
                self.timeline_html,
                self.bookmark_a,
                self.bookmark_b,
                W.HBox(
                    [self.diff_button, self.restore_button, self.restart_button, self.undo_button]
                ),
                self.diff_status,
                self.diff_html,
                self.restore_status,
                self.log_table,
            ]
        )

        # Billing
        self.billing_table = classed(W.HTML(), "billing-table")
        self.billing_chart_html = classed(W.HTML(), "billing-chart")
        self.billing_cost = classed(W.HTML(), "billing-cost")
        billing_tab = W.VBox([self.billing_table, self.billing_chart_html, self.billing_cost])

        self.tabs = classed(
            parts.Tabs(
                [kv_tab, sql_tab, alarm_tab, bookmarks_tab, billing_tab],
                ["KV", "SQL", "Alarm", "Bookmarks", "Billing"],
            ),
            "tabs",
        )
