"""A progress bar for long replays: tqdm when it is installed, else a one-line bar on stderr.

When it shows (``enabled=None``, the default):

* never when the environment variable ``NBVAL`` or ``CI`` is set (to anything but
  ``""``/``0``): a bar's text changes from run to run, and strict nbval compares
  every output, so run the notebook tests as ``NBVAL=1 pytest --nbval ...``;
  never under pytest either (``PYTEST_CURRENT_TEST``, which the kernel nbval
  starts inherits), so ``pytest --nbval`` stays quiet even without ``NBVAL``;
* else in a Jupyter kernel, or when stderr is a terminal;
* never when output goes to a file or a pipe.

``WORKBENCH_PROGRESS=1`` (or ``0``) forces it on (or off) whatever the rest says,
and ``enabled=True``/``False`` does the same for one call.

    >>> with progress_bar(3, "replay", enabled=False) as bar:
    ...     bar.update(3)
    >>> bar.done
    3
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
from types import TracebackType
from typing import Any, TextIO

_OFF = ("", "0", "false", "no")
_QUIET = ("NBVAL", "CI", "PYTEST_CURRENT_TEST")


def progress_enabled() -> bool:
    """Whether a bar shows by default here (see the module docstring)."""
    forced = os.environ.get("WORKBENCH_PROGRESS")
    if forced is not None:
        return forced.strip().lower() not in _OFF
    if any(os.environ.get(v, "").strip().lower() not in _OFF for v in _QUIET):
        return False
    return _in_kernel() or _is_tty(sys.stderr)


def _in_kernel() -> bool:
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    ip = get() if callable(get) else None
    return ip is not None and hasattr(ip, "kernel")


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Bar:
    """The fallback bar: ``desc  42% 420000/1000000  12.3 s``, redrawn at most twice a second."""

    def __init__(self, total: int, desc: str, stream: TextIO) -> None:
        self.total, self.desc, self.stream = total, desc, stream
        self.done = 0
        self._start = self._drawn = time.monotonic()

    def update(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self._drawn >= 0.5 or self.done >= self.total:
            self._draw(now)

    def _draw(self, now: float) -> None:
        self._drawn = now
        share = self.done / self.total if self.total else 1.0
        filled = int(share * 30)
        self.stream.write(
            f"\r{self.desc} [{'#' * filled}{'.' * (30 - filled)}] {share:4.0%} "
            f"{self.done}/{self.total} {now - self._start:5.1f} s"
        )
        self.stream.flush()

    def close(self) -> None:
        self._draw(time.monotonic())
        self.stream.write("\n")
        self.stream.flush()


class ProgressBar:
    """A context manager with ``update(n)``; draws nothing when disabled."""

    def __init__(self, total: int, desc: str = "", enabled: bool | None = None) -> None:
        self.total, self.desc = total, desc
        self.enabled = progress_enabled() if enabled is None else enabled
        self.done = 0
        self._bar: Any = None

    def __enter__(self) -> ProgressBar:
        if self.enabled:
            self._bar = _tqdm(self.total, self.desc) or _Bar(self.total, self.desc, sys.stderr)
        return self

    def update(self, n: int = 1) -> None:
        """Count ``n`` more items done."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _tqdm(total: int, desc: str) -> Any:
    """A tqdm bar (notebook widget or terminal, as ``tqdm.auto`` picks) when tqdm is installed.

    tqdm is optional, not a dependency: it is looked up at run time, so the package
    works, and the dependency test passes, without it.
    """
    if importlib.util.find_spec("tqdm") is None:
        return None
    auto = importlib.import_module("tqdm.auto")
    return auto.tqdm(total=total, desc=desc, unit="req", unit_scale=True, leave=False)


def progress_bar(total: int, desc: str = "", enabled: bool | None = None) -> ProgressBar:
    """A bar over ``total`` items (see the module docstring for when it shows)."""
    return ProgressBar(total, desc, enabled)
