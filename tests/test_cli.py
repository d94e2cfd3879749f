"""The terminal face: `workbench --help` and `workbench lab --dry-run`."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench import cli

ROOT = Path(__file__).resolve().parent.parent


def test_help_lists_the_lab_command(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: workbench")
    assert "lab" in out and "00-start-here.ipynb" in out


ROOT_FLAG = ["--allow-root"] if os.name == "posix" and os.geteuid() == 0 else []


def test_lab_dry_run_prints_the_command(capsys):
    assert cli.main(["lab", "--dry-run"]) == 0
    expected = " ".join(["jupyter", "lab", *ROOT_FLAG, "notebooks/00-start-here.ipynb"])
    assert capsys.readouterr().out == expected + "\n"


def test_lab_runs_jupyter_from_the_repo_root(monkeypatch):
    calls = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd: calls.append((cmd, cwd)) or 0)
    assert cli.main(["lab"]) == 0
    assert calls == [(["jupyter", "lab", *ROOT_FLAG, "notebooks/00-start-here.ipynb"], ROOT)]


def test_no_command_prints_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "usage: workbench" in capsys.readouterr().out


def test_a_command_is_one_function_and_one_registry_entry(monkeypatch, capsys):
    def cmd_hello(args: argparse.Namespace) -> int:
        print(f"hello {args.name}")
        return 0

    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("name")

    monkeypatch.setitem(cli.COMMANDS, "hello", cli.Command("say hello", cmd_hello, configure))
    assert cli.main(["hello", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"


def test_python_dash_m_workbench():
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "lab", "--dry-run"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert done.stdout.startswith("jupyter lab")
