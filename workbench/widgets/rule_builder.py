"""The rule builder panel: compose a filter, test it, create a rule both ways.

Conditions (field, operator, value, joined by and/or) build the expression.
The field box is a type-ahead list: the common fields first, then the rest by
family; beside the value box, the value syntax the operator takes. The preview
shows the expression, or the parser's message with its caret; sample requests
show which ones it matches. The two buttons create through the v4 API, with
the panels' :class:`~workbench.api.client.ApiClient` (in process by default, so
no server is needed): "Create filter, then rule" (the recommended two calls)
and "Create in one call" (the shortened call with an inline filter). The
status line says which objects exist afterwards, by id; the HTTP log shows
each request as JSON and as curl, and the envelope that came back.

    >>> from workbench import Workbench
    >>> from workbench.widgets import RuleBuilder
    >>> wb = Workbench(seed=0); zone = wb.create_zone("example.com")
    >>> panel = RuleBuilder(wb, zone.id)          # display(panel) in a notebook
    >>> panel.set_condition(0, "http.request.uri.path", "contains", "/admin")
    >>> panel.expression
    'http.request.uri.path contains "/admin"'
    >>> panel.create_button.click()
    >>> panel.status.kind, panel.summary().startswith("created rule ")
    ('success', True)
    >>> panel.reset(); panel.expression, panel.status.kind
    ('http.request.uri.path eq ""', 'empty')
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx
import ipywidgets as W

from ..api.client import ApiClient, CreationOutcome, Exchange
from ..firewall.builder import (
    COMMON_FIELDS,
    Condition,
    build_expression,
    field_choices,
    field_type,
    is_field,
    operators_for,
    render,
    search_fields,
    value_syntax,
    whole_number,
)
from ..firewall.models import ACTION_PRECEDENCE, BYPASS_PRODUCTS
from ..rules_language import ExpressionError, compile_expression
from . import parts
from .parts import HttpLog, Panel

if TYPE_CHECKING:
    from ..core.platform import Workbench

SAMPLES: list[dict[str, Any]] = [
    {"http.request.uri.path": "/admin/login", "http.request.method": "POST", "ip.src": "192.0.2.10",
     "ip.src.country": "GB", "http.user_agent": "Mozilla/5.0", "http.host": "example.com", "ssl": True},
    {"http.request.uri.path": "/blog/hello", "http.request.method": "GET", "ip.src": "198.51.100.7",
     "ip.src.country": "FR", "http.user_agent": "Mozilla/5.0", "http.host": "example.com", "ssl": True},
    {"http.request.uri.path": "/wp-login.php", "http.request.method": "POST", "ip.src": "203.0.113.9",
     "ip.src.country": "US", "http.user_agent": "curl/8.5.0", "http.host": "example.com", "ssl": False},
]  # fmt: skip

FIRST_FIELD = COMMON_FIELDS[0]
#: Labels of the panel's inputs share one width, so the boxes line up.
_LABELS = {"description_width": "80px"}
_HINT = "font-size:12px;line-height:1.3;color:#5f6368"
_BAD = "font-size:12px;line-height:1.3;color:#b71c1c"
_TYPE_NAMES = {"Bytes": "String", "Int": "Integer", "Ip": "IP address", "Bool": "Boolean"}
# Two fixes for ipywidgets' HTML widgets inside this panel: their content box may
# shrink below its content (so parts.scroll_table scrolls instead of pushing the panel
# wider), and wrapped text gets a text line height, not the inline widgets' 28px.
_STYLE = (
    "<style>.wb-rb .widget-html-content{min-width:0}"
    ".wb-rb-outcome .widget-html-content,.wb-rb-syntax .widget-html-content,"
    ".wb-rb-priority-hint .widget-html-content{line-height:1.35}</style>"
)


def _auto_width(button: W.Button) -> W.Button:
    # Wide enough for its label: ipywidgets' default width would cut "Create filter, then rule".
    button.layout.width = "auto"
    button.layout.min_width = "max-content"
    return button


def _heading(text: str, css: str = "") -> W.HTML:
    return W.HTML(f"{css}<div style='font-weight:600;margin-top:6px'>{html.escape(text)}</div>")


def _field_problem(text: str) -> str | None:
    """Why ``text`` is not a field the builder offers (naming what it could be), or None."""
    if is_field(text):
        return None
    typed = text.strip()
    if not typed:
        return "field is empty: type part of a field's name (path, country, agent...) and pick one"
    found = search_fields(typed)
    if not found:
        return (
            f"field {typed!r} is unknown: no field name contains it "
            f"(try {', '.join(COMMON_FIELDS[:3])})"
        )
    shown = ", ".join(f.name for f in found[:4]) + (", ..." if len(found) > 4 else "")
    many = "1 field contains it" if len(found) == 1 else f"{len(found)} fields contain it"
    return f"field {typed!r} is not a whole name: {many} ({shown}); pick one from the list"


class _Row(W.HBox):
    """One condition: join, field (type-ahead), operator, value, remove, and the value syntax."""

    def __init__(self, panel: RuleBuilder) -> None:
        self.join = W.Dropdown(options=["and", "or"], value="and", layout=W.Layout(width="64px"))
        self.field = W.Combobox(
            options=[f.name for f in field_choices()],
            value=FIRST_FIELD,
            placeholder="type to search: path, country...",
            ensure_option=False,
            layout=W.Layout(width="290px"),
        )
        self.field.add_class("wb-rb-field")
        self.operator = W.Dropdown(
            options=operators_for(FIRST_FIELD), layout=W.Layout(width="130px")
        )
        self.operator.add_class("wb-rb-operator")
        self.value = W.Text(placeholder="value", layout=W.Layout(width="200px"))
        self.value.add_class("wb-rb-value")
        self.remove = _auto_width(W.Button(description="remove", tooltip="remove this condition"))
        self.remove.add_class("wb-rb-remove")
        self.hint = W.HTML(layout=W.Layout(flex="1 1 220px", min_width="220px", margin="0 0 0 6px"))
        self.hint.add_class("wb-rb-syntax")
        self.syntax = ""  # the hint beside the value box, as plain text
        super().__init__(
            [self.join, self.field, self.operator, self.value, self.remove, self.hint],
            layout=W.Layout(flex_flow="row wrap", align_items="center", max_width="100%"),
        )
        self._panel = panel
        self.field.observe(self._field_changed, "value")
        self.operator.observe(lambda _: self._changed(), "value")
        for widget in (self.join, self.value):
            widget.observe(lambda _: panel.refresh(), "value")
        self.remove.on_click(lambda _: panel.remove_condition(panel.rows.index(self)))
        self._show_hint()

    @property
    def problem(self) -> str | None:
        """The field box's problem (an unknown or unfinished name), or None."""
        return _field_problem(self.field.value)

    def _field_changed(self, _: Any) -> None:
        if self.problem is None:
            ops = operators_for(self.field.value)
            keep = self.operator.value if self.operator.value in ops else ops[0]
            if tuple(self.operator.options) != ops:
                self.operator.options = ops
            self.operator.value = keep
        self._changed()

    def _changed(self) -> None:
        known = self.problem is None
        self.value.disabled = known and field_type(self.field.value) == "Bool"
        self._show_hint()
        self._panel.refresh()

    def _show_hint(self) -> None:
        problem = self.problem
        if problem is not None:
            self.syntax = problem
            self.hint.value = f"<div style='{_BAD}'>{html.escape(problem)}</div>"
            return
        kind = _TYPE_NAMES[field_type(self.field.value)]
        self.syntax = value_syntax(self.field.value, self.operator.value)
        self.hint.value = (
            f"<div style='{_HINT}'><b>{html.escape(kind)}</b> · {html.escape(self.syntax)}</div>"
        )

    def condition(self) -> Condition:
        return Condition(self.field.value, self.operator.value, self.value.value, self.join.value)


class RuleBuilder(Panel):
    """A panel that builds a filter and a firewall rule for one zone of ``wb``."""

    title = "Rule builder"
    drives = "filters and firewall rules of one zone, through the v4 API"

    def __init__(
        self,
        wb: Workbench,
        zone: str | None = None,
        samples: list[dict] | None = None,
        client: ApiClient | None = None,
    ) -> None:
        self.wb = wb
        self.zone_id = wb.zone(zone).id if zone else wb.zones[0].id
        self._first_zone = self.zone_id
        self.samples = list(SAMPLES if samples is None else samples)
        self.exchanges: list[Exchange] = []
        self.last_outcome: CreationOutcome | None = None
        self.client = client if client is not None else ApiClient(wb)
        self.zone_picker = W.Dropdown(
            description="zone",
            options=[(f"{z.name} ({z.plan})", z.id) for z in wb.zones],
            value=self.zone_id,
            style=_LABELS,
        )
        self.zone_picker.observe(self._zone_changed, "value")
        self.rows: list[_Row] = []
        self.rows_box = W.VBox()
        self.add_button = _auto_width(W.Button(description="add condition"))
        self.add_button.layout.align_self = "flex-start"  # not stretched across the panel
        self.add_button.on_click(lambda _: self.add_condition())
        self.preview = W.HTML()
        self.matches = W.HTML()
        self.action = W.Dropdown(
            description="action", options=list(ACTION_PRECEDENCE), value="block", style=_LABELS
        )
        self.products = W.SelectMultiple(
            description="products", options=BYPASS_PRODUCTS, disabled=True, rows=4, style=_LABELS
        )
        self.action.observe(lambda _: self._action_changed(), "value")
        self.priority = W.Text(
            description="priority",
            placeholder="none (a whole number)",
            style=_LABELS,
            layout=W.Layout(width="260px"),
        )
        self.priority_hint = W.HTML(layout=W.Layout(margin="0 0 0 8px"))
        self.priority.observe(lambda _: self._priority_changed(), "value")
        self.paused = W.Checkbox(description="paused", value=False, indent=False)
        self.description = W.Text(
            description="description",
            style=_LABELS,
            layout=W.Layout(width="520px", max_width="100%"),
        )
        self.create_button = _auto_width(
            W.Button(description="Create filter, then rule", button_style="primary")
        )
        self.one_call_button = _auto_width(
            W.Button(description="Create in one call", button_style="warning")
        )
        self.create_button.on_click(lambda _: self.create_two_calls())
        self.one_call_button.on_click(lambda _: self.create_one_call())
        self.create_button.layout.margin = "2px 8px 2px 0"
        self.http_log = HttpLog()
        self.filters_view = W.HTML()
        status_slot = W.Box()
        super().__init__(
            [
                self.zone_picker,
                _heading("Filter: conditions", css=_STYLE),
                self.rows_box,
                self.add_button,
                self.preview,
                self.matches,
                _heading("Rule"),
                W.HBox([self.action, self.products]),
                W.HBox(
                    [self.priority, self.paused, self.priority_hint],
                    layout=W.Layout(align_items="center", flex_flow="row wrap"),
                ),
                self.description,
                W.HBox(
                    [self.create_button, self.one_call_button],
                    layout=W.Layout(flex_flow="row wrap", margin="6px 0"),
                ),
                status_slot,
                self.http_log,
                _heading("Filters of the zone and the rules sharing them"),
                self.filters_view,
            ]
        )
        # Panel makes the status line in its __init__; show it under the buttons.
        status_slot.children = (self.status,)
        self.layout.padding = "4px"
        self.add_class("wb-rb")
        for widget, name in [
            (self.create_button, "create"), (self.one_call_button, "one-call"),
            (self.add_button, "add"), (self.preview, "preview"), (self.matches, "matches"),
            (self.status, "outcome"), (self.http_log, "http"), (self.filters_view, "filters"),
            (self.priority, "priority"), (self.priority_hint, "priority-hint"),
        ]:  # fmt: skip
            widget.add_class(f"wb-rb-{name}")  # stable hooks for browser tests and CSS
        self.watch_inputs(
            self.zone_picker,
            self.action,
            self.products,
            self.priority,
            self.paused,
            self.description,
        )
        self.add_condition()
        self.refresh_filters()

    def describe(self) -> str:
        """The panel's ``text/plain`` form: what it drives, on which zone."""
        zone = self.wb.zone(self.zone_id).name
        return (
            f"{self.title} panel: drives {self.drives} (zone {zone}). "
            "Run this cell to open the panel."
        )

    def reset(self) -> None:
        """Back to a fresh panel: its first zone, one empty condition, no outcome, no HTTP log."""
        self.zone_picker.value = self._first_zone
        self.rows = []
        self.rows_box.children = ()
        self.add_condition()
        self.action.value = "block"
        self.products.value = ()
        self.priority.value = ""
        self.paused.value = False
        self.description.value = ""
        self.last_outcome = None
        self.exchanges = []
        self.http_log.clear()
        self.status.clear()
        self.refresh_filters()

    # -- conditions -------------------------------------------------------------
    def add_condition(
        self,
        field: str | None = None,
        operator: str | None = None,
        value: str = "",
        join: str = "and",
    ) -> None:
        """Add a condition row (the same as the "add condition" button)."""
        row = _Row(self)
        self.rows.append(row)
        self.rows_box.children = [*self.rows_box.children, row]
        self.watch_inputs(row.join, row.field, row.operator, row.value)
        self.status.mark_stale()
        self.set_condition(len(self.rows) - 1, field or row.field.value, operator, value, join)

    def set_condition(
        self,
        index: int,
        field: str,
        operator: str | None = None,
        value: str = "",
        join: str = "and",
    ) -> None:
        """Set row ``index`` to ``field operator value``."""
        row = self.rows[index]
        row.field.value = field
        row.operator.value = operator or row.operator.options[0]
        row.value.value = value
        row.join.value = join
        self._layout_rows()
        self.refresh()

    def remove_condition(self, index: int) -> None:
        """Remove row ``index`` (the row's "remove" button); one row always stays."""
        if len(self.rows) > 1:
            self.rows.pop(index)
            self.rows_box.children = list(self.rows)
            self._layout_rows()
            self.status.mark_stale()
        self.refresh()

    def _layout_rows(self) -> None:
        for i, row in enumerate(self.rows):
            row.join.layout.visibility = "hidden" if i == 0 else "visible"

    def conditions(self) -> list[Condition]:
        """The rows as conditions, in order."""
        return [r.condition() for r in self.rows]

    # -- preview and samples ----------------------------------------------------
    @property
    def expression(self) -> str:
        """The expression the conditions build (may not parse: see :attr:`error`)."""
        try:
            return build_expression(self.conditions())
        except ValueError as exc:
            return f"<incomplete: {exc}>"

    def conditions_problem(self) -> str | None:
        """What keeps the conditions from building an expression, naming the condition; or None."""
        for number, row in enumerate(self.rows, start=1):
            if row.problem is not None:
                return f"condition {number}: {row.problem}"
            try:
                render(row.condition())
            except ValueError as exc:
                return f"condition {number} ({row.field.value} {row.operator.value}): {exc}"
        return None

    @property
    def error(self) -> str | None:
        """Why the conditions do not make an expression, or the parser's message; None when fine."""
        problem = self.conditions_problem()
        if problem is not None:
            return problem
        try:
            compile_expression(self.expression)
        except ExpressionError as exc:
            return str(exc)
        return None

    def match_table(self) -> list[tuple[str, str, str, str]]:
        """``(method, path, ip, "match"/"no match")`` for each sample request."""
        expr = None if self.error else compile_expression(self.expression)
        rows = []
        for s in self.samples:
            verdict = "-" if expr is None else ("match" if expr.matches(s) else "no match")
            rows.append(
                (
                    s.get("http.request.method", ""),
                    s.get("http.request.uri.path", ""),
                    s.get("ip.src", ""),
                    verdict,
                )
            )
        return rows

    def refresh(self) -> None:
        """Redraw the preview (or the problem, or the parse error with its caret) and the matches."""
        error = self.error
        if error is None:
            shown, colour, label = parts.pre(self.expression), "#1b5e20", "expression"
        else:
            shown, colour, label = parts.pre(error), "#b71c1c", "expression (not valid yet)"
        self.preview.value = (
            f"<div style='color:{colour};overflow-x:auto'><b>{label}</b>{shown}</div>"
        )
        self.matches.value = parts.scroll_table(
            ["method", "path", "ip.src", "result"], self.match_table(), cls="wb-rb-samples"
        )

    # -- rule fields ------------------------------------------------------------
    def _action_changed(self) -> None:
        bypass = self.action.value == "bypass"
        self.products.disabled = not bypass
        if not bypass:
            self.products.value = ()

    def _priority_changed(self) -> None:
        try:
            whole_number("priority", self.priority.value)
        except ValueError as exc:
            self.priority_hint.value = f"<span style='{_BAD}'>{html.escape(str(exc))}</span>"
        else:
            self.priority_hint.value = ""

    def rule_fields(self) -> dict[str, Any]:
        """The rule part of the request body, from the action/priority/paused/description inputs.

        The priority is sent as an integer (negative ones too: the API says
        whether it takes them); a priority that is not a whole number raises a
        ValueError naming the field.
        """
        body: dict[str, Any] = {"action": self.action.value}
        if self.products.value:
            body["products"] = list(self.products.value)
        priority = whole_number("priority", self.priority.value)
        if priority is not None:
            body["priority"] = priority
        if self.paused.value:
            body["paused"] = True
        if self.description.value:
            body["description"] = self.description.value
        return body

    # -- the two creation sequences --------------------------------------------
    def create_two_calls(self) -> list[Exchange]:
        """POST the filter, then POST the rule that refers to it (the recommended way).

        When the filter already exists, the rule refers to that filter: this is
        how a partial one-call creation is finished. Returns the exchanges made.
        """
        result: list[Exchange] = self.run(lambda: self._create(self.client.create_filter_then_rule))
        return result

    def create_one_call(self) -> list[Exchange]:
        """POST one rule with its filter inline (the shortened call); returns the exchanges made."""
        result: list[Exchange] = self.run(lambda: self._create(self.client.create_in_one_call))
        return result

    def _create(
        self, sequence: Callable[[str, str, dict[str, Any]], CreationOutcome]
    ) -> list[Exchange]:
        # Inputs the panel can judge are checked here, so nothing half-typed is sent.
        try:
            problem = self.conditions_problem()
            if problem is not None:
                raise ValueError(problem)
            rule = self.rule_fields()
        except ValueError as exc:
            self.status.show("error", f"not sent: {exc}. Nothing was created.")
            return []
        try:
            outcome = sequence(self.zone_id, self.expression, rule)
        except httpx.TransportError as exc:
            self.status.show(
                "error",
                f"could not reach the API at {self.client.base_url} ({exc}); "
                "the zone's filters below show what exists",
            )
            self.refresh_filters()
            return []
        return self._show(outcome)

    def _show(self, outcome: CreationOutcome) -> list[Exchange]:
        self.last_outcome = outcome
        self.exchanges = outcome.exchanges
        kind = {"created": "success", "partial": "partial"}.get(outcome.kind, "refused")
        message = str((outcome.error or {}).get("message") or "")
        # The engine's full text (a parse error's caret lines) in monospace, when there is more;
        # then the line above it leaves the message out, so its first line is read once.
        detail = message if "\n" in message else ""
        self.status.show(kind, outcome.summary(message=not detail), detail)
        self.http_log.add(outcome.exchanges, heading=f"{outcome.how}: {outcome.kind}")
        self.refresh_filters()
        return outcome.exchanges

    def summary(self) -> str:
        """The status line's text: what the last button did and which objects now exist."""
        return self.status.text or "nothing sent yet"

    # -- zone view ----------------------------------------------------------------
    def _zone_changed(self, change: Any) -> None:
        self.zone_id = change["new"]
        self.refresh_filters()

    def filters_table(self) -> list[tuple[str, str, str]]:
        """``(filter id, expression, "rule-id:action, ...")`` for each filter of the zone."""
        fw = self.wb.firewall
        usage = fw.filter_usage(self.zone_id)
        out = []
        for filter_id, rule_ids in usage.items():
            rules = (
                ", ".join(f"{r}:{fw.get_rule(self.zone_id, r).action}" for r in rule_ids)
                or "(no rule)"
            )
            out.append((filter_id, fw.get_filter(self.zone_id, filter_id).expression, rules))
        return out

    def refresh_filters(self) -> None:
        """Redraw the zone's filters with the rules that share each one."""
        use = self.wb.firewall.usage(self.zone_id)
        self.filters_view.value = (
            f"<div style='{_HINT}'>{html.escape(str(use['plan']))} plan: "
            f"{use['active_rules']} of {use['quota']} active rules</div>"
            + parts.scroll_table(
                ["filter", "expression", "rules"], self.filters_table(), cls="wb-rb-filter-table"
            )
        )

    def to_json(self) -> str:
        """The last exchanges as JSON (for notebooks and tests)."""
        return json.dumps(
            [{"request": json.loads(e.request_json()), "status": e.status} for e in self.exchanges],
            indent=2,
        )
