"""The CRS programs over a large chunk of requests, in worker processes.

The CRS fields (``cf.waf.crs.rules``, ``cf.waf.crs2.rules``) cost most of a
whole-table replay: one interpreter run per request per program, in Python, so
one core. :func:`keep_runs` runs them for a chunk's requests in a pool of worker
processes (one per core) and keeps each run on its request, exactly as
``runtime.kept_run`` would have (the programs are pure: the same request gives
the same run in any process). Chunks under :data:`MIN_REQUESTS`, a machine with
one core or ``WORKBENCH_CRS_WORKERS=0`` run in this process, lazily, as before;
so does a chunk whose pool broke, and so does every chunk of a plain script
with no ``if __name__ == "__main__":`` guard (:func:`main_can_start_workers`).

    >>> from workbench.traffic.request import Request
    >>> reqs = [Request(url=f"https://a.example/?q={i}") for i in range(3)]
    >>> keep_runs(reqs, ["cf.waf.crs.rules"], min_requests=1, workers=1)  # one worker: no pool
    0
"""

from __future__ import annotations

import multiprocessing
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from . import runtime, runtime_crs2
from .interpreter import Result
from .request import RawRequest, raw_from_request

#: Fewer requests than this run in this process: a pool's start and transfers would cost more.
MIN_REQUESTS = 2_000
#: Requests per task: small enough to balance the workers, large enough to amortise a transfer.
TASK_REQUESTS = 1_000
#: Field -> where a request keeps its program's run.
KEPT_AS = {"cf.waf.crs.rules": runtime.KEPT_AS, "cf.waf.crs2.rules": runtime_crs2.KEPT_AS}

_pool: ProcessPoolExecutor | None = None
_pool_size = 0


def worker_count() -> int:
    """How many worker processes a large chunk uses: ``WORKBENCH_CRS_WORKERS``, else the cores."""
    text = os.environ.get("WORKBENCH_CRS_WORKERS", "").strip()
    if text:
        try:
            return max(0, int(text))
        except ValueError:
            raise ValueError(
                f"WORKBENCH_CRS_WORKERS must be a whole number of processes, got {text!r}"
            ) from None
    return os.cpu_count() or 1


_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]""", re.M)


def main_can_start_workers() -> bool:
    """Whether worker processes can start without running the main script again.

    A forkserver worker imports the main module by its path when it was run as a file, so a
    script with no ``if __name__ == "__main__":`` guard would replay itself in every worker
    (and break the pool). Notebooks, the REPL, ``-c`` and ``-m`` runs have no such file or
    are imported by name, under a name that is not ``__main__``.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(main, "__spec__", None) is not None:
        return True
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return bool(_GUARD.search(f.read()))
    except OSError:
        return False


def _programs() -> dict[str, Callable[[], Any]]:
    return {runtime.KEPT_AS: runtime.program, runtime_crs2.KEPT_AS: runtime_crs2.program}


def _run_task(keys: tuple[str, ...], raws: list[RawRequest]) -> list[tuple[Result, ...]]:
    """In a worker: each program named by ``keys`` run on each request."""
    programs = _programs()
    runs = [programs[k]() for k in keys]
    return [tuple(p.run(raw) for p in runs) for raw in raws]


def _executor(size: int) -> ProcessPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size != size:
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
        # forkserver, not fork: the parent runs DuckDB's threads, which a fork would copy
        # mid-flight; workers import the package and load the programs once each.
        context = multiprocessing.get_context("forkserver")
        _pool, _pool_size = ProcessPoolExecutor(size, mp_context=context), size
    return _pool


def keep_runs(
    requests: Sequence[Any],
    fields: Iterable[str],
    *,
    min_requests: int = MIN_REQUESTS,
    workers: int | None = None,
) -> int:
    """Run the CRS programs ``fields`` read for ``requests`` in worker processes and keep each
    run on its request; returns how many requests were run there (0: left to run lazily)."""
    keys = tuple(KEPT_AS[f] for f in dict.fromkeys(fields) if f in KEPT_AS)
    size = worker_count() if workers is None else workers
    if not keys or size < 2 or not main_can_start_workers():
        return 0
    todo = [r for r in requests if any(k not in r.__dict__ for k in keys)]
    if len(todo) < min_requests:
        return 0
    raws = [raw_from_request(r) for r in todo]
    tasks = [raws[i : i + TASK_REQUESTS] for i in range(0, len(raws), TASK_REQUESTS)]
    try:
        pool = _executor(size)
        answers = list(pool.map(_run_task, [keys] * len(tasks), tasks))
    except (BrokenProcessPool, OSError):
        _drop_pool()
        return 0  # each request's run is then made in this process when its field is read
    done = 0
    for task_answers in answers:
        for runs in task_answers:
            kept = todo[done].__dict__
            for key, run in zip(keys, runs, strict=True):
                kept.setdefault(key, run)
            done += 1
    return done


def _drop_pool() -> None:
    global _pool, _pool_size
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
    _pool, _pool_size = None, 0
