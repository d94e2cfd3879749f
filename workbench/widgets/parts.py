"""The parts every panel is made of, so all panels look and behave alike (see docs/panels.md).

A panel subclasses :class:`Panel`: a title line that says what it drives, its
own body, and helpers for the conventions: a :class:`StatusLine` whose outcome
is coloured by kind and goes stale when its inputs change, a busy state that
disables the panel's buttons while a call runs, Enter to submit, an
:class:`HttpLog` of the API exchanges (newest first, collapsible, with curl
lines), tables that scroll inside the panel, charts drawn as SVG, and a
readable ``text/plain`` form for notebooks that have not run the cell.

    >>> import ipywidgets as W
    >>> class Hello(Panel):
    ...     title = "Hello"
    ...     drives = "nothing at all"
    ...     def __init__(self):
    ...         self.name = W.Text()
    ...         self.go = W.Button(description="Greet")
    ...         super().__init__([self.name, self.go, self.status])
    ...         self.go.on_click(lambda _: self.run(self.greet))
    ...         self.watch_inputs(self.name)
    ...     def greet(self):
    ...         self.status.show("success", f"hello {self.name.value}")
    >>> panel = Hello()
    >>> panel.name.value = "you"; panel.go.click()
    >>> panel.status.kind, panel.status.text
    ('success', 'hello you')
    >>> panel.name.value = "me"; panel.status.kind
    'stale'
    >>> print(repr(panel))
    Hello panel: drives nothing at all. Run this cell to open the panel.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import ipywidgets as W
import traitlets

from ..core.text import plural as plural  # the panels say parts.plural

if TYPE_CHECKING:
    from ..api.client import Exchange

# Outcome kinds and their colours (text, background); one place for every panel.
KINDS: dict[str, tuple[str, str]] = {
    "success": ("#1b5e20", "#e8f5e9"),
    "partial": ("#8a4b00", "#fff4e0"),
    "refused": ("#b71c1c", "#fdecea"),
    "error": ("#b71c1c", "#fdecea"),
    "info": ("#263238", "#f3f5f7"),
    "stale": ("#5f6368", "#f1f3f4"),
    "empty": ("#5f6368", "transparent"),
}

MONO = "font-family:var(--jp-code-font-family, monospace);font-size:12.5px;line-height:1.35"

#: What a disabled widget says while the panel runs an action (the busy state).
BUSY = "busy: wait until the current action finishes"

# Panel-wide CSS: HTML widgets may shrink (so wide tables scroll inside them instead
# of widening the panel), and status lines keep a normal line height when they wrap.
# A disabled button is greyed out with a dashed border and a not-allowed cursor (by
# default it differs only by opacity, and a coloured one still looks clickable); its
# tooltip says why. Tabs (:class:`Tabs`) look like tabs.
_PANEL_CSS = (
    "<style>.wb-panel .widget-html-content{min-width:0;max-width:100%}"
    ".wb-panel .wb-status .widget-html-content{line-height:1.4}"
    ".wb-panel button.jupyter-button:disabled{background:#eceff1 !important;"
    "color:#80868b !important;border:1px dashed #9aa0a6 !important;box-shadow:none !important;"
    "opacity:1 !important;cursor:not-allowed !important}"
    ".wb-panel .wb-tabs-bar{margin:4px 0 0 0}"
    ".wb-panel .wb-tabs-bar .widget-toggle-button{width:auto;min-width:72px;padding:0 14px;"
    "margin:0 2px 0 0;border:1px solid #d0d7de;border-bottom:none;border-radius:6px 6px 0 0;"
    "background:#f1f3f4;color:#3c4043;box-shadow:none}"
    ".wb-panel .wb-tabs-bar .widget-toggle-button.mod-active{background:#fff;color:#1a73e8;"
    "font-weight:600;box-shadow:inset 0 2px 0 #1a73e8}"
    ".wb-panel .wb-tabs-pages{border-top:1px solid #d0d7de;padding-top:6px}</style>"
)

#: Where the curl lines' variables come from, shown once above every HTTP log.
CURL_NOTE = (
    "curl lines use $CF_BASE, $CF_EMAIL and $CF_KEY: `python -m workbench serve` "
    "prints the three export lines to paste into a shell before replaying a call."
)


def hooks(prefix: str) -> Callable[[Any, str], Any]:
    """The panel's ``classed(widget, name)``: adds the class ``<prefix>-<name>`` to ``widget``
    (a stable hook for browser tests and CSS) and returns the widget."""

    def classed(widget: Any, name: str) -> Any:
        widget.add_class(f"{prefix}-{name}")
        return widget

    return classed


def pre(text: str, extra_style: str = "") -> str:
    """Text in a ``<pre>`` that keeps spaces, so a parse error's caret sits under the culprit."""
    style = f"margin:2px 0;white-space:pre;{MONO};{extra_style}"
    return f"<pre style='{style}'>{html.escape(text)}</pre>"


def scroll_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    cls: str = "",
    wrap: Sequence[str] | Mapping[str, int] = (),
    wrap_width: int = 240,
) -> str:
    """An HTML table that scrolls sideways inside its panel instead of being cut off.

    Cells stay on one line, except in the ``wrap`` columns (named; they need
    ``cls``), which wrap at ``wrap_width`` pixels (or, when ``wrap`` maps names to
    widths, at each column's own), anywhere in a long word, so long text (paths,
    queries, descriptions) does not push the other columns out of view; a wrapped
    column is at least half its width wide. Put the columns that answer the
    panel's question first.
    """
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>" for row in rows
    )
    style = (
        "<style>.wb-scroll table{border-collapse:collapse;font-size:12.5px}"
        ".wb-scroll th,.wb-scroll td{border:1px solid #d0d7de;padding:2px 6px;text-align:left;"
        "white-space:nowrap}.wb-scroll th{background:#f6f8fa}</style>"
    )
    widths = wrap if isinstance(wrap, Mapping) else dict.fromkeys(wrap, wrap_width)
    wrapped = {i: widths[c] for i, c in enumerate(columns, start=1) if c in widths}
    if wrapped:
        if not cls:
            raise ValueError("wrapping columns needs the table's cls")
        first = cls.split()[0]
        for width in sorted(set(wrapped.values())):
            cells = ",".join(
                f".{first} td:nth-child({i})" for i, w in wrapped.items() if w == width
            )
            style += (
                f"<style>{cells}{{white-space:normal;overflow-wrap:anywhere;"
                f"min-width:{width // 2}px;max-width:{width}px}}</style>"
            )
    return (
        f"{style}<div class='wb-scroll {cls}' style='overflow-x:auto;max-width:100%'>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def chart_svg(chart: Any) -> str:
    """An Altair chart as inline SVG, for a panel's HTML widget.

    Panels draw charts as SVG (rendered here by vl-convert, with no browser and
    no network) so they look the same in JupyterLab, Voila and a saved
    notebook; notebooks show Altair charts directly as Vega-Lite JSON.
    """
    import vl_convert as vlc

    svg: str = vlc.vegalite_to_svg(chart.to_json())
    return f"<div class='wb-chart' style='max-width:100%;overflow-x:auto'>{svg}</div>"


class StatusLine(W.HTML):
    """One outcome line: coloured by kind, and marked stale when its inputs change."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.kind = "empty"
        self.text = ""
        self.detail = ""
        self._said = ("", "")
        self.add_class("wb-status")
        if text:
            self.show("info", text)

    def show(self, kind: str, text: str, detail: str = "", note: str = "") -> None:
        """Show ``text`` as a ``kind`` outcome (see :data:`KINDS`); ``detail`` below it, monospace.

        ``text`` is bold; a ``note`` follows it in plain weight (the numbers after a short
        headline), and :attr:`text` reads ``"text: note"``.
        """
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        self.kind, self.detail, self._said = kind, detail, (text, note)
        self.text = f"{text}: {note}" if note else text
        fg, bg = KINDS[kind]
        extra = pre(detail) if detail else ""
        after = f": <span class='wb-status-note'>{html.escape(note)}</span>" if note else ""
        stale = " (inputs changed since: run again)" if kind == "stale" else ""
        self.value = (
            f"<div class='wb-status-{kind}' style='color:{fg};background:{bg};padding:4px 8px;"
            f"border-radius:4px'><b>{html.escape(text)}</b>{after}{html.escape(stale)}{extra}"
            "</div>"
            if text
            else ""
        )

    def mark_stale(self) -> None:
        """Grey the outcome out: it no longer describes the inputs."""
        if self.kind not in ("empty", "stale"):
            text, note = self._said
            self.show("stale", text, self.detail, note)

    def clear(self) -> None:
        """Show nothing."""
        self.kind, self.text, self.detail, self._said = "empty", "", "", ("", "")
        self.value = ""


class Tabs(W.VBox):
    """Tabs that keep working after a browser reload: a row of toggle buttons over a Stack.

    ``ipywidgets.Tab`` draws a Lumino TabBar, which listens for clicks only once
    Lumino has attached it; after a page reload a restored Tab sometimes misses
    that, and its tabs ignore every click while buttons still work (they listen
    on their own element). ToggleButtons listen like buttons, so these tabs
    switch after a reload too. Panels use them as they used ``Tab``:
    ``selected_index`` (observable), ``set_title``/``get_title``; the pages are
    :attr:`pages` (``children`` is the bar and the stack). The bar and the stack
    are linked in the browser too, so a tab switches while the kernel is busy.

        >>> tabs = Tabs([W.HTML("one"), W.HTML("two")], ["One", "Two"])
        >>> tabs.bar.value = 1          # a click on "Two"
        >>> tabs.selected_index, tabs.stack.selected_index, tabs.get_title(1)
        (1, 1, 'Two')
        >>> tabs.selected_index = 0     # the panel picks a tab
        >>> tabs.bar.value, tabs.stack.selected_index
        (0, 0)
    """

    selected_index = traitlets.Int(0)

    def __init__(self, pages: Sequence[W.Widget], titles: Sequence[str]) -> None:
        if len(pages) != len(titles):
            raise ValueError(f"{len(pages)} pages but {len(titles)} titles")
        self.pages = tuple(pages)
        self.bar = W.ToggleButtons(options=self._options(titles), value=0)
        self.bar.add_class("wb-tabs-bar")
        self.stack = W.Stack(children=self.pages, selected_index=0)
        self.stack.add_class("wb-tabs-pages")
        super().__init__([self.bar, self.stack])
        self.add_class("wb-tabs")
        self._link = W.jslink((self.bar, "index"), (self.stack, "selected_index"))
        self.bar.observe(self._clicked, "value")

    @staticmethod
    def _options(titles: Sequence[str]) -> list[tuple[str, int]]:
        return [(str(t), i) for i, t in enumerate(titles)]

    @property
    def titles(self) -> tuple[str, ...]:
        """The tabs' titles, in order."""
        return tuple(label for label, _ in self.bar.options)

    def get_title(self, index: int) -> str:
        """The title of tab ``index``."""
        return self.titles[index]

    def set_title(self, index: int, title: str) -> None:
        """Rename tab ``index``."""
        titles = list(self.titles)
        titles[index] = title
        shown = self.selected_index
        self.bar.options = self._options(titles)
        self.bar.value = shown

    def _clicked(self, change: Any) -> None:
        if change["new"] is not None:
            self.selected_index = int(change["new"])

    @traitlets.validate("selected_index")
    def _valid(self, proposal: Any) -> int:
        index = int(proposal["value"])
        if not 0 <= index < len(self.pages):
            raise traitlets.TraitError(f"no tab {index}: there are {len(self.pages)}")
        return index

    @traitlets.observe("selected_index")
    def _show(self, change: Any) -> None:
        index = int(change["new"])
        self.bar.value = index
        self.stack.selected_index = index


class HttpLog(W.VBox):
    """The API exchanges a panel made: newest first, each collapsible, with its curl line."""

    def __init__(self, keep: int = 20) -> None:
        super().__init__()
        self.keep = keep
        self.exchanges: list[Exchange] = []
        self.add_class("wb-http-log")

    def add(self, exchanges: Sequence[Exchange], heading: str = "") -> None:
        """Record ``exchanges`` (in the order they were made) above the older ones."""
        for ex in exchanges:
            self.exchanges.insert(0, ex)
        del self.exchanges[self.keep :]
        self._draw(heading)

    def clear(self) -> None:
        """Forget every exchange."""
        self.exchanges = []
        self.children = ()

    def _draw(self, heading: str) -> None:
        items = []
        for i, ex in enumerate(self.exchanges):
            mark = "✔" if ex.success else "✘"
            summary = f"{mark} {ex.method} {ex.path} → {ex.status}"
            if i == 0 and heading:
                summary += f"  ({heading})"
            body = (
                f"<div>request</div>{pre(ex.request_json())}<div>curl</div>{pre(ex.curl())}"
                f"<div>response</div>{pre(ex.response_json())}"
            )
            items.append(
                f"<details class='wb-exchange'{' open' if i == 0 else ''}>"
                f"<summary style='{MONO};cursor:pointer'>{html.escape(summary)}</summary>"
                f"<div style='overflow-x:auto'>{body}</div></details>"
            )
        note = f"<div style='color:#5f6368;font-size:12px'>{html.escape(CURL_NOTE)}</div>"
        shown: tuple[W.Widget, ...] = (W.HTML(note + "".join(items)),) if items else ()
        self.children = shown


class Panel(W.VBox):
    """Base of every panel: title line, body, busy state, stale status, readable text form.

    Subclasses set :attr:`title` and :attr:`drives`, build their widgets, then
    call ``super().__init__(body)``; they put their main outcome in
    :attr:`status`.
    """

    title: ClassVar[str] = "Panel"
    drives: ClassVar[str] = ""

    @property
    def status(self) -> StatusLine:
        """The panel's main outcome line; exists before ``super().__init__`` so a body can hold it."""
        line = self.__dict__.get("_wb_status")
        if line is None:
            line = self.__dict__["_wb_status"] = StatusLine()
        return line

    def __init__(self, body: Sequence[W.Widget], **kwargs: Any) -> None:
        self.busy = False
        header = W.HTML(
            _PANEL_CSS
            + f"<div style='font-weight:600;font-size:14px'>{html.escape(self.title)}</div>"
            f"<div style='color:#5f6368;font-size:12px'>drives {html.escape(self.drives)}</div>"
        )
        header.add_class("wb-panel-title")
        super().__init__([header, *body], **kwargs)
        self.add_class("wb-panel")
        self.layout.max_width = "100%"

    # -- conventions ---------------------------------------------------------------
    def run(self, action: Callable[[], Any]) -> Any:
        """Run ``action`` with every button of the panel disabled (the busy state).

        Each button says why while it is disabled (:data:`BUSY`, its tooltip),
        and gets its own tooltip back afterwards.
        """
        buttons = [b for b in self._walk() if isinstance(b, W.Button) and not b.disabled]
        tips = [b.tooltip for b in buttons]
        self.busy = True
        for b in buttons:
            b.disabled, b.tooltip = True, BUSY
        try:
            return action()
        finally:
            for b, tip in zip(buttons, tips, strict=True):
                b.disabled, b.tooltip = False, tip
            self.busy = False

    def watch_inputs(self, *inputs: W.Widget, status: StatusLine | None = None) -> None:
        """Mark ``status`` (default: the panel's) stale whenever one of ``inputs`` changes."""
        line = self.status if status is None else status
        for widget in inputs:
            widget.observe(lambda _: line.mark_stale(), "value")

    @staticmethod
    def on_enter(text: W.Text, action: Callable[[], Any]) -> None:
        """Run ``action`` when Enter is pressed in a one-line ``text`` box.

        ipywidgets 8 deprecates ``Text.on_submit``; with ``continuous_update``
        off, the value is synced (and observed) on Enter, or when focus leaves.
        """
        text.continuous_update = False
        text.observe(lambda _: action(), "value")

    def _walk(self) -> list[W.Widget]:
        seen: list[W.Widget] = []
        stack: list[Any] = [self]
        while stack:
            widget = stack.pop()
            seen.append(widget)
            stack.extend(getattr(widget, "children", ()))
        return seen

    # -- text form -------------------------------------------------------------------
    def describe(self) -> str:
        """What the panel shows where widgets cannot be drawn (an unrun notebook, a reload)."""
        return f"{self.title} panel: drives {self.drives}. Run this cell to open the panel."

    def __repr__(self) -> str:
        return self.describe()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/plain"] = self.describe()
        return bundle
