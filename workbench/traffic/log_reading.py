"""What every log reader shares: its result, its errors, and the lines it reads.

A reader turns one line (or, for a HAR or a GraphQL export, one JSON entry)
into a :class:`~workbench.traffic.request.Request` and a :class:`Logged`: what
the log said about that request besides the request itself (where it was, its
ray id, the decision the platform recorded, and which parts of the request the
log carries). A line that cannot be read raises :class:`BadValue` naming the
field at fault; :func:`each_item`, every reader's loop, adds the line number
and raises :class:`LogLineError`, or with ``skip_bad=True`` counts it and goes
on. A line is read whole or not at all.

    >>> def parse(text):
    ...     if not text.isdigit():
    ...         raise BadValue(f"{text!r} is not a number", field="n")
    ...     return Request(url=f"/{text}"), Logged(0)
    >>> got = read_lines(["1", "", "x", "3"], parse, skip_bad=True, format="digits")
    >>> [r.url for r in got.requests], [m.line for m in got.logged], got.format
    (['/1', '/3'], [1, 4], 'digits')
    >>> err = got.errors[0]
    >>> err.line, err.field, err.reason, str(err)
    (3, 'n', "'x' is not a number", "line 3: 'x' is not a number")
"""

from __future__ import annotations

import bisect
import gc
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.errors import json_kind
from .request import Request
from .textvalues import as_text, field_text

if TYPE_CHECKING:
    from .decisions import Recorded

T = TypeVar("T")
R = TypeVar("R")


class LogLineError(ValueError):
    """A log line that cannot be read: its number (from 1), the field at fault, what is wrong.

    ``field`` is the log's own name for it (``ClientASN``,
    ``log.entries[3].request.url``), or ``""`` when the whole line is at fault
    (not JSON, not in the format). The message is ``line N: reason``; the
    reason names the field too.
    """

    def __init__(self, line: int, reason: str, field: str = "") -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason
        self.field = field


class BadValue(Exception):
    """What is wrong with one line, and the field at fault (the reader adds the line number)."""

    def __init__(self, reason: str, field: str = "") -> None:
        super().__init__(reason)
        self.field = field


#: The parts of a request a log may or may not carry (see :attr:`Logged.parts`).
PARTS = ("host", "headers", "cookies", "body", "client_ip", "country", "asn", "tls")


@dataclass(frozen=True)
class Logged:
    """What a log said of one request besides the request: where, its ray id, its decision.

    ``line`` is the line number (a HAR's or an export's: the line its entry
    starts on). ``ray_id`` is the platform's ray id when the log has one.
    ``recorded`` is the decision the platform recorded (None: the log records
    none, see :mod:`workbench.traffic.decisions`). ``parts`` are the parts of
    :data:`PARTS` the log carries for this request; a part it lacks was not
    replayed (a log without bodies gives requests without bodies).
    """

    line: int
    ray_id: str = ""
    recorded: Recorded | None = None
    parts: frozenset[str] = frozenset()


@dataclass
class Imported:
    """What a reader gave: the requests, what the log said of each, and the lines it skipped.

    ``logged[i]`` belongs to ``requests[i]``. ``format`` names the log's format
    (``http_requests``, ``combined``, ``har``).
    """

    requests: list[Request] = field(default_factory=list)
    errors: list[LogLineError] = field(default_factory=list)
    logged: list[Logged] = field(default_factory=list)
    format: str = ""

    @property
    def skipped(self) -> int:
        """How many lines were skipped as bad."""
        return len(self.errors)

    def __len__(self) -> int:
        return len(self.requests)

    def __iter__(self) -> Iterator[Request]:
        return iter(self.requests)

    def logged_at(self, index: int) -> Logged:
        """What the log said of request ``index`` (nothing known when the reader kept nothing)."""
        return self.logged[index] if index < len(self.logged) else Logged(0)

    @property
    def recorded(self) -> list[Recorded | None]:
        """Each request's recorded decision (None where the log records none)."""
        return [self.logged_at(i).recorded for i in range(len(self.requests))]


def is_file_name(source: Any) -> bool:
    """Whether ``source`` names a file (a Path, or a one-line str naming an existing file)."""
    return isinstance(source, Path) or (
        isinstance(source, str) and "\n" not in source and os.path.isfile(source)
    )


def source_lines(source: Any) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line: a Path, or a str naming a file, is read as bytes;
    other text is the log itself."""
    if is_file_name(source):
        with open(source, "rb") as f:
            for n, raw in enumerate(f, 1):
                yield n, as_text(raw).rstrip("\r\n")
        return
    if isinstance(source, str):
        source = source.splitlines()
    for n, raw in enumerate(source, 1):
        yield n, as_text(raw).rstrip("\r\n")


def source_text(source: Any) -> str:
    """The whole of ``source`` as text (a file named or given as a Path, text, or lines)."""
    if is_file_name(source):
        return as_text(Path(source).read_bytes())
    if isinstance(source, str | bytes | bytearray):
        return as_text(source)
    return "\n".join(text for _, text in source_lines(source))


def read_lines(
    source: Any,
    parse: Callable[[str], tuple[Request, Logged]],
    skip_bad: bool,
    format: str,
) -> Imported:
    """Each non-blank line through ``parse``; bad lines raise or are skipped (``skip_bad``)."""
    out = Imported(format=format)
    # A log is many small objects that live on and hold no cycles: the cyclic collector
    # would rescan them again and again for nothing, so it pauses (as the replay does).
    collecting = gc.isenabled()
    gc.disable()
    try:
        lines = ((n, text) for n, text in source_lines(source) if text.strip())
        for n, (request, logged) in each_item(lines, parse, skip_bad, out.errors):
            out.requests.append(request)
            out.logged.append(Logged(n, logged.ray_id, logged.recorded, logged.parts))
    finally:
        if collecting:
            gc.enable()
    return out


def each_item(
    items: Iterable[tuple[int, T]],
    parse: Callable[[T], R],
    skip_bad: bool,
    errors: list[LogLineError],
) -> Iterator[tuple[int, R]]:
    """``(line, parse(item))`` of each ``(line, item)``; an item ``parse`` finds bad
    raises :class:`LogLineError` at its line, or with ``skip_bad`` goes to ``errors``."""
    for n, item in items:
        try:
            parsed = parse(item)
        except BadValue as bad:
            error = LogLineError(n, str(bad), bad.field)
            if not skip_bad:
                raise error from None
            errors.append(error)
            continue
        yield n, parsed


def json_object(text: str, kind: Callable[[Any], str] = json_kind) -> dict[str, Any]:
    """One line parsed as a JSON object, or :class:`BadValue` (``kind`` names what it was)."""
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise BadValue(f"not JSON ({short(exc)})") from None
    if not isinstance(record, dict):
        raise BadValue(f"not a JSON object ({kind(record)})")
    return record


def short(exc: BaseException) -> str:
    """The first line of an exception's message, at most 120 characters."""
    return str(exc).split("\n", 1)[0][:120]


def quoted(text: str) -> str:
    """``text`` quoted for an error message: short, and raw bytes shown as ``\\xNN``."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    value = field_text(shown)
    return repr(value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value)


def log_time(value: Any, name: str) -> datetime | None:
    """A log's time field: RFC 3339 text, or Unix seconds, milliseconds or nanoseconds (UTC).

    None stays None; anything else that is no time raises :class:`BadValue` naming ``name``.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise BadValue(f"{name} must be a time, got a boolean", name)
    if isinstance(value, int | float):
        # Logpush writes Unix seconds, milliseconds or nanoseconds, by configuration.
        magnitude = abs(value)
        seconds = value / 1e9 if magnitude >= 1e17 else value / 1e3 if magnitude >= 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise BadValue(f"{name} {value!r} is out of range", name) from None
    if isinstance(value, str):
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise BadValue(f"{name} {quoted(value)} is not an RFC 3339 time", name) from None
        return stamp.astimezone(UTC) if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    raise BadValue(f"{name} must be a time, got {type(value).__name__}", name)


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def element_lines(text: str, path: Sequence[str]) -> list[int]:
    r"""The line each element of the JSON array at ``path`` starts on (``text`` is valid JSON).

    ``path`` is a list of object keys, ``"*"`` standing for every element of
    an array on the way. Errors in a HAR or an export name these lines.

    >>> element_lines('{"log": {"entries": [\n  {"a": 1},\n  {"a": 2}]}}', ["log", "entries"])
    [2, 3]
    >>> element_lines('{"d": [{"e": [1]}, {"e": [\n2, 3]}]}', ["d", "*", "e"])
    [1, 2, 2]
    """
    offsets: list[int] = []

    def space(i: int) -> int:
        found = _SPACE.match(text, i)
        return found.end() if found else i

    def walk(i: int, rest: Sequence[str]) -> int:
        """Record what ``rest`` leads to in the value at ``i``; return where the value ends."""
        i = space(i)
        if text.startswith("[", i) and (not rest or rest[0] == "*"):
            i = space(i + 1)
            if text.startswith("]", i):
                return i + 1
            while True:
                i = space(i)
                if rest:
                    i = walk(i, rest[1:])
                else:
                    offsets.append(i)
                    i = _DECODER.raw_decode(text, i)[1]
                i = space(i)
                if not text.startswith(",", i):
                    return i + 1
                i += 1
        if text.startswith("{", i) and rest and rest[0] != "*":
            i = space(i + 1)
            if text.startswith("}", i):
                return i + 1
            while True:
                key, i = _DECODER.raw_decode(text, space(i))
                i = space(space(i) + 1)  # past the colon
                i = walk(i, rest[1:]) if key == rest[0] else _DECODER.raw_decode(text, i)[1]
                i = space(i)
                if not text.startswith(",", i):
                    return i + 1
                i += 1
        return _DECODER.raw_decode(text, i)[1]

    walk(0, path)
    newlines = [m.start() for m in re.finditer("\n", text)]
    return [bisect.bisect_left(newlines, offset) + 1 for offset in offsets]


def json_document(text: str, what: str) -> Any:
    """``text`` parsed as one JSON document, or :class:`LogLineError` at the line of its fault."""
    try:
        return json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise LogLineError(
            exc.lineno, f"{what} is not JSON ({exc.msg}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise LogLineError(1, f"{what} is not JSON (nested too deep)") from None
