"""Check the rowsRead / rowsWritten model against an SQLite built with workerd's row counts.

Run: ``python benchmarks/storage_counters_oracle.py --lib PATH`` where PATH is a shared
library of SQLite built with workerd's ``patches/sqlite/0001-row-counts-plain.patch``
(without ``--lib`` it says how to build one and exits). For every counters case the
storage tests pin (``tests/storage/test_storage_counters*.py``) it runs the case's setup
and statement in that library through ctypes, reads
``sqlite3_stmt_status(stmt, 1025 / 1026)`` (the patch's ``LIBSQL_STMTSTATUS_ROWS_READ`` /
``ROWS_WRITTEN``) after the same cursor steps, and prints the pinned value, the library's
and the model's, marking the rows where they differ. The library is a reference for
development only: the storage runs on apsw's own SQLite, which has no such counters.

How the reference used in issue 29 was built (a scratch folder; nothing is kept here):
``npm pack sqlite3`` and take ``deps/sqlite-autoconf-*.tar.gz`` (an SQLite amalgamation);
apply the patch's hunks for ``sqlite.h.in``, ``vdbe.c``, ``vdbeInt.h`` and ``vdbeapi.c`` to
``sqlite3.c`` by their context (the code is the same, the line numbers are not); then
``gcc -O1 -shared -fPIC -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_MATH_FUNCTIONS
-DSQLITE_DEFAULT_FOREIGN_KEYS=1 -DSQLITE_OMIT_SHARED_CACHE sqlite3.c -o librowcounts.so -lm``
(workerd's own defines, less the ones that need SQLite's parser regenerated).

    >>> steps_for(None), steps_for(0), steps_for(3)
    (None, 0, 3)
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROW, DONE = 100, 101
ROWS_READ, ROWS_WRITTEN = 1025, 1026


def steps_for(consume: int | None) -> int | None:
    """Cursor steps after ``exec``'s own first one: ``next()`` called ``consume`` times
    steps once each (the first returns the row read ahead); None: to the end."""
    return consume


class Reference:
    """One in-memory database of the patched library."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        p = ctypes.c_void_p
        lib.sqlite3_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(p)]
        lib.sqlite3_prepare_v2.argtypes = [p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(p), p]
        lib.sqlite3_step.argtypes = [p]
        lib.sqlite3_finalize.argtypes = [p]
        lib.sqlite3_stmt_status.argtypes = [p, ctypes.c_int, ctypes.c_int]
        lib.sqlite3_errmsg.argtypes = [p]
        lib.sqlite3_errmsg.restype = ctypes.c_char_p
        lib.sqlite3_bind_int64.argtypes = [p, ctypes.c_int, ctypes.c_int64]
        lib.sqlite3_bind_double.argtypes = [p, ctypes.c_int, ctypes.c_double]
        lib.sqlite3_bind_text.argtypes = [p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, p]
        lib.sqlite3_bind_null.argtypes = [p, ctypes.c_int]
        lib.sqlite3_exec.argtypes = [p, ctypes.c_char_p, p, p, p]
        self.db = p()
        if lib.sqlite3_open(b":memory:", ctypes.byref(self.db)):
            raise RuntimeError("cannot open an in-memory database")
        for sql in ("PRAGMA foreign_keys = ON", "BEGIN"):
            self.run(sql)

    def _error(self) -> RuntimeError:
        return RuntimeError(self.lib.sqlite3_errmsg(self.db).decode())

    def run(self, sql: str, bindings: tuple = (), steps: int | None = None) -> tuple[int, int]:
        """``(rowsRead, rowsWritten)`` of ``sql`` after its first step and ``steps`` more."""
        lib, st = self.lib, ctypes.c_void_p()
        data = sql.encode()
        if lib.sqlite3_prepare_v2(self.db, data, len(data), ctypes.byref(st), None):
            raise self._error()
        try:
            for i, v in enumerate(bindings, 1):
                if v is None:
                    lib.sqlite3_bind_null(st, i)
                elif isinstance(v, int):
                    lib.sqlite3_bind_int64(st, i, v)
                elif isinstance(v, float):
                    lib.sqlite3_bind_double(st, i, v)
                else:
                    text = str(v).encode()
                    lib.sqlite3_bind_text(st, i, text, len(text), ctypes.c_void_p(-1))
            rc, taken = lib.sqlite3_step(st), 0
            while rc == ROW and (steps is None or taken < steps):
                rc, taken = lib.sqlite3_step(st), taken + 1
            if rc not in (ROW, DONE):
                raise self._error()
            return (
                lib.sqlite3_stmt_status(st, ROWS_READ, 0),
                lib.sqlite3_stmt_status(st, ROWS_WRITTEN, 0),
            )
        finally:
            lib.sqlite3_finalize(st)


class _Sql:
    """What a test's setup calls: ``sql.exec(query, *bindings)``."""

    def __init__(self, ref: Reference) -> None:
        self.ref = ref

    def exec(self, query: str, *bindings: Any) -> _Sql:
        if bindings:
            self.ref.run(query, bindings)
        elif self.ref.lib.sqlite3_exec(self.ref.db, query.encode(), None, None, None):
            raise self.ref._error()  # (sqlite3_exec runs every statement of the text)
        return self


def cases() -> list[tuple[str, Callable[[Any], Any], str, tuple, int | None, tuple[int, int]]]:
    """``(label, setup, query, bindings, consume, pinned)`` of every pinned counters case."""
    here = Path(__file__).resolve().parent.parent / "tests" / "storage"
    sys.path.insert(0, str(here))
    import test_storage_counters as tc
    import test_storage_counters_fidelity as tf
    import test_storage_counters_vm as tv

    out = [(c[0], c[1], c[2], c[3], c[4], (c[5], c[6])) for c in tc.CASES]
    out += [(c[0], c[1], c[2], (), c[3], (c[4], c[5])) for c in tf.MORE]
    out += [(c[0], c[1], c[2], (), None, (c[3], 0)) for c in tv.STEPPED]
    out += [(c[0], c[1], c[2], c[3], None, (c[4], 0)) for c in tv.BOUND]
    out += [(c[0], tv.with_u, c[1], (), None, (c[2], 0)) for c in tv.SEVERAL_IN]
    out += [(c[0], c[1], c[2], (), None, c[3]) for c in tv.IN_WRITES_AND_AGGREGATES]
    return out


def model(setup: Callable[[Any], Any], query: str, bindings: tuple, consume: int | None) -> Any:
    from storage_helpers import Probe, call
    from test_storage_counters import measure

    from workbench.storage import Runtime

    rt = Runtime()
    ns = rt.namespace(Probe, storage="sqlite")
    stub = ns.get(ns.id_from_name("oracle"))
    _ = call  # (measure delivers through it)
    return measure(rt, stub, setup, query, *bindings, consume=consume)


def main() -> None:
    if "--lib" not in sys.argv:
        print("no --lib PATH given: nothing to compare (see this file's docstring to build one)")
        return
    lib = ctypes.CDLL(sys.argv[sys.argv.index("--lib") + 1])
    differ = 0
    all_cases = cases()
    for label, setup, query, bindings, consume, pinned in all_cases:
        ref = Reference(lib)
        setup(_Sql(ref))
        try:
            counted: Any = ref.run(query, bindings, steps_for(consume))
        except RuntimeError as exc:
            counted = f"error: {exc}"
        ours = model(setup, query, bindings, consume)
        mark = "  " if counted == tuple(pinned) == tuple(ours) else "XX"
        differ += mark == "XX"
        print(f"{mark} {label:<52} pinned {pinned} library {counted} model {ours}")
    print(f"{differ} of {len(all_cases)} cases differ somewhere")


if __name__ == "__main__":
    main()
