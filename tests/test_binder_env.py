"""Binder runs what the README promises: a fresh environment from binder/requirements.txt
runs every notebook under strict nbval.

This is the slow test (a fresh virtualenv and a full install, a few minutes on
2 cores with pip's cache warm); CI runs it. The environment gets only Binder's
requirement set plus pytest and nbval, the tools that check it.
"""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_binder_requirements_run_every_notebook_under_strict_nbval(tmp_path):
    env_dir = tmp_path / "binder-env"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--progress-bar", "off",
         "-r", "binder/requirements.txt", "pytest", "nbval"],
        cwd=ROOT, env=environ, capture_output=True, text=True, timeout=1500,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    notebooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks, "no notebooks to run"
    run = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         "--nbval-current-env", *notebooks],
        cwd=ROOT, env=environ, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
