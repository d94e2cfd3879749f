"""ExpressionChecker: type a Rules-language expression, see which sample requests it matches.

The panel (a :class:`~workbench.widgets.parts.Panel`) is a one-line text box with
a **Check** button, a status line, a plain-words hint, and the sample requests
as a table whose first, narrow column marks each match (✔) or miss (–). Wide
rows scroll sideways inside the panel, so the match column always shows.

Checking compiles the expression with
:func:`workbench.rules_language.compile_expression`. A parse error is shown
with the engine's exact text in a monospace block, so the caret sits under the
problem, and beneath it a hint in plain words
(:func:`workbench.rules_language.hints.hint_for`). An expression that names a
``$list`` the panel was not given is valid but matches nothing, silently on
the platform; here the status is a warning (kind ``partial``).

Press Enter or **Check** to check at once. In a live kernel, the panel also
re-checks on its own when typing pauses (``live_delay`` seconds after the
last keystroke); until then the status is marked stale, never showing an
outcome for text that is no longer in the box.

    >>> from workbench.widgets import ExpressionChecker
    >>> checker = ExpressionChecker(expression='http.request.uri.path contains "/admin"')
    >>> checker.status.kind, checker.message
    ('success', 'valid — matches 1 of 5 sample requests')
    >>> checker.text.value = 'cf.waf.score lt "50"'
    >>> checker.status.kind                     # not checked again yet
    'stale'
    >>> checker.button.click()
    >>> print(checker.message)
    Filter parsing error (1:17):
    cf.waf.score lt "50"
                    ^^^^ expected digit
    >>> print(checker.hint_text)
    `cf.waf.score` is an Integer field: compare it with a number, without quotes: `50`, not `"50"`.
    >>> checker.reset(); checker.text.value
    'http.request.uri.path contains "/admin"'
    >>> checker
    Expression checker panel: drives a Rules-language expression against sample requests. Run this cell to open the panel.

Callbacks only set widget values (never ``print``), so the panel behaves the
same in JupyterLab, Voila, nbval and plain pytest.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W

from ..rules_language import ExpressionError, compile_expression
from ..rules_language.hints import hint_for, undefined_lists
from .parts import Panel, scroll_table

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

MATCH, MISS = "✔", "–"
_PLACEHOLDER = 'http.request.uri.path contains "/admin"'
_NOT_CHECKED = "not checked yet: type an expression and press Enter (or Check)"
# The match column stays in view: first, narrow, and pinned when the table scrolls sideways.
_TABLE_STYLE = (
    "<style>"
    ".wb-checker-table td:first-child,.wb-checker-table th:first-child{position:sticky;left:0;"
    "z-index:1;text-align:center;width:3.5em;min-width:3.5em;background:#fff;font-weight:600;"
    # Collapsed borders do not travel with a sticky cell: draw its right edge as a shadow.
    "box-shadow:inset 1px 0 0 #d0d7de,inset -1px 0 0 #d0d7de,-4px 0 0 #fff,"
    "3px 0 4px -2px rgba(0,0,0,0.18)}"
    ".wb-checker-table th:first-child{background:#f6f8fa}"
    ".wb-checker-table tr.wb-match td{background:#e8f5e9}"
    ".wb-checker-table tr.wb-match td:first-child{color:#1b5e20}"
    ".wb-checker-hint code{font-family:var(--jp-code-font-family,monospace);"
    "background:#f3f5f7;padding:0 3px;border-radius:3px}"
    ".wb-checker-hint code.wb-short{white-space:nowrap}"
    "</style>"
)


def _cell(value: Any) -> str:
    """A table cell's text: booleans as the Rules language writes them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def _plain_words(text: str) -> str:
    """A hint as HTML: escaped, with `code` spans in the code font."""

    def code(m: re.Match[str]) -> str:
        # Short code keeps to one line; a long one may wrap rather than run off the panel.
        short = " class='wb-short'" if len(html.unescape(m.group(1))) <= 40 else ""
        return f"<code{short}>{m.group(1)}</code>"

    return re.sub(r"`([^`]+)`", code, html.escape(text))


class ExpressionChecker(Panel):
    """A panel that checks one expression against a few sample requests.

    Parameters
    ----------
    samples:
        Requests as dicts keyed by field name (``"http.host"``, ``"ip.src"``...).
        Defaults to :data:`DEFAULT_SAMPLES`.
    expression:
        Initial expression; when given, it is checked straight away, and
        :meth:`reset` comes back to it.
    lists:
        Named lists for ``$name`` references (name without ``$`` → items).
    live_delay:
        Seconds of pause in typing before the panel re-checks by itself, when
        an event loop runs (a kernel); ``None`` turns live checking off.

    Widgets: ``text`` (one line; Enter checks), ``button``, ``status`` (a
    :class:`~workbench.widgets.parts.StatusLine`), ``hint`` and ``table``.
    After a check, ``message`` holds the status as plain text (the engine's
    whole message for a parse error), ``hint_text`` the plain-words hint (or
    ``None``) and ``results`` the match per sample (``None`` when unchecked or
    invalid). ``widget`` is the panel itself, for older code.
    """

    title = "Expression checker"
    drives = "a Rules-language expression against sample requests"

    def __init__(
        self,
        samples: Sequence[Mapping[str, Any]] | None = None,
        expression: str = "",
        *,
        lists: Mapping[str, Sequence[str]] | None = None,
        live_delay: float | None = 0.4,
    ) -> None:
        self.samples: list[dict[str, Any]] = [
            dict(s) for s in (DEFAULT_SAMPLES if samples is None else samples)
        ]
        self.lists: dict[str, Sequence[str]] = dict(lists) if lists else {}
        self.live_delay = live_delay
        self.initial = expression
        self.columns: list[str] = []
        for sample in self.samples:
            self.columns += [k for k in sample if k not in self.columns]
        self.message = _NOT_CHECKED
        self.hint_text: str | None = None
        self.results: list[bool] | None = None
        self._pending: asyncio.TimerHandle | None = None
        self._quiet = False
        self._stale = False

        self.text = W.Text(
            value=expression,
            placeholder=_PLACEHOLDER,
            description="Expression",
            continuous_update=True,  # every keystroke reaches the kernel: stale + live check
            layout=W.Layout(flex="1 1 auto", width="auto"),
        )
        self.text.add_class("wb-checker-text")
        self.button = W.Button(
            description="Check",
            button_style="primary",
            icon="check",
            tooltip="Check the expression (or press Enter in the box)",
            layout=W.Layout(width="110px", flex="0 0 auto"),
        )
        self.button.add_class("wb-checker-button")
        self.hint = W.HTML()
        self.hint.add_class("wb-checker-hint")
        self.table = W.HTML()
        self.table.add_class("wb-checker-table")
        row = W.HBox([self.text, self.button], layout=W.Layout(width="100%"))
        status_slot = W.VBox()  # Panel makes the status line: it goes here, above the hint
        super().__init__([row, status_slot, self.hint, self.table])
        status_slot.children = (self.status,)
        self.status.add_class("wb-checker-status")
        self.add_class("wb-expression-checker")

        self.button.on_click(lambda _: self.run(self.check))
        # Enter: the text box sends a "submit" message whatever continuous_update is
        # (ipywidgets 8 deprecates on_submit, so the message is handled here).
        self.text.on_msg(self._on_text_msg)
        self.text.observe(self._on_text_change, "value")

        if expression.strip():
            self.check()
        else:
            self._show_unchecked()

    # -- the public face --------------------------------------------------------
    @property
    def widget(self) -> ExpressionChecker:
        """The panel itself (it is the ``VBox``); kept for code written before panels."""
        return self

    def check(self) -> list[bool] | None:
        """Compile the text box's expression and match it against every sample.

        Returns one boolean per sample, or ``None`` when the expression does not
        compile (or a sample cannot be evaluated); ``message`` says why and
        ``hint_text`` what to change.
        """
        self._cancel_live()
        source = self.text.value
        self.results, self.hint_text, self._stale = None, None, False
        if not source.strip():
            self.message = f"enter an expression, for example: {_PLACEHOLDER}"
            self.status.show("info", self.message)
            self._render()
            return None
        try:
            expr = compile_expression(source)
        except ExpressionError as err:
            self.message = str(err).rstrip("\n")
            try:
                self.hint_text = hint_for(source, err)
            except Exception:  # a hint is an extra: never let it hide the engine's message
                self.hint_text = None
            self.status.show("error", "not valid: the engine says", detail=self.message)
            self._render()
            return None
        results: list[bool] = []
        for number, sample in enumerate(self.samples, start=1):
            try:
                results.append(bool(expr.matches(sample, lists=self.lists)))
            except Exception as err:  # shown in the panel: a callback must not raise
                self.message = f"valid, but sample request {number} could not be evaluated: {err}"
                self.status.show("error", self.message)
                self._render()
                return None
        self.results = results
        n = len(results)
        counted = f"matches {sum(results)} of {n} sample request{'' if n == 1 else 's'}"
        missing = undefined_lists(expr, self.lists)
        if missing:
            names = ", ".join(f"${name}" for name in missing)
            self.message = (
                f"valid — {counted}, but {names} "
                f"{'is not defined here and matches' if len(missing) == 1 else 'are not defined here and match'}"
                " nothing"
            )
            defined = ", ".join(f"${name}" for name in sorted(self.lists)) or "none"
            uses = "`, `".join(f"in ${name}" for name in missing)
            self.hint_text = (
                f"An undefined list is not an error: `{uses}` is false for every request, "
                f"on the platform too. Check the name (lists defined here: {defined}), or give "
                f'the panel the list: `lists={{"{missing[0]}": [...]}}`.'
            )
            self.status.show("partial", self.message)
        else:
            self.message = f"valid — {counted}"
            self.status.show("success", self.message)
        self._render()
        return results

    def reset(self) -> None:
        """Back to how the panel started: the initial expression, checked (or nothing)."""
        self._cancel_live()
        self._quiet = True
        try:
            self.text.value = self.initial
        finally:
            self._quiet = False
        if self.initial.strip():
            self.check()
        else:
            self._show_unchecked()

    def as_text(self) -> str:
        """What the panel shows, as plain text: status, hint, and one line per sample."""
        lines = [self.message if self.status.kind != "stale" else f"(stale) {self.message}"]
        if self.hint_text:
            lines.append(f"hint: {self.hint_text}")
        for i, sample in enumerate(self.samples):
            mark = " " if self.results is None else (MATCH if self.results[i] else MISS)
            shown = " ".join(_cell(sample.get(c)) for c in self.columns[:3])
            lines.append(f"{mark} {i + 1} {shown}")
        return "\n".join(lines)

    def table_html(self) -> str:
        """The sample requests as an HTML table; the first column marks the matches."""
        rows = []
        for i, sample in enumerate(self.samples):
            mark = "" if self.results is None else (MATCH if self.results[i] else MISS)
            rows.append([mark, i + 1, *(_cell(sample.get(c)) for c in self.columns)])
        table = scroll_table(["match", "#", *self.columns], rows)
        table = table.replace(f"<tr><td>{MATCH}</td>", f"<tr class='wb-match'><td>{MATCH}</td>")
        if self._stale:
            legend = "marks from the last check (the expression has changed since)"
        elif self.results is not None:
            legend = f"{MATCH} matches, {MISS} does not"
        elif self.status.kind == "error":
            legend = "no marks: the expression is not valid"
        else:
            legend = "no marks: not checked yet"
        faded = "opacity:0.55;" if self._stale else ""
        return (
            f"{_TABLE_STYLE}<div style='{faded}'>"
            f"<div style='color:#5f6368;font-size:12px;margin:2px 0'>"
            f"{len(self.samples)} sample requests: {html.escape(legend)}</div>{table}</div>"
        )

    # -- events -------------------------------------------------------------------
    def _on_text_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "submit":
            self.run(self.check)

    def _on_text_change(self, _change: Any) -> None:
        if self._quiet:
            return
        if self.status.kind not in ("info", "empty"):  # "not checked yet" stays true
            self.status.mark_stale()
            self._stale = True
            self._render()
        self._schedule_live()

    def _schedule_live(self) -> None:
        """Check again once typing pauses, if an event loop runs (in a kernel, it does)."""
        self._cancel_live()
        if self.live_delay is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # plain Python: Enter or Check does it
            return
        self._pending = loop.call_later(self.live_delay, self._live_check)

    def _live_check(self) -> None:
        self._pending = None
        self.check()

    def _cancel_live(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    # -- drawing ------------------------------------------------------------------
    def _show_unchecked(self) -> None:
        self.message, self.hint_text, self.results, self._stale = _NOT_CHECKED, None, None, False
        self.status.show("info", self.message)
        self._render()

    def _render(self) -> None:
        if self.hint_text:
            fade = "opacity:0.55;" if self._stale else ""
            self.hint.value = (
                f"<div class='wb-hint' style='{fade}font-size:13px;padding:2px 8px;"
                f"line-height:1.45'><b>Hint:</b> {_plain_words(self.hint_text)}</div>"
            )
        else:
            self.hint.value = ""
        self.table.value = self.table_html()
