"""A chunk's parts, listed once: the same values as each request's own, whatever reads first."""

import numpy as np
import pytest

from workbench.traffic.events import request_columns
from workbench.traffic.parts import COMMON, Parts, all_values, first_values, hosts, paths, queries
from workbench.traffic.request import Request

REQUESTS = [
    Request(
        "POST",
        "https://a.example/x?q=1",
        headers={"User-Agent": "ua", "Cookie": "a=1"},
        client_ip="192.0.2.1",
        country="de",
        asn=3,
        label="sqli",
    ),
    Request(url="/caf\u00e9", headers=[("Host", "b.example"), ("cookie", "b"), ("COOKIE", "c")]),
    Request(url="/n", body=b"\xff", headers={}),
]


def test_each_list_holds_what_each_request_gives_and_is_made_once():
    parts = Parts(REQUESTS)
    assert parts.attribute("method") == ["POST", "GET", "GET"]
    assert parts.attribute("country") == ["DE", "", ""]
    for name in COMMON:
        assert parts.attribute(name) == [getattr(r, name) for r in REQUESTS]
    assert parts.attribute("url") == [r.url for r in REQUESTS]  # not common: its own pass
    assert hosts(parts) == [r.host for r in REQUESTS] == ["a.example", "b.example", ""]
    assert paths(parts) == [r.path for r in REQUESTS]
    assert queries(parts) == [r.query for r in REQUESTS]
    assert first_values(parts, "user-agent") == ["ua", "", ""]
    assert all_values(parts, "cookie", "; ") == ["a=1", "b; c", ""]
    assert hosts(parts) is hosts(parts) and paths(parts) is paths(parts)


def test_no_requests_give_empty_lists():
    parts = Parts([])
    assert parts.attribute("label") == [] and hosts(parts) == [] and paths(parts) == []


@pytest.mark.parametrize(
    "headers",
    [
        {"User-Agent": "ua", "X-\u00c9": "v", "ACCEPT": "*/*"},
        {"A\x00B": "nul in a name", "c": "d"},
        {},
        {"K": b"bytes"},
        {b"K": "v"},
    ],
)
def test_header_parts_from_a_dict_are_those_of_its_pairs(headers):
    from_dict = Request(headers=headers)
    from_pairs = Request(headers=list(headers.items()))
    assert from_dict.headers == from_pairs.headers
    assert from_dict._header_parts == from_pairs._header_parts
    assert from_dict.header_map == from_pairs.header_map


def test_event_columns_of_some_rows_are_those_of_the_rows_alone():
    rows = np.array([0, 2])
    rays, times = ["r0", "r1", "r2"], [0, 1_000, 2_000]
    picked = request_columns(Parts(REQUESTS), rays, times, rows)
    alone = request_columns([REQUESTS[0], REQUESTS[2]], ["r0", "r2"], [0, 2_000])
    assert picked.keys() == alone.keys()
    for name in alone:
        assert picked[name].tolist() == alone[name].tolist(), name
    # Non-ASCII text is made log text for the rows picked, as for the rows alone.
    one = request_columns(Parts(REQUESTS), rays, times, np.array([1]))
    assert one["path"].tolist() == ["/caf\u00e9"] and one["host"].tolist() == ["b.example"]


def test_an_attribute_and_a_derived_list_of_the_same_name_stay_apart():
    parts = Parts(REQUESTS)
    assert hosts(parts) == ["a.example", "b.example", ""]
    assert parts.attribute("headers") == [r.headers for r in REQUESTS]
    assert parts.headers == [r._header_parts for r in REQUESTS]
    assert parts.attribute("host") == hosts(parts)  # the property, read per request
