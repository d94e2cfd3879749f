"""CRS 2.2.9's source: its set-up and base rule files, read from a git mirror into a folder.

CI cannot reach GitHub, and the rule files are not committed, so the old OWASP
package is generated where a mirror of ``coreruleset/coreruleset`` is at hand:
``$WORKBENCH_CRS2_REPO``, else the path ``fetch`` gives it on these machines.
:func:`checkout` writes the tag's set-up file and ``base_rules/`` into a
temporary folder (once a process, removed at exit) and records the commit;
:func:`unavailable_reason` says why that cannot be done, for a test's skip.

    >>> c = Checkout(Path("/x"), TAG, "0" * 40)
    >>> c.base, c.setup.name
    (PosixPath('/x/base_rules'), 'modsecurity_crs_10_setup.conf.example')
    >>> unavailable_reason(Path("/nonexistent")).startswith("the CRS 2.2.9 source is absent")
    True
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

TAG = "v2.2.9"
CRS_VERSION = "2.2.9"
REPOSITORY = "https://github.com/coreruleset/coreruleset"
#: Where ``fetch`` puts the mirror on these machines; WORKBENCH_CRS2_REPO names another.
DEFAULT_REPO = Path("/work/.mirror/coreruleset+coreruleset/repo")
REPO_ENV = "WORKBENCH_CRS2_REPO"
SETUP = "modsecurity_crs_10_setup.conf.example"
BASE = "base_rules"


@dataclass(frozen=True)
class Checkout:
    """CRS 2.2.9's set-up and base rule files in a folder, with the tag and commit they came from."""

    root: Path
    tag: str
    commit: str

    @property
    def base(self) -> Path:
        return self.root / BASE

    @property
    def setup(self) -> Path:
        return self.root / SETUP


def default_repo() -> Path:
    """The mirror's git directory: ``$WORKBENCH_CRS2_REPO``, else the default mirror path."""
    return Path(os.environ.get(REPO_ENV) or DEFAULT_REPO)


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def unavailable_reason(repo: Path | None = None, tag: str = TAG) -> str:
    """Why CRS 2.2.9 cannot be read (empty when it can)."""
    repo = repo or default_repo()
    if not repo.exists():
        return (
            f"the CRS 2.2.9 source is absent: no git mirror at {repo} "
            f"(set {REPO_ENV} to a clone of {REPOSITORY})"
        )
    try:
        _git(repo, "rev-parse", "--verify", f"{tag}^{{commit}}")
    except (OSError, subprocess.CalledProcessError):
        return f"the CRS 2.2.9 source is absent: {repo} has no tag {tag}"
    return ""


_CHECKOUTS: dict[tuple[str, str], Checkout] = {}


def checkout(repo: Path | None = None, tag: str = TAG, into: Path | None = None) -> Checkout:
    """The set-up and ``base_rules/`` of ``tag`` in a folder: ``into``, or a temporary one
    made once a process (a replay and its oracle read the same files)."""
    repo = repo or default_repo()
    key = (str(repo), tag)
    if into is None and key in _CHECKOUTS:
        return _CHECKOUTS[key]
    commit = _git(repo, "rev-parse", f"{tag}^{{commit}}").decode().strip()
    if into is None:
        root = Path(tempfile.mkdtemp(prefix="workbench-crs2-"))
        atexit.register(shutil.rmtree, root, True)
    else:
        root = into
    (root / BASE).mkdir(parents=True, exist_ok=True)
    names = _git(repo, "ls-tree", "--name-only", f"{tag}:{BASE}").decode().split()
    for path in [SETUP, *(f"{BASE}/{n}" for n in names)]:
        (root / path).write_bytes(_git(repo, "show", f"{tag}:{path}"))
    found = Checkout(root, tag, commit)
    if into is None:
        _CHECKOUTS[key] = found
    return found
