"""The CRS programs run in worker processes keep on each request the run this process makes."""

from __future__ import annotations

import pytest

from workbench.rulesets.crs import runtime, runtime_crs2
from workbench.rulesets.crs.parallel import keep_runs, worker_count
from workbench.rulesets.crs.request import raw_from_request
from workbench.traffic.generators import generate
from workbench.traffic.request import Request

FIELDS = ["cf.waf.crs.rules", "cf.waf.crs2.rules"]


def test_workers_keep_the_same_runs_as_this_process():
    requests = [Request.from_raw(r) for r in generate(60, seed=21)]
    assert keep_runs(requests, FIELDS, min_requests=1, workers=2) == 60
    for req in requests:
        raw = raw_from_request(req)
        assert req.__dict__["_crs_result"].hits == runtime.evaluate(raw).hits
        assert req.__dict__["_crs2_result"].hits == runtime_crs2.evaluate(raw).hits
    # Kept runs are not made again: a second call has nothing to do.
    assert keep_runs(requests, FIELDS, min_requests=1, workers=2) == 0


def test_small_chunks_one_worker_and_other_fields_stay_in_this_process():
    requests = [Request.from_raw(r) for r in generate(5, seed=22)]
    assert keep_runs(requests, FIELDS, workers=2) == 0  # under MIN_REQUESTS
    assert keep_runs(requests, FIELDS, min_requests=1, workers=1) == 0
    assert keep_runs(requests, ["http.host"], min_requests=1, workers=2) == 0
    assert not any("_crs_result" in r.__dict__ for r in requests)


def test_the_worker_count_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("WORKBENCH_CRS_WORKERS", "3")
    assert worker_count() == 3
    monkeypatch.setenv("WORKBENCH_CRS_WORKERS", "many")
    with pytest.raises(ValueError, match="WORKBENCH_CRS_WORKERS must be a whole number"):
        worker_count()


SCRIPT = """
from workbench.rulesets.crs.parallel import keep_runs
from workbench.traffic.request import Request
reqs = [Request(url=f"https://a.example/?q={{i}}") for i in range(20)]
{body}
"""


def _run_script(tmp_path, body):
    import subprocess
    import sys

    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.format(body=body))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )


def test_a_script_without_a_main_guard_runs_the_crs_here_not_in_workers_that_rerun_it(tmp_path):
    # Each forkserver worker would import the script by path and run it again.
    done = _run_script(
        tmp_path, 'print(keep_runs(reqs, ["cf.waf.crs.rules"], min_requests=1, workers=2))'
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]
    assert "Traceback" not in done.stderr


def test_a_guarded_script_uses_the_workers(tmp_path):
    body = 'if __name__ == "__main__":\n    print(keep_runs(reqs, ["cf.waf.crs.rules"], min_requests=1, workers=2))'
    done = _run_script(tmp_path, body)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["20"]
