"""The events explorer's "Your traffic" tab, driven headlessly: files set as a browser upload
sets them (ipywidgets 8's FileUpload value), then ``button.click()``; each test reads what a
person would read: status text and kind, the summary, table cells, the buttons' tooltips."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from workbench import Workbench
from workbench.logs import EventLog, add_synthetic_events
from workbench.replay.run import demo_zone
from workbench.widgets import EventsExplorer
from workbench.widgets import events_agreement as ea
from workbench.widgets import events_explorer as ee
from workbench.widgets.parts import BUSY

DATA = Path(__file__).resolve().parents[2] / "notebooks" / "data"
LOG = DATA / "shop-http_requests.ndjson"
EVENTS = DATA / "shop-firewall_events.ndjson"
HAR = DATA / "shop-session.har"


def upload(name: str, content: bytes) -> tuple[dict, ...]:
    """What FileUpload.value holds after a browser uploaded one file."""
    return (
        {
            "name": name,
            "type": "application/octet-stream",
            "size": len(content),
            "content": memoryview(content),
            "last_modified": datetime(2026, 3, 2, 9, tzinfo=UTC),
        },
    )


def give(widget, path: Path) -> None:
    widget.value = upload(path.name, path.read_bytes())


def text_of(widget_html: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", widget_html)).split())


def cells(table_html: str) -> list[list[str]]:
    body = table_html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def headers(table_html: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", table_html)]


@pytest.fixture
def panel():
    wb, zone_id = demo_zone("shop.example")
    return EventsExplorer(wb, zone_id)


@pytest.fixture
def tab(panel):
    return panel.your_traffic


def report(tab) -> list[str]:
    return [w.value for w in (tab.summary, tab.actions, tab.rules, tab.disagreements, tab.unknown)]


# -- shape -------------------------------------------------------------------------------------
def test_a_tab_of_the_explorer_with_its_hooks(panel, tab):
    assert panel.tabs.titles == ("Results", "Charts", "Old vs new", "Your traffic")
    assert panel.tabs.pages[ee.TRAFFIC_TAB] is tab
    assert "wb-events-agreement" in tab._dom_classes
    for part in ("log", "events", "files", "run", "clear", "status", "summary", "actions",
                 "rules", "disagreements", "unknown"):  # fmt: skip
        assert f"wb-events-agreement-{part}" in getattr(tab, _ATTRS[part])._dom_classes
    assert tab.run_button.description == "Compare with zone shop.example"
    assert text_of(tab.files.value) == "log: none · firewall events: none"


_ATTRS = {
    "log": "log_upload",
    "events": "events_upload",
    "files": "files",
    "run": "run_button",
    "clear": "clear_button",
    "status": "status",
    "summary": "summary",
    "actions": "actions",
    "rules": "rules",
    "disagreements": "disagreements",
    "unknown": "unknown",
}


def test_compare_says_why_it_cannot_run_until_a_log_is_uploaded(tab):
    assert tab.run_button.disabled and tab.run_button.tooltip == "not available: upload a log first"
    assert tab.clear_button.disabled and tab.clear_button.tooltip == ea.NOTHING_UPLOADED
    give(tab.events_upload, EVENTS)
    assert tab.run_button.disabled  # events alone are not enough
    assert not tab.clear_button.disabled
    give(tab.log_upload, LOG)
    assert not tab.run_button.disabled
    assert tab.run_button.tooltip == "replay the log through zone shop.example and compare"
    assert text_of(tab.files.value) == (
        "log: shop-http_requests.ndjson (46.9 kB) · firewall events: "
        "shop-firewall_events.ndjson (11.9 kB)"
    )


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: EventsExplorer(add_log()), ea.ONLY_LOG),
        (lambda: EventsExplorer(Workbench(seed=0)), ea.NO_ZONE),
    ],
)
def test_without_a_workbench_and_a_zone_it_says_what_it_needs(make, reason):
    tab = make().your_traffic
    give(tab.log_upload, LOG)
    assert tab.run_button.disabled and tab.run_button.tooltip == reason
    assert "EventsExplorer(wb, zone)" in reason
    tab.run_button.click()  # a click the browser would not send: refused in words
    assert (tab.status.kind, tab.status.text) == (
        "refused",
        "cannot compare: " + reason.split(": ", 1)[1],
    )
    assert report(tab) == [""] * 5


def add_log() -> EventLog:
    log = EventLog()
    add_synthetic_events(log, 10, seed=1)
    return log


# -- the sample http_requests log ---------------------------------------------------------------
def test_the_sample_log_shows_every_part_of_the_report(panel, tab):
    give(tab.log_upload, LOG)
    tab.run_button.click()
    assert (tab.status.kind, tab.status.text) == (
        "partial",
        "compared shop-http_requests.ndjson with zone shop.example: 58 agree, 4 disagree",
    )
    assert text_of(tab.summary.value) == (
        "62 requests on shop.example: 62 with a recorded decision, 58 agree, 4 disagree (93.5%) "
        "read as http_requests; recorded decisions from the log's Security fields (62)"
    )
    assert headers(tab.actions.value) == ["recorded \\ simulated", "allow", "block"]
    assert cells(tab.actions.value) == [
        ["allow", "50", "1"],
        ["block", "2", "8"],
        ["managed_challenge", "1", "0"],
    ]
    rules = cells(tab.rules.value)
    assert headers(tab.rules.value)[:6] == [
        "rule", "source", "recorded", "simulated", "both", "agreement"]  # fmt: skip
    assert len(rules) == 10
    assert ["SQLi - UNION Based", "firewallManaged", "2", "1", "1", "50%"] == rules[4][:6]
    assert ["(no description)", "firewallCustom", "1", "0", "0", "0%"] == rules[8][:6]
    off = cells(tab.disagreements.value)
    assert [(row[0], row[1], row[2], row[3]) for row in off] == [
        ("9", "POST /api/cart", "block", "allow"),
        ("24", "POST /account/login", "block", "allow"),
        ("25", "GET /products?page=14", "managed_challenge", "allow"),
        ("26", off[3][1], "allow", "block"),
    ]
    why = [row[4] for row in off]
    assert "the log holds no body for this POST" in why[0]
    assert "rate limiting (rateLimit rule" in why[1] and "does not simulate" in why[1]
    assert "Bot Management" in why[2]
    assert why[3].startswith("the real zone let it through (firewallCustom")
    assert off[0][5].startswith("firewallManaged 8d4020c9340ded37c16ed6d71d532406 block")
    assert off[0][6] == "none"
    unknown = cells(tab.unknown.value)
    assert [(row[0], row[1]) for row in unknown] == [
        ("62 of 62", "body"),
        ("62 of 62", "headers"),
        ("62 of 62", "cookies"),
        ("2 of 62", "source"),
    ]
    assert "POST 13" in unknown[0][2]


def test_a_replayed_ray_can_be_looked_up_under_results(panel, tab):
    before = panel.event_log.count()
    assert panel.status.text == ee.NO_EVENTS
    give(tab.log_upload, LOG)
    tab.run_button.click()
    assert panel.event_log.count() > before  # the replay's events joined the panel's log
    assert panel.status.kind == "empty"  # "no events yet" is no longer true
    assert f"{panel.event_log.count()} events of zone" in text_of(panel.summary.value)
    replayed = cells(tab.disagreements.value)[3][8]  # the <script> post the zone here blocks
    panel.ray.value = replayed
    assert panel.detail_status.text.startswith(f"ray {replayed}: ")
    assert "ended by block (firewallManaged rule 2b7ecd4fd45cbceaee2daa844fc76004)" in (
        panel.detail_status.text
    )


def test_a_new_file_marks_the_outcome_stale_and_compare_replaces_the_report(tab):
    give(tab.log_upload, LOG)
    tab.run_button.click()
    give(tab.events_upload, EVENTS)
    assert tab.status.kind == "stale"
    give(tab.log_upload, HAR)
    tab.run_button.click()
    assert (tab.status.kind, tab.status.text) == (
        "success",
        "compared shop-session.har with zone shop.example: 1 agree, 0 disagree",
    )
    assert text_of(tab.summary.value).startswith(
        "4 requests on shop.example: 1 with a recorded decision, 1 agree, 0 disagree (100.0%) "
        "read as har; recorded decisions from the firewall events (1)"
    )
    assert [row[0] for row in cells(tab.rules.value)] == ["SQLi - UNION Based"]
    assert tab.disagreements.value == ""  # the http_requests log's four are gone
    assert ("3 of 4", "decision") in [(r[0], r[1]) for r in cells(tab.unknown.value)]


def test_a_har_without_events_has_nothing_to_compare_and_says_what_to_add(tab):
    give(tab.log_upload, HAR)
    tab.run_button.click()
    assert (tab.status.kind, tab.status.text) == (
        "info",
        "compared shop-session.har with zone shop.example: no request has a recorded decision: "
        "add the zone's firewall events",
    )
    assert tab.actions.value == tab.rules.value == tab.disagreements.value == ""
    assert ("4 of 4", "decision") in [(r[0], r[1]) for r in cells(tab.unknown.value)]


def test_a_combined_log_is_read_for_the_zone_s_host(tab):
    line = b'192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET /?q=%3Cscript%3E HTTP/1.1" 403 9\n'
    tab.log_upload.value = upload("access.log", line)
    tab.run_button.click()
    assert tab.status.text == (
        "compared access.log with zone shop.example: no request has a recorded decision: "
        "add the zone's firewall events"
    )
    assert text_of(tab.summary.value).startswith("1 request on shop.example")
    assert "read as combined" in text_of(tab.summary.value)


# -- bad files ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("log", "events", "text"),
    [
        (
            (
                "bad.ndjson",
                b'{"ClientRequestURI": "/"}\n{"ClientRequestURI": "/", "ClientASN": "x"}',
            ),
            None,
            "cannot read bad.ndjson: line 2: ClientASN must be an integer, got str",
        ),
        (
            ("bad.har", b'{"log": {"entries": [{"request": {"method": "GET"}}]}}'),
            None,
            "cannot read bad.har: line 1: log.entries[0].request.url is missing",
        ),
        (
            ("broken.har", b'{"log": {"entries": [\n{"request": '),
            None,
            "cannot read broken.har: line 2",
        ),
        (("empty.log", b"\n"), None, "cannot read empty.log: the file is empty"),
        (
            ("events.ndjson", EVENTS.read_bytes()),
            None,
            "cannot read events.ndjson: holds firewall events, not requests: give it as the "
            "firewall events, with the log it belongs to",
        ),
        (
            ("log.ndjson", LOG.read_bytes()),
            ("also-log.ndjson", LOG.read_bytes()),
            "cannot read also-log.ndjson: holds HTTP requests (http_requests), not firewall "
            "events: give it as the log",
        ),
        (
            ("log.ndjson", LOG.read_bytes()),
            ("events.ndjson", b'{"RayID": "a1", "Action": "explode"}'),
            "cannot read events.ndjson: line 1: Action: 'explode' is not an action",
        ),
    ],
)
def test_a_bad_file_is_named_with_its_line_and_field_and_nothing_half_shown(tab, log, events, text):
    give(tab.log_upload, LOG)
    tab.run_button.click()  # a report first: the error must not sit over it
    assert all(report(tab))
    tab.log_upload.value = upload(*log)
    if events is not None:
        tab.events_upload.value = upload(*events)
    tab.run_button.click()
    assert tab.status.kind == "error"
    assert tab.status.text.startswith(text)
    assert report(tab) == [""] * 5
    assert tab.agreement is None


def test_a_field_the_reason_does_not_name_is_named_beside_the_line(tab, monkeypatch):
    from workbench.traffic.agreement_files import AgreementInputError

    def refuse(*_args, **_kw):
        raise AgreementInputError.of("x.har", "not a string", 3, "log.entries[0].request.url")

    monkeypatch.setattr(ea, "agreement_of_uploads", refuse)
    give(tab.log_upload, HAR)
    tab.run_button.click()
    assert tab.status.text == (
        "cannot read x.har: line 3, field log.entries[0].request.url: not a string"
    )


# -- busy state, clear, reset ---------------------------------------------------------------------
def test_compare_runs_in_the_busy_state(tab, monkeypatch):
    seen = []
    real = ea.agreement_of_uploads

    def spy(*args, **kwargs):
        seen.append((tab.run_button.disabled, tab.run_button.tooltip, tab.clear_button.tooltip))
        return real(*args, **kwargs)

    monkeypatch.setattr(ea, "agreement_of_uploads", spy)
    give(tab.log_upload, LOG)
    tab.run_button.click()
    assert seen == [(True, BUSY, BUSY)]
    assert not tab.run_button.disabled and not tab.clear_button.disabled


def test_clear_forgets_both_files_and_the_report(tab):
    give(tab.log_upload, LOG)
    give(tab.events_upload, EVENTS)
    tab.run_button.click()
    tab.clear_button.click()
    assert tab.log_upload.value == () and tab.events_upload.value == ()
    assert report(tab) == [""] * 5 and tab.status.kind == "empty"
    assert text_of(tab.files.value) == "log: none · firewall events: none"
    # the busy state gave the buttons back; the files decide again
    assert tab.run_button.disabled and tab.run_button.tooltip == "not available: upload a log first"
    assert tab.clear_button.disabled


def test_reset_empties_the_tab_too(panel, tab):
    give(tab.log_upload, LOG)
    tab.run_button.click()
    panel.tabs.selected_index = ee.TRAFFIC_TAB
    panel.reset()
    assert panel.tabs.selected_index == ee.RESULTS_TAB
    assert tab.log_upload.value == () and report(tab) == [""] * 5
    assert tab.status.kind == "empty"
