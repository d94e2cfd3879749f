"""When the replay progress bar shows, and that it never lands in strict-nbval outputs."""

from __future__ import annotations

import io

import pytest

from workbench.traffic import progress
from workbench.traffic.progress import _Bar, progress_bar, progress_enabled


@pytest.fixture
def env(monkeypatch):
    """The environment without the variables that turn the bar off.

    pytest sets PYTEST_CURRENT_TEST again when the test body starts, so each test
    calls ``env.clear()`` first.
    """

    def clear():
        for name in ("NBVAL", "CI", "WORKBENCH_PROGRESS", "PYTEST_CURRENT_TEST"):
            monkeypatch.delenv(name, raising=False)

    monkeypatch.clear = clear
    return monkeypatch


def test_off_under_nbval_or_ci_even_on_a_terminal(env):
    env.clear()
    env.setattr(progress, "_is_tty", lambda stream: True)
    assert progress_enabled()
    env.setenv("NBVAL", "1")
    assert not progress_enabled()
    env.delenv("NBVAL")
    env.setenv("CI", "true")
    assert not progress_enabled()
    env.setenv("CI", "0")  # a variable set to 0 or "" does not count
    assert progress_enabled()
    env.setenv(
        "PYTEST_CURRENT_TEST", "tests/x.ipynb::Cell 0 (call)"
    )  # what nbval's kernel inherits
    assert not progress_enabled()


def test_off_when_output_is_not_a_terminal_or_a_notebook(env):
    env.clear()
    env.setattr(progress, "_is_tty", lambda stream: False)
    env.setattr(progress, "_in_kernel", lambda: False)
    assert not progress_enabled()
    env.setattr(progress, "_in_kernel", lambda: True)
    assert progress_enabled()


def test_workbench_progress_forces_it_either_way(env):
    env.clear()
    env.setenv("CI", "1")
    env.setenv("WORKBENCH_PROGRESS", "1")
    assert progress_enabled()
    env.setenv("WORKBENCH_PROGRESS", "0")
    env.delenv("CI")
    env.setattr(progress, "_is_tty", lambda stream: True)
    assert not progress_enabled()


def test_a_disabled_bar_writes_nothing_and_the_fallback_bar_draws_one_line(env, capsys):
    env.clear()
    with progress_bar(10, "replay", enabled=False) as bar:
        bar.update(10)
    assert capsys.readouterr() == ("", "") and bar.done == 10
    stream = io.StringIO()
    fallback = _Bar(4, "replay", stream)
    for _ in range(4):
        fallback.update(1)
    fallback.close()
    text = stream.getvalue()
    assert text.startswith("\rreplay [") and "100% 4/4" in text and text.endswith("\n")


def test_the_pipeline_shows_no_bar_for_short_replays(env, capsys, zone_wb):
    from workbench.replay import Pipeline
    from workbench.traffic.request import Request

    env.clear()
    env.setattr(progress, "_is_tty", lambda stream: True)
    wb, zid = zone_wb
    Pipeline(wb, zid).replay([Request()] * 3)
    assert capsys.readouterr().err == ""
