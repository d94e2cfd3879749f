"""Event rows: one per event of each request, in the log's own columns and dtypes."""

import numpy as np
import pandas as pd
import pytest

from workbench.core.security import SecurityEvent, Verdict
from workbench.logs import EventLog
from workbench.logs.schema import empty_frame, normalise
from workbench.traffic.events import Templates, event_frame, request_columns
from workbench.traffic.request import Request


def _frame() -> pd.DataFrame:
    verdicts = [
        Verdict([]),
        Verdict(
            [
                SecurityEvent("waf", "log", "100015", None, "SQLi", score=None),
                SecurityEvent("firewallManaged", "block", "r2", "rs", "XSS", 40, 2, {"k": 1}),
            ],
            "block",
        ),
    ]
    requests = [
        Request(url="https://a.example/x?q=1", headers={"User-Agent": "curl/8"}, country="de"),
        Request(url="/caf\u00e9", headers=[("Host", "b.example"), ("user-agent", "ua")]),
        Request(url="/n", body=b"\xff"),
    ]
    columns = request_columns(requests, ["r0", "r1", "r2"], [0, 1_000, 2_000])
    return event_frame("zone", columns, np.array([1, 1, 0]), Templates(verdicts))


def test_rows_carry_each_request_fields_and_each_event_in_order():
    frame = _frame()
    assert frame[["ray_id", "host", "path", "query", "user_agent", "country"]].values.tolist() == [
        ["r0", "a.example", "/x", "q=1", "curl/8", "DE"],
        ["r0", "a.example", "/x", "q=1", "curl/8", "DE"],
        ["r1", "b.example", "/caf\u00e9", "", "ua", ""],
        ["r1", "b.example", "/caf\u00e9", "", "ua", ""],
    ]
    assert frame["match_index"].tolist() == [1, 0, 1, 0]
    assert frame["score"].tolist() == [pd.NA, 40, pd.NA, 40]
    assert frame["metadata"].tolist()[:2] == ["{}", '{"k": 1}']


def test_frames_come_in_the_logs_columns_and_dtypes_already():
    frame = _frame()
    pd.testing.assert_frame_equal(frame, normalise(frame))
    assert frame.dtypes.equals(empty_frame().dtypes)
    assert frame["ruleset_id"].tolist()[:2] == [None, "rs"]


def test_a_normalised_batch_goes_into_the_log_as_it_is():
    log, frame = EventLog(), _frame()
    assert log.append(frame, normalised=True) == 4
    back = log.frame()
    assert back[["ray_id", "rule_id"]].values.tolist()[:2] == [["r0", "100015"], ["r0", "r2"]]
    assert back["score"].isna().tolist() == [True, False, True, False]
    with pytest.raises(ValueError, match="unknown event columns"):
        log.append(pd.DataFrame([{"nope": 1}]))
    assert log.count() == 4
