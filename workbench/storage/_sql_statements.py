"""The statements of a ``sql.exec`` string: split apart and described, before SQLite runs any.

The platform runs a multi-statement string statement by statement, refuses
transaction control, and allows parameters only in the last statement; this
module finds those facts from the text alone (comments and quoted text
ignored). A statement the platform would refuse when it comes to prepare it
carries that refusal (``refused``), so the statements before it still run, as
they do on the platform (not atomic):

    >>> [s.keyword for s in split_sql("CREATE TABLE t(x); INSERT INTO t VALUES (?)")]
    ['CREATE', 'INSERT']
    >>> split_sql("SELECT ';' -- a comment")[0].has_params
    False
    >>> [s.refused for s in split_sql("INSERT INTO t VALUES (1); BEGIN")][0]
    >>> split_sql("INSERT INTO t VALUES (1); BEGIN")[1].refused[:24]
    'To execute a transaction'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import apsw

from .errors import SqlError
from .names import is_hidden, is_reserved

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*'?|[xX]'[^']*'?)
  | (?P<quoted>"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?)
  | (?P<param>\?\d*|[:@$][A-Za-z0-9_]+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
  | (?P<semi>;)
  | (?P<other>.)
    """,
    re.S | re.X,
)
TRANSACTION_WORDS = {"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"}
TRANSACTION_MESSAGE = (
    "To execute a transaction, please use the state.storage.transaction() or "
    "state.storage.transactionSync() APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT "
    "statements. The JavaScript API is safer because it will automatically roll back on "
    "exceptions, and because it interacts correctly with Durable Objects' automatic atomic "
    "write coalescing."
)
NO_STATEMENT = "SQL code did not contain a statement."


@dataclass
class Statement:
    """One statement of an ``exec`` call, with what its words say about it."""

    text: str
    keyword: str = ""
    words: list[str] = field(default_factory=list)
    has_params: bool = False
    #: the error the platform gives when it comes to prepare this statement (the
    #: statements before it have run by then), or None
    refused: str | None = None

    def has(self, word: str) -> bool:
        if self._wordset is None:
            self._wordset = frozenset(self.words)
        return word in self._wordset

    _wordset: frozenset[str] | None = field(default=None, repr=False, compare=False)
    _kind: str | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str:
        """select, insert, update, delete, create, drop, alter, pragma or other."""
        if self._kind is None:
            self._kind = self._find_kind()
        return self._kind

    def _find_kind(self) -> str:
        k = self.keyword
        if k in ("SELECT", "VALUES"):
            return "select"
        if k == "WITH":
            for w in ("INSERT", "REPLACE", "UPDATE", "DELETE"):
                if w in self.words:
                    return "insert" if w == "REPLACE" else w.lower()
            return "select"
        if k == "REPLACE":
            return "insert"
        if k in ("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "PRAGMA"):
            return k.lower()
        return "other"

    def hidden_reference(self) -> str | None:
        """A hidden name this statement would bring into the schema, which SQLite does not
        show the authorizer: the new name of ``ALTER TABLE t RENAME TO x``, or a name used
        inside ``CREATE VIEW`` / ``CREATE TRIGGER`` (their bodies are only checked when run).
        """
        if self.keyword == "ALTER":
            target = _rename_target(_tokens(self.text))
            return target if target is not None and is_hidden(target) else None
        if self.keyword == "CREATE" and ("VIEW" in self.words[1:3] or self.has("TRIGGER")):
            return next((w for w in self.words if is_reserved(w)), None)
        return None

    def object_after(self, *lead: str) -> str | None:
        """The name after e.g. ``DROP TABLE [IF EXISTS] [schema.]name`` (unquoted)."""
        n = len(lead)
        if self.words[:n] != list(lead):
            return None
        toks = _tokens(self.text)[n:]
        if [v.upper() for _, v in toks[:2]] == ["IF", "EXISTS"]:
            toks = toks[2:]
        if len(toks) >= 3 and toks[1] == ("other", "."):
            toks = toks[2:]  # a schema prefix
        return _name(toks[0]) if toks else None


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind in ("ws", "comment"):
            continue
        value = m.group()
        if kind == "quoted":
            value = value[1:-1].replace(value[0] * 2, value[0]) if len(value) > 1 else value
            kind = "word_q"
        out.append((kind, value))
    return out


def _name(token: tuple[str, str]) -> str | None:
    kind, value = token
    if kind in ("word", "word_q"):
        return value
    if kind == "string" and value[:1] == "'":  # SQLite accepts 'x' where a name is expected
        return value[1:-1].replace("''", "'")
    return None


def _rename_target(toks: list[tuple[str, str]]) -> str | None:
    """``x`` in ``ALTER TABLE [schema.]name RENAME TO x`` (not a column rename)."""
    words = [v.upper() if k == "word" else "" for k, v in toks]
    if words[:2] != ["ALTER", "TABLE"] or len(toks) < 6:
        return None
    i = 3  # just after the table's name
    if toks[i] == ("other", "."):
        i += 2
    if words[i : i + 2] != ["RENAME", "TO"] or len(toks) <= i + 2:
        return None
    return _name(toks[i + 2])


def _describe(text: str) -> Statement | None:
    toks = [t for t in _tokens(text) if t[0] != "semi"]
    if not toks:
        return None
    words = [v.upper() if k == "word" else v for k, v in toks if k in ("word", "word_q")]
    first = toks[0][1].upper() if toks[0][0] == "word" else ""
    return Statement(
        text=text,
        keyword=first,
        words=words,
        has_params=any(k == "param" for k, _ in toks),
    )


_AUTH = "not authorized: SQLITE_AUTH"


@lru_cache(maxsize=512)
def split_sql(query: str) -> tuple[Statement, ...]:
    """The statements of ``query`` in order. A statement the platform refuses when it
    prepares it (transaction control, parameters before the last statement, a hidden name
    brought in, an empty piece) is returned with ``refused`` set and ends the list: the
    ones before it run first. An empty ``query`` raises :class:`SqlError` at once."""
    pieces: list[str] = []
    start = 0
    for m in _TOKEN.finditer(query):
        if m.lastgroup == "semi" and apsw.complete(query[start : m.end()]):
            pieces.append(query[start : m.end()])
            start = m.end()
    tail = query[start:]
    if tail.strip():
        pieces.append(tail)
    statements: list[Statement] = []
    for i, piece in enumerate(pieces):
        st = _describe(piece)
        last = i == len(pieces) - 1
        if st is None:
            st = Statement(text=piece, refused=NO_STATEMENT)
        elif st.keyword in TRANSACTION_WORDS:
            st.refused = TRANSACTION_MESSAGE
        elif st.has_params and not last:
            st.refused = (
                "When executing multiple SQL statements in a single call, only the last "
                "statement can have parameters."
            )
        elif st.hidden_reference() is not None:
            st.refused = _AUTH
        statements.append(st)
        if st.refused is not None:
            break
    if not statements:
        raise SqlError(NO_STATEMENT)
    if statements[0].refused is not None:
        raise SqlError(statements[0].refused, _code(statements[0].refused))
    return tuple(statements)


def refusal(st: Statement) -> SqlError:
    """The error of a statement the platform refuses (``st.refused`` is set)."""
    assert st.refused is not None
    return SqlError(st.refused, _code(st.refused))


def _code(message: str) -> str:
    return "SQLITE_AUTH" if message == _AUTH else "SQLITE_ERROR"
