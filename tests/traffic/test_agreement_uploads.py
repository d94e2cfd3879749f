"""The agreement of files given as bytes (the events explorer's uploads), and the note on hosts
outside the zone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.replay.run import demo_zone
from workbench.traffic.agreement_files import AgreementInputError, agreement_of_uploads
from workbench.traffic.importers import content_format, read_log, read_log_bytes

DATA = Path(__file__).resolve().parents[2] / "notebooks" / "data"
LOG = (DATA / "shop-http_requests.ndjson").read_bytes()
EVENTS = (DATA / "shop-firewall_events.ndjson").read_bytes()
HAR = (DATA / "shop-session.har").read_bytes()


@pytest.fixture(scope="module")
def shop():
    return demo_zone("shop.example")


@pytest.mark.parametrize("name", ["shop-http_requests.ndjson", "shop-session.har"])
def test_bytes_read_as_the_file_does(name):
    path = DATA / name
    from_bytes, from_file = read_log_bytes(path.read_bytes()), read_log(path)
    assert from_bytes.format == from_file.format
    assert [r.url for r in from_bytes] == [r.url for r in from_file]
    assert from_bytes.recorded == from_file.recorded


def test_the_format_is_told_by_the_content():
    assert content_format(HAR) == "har"
    assert content_format(b"\r\n" + LOG) == "http_requests"
    assert content_format(b'203.0.113.1 - - [01/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1"') == (
        "combined"
    )


def test_uploads_give_the_report_the_files_give(shop):
    wb, zone_id = shop
    done = agreement_of_uploads(wb, zone_id, LOG, name="shop.ndjson")
    assert (done.summary["compared"], done.summary["agree"], done.summary["disagree"]) == (
        62,
        58,
        4,
    )
    session = agreement_of_uploads(wb, zone_id, HAR, events=EVENTS)
    assert session.summary["format"] == "har"
    assert (session.summary["requests"], session.summary["compared"]) == (4, 1)
    assert session.summary["agree"] == 1  # the body the http_requests log lacks is in the HAR


def test_a_combined_log_gets_the_zone_s_host(shop):
    wb, zone_id = shop
    line = b'192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET /a HTTP/1.1" 200 9 "-" "curl/8"\n'
    done = agreement_of_uploads(wb, zone_id, line)
    assert done.frame.host.tolist() == ["shop.example"]
    assert "zone" not in set(done.cannot_tell.what)


@pytest.mark.parametrize(
    ("log", "events", "source", "line", "field", "reason"),
    [
        (b"\n \n", None, "a.log", 0, "", "the file is empty"),
        (b'{"log": {"entries": []}}', None, "a.log", 0, "", "holds no requests (read as har)"),
        (
            b'{"ClientRequestURI": "/"}\n{"ClientRequestURI": 5}\n',
            None,
            "a.log",
            2,
            "ClientRequestURI",
            "ClientRequestURI must be text, got int",
        ),
        (EVENTS, None, "a.log", 0, "", "holds firewall events, not requests"),
        (LOG, LOG, "e.ndjson", 0, "", "holds HTTP requests (http_requests), not firewall events"),
        (LOG, HAR, "e.ndjson", 0, "", "holds HTTP requests (har), not firewall events"),
        (LOG, b'{"RayID": "a", "Action": "explode"}', "e.ndjson", 1, "Action", "Action: 'explode'"),
    ],
)
def test_an_unreadable_input_is_named_with_its_line_field_and_reason(
    shop, log, events, source, line, field, reason
):
    wb, zone_id = shop
    with pytest.raises(AgreementInputError) as caught:
        agreement_of_uploads(wb, zone_id, log, name="a.log", events=events, events_name="e.ndjson")
    err = caught.value
    assert (err.source, err.line, err.field) == (source, line, field)
    assert err.reason.startswith(reason)
    assert str(err) == f"{source}: " + (f"line {line}: " if line else "") + err.reason


def test_hosts_outside_the_zone_are_counted():
    wb, zone_id = demo_zone("example.com")
    done = agreement_of_uploads(wb, zone_id, LOG)
    row = done.cannot_tell.set_index("what").loc["zone"]
    assert (row.requests, row.of) == (62, 62)
    assert row.note.startswith("requests for hosts outside zone example.com (www.shop.example 24")
    assert "zone" in json.dumps(done.to_json()["cannot_tell"])
