"""The sample logs of notebooks/data are what their script writes now, and teach what they say."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.traffic.agreement_files import agreement_of_files
from workbench.traffic.sample_logs import FILES, sample_logs

DATA = Path(__file__).resolve().parent.parent.parent / "notebooks" / "data"
FIX = "Run `python notebooks/build/write_sample_logs.py` and commit notebooks/data."


@pytest.fixture(scope="module")
def written():
    return sample_logs()


def test_the_committed_samples_are_what_the_script_writes_now(written):
    assert set(written) == set(FILES)
    for name, text in written.items():
        path = DATA / name
        assert path.is_file(), f"{name} is missing. {FIX}"
        assert path.read_text(encoding="utf-8") == text, f"{name} is out of date. {FIX}"


def test_the_same_call_gives_the_same_bytes(written):
    assert sample_logs() == written


def test_the_http_requests_sample_disagrees_where_it_was_planted_and_says_why():
    done = agreement_of_files(DATA / "shop-http_requests.ndjson")
    s = done.summary
    assert s["zone"] == "shop.example" and s["requests"] == s["compared"] == 62
    assert (s["agree"], s["disagree"]) == (58, 4)
    why = {row.uri.split("?")[0]: row.reason for row in done.disagreements.itertuples()}
    assert set(why) == {"/api/cart", "/account/login", "/products", "/wp-admin/post.php"}
    assert "the log holds no body for this POST" in why["/api/cart"]
    assert why["/account/login"].startswith("recorded block by rate limiting (rateLimit rule")
    assert why["/products"].startswith("recorded managed_challenge by Bot Management")
    assert why["/wp-admin/post.php"].startswith(
        "the real zone let it through (firewallCustom 0c9f1e2d3b4a59687766554433221100 skip)"
    )
    # The events file records the same decisions, joined by ray id.
    joined = agreement_of_files(
        DATA / "shop-http_requests.ndjson", events=DATA / "shop-firewall_events.ndjson"
    )
    assert (
        joined.summary["disagree"] == 4 and joined.summary["recorded_from"]["firewall_events"] == 14
    )


def test_the_har_holds_the_body_and_agrees():
    done = agreement_of_files(
        DATA / "shop-session.har", events=DATA / "shop-firewall_events.ndjson"
    )
    s = done.summary
    assert (s["format"], s["requests"], s["compared"], s["agree"]) == ("har", 4, 1, 1)
    [row] = done.frame[done.frame["verdict"] == "agree"].itertuples()
    assert (row.method, row.uri, row.recorded, row.simulated) == (
        "POST",
        "/api/cart",
        "block",
        "block",
    )
