"""The ExpressionChecker panel, headless: ipywidgets fire handlers without a kernel."""

import asyncio
import doctest
import re

import workbench.widgets.expression_checker as module
from workbench.widgets import ExpressionChecker
from workbench.widgets.expression_checker import DEFAULT_SAMPLES
from workbench.widgets.parts import Panel

ADMIN = 'http.request.uri.path contains "/admin"'


def press_enter(checker: ExpressionChecker) -> None:
    """What the browser sends when Enter is pressed in the text box."""
    checker.text._handle_custom_msg({"event": "submit"}, [])


def header(checker: ExpressionChecker) -> list[str]:
    return re.findall(r"<th>(.*?)</th>", checker.table.value)


def match_column(checker: ExpressionChecker) -> list[str]:
    """The first cell of each body row, as a person reads it."""
    return re.findall(r"<tr[^>]*><td>(.*?)</td>", checker.table.value)


def test_default_samples_are_five_requests_keyed_by_field_names():
    assert len(DEFAULT_SAMPLES) == 5
    for sample in DEFAULT_SAMPLES:
        assert {"http.host", "http.request.uri.path", "ip.src", "ssl"} <= set(sample)


def test_is_a_panel_whose_text_form_says_what_it_drives():
    checker = ExpressionChecker()
    assert isinstance(checker, Panel)
    assert checker.widget is checker
    bundle = checker._repr_mimebundle_()
    assert bundle["text/plain"] == (
        "Expression checker panel: drives a Rules-language expression against sample "
        "requests. Run this cell to open the panel."
    )
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == checker.model_id
    assert repr(checker) == bundle["text/plain"]


def test_layout_title_box_and_button_status_hint_table():
    checker = ExpressionChecker()
    title, row, status_slot, hint, table = checker.children
    assert "Expression checker" in title.value
    assert list(row.children) == [checker.text, checker.button]
    assert list(status_slot.children) == [checker.status]
    assert (hint, table) == (checker.hint, checker.table)
    assert checker.text.__class__.__name__ == "Text"  # one line: Enter checks
    for widget, part in [(checker.text, "text"), (checker.button, "button"),
                         (checker.status, "status"), (checker.hint, "hint"), (checker.table, "table")]:  # fmt: skip
        assert f"wb-checker-{part}" in widget._dom_classes


def test_starts_unchecked_without_an_expression():
    checker = ExpressionChecker()
    assert checker.results is None
    assert (checker.status.kind, checker.status.text) == ("info", checker.message)
    assert "not checked yet" in checker.message
    assert checker.table.value.count("<tr") == 1 + len(DEFAULT_SAMPLES)
    assert match_column(checker) == [""] * 5


def test_match_column_comes_first_and_marks_each_request():
    checker = ExpressionChecker(expression=ADMIN)
    assert header(checker)[:3] == ["match", "#", "http.request.method"]
    assert match_column(checker) == ["–", "✔", "–", "–", "–"]
    assert checker.table.value.count("<tr class='wb-match'>") == 1
    assert "<tr class='wb-match'><td>✔</td><td>2</td>" in checker.table.value
    # Wide rows scroll inside the panel, the match column pinned at the left.
    assert "overflow-x:auto" in checker.table.value
    assert "position:sticky;left:0" in checker.table.value


def test_valid_expression_shows_its_matches():
    checker = ExpressionChecker()
    checker.text.value = ADMIN
    checker.button.click()
    assert checker.results == [False, True, False, False, False]
    assert checker.message == "valid — matches 1 of 5 sample requests"
    assert (checker.status.kind, checker.status.text) == ("success", checker.message)
    assert "wb-status-success" in checker.status.value
    assert checker.hint.value == ""


def test_enter_in_the_text_box_checks():
    checker = ExpressionChecker()
    checker.text.value = 'ssl and http.request.method eq "GET"'
    assert checker.results is None  # typing alone does not check outside a kernel
    press_enter(checker)
    assert checker.results == [True, True, False, False, True]
    assert checker.status.kind == "success"
    assert checker.message == "valid — matches 3 of 5 sample requests"


def test_other_messages_from_the_text_box_are_ignored():
    checker = ExpressionChecker()
    checker.text.value = ADMIN
    checker.text._handle_custom_msg({"event": "focus"}, [])
    assert checker.results is None


def test_status_goes_stale_when_the_text_changes_and_is_not_rechecked():
    checker = ExpressionChecker(expression=ADMIN)
    assert checker.status.kind == "success"
    checker.text.value = 'http.host eq "example.com"'
    assert checker.status.kind == "stale"
    assert "inputs changed since" in checker.status.value
    # The old outcome stays, greyed.
    assert checker.status.text == "valid — matches 1 of 5 sample requests"
    assert "opacity:0.55" in checker.table.value and "has changed since" in checker.table.value
    press_enter(checker)
    assert checker.status.kind == "success"
    assert checker.message == "valid — matches 3 of 5 sample requests"
    assert "opacity" not in checker.table.value


def test_an_error_goes_stale_too_with_its_hint():
    checker = ExpressionChecker(expression='cf.waf.score lt "50"')
    checker.text.value = "cf.waf.score lt 50"
    assert checker.status.kind == "stale"
    assert "opacity:0.55" in checker.hint.value


def test_live_check_when_typing_pauses():
    async def scenario() -> ExpressionChecker:
        checker = ExpressionChecker(expression=ADMIN, live_delay=0.05)
        checker.text.value = 'http.host eq "exam'  # keystrokes...
        checker.text.value = 'http.host eq "example.com"'
        assert checker.status.kind == "stale"  # not yet: typing has not paused
        calls = []
        original = checker.check
        checker.check = lambda: calls.append(1) or original()  # type: ignore[method-assign]
        for _ in range(100):
            await asyncio.sleep(0.02)
            if checker.status.kind != "stale":
                break
        await asyncio.sleep(0.1)
        assert calls == [1]  # debounced: one check for the two changes
        return checker

    checker = asyncio.run(scenario())
    assert checker.status.kind == "success"
    assert checker.message == "valid — matches 3 of 5 sample requests"


def test_enter_cancels_the_pending_live_check():
    async def scenario() -> list[int]:
        checker = ExpressionChecker(live_delay=0.05)
        checker.text.value = ADMIN
        press_enter(checker)
        calls: list[int] = []
        original = checker.check
        checker.check = lambda: calls.append(1) or original()  # type: ignore[method-assign]
        await asyncio.sleep(0.15)
        return calls

    assert asyncio.run(scenario()) == []


def test_live_checking_can_be_turned_off():
    async def scenario() -> ExpressionChecker:
        checker = ExpressionChecker(live_delay=None)
        checker.text.value = ADMIN
        await asyncio.sleep(0.05)
        return checker

    assert asyncio.run(scenario()).results is None


def test_invalid_expression_shows_the_engine_error_with_its_caret_and_a_hint_beneath():
    checker = ExpressionChecker()
    checker.text.value = "http.host eq a"
    checker.button.click()
    assert checker.results is None
    lines = checker.message.splitlines()
    assert lines[0] == "Filter parsing error (1:14):"
    assert lines[1] == "http.host eq a"
    assert lines[2].index("^") == 13  # under the "a", column 14
    # The engine's exact text in a <pre> (spaces kept), in the error colours.
    assert checker.status.kind == "error" and checker.status.detail == checker.message
    assert "<pre style='margin:2px 0;white-space:pre;font-family:" in checker.status.value
    engine = "Filter parsing error (1:14):\nhttp.host eq a\n             ^ unknown identifier"
    assert f">{engine}</pre>" in checker.status.value
    # The hint, in plain words, in its own widget below the status.
    assert (
        checker.hint_text == '`a` is read as a field name. Text values go in double quotes: `"a"`.'
    )
    assert (
        "<b>Hint:</b> <code class='wb-short'>a</code> is read as a field name."
        in checker.hint.value
    )
    assert ">&quot;a&quot;</code>" in checker.hint.value
    assert match_column(checker) == [""] * 5


def test_hint_for_a_string_compared_with_an_integer_field():
    checker = ExpressionChecker(expression='cf.waf.score lt "50"')
    assert checker.message.endswith("^^^^ expected digit")
    assert "`cf.waf.score` is an Integer field" in checker.hint_text


def test_error_text_is_html_escaped():
    checker = ExpressionChecker(expression='http.host eq "<b>" and')
    assert checker.results is None
    assert "<b>" in checker.message
    assert "http.host eq &quot;&lt;b&gt;&quot; and\n" in checker.status.value
    assert '"<b>"' not in checker.status.value
    assert checker.hint_text.startswith("The expression ends after `and`: add a condition")


def test_an_undefined_list_is_a_warning():
    checker = ExpressionChecker(expression="ip.src in $bad_ip", lists={"bad_ips": ["192.0.2.0/24"]})
    assert checker.results == [False] * 5
    assert checker.status.kind == "partial"
    assert checker.message == (
        "valid — matches 0 of 5 sample requests, but $bad_ip is not defined here and matches nothing"
    )
    assert "lists defined here: $bad_ips" in checker.hint_text
    assert "wb-status-partial" in checker.status.value


def test_a_defined_list_is_used():
    checker = ExpressionChecker(
        expression="ip.src in $bad_ips", lists={"bad_ips": ["192.0.2.0/24"]}
    )
    assert checker.status.kind == "success"
    assert checker.results == [False, False, True, True, False]
    assert checker.hint.value == ""


def test_editing_and_checking_again_updates_the_panel():
    checker = ExpressionChecker(expression=ADMIN)
    checker.text.value = "http.host eq a"
    checker.button.click()
    assert checker.message.startswith("Filter parsing error")
    checker.text.value = 'http.host eq "example.com"'
    checker.button.click()
    assert checker.results == [True, True, False, True, False]
    assert checker.message == "valid — matches 3 of 5 sample requests"
    assert checker.hint_text is None and checker.hint.value == ""


def test_check_returns_what_the_button_shows():
    checker = ExpressionChecker()
    checker.text.value = 'ssl and http.request.method eq "GET"'
    assert checker.check() == [True, True, False, False, True]
    assert checker.message == "valid — matches 3 of 5 sample requests"


def test_empty_expression_asks_for_one():
    checker = ExpressionChecker(expression=ADMIN)
    checker.text.value = "   "
    assert checker.check() is None
    assert checker.message.startswith("enter an expression")
    assert checker.status.kind == "info"


def test_reset_comes_back_to_the_first_state():
    checker = ExpressionChecker(expression=ADMIN)
    checker.text.value = "http.host eq a"
    checker.button.click()
    checker.reset()
    assert checker.text.value == ADMIN
    assert checker.status.kind == "success"
    assert checker.message == "valid — matches 1 of 5 sample requests"
    assert checker.hint.value == ""
    blank = ExpressionChecker()
    blank.text.value = ADMIN
    blank.button.click()
    blank.reset()
    assert (blank.text.value, blank.results, blank.status.kind) == ("", None, "info")


def test_the_button_is_disabled_while_checking():
    checker = ExpressionChecker()
    seen = []
    original = checker.check
    checker.check = lambda: seen.append(checker.button.disabled) or original()  # type: ignore[method-assign]
    checker.text.value = ADMIN
    checker.button.click()
    assert seen == [True] and checker.button.disabled is False


def test_custom_samples():
    samples = [{"http.host": "a.example"}, {"http.host": "b.example"}]
    checker = ExpressionChecker(samples, 'http.host eq "b.example"')
    assert checker.results == [False, True]
    assert checker.message == "valid — matches 1 of 2 sample requests"
    assert header(checker) == ["match", "#", "http.host"]
    assert "ip.src" not in checker.table.value


def test_as_text_reads_like_the_panel():
    checker = ExpressionChecker(expression=ADMIN)
    assert checker.as_text().splitlines()[:3] == [
        "valid — matches 1 of 5 sample requests",
        "– 1 GET example.com /",
        "✔ 2 GET example.com /admin/login",
    ]


def test_module_docstring_examples():
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
