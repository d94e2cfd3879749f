"""Lint the repo's entry points without Docker: Binder folder, README, CI script."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
README = (ROOT / "README.md").read_text(encoding="utf-8")


def binder_links() -> list[str]:
    return re.findall(r"https://mybinder\.org/v2/gh/[^\s)>\]`]+", README)


def test_only_one_binder_folder():
    # repo2docker refuses a repo that has both binder/ and .binder/.
    assert BINDER.is_dir() and not (ROOT / ".binder").exists()


def test_runtime_pins_a_python_new_enough_for_pandas_3():
    assert re.fullmatch(r"python-3\.1[1-4]", (BINDER / "runtime.txt").read_text().strip())


def test_post_build_is_an_executable_bash_script_that_stops_on_errors():
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    text = post_build.read_text()
    assert text.startswith("#!/bin/bash\n")
    assert re.search(r"^set -e", text, re.M)


def test_post_build_copies_a_valid_overrides_file():
    settings = json.loads((BINDER / "overrides.json").read_text())
    assert settings["@jupyterlab/notebook-extension:tracker"]["autoStartDefaultKernel"] is True
    assert "binder/overrides.json" in (BINDER / "postBuild").read_text()


def test_post_build_raises_the_servers_message_limit_as_workbench_lab_does(tmp_path):
    # The script's own config step, run with HOME in a temporary folder.
    text = (BINDER / "postBuild").read_text()
    step = text[text.index('mkdir -p "${HOME}/.jupyter"') :]
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "HOME": str(tmp_path), "PATH": path}  # Binder's python has workbench
    subprocess.run(["bash", "-euo", "pipefail", "-c", step], env=env, check=True, cwd=ROOT)
    config = json.loads((tmp_path / ".jupyter" / "jupyter_server_config.json").read_text())
    assert config == {"ServerApp": {"tornado_settings": {"websocket_max_message_size": 209715200}}}


def test_requirements_install_the_package_and_pin_the_ui():
    lines = [
        line.strip()
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert "-e .[notebooks]" in lines  # the notebooks' needs come from one extra in pyproject
    pinned = {line.split("==")[0] for line in lines if "==" in line}
    assert {"jupyterlab", "ipywidgets", "pandas", "duckdb", "voila"} <= pinned


def test_no_other_build_pack_file_overrides_requirements():
    # Dockerfile or environment.yml in binder/ would win over requirements.txt.
    for name in ("Dockerfile", "environment.yml", "Pipfile", "Pipfile.lock"):
        assert not (BINDER / name).exists(), name


def test_readme_binder_link_opens_an_existing_notebook():
    links = binder_links()
    assert links, "README has no Binder link"
    for link in links:
        urlpath = parse_qs(urlparse(link).query)["urlpath"][0]
        assert urlpath.startswith("lab/tree/"), urlpath
        notebook = ROOT / urlpath.removeprefix("lab/tree/")
        assert notebook.is_file(), notebook
        nbformat.validate(nbformat.read(notebook, as_version=4))


def test_readme_binder_link_is_a_template_not_a_repository_that_does_not_exist():
    # The workbench has no public repository of its own: a badge pointing at one is dead.
    assert "badge_logo" not in README
    for link in binder_links():
        assert urlparse(link).path.startswith("/v2/gh/OWNER/REPO/"), link


def test_readme_says_the_platform_retired_the_old_apis():
    text = " ".join(README.split())
    assert (
        "retired the firewall-rules API and the previous WAF's managed-rules API on 2025-06-15"
        in text
    )


def test_readme_quick_start_shows_the_two_make_commands():
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^make lab\b", quick_start, re.M)
    assert re.search(r"^make test\b", quick_start, re.M)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lab:", makefile, re.M) and re.search(r"^test:", makefile, re.M)


def test_ci_script_runs_make_test():
    run = ROOT / ".ci" / "run"
    assert os.access(run, os.X_OK)
    text = run.read_text()
    assert text.startswith("#!/bin/bash\n")
    assert "set -euo pipefail" in text
    assert re.search(r"^make test$", text, re.M)
    assert "--no-install-recommends chromium fonts-liberation" in text


def test_readme_names_the_quick_tier_beside_the_full_suite():
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "make check" in quick_start and "`make test` is the full suite" in quick_start
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r'^check: lint\n.*\n.*-m "not slow and not browser" tests$', makefile, re.M)
    listed = (ROOT / "tests" / "slow.txt").read_text().splitlines()
    missing = [f for f in listed if f and not f.startswith("#") and not (ROOT / f).is_file()]
    assert not missing, f"tests/slow.txt lists files that do not exist: {missing}"
