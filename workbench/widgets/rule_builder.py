"""The rule builder panel: compose a filter, test it, create a rule both ways.

Conditions (field, operator, value, joined by and/or) build the expression;
the preview shows it, or the parser's message with its caret. Sample requests
show which ones it matches. The two buttons create through the v4 API, with
the panels' :class:`~workbench.api.client.ApiClient` (in process by default, so
no server is needed): "Create filter, then rule" (the recommended two calls)
and "Create in one call" (the shortened call with an inline filter). Each
shows the request as JSON and as curl, and the envelope that came back.

    >>> from workbench import Workbench
    >>> from workbench.widgets import RuleBuilder
    >>> wb = Workbench(seed=0); zone = wb.create_zone("example.com")
    >>> panel = RuleBuilder(wb, zone.id)          # display(panel) in a notebook
    >>> panel.set_condition(0, "http.request.uri.path", "contains", "/admin")
    >>> panel.expression
    'http.request.uri.path contains "/admin"'
    >>> panel.create_button.click()               # doctest: +SKIP
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from ..api.client import ApiClient, CreationOutcome, Exchange
from ..firewall.builder import Condition, build_expression, operators_for, pickable_fields
from ..firewall.models import ACTION_PRECEDENCE, BYPASS_PRODUCTS
from ..rules_language import ExpressionError, compile_expression

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


def _pre(text: str) -> str:
    # Monospace and kept spaces, so a parse error's caret sits under the culprit.
    style = "margin:2px 0;font-family:monospace;white-space:pre;line-height:1.25"
    return f"<pre style='{style}'>{html.escape(text)}</pre>"


class _Row(W.HBox):
    """One condition: join, field, operator, value, remove."""

    def __init__(self, panel: RuleBuilder, field_options: list[tuple[str, str]]) -> None:
        self.join = W.Dropdown(options=["and", "or"], value="and", layout=W.Layout(width="70px"))
        self.field = W.Dropdown(
            options=field_options, value="http.request.uri.path", layout=W.Layout(width="380px")
        )
        self.operator = W.Dropdown(
            options=operators_for(self.field.value), layout=W.Layout(width="140px")
        )
        self.value = W.Text(placeholder="value", layout=W.Layout(width="220px"))
        self.value.add_class("wb-rb-value")
        self.remove = W.Button(description="remove", layout=W.Layout(width="80px"))
        super().__init__([self.join, self.field, self.operator, self.value, self.remove])
        self.field.observe(self._field_changed, "value")
        for widget in (self.join, self.operator, self.value):
            widget.observe(lambda _: panel.refresh(), "value")
        self.remove.on_click(lambda _: panel.remove_condition(panel.rows.index(self)))
        self._panel = panel

    def _field_changed(self, _: Any) -> None:
        ops = operators_for(self.field.value)
        keep = self.operator.value if self.operator.value in ops else ops[0]
        self.operator.options = ops
        self.operator.value = keep
        self.value.disabled = ops[0].startswith("is ")
        self._panel.refresh()

    def condition(self) -> Condition:
        return Condition(self.field.value, self.operator.value, self.value.value, self.join.value)


class RuleBuilder(W.VBox):
    """A panel that builds a filter and a firewall rule for one zone of ``wb``."""

    def __init__(
        self,
        wb: Workbench,
        zone: str | None = None,
        samples: list[dict] | None = None,
        client: ApiClient | None = None,
    ) -> None:
        self.wb = wb
        self.zone_id = wb.zone(zone).id if zone else wb.zones[0].id
        self.samples = list(SAMPLES if samples is None else samples)
        self.exchanges: list[Exchange] = []
        self.last_outcome: CreationOutcome | None = None
        self.client = client if client is not None else ApiClient(wb)
        self._fields = [
            (f"{group} › {name} ({kind})", name)
            for group, items in pickable_fields().items()
            for name, kind in items
        ]
        self.zone_picker = W.Dropdown(
            description="zone",
            options=[(f"{z.name} ({z.plan})", z.id) for z in wb.zones],
            value=self.zone_id,
        )
        self.zone_picker.observe(self._zone_changed, "value")
        self.rows: list[_Row] = []
        self.rows_box = W.VBox()
        self.add_button = W.Button(description="add condition")
        self.add_button.on_click(lambda _: self.add_condition())
        self.preview = W.HTML()
        self.matches = W.HTML()
        self.action = W.Dropdown(
            description="action", options=list(ACTION_PRECEDENCE), value="block"
        )
        self.products = W.SelectMultiple(
            description="products", options=BYPASS_PRODUCTS, disabled=True, rows=4
        )
        self.action.observe(lambda _: self._action_changed(), "value")
        self.priority = W.Text(description="priority", placeholder="none")
        self.paused = W.Checkbox(description="paused", value=False)
        self.description = W.Text(description="description")
        self.create_button = W.Button(
            description="Create filter, then rule", button_style="primary"
        )
        self.one_call_button = W.Button(description="Create in one call", button_style="warning")
        self.create_button.on_click(lambda _: self.create_two_calls())
        self.one_call_button.on_click(lambda _: self.create_one_call())
        self.outcome = W.HTML()
        self.http_log = W.HTML()
        self.filters_view = W.HTML()
        super().__init__(
            [
                self.zone_picker,
                W.HTML("<b>Filter</b>: conditions"),
                self.rows_box,
                self.add_button,
                self.preview,
                self.matches,
                W.HTML("<b>Rule</b>"),
                W.HBox([self.action, self.products]),
                W.HBox([self.priority, self.paused]),
                self.description,
                W.HBox([self.create_button, self.one_call_button]),
                self.outcome,
                self.http_log,
                W.HTML("<b>Filters of the zone and the rules sharing them</b>"),
                self.filters_view,
            ]
        )
        for widget, name in [
            (self.create_button, "create"), (self.one_call_button, "one-call"),
            (self.add_button, "add"), (self.preview, "preview"), (self.matches, "matches"),
            (self.outcome, "outcome"), (self.http_log, "http"), (self.filters_view, "filters"),
        ]:  # fmt: skip
            widget.add_class(f"wb-rb-{name}")  # stable hooks for browser tests and CSS
        self.add_condition()
        self.refresh_filters()

    def __repr__(self) -> str:
        # Plain and stable for notebook outputs (no trait dump).
        return f"RuleBuilder(zone={self.zone_id}, conditions={len(self.rows)})"

    # -- conditions -------------------------------------------------------------
    def add_condition(
        self,
        field: str | None = None,
        operator: str | None = None,
        value: str = "",
        join: str = "and",
    ) -> None:
        """Add a condition row (the same as the "add condition" button)."""
        row = _Row(self, self._fields)
        self.rows.append(row)
        self.rows_box.children = [*self.rows_box.children, row]
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
        self.refresh()

    def _layout_rows(self) -> None:
        for i, row in enumerate(self.rows):
            row.join.layout.visibility = "hidden" if i == 0 else "visible"

    # -- preview and samples ----------------------------------------------------
    @property
    def expression(self) -> str:
        """The expression the conditions build (may not parse: see :attr:`error`)."""
        try:
            return build_expression([r.condition() for r in self.rows])
        except ValueError as exc:
            return f"<incomplete: {exc}>"

    @property
    def error(self) -> str | None:
        """The parser's message for the current expression, or None when it parses."""
        try:
            build_expression([r.condition() for r in self.rows])
            compile_expression(self.expression)
        except (ExpressionError, ValueError) as exc:
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
        """Redraw the preview (or the parse error with its caret) and the match table."""
        error = self.error
        shown = _pre(self.expression) if error is None else _pre(error)
        colour = "#1b5e20" if error is None else "#b71c1c"
        self.preview.value = f"<div style='color:{colour}'><b>expression</b>{shown}</div>"
        cells = "".join(
            f"<tr><td>{html.escape(m)}</td><td>{html.escape(p)}</td><td>{html.escape(i)}</td><td><b>{v}</b></td></tr>"
            for m, p, i, v in self.match_table()
        )
        self.matches.value = (
            "<table><tr><th>method</th><th>path</th><th>ip.src</th><th>result</th></tr>"
            + cells
            + "</table>"
        )

    # -- rule fields ------------------------------------------------------------
    def _action_changed(self) -> None:
        bypass = self.action.value == "bypass"
        self.products.disabled = not bypass
        if not bypass:
            self.products.value = ()

    def rule_fields(self) -> dict[str, Any]:
        """The rule part of the request body, from the action/priority/paused/description inputs."""
        body: dict[str, Any] = {"action": self.action.value}
        if self.products.value:
            body["products"] = list(self.products.value)
        text = self.priority.value.strip()
        if text:
            body["priority"] = int(text) if text.isdigit() else text  # the API explains a bad one
        if self.paused.value:
            body["paused"] = True
        if self.description.value:
            body["description"] = self.description.value
        return body

    # -- the two creation sequences --------------------------------------------
    def create_two_calls(self) -> list[Exchange]:
        """POST the filter, then POST the rule that refers to it (the recommended way).

        When the filter already exists, the rule refers to that filter: this is
        how a partial one-call creation is finished.
        """
        return self._show(
            self.client.create_filter_then_rule(self.zone_id, self.expression, self.rule_fields())
        )

    def create_one_call(self) -> list[Exchange]:
        """POST one rule with its filter inline (the shortened call)."""
        return self._show(
            self.client.create_in_one_call(self.zone_id, self.expression, self.rule_fields())
        )

    def _show(self, outcome: CreationOutcome) -> list[Exchange]:
        self.last_outcome = outcome
        self.exchanges = outcome.exchanges
        self.outcome.value = "<b>" + html.escape(self.summary()) + "</b>"
        parts = []
        for ex in outcome.exchanges:
            parts.append(
                f"<div><b>{ex.method} {html.escape(ex.path)} → {ex.status}</b>"
                f"<div>request</div>{_pre(ex.request_json())}<div>curl</div>{_pre(ex.curl())}"
                f"<div>response</div>{_pre(ex.response_json())}</div>"
            )
        self.http_log.value = f"<div><i>{outcome.how}</i>{''.join(parts)}</div>"
        self.refresh_filters()
        return outcome.exchanges

    def summary(self) -> str:
        """One line on what the last button did and which objects now exist."""
        if self.last_outcome is None:
            return "nothing sent yet"
        return self.last_outcome.summary()

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
        rows = "".join(
            f"<tr><td><code>{f}</code></td><td><code>{html.escape(e)}</code></td><td>{html.escape(r)}</td></tr>"
            for f, e, r in self.filters_table()
        )
        self.filters_view.value = (
            f"<div>{use['plan']} plan: {use['active_rules']} of {use['quota']} active rules</div>"
            "<table><tr><th>filter</th><th>expression</th><th>rules</th></tr>" + rows + "</table>"
        )

    def to_json(self) -> str:
        """The last exchanges as JSON (for notebooks and tests)."""
        return json.dumps(
            [{"request": json.loads(e.request_json()), "status": e.status} for e in self.exchanges],
            indent=2,
        )
