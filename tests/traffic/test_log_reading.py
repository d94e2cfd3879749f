"""What the readers share: errors naming line and field, whole lines, JSON entries' lines."""

from __future__ import annotations

import json

import pytest

from workbench.traffic.log_reading import (
    BadValue,
    Imported,
    Logged,
    LogLineError,
    element_lines,
    json_document,
    log_time,
)
from workbench.traffic.request import Request


def test_an_error_keeps_its_line_field_and_reason():
    error = LogLineError(3, "ClientASN must be an integer, got str", "ClientASN")
    assert (error.line, error.field, error.reason) == (
        3,
        "ClientASN",
        "ClientASN must be an integer, got str",
    )
    assert str(error) == "line 3: ClientASN must be an integer, got str"
    assert LogLineError(1, "not JSON").field == ""  # the whole line is at fault


def test_an_import_without_what_the_log_said_still_answers():
    got = Imported(requests=[Request(url="/")])
    assert got.logged_at(0) == Logged(0) and got.recorded == [None]


@pytest.mark.parametrize(
    "value",
    [
        {"log": {"entries": []}},
        {"log": {"entries": [1, [2, 3], {"a": "]"}]}},
        {"x": 1, "log": {"y": [1], "entries": [{}]}},
    ],
)
def test_element_lines_find_every_entry_however_the_json_is_laid_out(value):
    for indent in (None, 1, 4):
        text = json.dumps(value, indent=indent)
        lines = element_lines(text, ["log", "entries"])
        assert len(lines) == len(value["log"]["entries"])
        for line, item in zip(lines, value["log"]["entries"], strict=True):
            assert (
                json.dumps(item, indent=indent).splitlines()[0].strip()
                in text.splitlines()[line - 1]
            )


def test_element_lines_of_a_path_that_is_not_there_are_none():
    assert element_lines('{"log": 1}', ["log", "entries"]) == []
    assert element_lines("[]", []) == [] and element_lines("[1,\n2]", []) == [1, 2]


def test_a_document_that_is_not_json_names_its_line():
    with pytest.raises(LogLineError) as caught:
        json_document('{\n"a": 1,\n}', "the file")
    assert caught.value.line == 3 and caught.value.reason.startswith("the file is not JSON")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (True, "T must be a time, got a boolean"),
        ("x", "T 'x' is not an RFC 3339 time"),
        ([], "T must be a time, got list"),
    ],
)
def test_a_time_that_is_none_names_its_field(value, reason):
    with pytest.raises(BadValue) as caught:
        log_time(value, "T")
    assert str(caught.value) == reason and caught.value.field == "T"
