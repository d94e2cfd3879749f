"""A payload's three placements carry it where each says, encoded as a client sends it
(the fields stay raw, as the edge gives them)."""

from __future__ import annotations

import json
from urllib.parse import unquote, unquote_plus

from workbench.traffic.placements import placements
from workbench.traffic.request import Request


def test_each_placement_gives_the_payload_back_where_it_was_put():
    payload = '<a href="x">1\' OR 1=1 -- é & ;+%</a>'
    get, form, js = (Request.from_raw(raw) for raw in placements(payload, 3, label="xss"))
    args = get.fields(["http.request.uri.args"])["http.request.uri.args"]
    assert [unquote(q) for q in args["q"]] == [payload] and args["id"] == ["3"]
    names = form.fields(["http.request.body.form"])["http.request.body.form"]["name"]
    assert [unquote_plus(v) for v in names] == [payload]
    assert json.loads(js.fields(["http.request.body.raw"])["http.request.body.raw"]) == {
        "value": payload
    }
    assert [r.method for r in (get, form, js)] == ["GET", "POST", "POST"]
    assert {r.label for r in (get, form, js)} == {"xss"}
