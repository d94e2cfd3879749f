"""Point-in-time recovery: a change log with checkpoints, and bookmarks into it.

Every committed write batch appends one record to a log kept in a separate
SQLite database with its own connection (never attached to the object's, so
user SQL cannot see it in ``PRAGMA table_list`` or reach it by an unqualified
name), written just after the batch's data commits.
A record is either the batch's
*changeset* (the rows it changed, from SQLite's session extension: cost
proportional to the batch, not to the database) or a *checkpoint* (a full
image of the database). Checkpoints are written when the schema changed, after
a restore, and when the changesets since the last checkpoint add up to more
than the database itself, so writes stay flat and a restore replays at most
about one database's worth of changes.

    >>> import apsw
    >>> conn = apsw.Connection(":memory:")
    >>> log = History(conn, None, now_ms=0)
    >>> log.bookmark(log.last_seq, 1767225600000)
    '0000019b76daa800-0000000000000000'

A bookmark is only text, so nothing written in it is trusted: :meth:`History.resolve`
accepts it only if it names a point this history holds (exact format, a time
within the last 30 days and not in the future, and a sequence number the log
agrees was current at that time), so no bookmark restores data from outside
the window:

    >>> log.resolve(log.bookmark(0, 1000), now_ms=5000)
    0
    >>> log.resolve(log.bookmark(0, 9000), now_ms=5000)
    Traceback (most recent call last):
    ...
    workbench.storage.errors.BookmarkError: bookmark 0000000000002328-0000000000000000 is in the future: its time 9000 is after now (5000)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import apsw

from .errors import BookmarkError

SCHEMA = "main"  # the log's own connection: the user's database never holds or attaches it
WINDOW_MS = 30 * 24 * 3600 * 1000
CHECKPOINT_MIN_BYTES = 256 * 1024
_INSERT = f"INSERT INTO {SCHEMA}.log VALUES (?, ?, ?, ?)"
_LAST = (1 << 63) - 1  # the largest sequence number SQLite holds
_BOOKMARK = re.compile(r"([0-9a-f]{16})-([0-9a-f]{16})")  # used with fullmatch: nothing around


class History:
    """The append-only change log of one object (see the module docstring)."""

    def __init__(self, data: apsw.Connection, path: Path | None, now_ms: int) -> None:
        self.data = data  # the object's database, imaged at checkpoints
        self.conn = conn = apsw.Connection(str(path) if path else ":memory:")
        self._c = conn.cursor()  # one cursor for the per-commit insert (cheaper than conn.execute)
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {SCHEMA}.log (seq INTEGER PRIMARY KEY, t_ms INTEGER NOT NULL,"
            " kind TEXT NOT NULL, data BLOB NOT NULL)"
        )
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {SCHEMA}.state (key TEXT PRIMARY KEY, value) WITHOUT ROWID"
        )
        row = self._one(f"SELECT max(seq) FROM {SCHEMA}.log")
        if row is None:
            with self._unlimited():
                conn.execute(
                    f"INSERT INTO {SCHEMA}.log VALUES (0, ?, 'checkpoint', ?)",
                    (now_ms, self._image()),
                )
            row = 0
        self.last_seq: int = row
        since = self._one(
            f"SELECT coalesce(sum(length(data)), 0) FROM {SCHEMA}.log WHERE seq > "
            f"(SELECT max(seq) FROM {SCHEMA}.log WHERE kind = 'checkpoint')"
        )
        self.bytes_since_checkpoint: int = since

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        """The first column of the first row (every query here returns one row; the
        log's schema fixes the column's type, which apsw cannot know)."""
        return self.conn.execute(sql, args).fetchall()[0][0]

    @contextmanager
    def _unlimited(self) -> Iterator[None]:
        """Lift the SQL API's 2.2 MB value limit while the log moves database images."""
        old = self.conn.limit(apsw.SQLITE_LIMIT_LENGTH, 1_000_000_000)
        try:
            yield
        finally:
            self.conn.limit(apsw.SQLITE_LIMIT_LENGTH, old)

    # -- writing (called as the batch commits) --------------------------------
    def _image(self) -> bytes:
        return self.data.serialize("main") or b""

    def begin(self) -> None:
        """Open a log transaction that ends with the object's write batch (a pending restore
        must not outlive a batch that failed); records alone need none."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")

    def commit(self) -> None:
        """Commit the log's transaction, if one is open (just after the batch's data)."""
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    def record(
        self, changeset: bytes, checkpoint: bool, t_ms: int, db_bytes: Callable[[], int]
    ) -> int:
        """Append one batch; returns its sequence number (``db_bytes`` is asked only when needed)."""
        self.bytes_since_checkpoint += len(changeset)
        if (
            checkpoint
            or self.bytes_since_checkpoint > CHECKPOINT_MIN_BYTES
            and self.bytes_since_checkpoint > db_bytes()
        ):
            kind, data = "checkpoint", self._image()
            self.bytes_since_checkpoint = 0
        else:
            kind, data = "changeset", changeset
        self.last_seq += 1
        if len(data) < 1_000_000:
            self._c.execute(_INSERT, (self.last_seq, t_ms, kind, data))
        else:
            with self._unlimited():
                self._c.execute(_INSERT, (self.last_seq, t_ms, kind, data))
        if kind == "checkpoint":
            self._prune(t_ms)
        return self.last_seq

    def rollback(self) -> None:
        """Drop what the batch logged and re-read the counters (the batch rolled back)."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.last_seq = self._one(f"SELECT max(seq) FROM {SCHEMA}.log")

    def _prune(self, now_ms: int) -> None:
        """Forget what lies before the newest checkpoint older than the window."""
        rows = self.conn.execute(
            f"SELECT max(seq) FROM {SCHEMA}.log WHERE kind = 'checkpoint' AND t_ms < ?",
            (now_ms - WINDOW_MS,),
        ).fetchall()
        if rows[0][0]:
            self.conn.execute(f"DELETE FROM {SCHEMA}.log WHERE seq < ?", (rows[0][0],))

    # -- bookmarks ----------------------------------------------------------
    @staticmethod
    def bookmark(seq: int, t_ms: int) -> str:
        """Bookmarks sort by time, then by sequence, under plain string comparison."""
        return f"{t_ms:016x}-{seq:016x}"

    @staticmethod
    def parse(bookmark: object) -> tuple[int, int]:
        """``(t_ms, seq)`` of a bookmark, or :class:`BookmarkError`."""
        if not isinstance(bookmark, str):
            raise TypeError(f"bookmark must be a str, not {type(bookmark).__name__}")
        m = _BOOKMARK.fullmatch(bookmark)
        if not m:
            shown = repr(bookmark[:80]) + ("..." if len(bookmark) > 80 else "")
            raise BookmarkError(
                f"bookmark {shown} is not a bookmark of this object (expected exactly 16 "
                "lowercase hex digits, '-', 16 lowercase hex digits, with nothing around them)"
            )
        return int(m.group(1), 16), int(m.group(2), 16)

    def resolve(self, bookmark: object, now_ms: int) -> int:
        """The sequence number ``bookmark`` names, if it names a point this history holds.

        The time written in a bookmark is not trusted: it must lie within the last 30
        days and not in the future, and the change log must agree that the state after
        its sequence number was the state at its time. So no bookmark, however it was
        made, restores data from outside the window.
        """
        t, seq = self.parse(bookmark)
        if t > now_ms:
            raise BookmarkError(
                f"bookmark {bookmark} is in the future: its time {t} is after now ({now_ms})"
            )
        if t < now_ms - WINDOW_MS:
            raise BookmarkError(
                f"bookmark {bookmark} is older than the 30-day recovery window (its time {t} "
                f"is before {now_ms - WINDOW_MS})"
            )
        self.check_reachable(seq)
        rows = self.conn.execute(
            f"SELECT seq, t_ms FROM {SCHEMA}.log WHERE seq IN (?, ?)", (seq, seq + 1)
        ).fetchall()
        times: dict[int, int] = {cast("int", r[0]): cast("int", r[1]) for r in rows}
        first = self._one(f"SELECT min(seq) FROM {SCHEMA}.log")
        # The state at time t is the one after the last change made at or before t (the
        # oldest record also stands for the time before it: the object did not exist yet).
        if times[seq] > t and seq != first:
            raise BookmarkError(
                f"bookmark {bookmark} does not match this object's history: change {seq} was "
                f"made at {times[seq]}, after the bookmark's time {t}"
            )
        if seq + 1 in times and times[seq + 1] < t:
            raise BookmarkError(
                f"bookmark {bookmark} does not match this object's history: at its time {t} "
                f"the object was already past change {seq} (change {seq + 1} was made at "
                f"{times[seq + 1]})"
            )
        return seq

    def seq_at(self, t_ms: int) -> int:
        """The last sequence number committed at or before ``t_ms``."""
        row: int | None = self._one(f"SELECT max(seq) FROM {SCHEMA}.log WHERE t_ms <= ?", (t_ms,))
        if row is None:
            row = self._one(f"SELECT min(seq) FROM {SCHEMA}.log")
        return row

    def check_reachable(self, seq: int) -> None:
        """Raise unless the state after ``seq`` can still be rebuilt."""
        if seq > self.last_seq:
            raise BookmarkError(f"bookmark points past the newest change (sequence {seq})")
        first: int | None = self._one(
            f"SELECT min(seq) FROM {SCHEMA}.log WHERE kind = 'checkpoint'"
        )
        if first is None or seq < first:
            raise BookmarkError("bookmark is older than the 30-day recovery window")

    def newest_time(self) -> int:
        """The virtual time of the newest record."""
        newest: int | None = self._one(f"SELECT max(t_ms) FROM {SCHEMA}.log")
        return newest or 0

    def timeline(self) -> list[tuple[int, int, str, int]]:
        """``(seq, t_ms, kind, bytes)`` of every record, oldest first."""
        rows = self.conn.execute(
            f"SELECT seq, t_ms, kind, length(data) FROM {SCHEMA}.log ORDER BY seq"
        ).fetchall()
        return cast("list[tuple[int, int, str, int]]", rows)

    def records(
        self, after: int = -1, upto: int = _LAST, kind: str | None = None
    ) -> list[tuple[int, int, str, bytes]]:
        """``(seq, t_ms, kind, data)`` of the records after ``after`` up to ``upto``, oldest
        first (all of them by default; only changesets or checkpoints with ``kind``)."""
        with self._unlimited():
            rows = self.conn.execute(
                f"SELECT seq, t_ms, kind, data FROM {SCHEMA}.log WHERE seq > ? AND seq <= ?"
                " AND kind = coalesce(?, kind) ORDER BY seq",
                (after, upto, kind),
            ).fetchall()
        return cast("list[tuple[int, int, str, bytes]]", rows)

    # -- rebuilding ---------------------------------------------------------
    def state_at(self, seq: int) -> apsw.Connection:
        """A fresh in-memory connection holding the database as it was after ``seq``."""
        self.check_reachable(seq)
        with self._unlimited():
            return self._rebuild(seq)

    def _rebuild(self, seq: int) -> apsw.Connection:
        base, image = self.conn.execute(
            f"SELECT seq, data FROM {SCHEMA}.log WHERE kind = 'checkpoint' AND seq <= ?"
            " ORDER BY seq DESC LIMIT 1",
            (seq,),
        ).fetchall()[0]
        tmp = apsw.Connection(":memory:")
        if image:
            tmp.deserialize("main", image)
        for _seq, _t_ms, _kind, data in self.records(cast("int", base), seq):
            apsw.Changeset.apply(data, tmp)
        return tmp

    def close(self) -> None:
        self.conn.close()

    # -- restores, as the timeline names them ---------------------------------
    def mark_restore(self, seq: int, restored: int) -> None:
        """Remember that batch ``seq`` restored the state after batch ``restored``."""
        self.conn.execute(
            f"INSERT OR REPLACE INTO {SCHEMA}.state VALUES (?, ?)", (f"restored:{seq}", restored)
        )

    def restores(self) -> dict[int, int]:
        """Batch -> the batch whose state it restored, for every restore still kept."""
        rows = self.conn.execute(
            f"SELECT key, value FROM {SCHEMA}.state WHERE key LIKE 'restored:%'"
        ).fetchall()
        return {int(str(k).split(":", 1)[1]): int(cast("int", v)) for k, v in rows}

    # -- the pending restore -------------------------------------------------
    def pending(self) -> str | None:
        rows = self.conn.execute(
            f"SELECT value FROM {SCHEMA}.state WHERE key = 'restore'"
        ).fetchall()
        return cast("str", rows[0][0]) if rows else None

    def set_pending(self, bookmark: str | None) -> None:
        self.begin()
        if bookmark is None:
            self.conn.execute(f"DELETE FROM {SCHEMA}.state WHERE key = 'restore'")
        else:
            self.conn.execute(
                f"INSERT OR REPLACE INTO {SCHEMA}.state VALUES ('restore', ?)", (bookmark,)
            )
