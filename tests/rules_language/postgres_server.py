"""A throwaway PostgreSQL cluster for the dialect tests, and a request table in it.

Debian's ``postgresql`` package (``.ci/run`` installs it) puts ``initdb`` and
``pg_ctl`` in ``/usr/lib/postgresql/<version>/bin``; they are found there or on
the PATH. The cluster lives in a temporary directory, listens on a Unix socket
there only (no TCP port), trusts local connections and is removed afterwards.
PostgreSQL refuses to run as root, so as root the server runs as the
``postgres`` user the package creates. Queries go through ``psql``.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from workbench.rules_language import get_scheme
from workbench.rules_language.table import _plain
from workbench.rules_language.types import Type


def binaries() -> tuple[Path, str] | str:
    """``(bin directory, psql)`` of an installed server, or why there is none."""
    found = shutil.which("initdb")
    if found is None:
        versions = sorted(
            glob.glob("/usr/lib/postgresql/*/bin/initdb"),
            key=lambda p: int(Path(p).parent.parent.name.split(".")[0]),
        )
        found = versions[-1] if versions else None
    if found is None:
        return "no PostgreSQL server binaries (initdb): apt-get install postgresql"
    bindir = Path(os.path.realpath(found)).parent
    # The server's own psql: Debian's /usr/bin/psql is a wrapper that looks for clusters.
    psql = str(bindir / "psql") if (bindir / "psql").exists() else shutil.which("psql") or ""
    if not psql:
        return "no psql: apt-get install postgresql-client"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and there is no runuser to start the server as postgres"
    return bindir, psql


class Server:
    """A cluster started in a fresh temporary directory; :meth:`stop` removes it."""

    def __init__(self, bindir: Path, psql: str) -> None:
        self.psql = psql
        self.dir = Path(tempfile.mkdtemp(prefix="wb-pg-"))
        self.data = self.dir / "data"
        as_server: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, user="postgres")
            as_server = ["runuser", "-u", "postgres", "--"]
        self._as = as_server
        self._pg_ctl = str(bindir / "pg_ctl")
        run = {"check": True, "capture_output": True, "text": True}
        subprocess.run(
            [*as_server, str(bindir / "initdb"), "-D", str(self.data), "-U", "wb",
             "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
            **run,
        )  # fmt: skip
        options = f"-k {self.dir} -c listen_addresses='' -c fsync=off"
        subprocess.run(
            [*as_server, self._pg_ctl, "-D", str(self.data), "-o", options,
             "-l", str(self.dir / "log"), "-w", "start"],
            **run,
        )  # fmt: skip

    def query(self, sql: str, stop_on_error: bool = True) -> subprocess.CompletedProcess[str]:
        """``sql`` (one or more statements) run by psql; unaligned rows on stdout."""
        return subprocess.run(
            [self.psql, "-X", "-q", "-A", "-t", "-h", str(self.dir), "-U", "wb", "-d", "postgres",
             "-v", f"ON_ERROR_STOP={int(stop_on_error)}"],
            input=sql, capture_output=True, text=True, check=stop_on_error, timeout=600,
        )  # fmt: skip

    def stop(self) -> None:
        subprocess.run(
            [*self._as, self._pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(self.dir, ignore_errors=True)


def _pg_type(t: Type) -> str:
    if t.kind == "Map" or (t.kind == "Array" and t.element_type.kind == "Array"):
        return "JSONB"  # maps as {"key": [values]}; lists of lists are refused anyway
    if t.kind == "Array":
        return _pg_type(t.element_type) + "[]"
    return {"Bytes": "TEXT", "Ip": "TEXT", "Int": "BIGINT", "Bool": "BOOLEAN"}[t.kind]


def _text(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _literal(value: Any, t: Type) -> str:
    if value is None:
        return "NULL"
    sql_type = _pg_type(t)
    if sql_type == "JSONB":
        return f"CAST({_text(json.dumps(value, ensure_ascii=False))} AS JSONB)"
    if t.kind == "Array":
        items = ", ".join(_literal(v, t.element_type) for v in value)
        return f"CAST(ARRAY[{items}] AS {sql_type})"
    if t.kind == "Bool":
        return "TRUE" if value else "FALSE"
    if t.kind == "Int":
        return str(int(value))
    return _text(str(value))


def _holds_nul(value: Any) -> bool:
    # JSON writes NUL as an escape: look for that, not for the character.
    return "\\u0000" in json.dumps(value, ensure_ascii=False, default=str)


def storable(request: Mapping[str, Any]) -> bool:
    """True when PostgreSQL can hold the request as the table path does (UTF-8, no NUL)."""
    scheme = get_scheme("http")
    for name, value in request.items():
        t = scheme.field_type(name)
        if t is None:
            return False
        try:
            plain = _plain(value, t, name)
        except ValueError:
            return False
        if _holds_nul(plain):
            return False
    return True


def requests_table_sql(requests: Iterable[Mapping[str, Any]], name: str, fields: list[str]) -> str:
    """SQL creating table ``name`` (``rid`` from 1, one column per field) holding ``requests``."""
    scheme = get_scheme("http")
    types = {f: scheme.field_type(f) for f in fields}
    columns = ", ".join(f'"{f}" {_pg_type(t)}' for f, t in types.items() if t is not None)
    rows = []
    for rid, request in enumerate(requests, 1):
        values = [str(rid)]
        for f, t in types.items():
            assert t is not None
            values.append(_literal(_plain(request.get(f), t, f), t))
        rows.append("(" + ", ".join(values) + ")")
    return (
        f"CREATE TABLE {name} (rid BIGINT, {columns});\n"
        f"INSERT INTO {name} VALUES\n" + ",\n".join(rows) + ";\n"
    )
