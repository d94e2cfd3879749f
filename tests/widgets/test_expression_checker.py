"""The ExpressionChecker panel, headless: ipywidgets fire click handlers without a kernel."""

from workbench.widgets import ExpressionChecker
from workbench.widgets.expression_checker import DEFAULT_SAMPLES

ADMIN = 'http.request.uri.path contains "/admin"'


def test_default_samples_are_five_requests_keyed_by_field_names():
    assert len(DEFAULT_SAMPLES) == 5
    for sample in DEFAULT_SAMPLES:
        assert {"http.host", "http.request.uri.path", "ip.src", "ssl"} <= set(sample)


def test_starts_unchecked_without_an_expression():
    checker = ExpressionChecker()
    assert checker.results is None
    assert "not checked" in checker.status.value
    assert checker.table.value.count("<tr") == 1 + len(DEFAULT_SAMPLES)


def test_valid_expression_shows_its_matches():
    checker = ExpressionChecker()
    checker.text.value = ADMIN
    checker.button.click()
    assert checker.results == [False, True, False, False, False]
    assert checker.message == "valid — matches 1 of 5 sample requests"
    assert checker.status.value.startswith('<pre class="wb-status"')
    assert checker.status.value.endswith(">valid — matches 1 of 5 sample requests</pre>")
    rows = checker.table.value.split("<tr")[2:]
    assert [("<td>yes</td>" in row) for row in rows] == checker.results
    assert '<tr class="wb-match"><td>2</td>' in checker.table.value


def test_check_returns_what_the_button_shows():
    checker = ExpressionChecker()
    checker.text.value = 'ssl and http.request.method eq "GET"'
    assert checker.check() == [True, True, False, False, True]
    assert checker.message == "valid — matches 3 of 5 sample requests"


def test_invalid_expression_shows_the_engine_error_with_its_caret():
    checker = ExpressionChecker()
    checker.text.value = "http.host eq a"
    checker.button.click()
    assert checker.results is None
    lines = checker.message.splitlines()
    assert lines[0] == "Filter parsing error (1:14):"
    assert lines[1] == "http.host eq a"
    assert lines[2].index("^") == 13  # under the "a", column 14
    # In a <pre>, so the caret line keeps its spaces; no match column values.
    assert checker.status.value.startswith('<pre class="wb-status"')
    assert ">Filter parsing error (1:14):\nhttp.host eq a\n" in checker.status.value
    assert "\n             ^" in checker.status.value
    assert "<td>yes</td>" not in checker.table.value and "<td>no</td>" not in checker.table.value


def test_error_text_is_html_escaped():
    checker = ExpressionChecker(expression='http.host eq "<b>" and')
    assert checker.results is None
    assert "<b>" in checker.message
    assert "<b>" not in checker.status.value and "&lt;b&gt;" in checker.status.value


def test_editing_and_clicking_again_updates_the_panel():
    checker = ExpressionChecker(expression=ADMIN)
    assert checker.message == "valid — matches 1 of 5 sample requests"
    checker.text.value = "http.host eq a"
    checker.button.click()
    assert checker.message.startswith("Filter parsing error")
    checker.text.value = 'http.host eq "example.com"'
    checker.button.click()
    assert checker.results == [True, True, False, True, False]
    assert checker.message == "valid — matches 3 of 5 sample requests"


def test_empty_expression_asks_for_one():
    checker = ExpressionChecker(expression=ADMIN)
    checker.text.value = "   "
    assert checker.check() is None
    assert checker.message.startswith("enter an expression")


def test_custom_samples():
    samples = [{"http.host": "a.example"}, {"http.host": "b.example"}]
    checker = ExpressionChecker(samples, 'http.host eq "b.example"')
    assert checker.results == [False, True]
    assert checker.message == "valid — matches 1 of 2 sample requests"
    assert "<th>http.host</th>" in checker.table.value
    assert "ip.src" not in checker.table.value


def test_displays_as_its_vbox():
    checker = ExpressionChecker()
    bundle = checker._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == checker.widget.model_id
    assert list(checker.widget.children) == [
        checker.text,
        checker.button,
        checker.status,
        checker.table,
    ]
