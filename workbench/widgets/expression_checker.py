"""ExpressionChecker: type a Rules-language expression, check it, see which requests match.

The panel is a text box, a **Check** button, a status line and a table of sample
requests with a *match* column. Checking compiles the expression with
:func:`workbench.rules_language.compile_expression`; a parse error is shown as the
engine prints it, in a ``<pre>`` so the caret sits under the problem.

    >>> from workbench.widgets import ExpressionChecker            # doctest: +SKIP
    >>> checker = ExpressionChecker(expression='http.request.uri.path contains "/admin"')  # doctest: +SKIP
    >>> checker.message                                             # doctest: +SKIP
    'valid — matches 1 of 5 sample requests'
    >>> checker.text.value = 'http.host eq a'                       # doctest: +SKIP
    >>> checker.button.click()                                      # doctest: +SKIP
    >>> print(checker.message)                                      # doctest: +SKIP
    Filter parsing error (1:14):
    http.host eq a
                 ^ unknown identifier

In a notebook, put ``checker`` last in a cell to show the panel. The callbacks
only set widget values (never ``print``), so the panel behaves the same in
JupyterLab, Voila, nbval and plain pytest.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from workbench.rules_language import ExpressionError, compile_expression

__all__ = ["DEFAULT_SAMPLES", "ExpressionChecker"]

#: Sample requests, keyed by Rules-language field names. Fixed data: outputs stay stable.
DEFAULT_SAMPLES: tuple[dict[str, Any], ...] = (
    {
        "http.request.method": "GET",
        "http.host": "example.com",
        "http.request.uri.path": "/",
        "ip.src": "203.0.113.10",
        "ip.src.country": "US",
        "cf.waf.score": 92,
        "ssl": True,
        "http.user_agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
    },
    {
        "http.request.method": "GET",
        "http.host": "example.com",
        "http.request.uri.path": "/admin/login",
        "ip.src": "198.51.100.7",
        "ip.src.country": "DE",
        "cf.waf.score": 41,
        "ssl": True,
        "http.user_agent": "curl/8.5.0",
    },
    {
        "http.request.method": "POST",
        "http.host": "api.example.com",
        "http.request.uri.path": "/api/v1/orders",
        "ip.src": "192.0.2.44",
        "ip.src.country": "FR",
        "cf.waf.score": 77,
        "ssl": True,
        "http.user_agent": "python-requests/2.32.3",
    },
    {
        "http.request.method": "GET",
        "http.host": "example.com",
        "http.request.uri.path": "/wp-login.php",
        "ip.src": "192.0.2.200",
        "ip.src.country": "CN",
        "cf.waf.score": 8,
        "ssl": False,
        "http.user_agent": "sqlmap/1.8",
    },
    {
        "http.request.method": "GET",
        "http.host": "www.example.com",
        "http.request.uri.path": "/static/app.js",
        "ip.src": "203.0.113.99",
        "ip.src.country": "GB",
        "cf.waf.score": 99,
        "ssl": True,
        "http.user_agent": "Mozilla/5.0 (Macintosh) Safari/605.1.15",
    },
)

_PLACEHOLDER = 'http.request.uri.path contains "/admin"'
_NOT_CHECKED = "not checked yet: type an expression and press Check"
# Inline, so the widget's own font and line height cannot win: the caret must line up.
_PRE_STYLE = (
    ' style="font-family: var(--jp-code-font-family, monospace); font-size: 13px;'
    ' line-height: 1.35; white-space: pre; margin: 4px 0"'
)


def _cell(value: Any) -> str:
    """A table cell's text: booleans as the Rules language writes them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


class ExpressionChecker:
    """A panel that checks one expression against a few sample requests.

    Parameters
    ----------
    samples:
        Requests as dicts keyed by field name (``"http.host"``, ``"ip.src"``...).
        Defaults to :data:`DEFAULT_SAMPLES`.
    expression:
        Initial expression; when given, it is checked straight away.
    lists:
        Named lists for ``$name`` references, passed to ``expr.matches``.

    Attributes ``text``, ``button``, ``status`` and ``table`` are the widgets,
    ``widget`` the ``VBox`` holding them. After a check, ``message`` holds the
    status as plain text and ``results`` the match per sample (``None`` on error).
    """

    def __init__(
        self,
        samples: Sequence[Mapping[str, Any]] | None = None,
        expression: str = "",
        *,
        lists: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.samples: list[dict[str, Any]] = [
            dict(s) for s in (DEFAULT_SAMPLES if samples is None else samples)
        ]
        self.lists = dict(lists) if lists else None
        self.columns: list[str] = []
        for sample in self.samples:
            self.columns += [k for k in sample if k not in self.columns]
        self.message = _NOT_CHECKED
        self.results: list[bool] | None = None

        self.text = widgets.Textarea(
            value=expression,
            placeholder=_PLACEHOLDER,
            description="Expression",
            rows=2,
            layout=widgets.Layout(width="100%"),
        )
        self.text.add_class("wb-checker-text")
        self.button = widgets.Button(description="Check", button_style="primary", icon="check")
        self.button.add_class("wb-checker-button")
        self.status = widgets.HTML()
        self.status.add_class("wb-checker-status")
        self.table = widgets.HTML()
        self.table.add_class("wb-checker-table")
        self.widget = widgets.VBox([self.text, self.button, self.status, self.table])
        self.widget.add_class("wb-expression-checker")
        self.button.on_click(self._on_click)

        if expression.strip():
            self.check()
        else:
            self.render()

    # -- logic ------------------------------------------------------------
    def check(self) -> list[bool] | None:
        """Compile the text box's expression and match it against every sample.

        Returns one boolean per sample, or ``None`` when the expression does not
        compile (or a sample cannot be evaluated); ``message`` says why.
        """
        source = self.text.value
        self.results = None
        if not source.strip():
            self.message = f"enter an expression, for example: {_PLACEHOLDER}"
            self.render()
            return None
        try:
            expr = compile_expression(source)
        except ExpressionError as err:
            self.message = str(err).rstrip("\n")
            self.render()
            return None
        results: list[bool] = []
        for number, sample in enumerate(self.samples, start=1):
            try:
                if self.lists is None:
                    results.append(bool(expr.matches(sample)))
                else:
                    results.append(bool(expr.matches(sample, lists=self.lists)))
            except Exception as err:  # shown in the panel: a callback must not raise
                self.message = f"valid, but sample request {number} could not be evaluated: {err}"
                self.render()
                return None
        self.results = results
        self.message = (
            f"valid — matches {sum(results)} of {len(results)} sample "
            f"request{'' if len(results) == 1 else 's'}"
        )
        self.render()
        return results

    def _on_click(self, _button: widgets.Button) -> None:
        self.check()

    # -- rendering --------------------------------------------------------
    def render(self) -> None:
        """Write ``message`` and ``results`` into the status and table widgets."""
        self.status.value = f'<pre class="wb-status"{_PRE_STYLE}>{html.escape(self.message)}</pre>'
        self.table.value = self.table_html()

    def table_html(self) -> str:
        """The sample requests as an HTML table, with a *match* column."""
        head = "".join(f"<th>{html.escape(c)}</th>" for c in ["#", *self.columns, "match"])
        rows = []
        for i, sample in enumerate(self.samples):
            if self.results is None:
                match = "–"
            else:
                match = "yes" if self.results[i] else "no"
            cells = [str(i + 1), *(_cell(sample.get(c)) for c in self.columns), match]
            tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells)
            cls = ' class="wb-match"' if self.results is not None and self.results[i] else ""
            rows.append(f"<tr{cls}>{tds}</tr>")
        style = (
            "<style>.wb-checker-table table{border-collapse:collapse;font-size:90%}"
            ".wb-checker-table th,.wb-checker-table td{border:1px solid #ccc;padding:2px 6px;"
            "text-align:left;line-height:1.4;white-space:nowrap}"
            ".wb-checker-table tr.wb-match{background:#e6f4ea}</style>"
        )
        table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        return f'{style}<div style="overflow-x:auto">{table}</div>'

    # -- display ----------------------------------------------------------
    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def __repr__(self) -> str:
        return f"ExpressionChecker(expression={self.text.value!r}, samples={len(self.samples)})"
