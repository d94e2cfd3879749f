"""The agreement from files: as the terminal's ``workbench agreement LOG`` runs it, or uploaded.

The log is a HAR, an http_requests NDJSON or a combined log, told apart by
its content (:func:`workbench.traffic.importers.log_format`). The zone is
built from saved API responses (``config``, as ``workbench import`` reads
them; its firewall rules' new ids are mapped back to the log's) or is the
demo zone of ``workbench replay`` (an Enterprise zone with the previous WAF on
and both managed rulesets deployed), named as the log's first host. Recorded
decisions come from the log (the Security fields) or from ``events``
(firewall events, :mod:`workbench.traffic.importers_events`). Anything that
cannot be read raises :class:`AgreementInputError` naming the input, and for
a log its line, field and reason. :func:`agreement_of_uploads` does the same
for files given as their bytes (the events explorer's uploads) against a zone
of a Workbench: a log mistaken for the events, or the events for the log, is
named as such.

    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "access.log").write_text(
    ...     '192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET /?id=1%27%20or%20%271%27=%271 HTTP/1.1" 403 9 "-" "curl/8"\\n')
    >>> _ = (folder / "events.ndjson").write_text(
    ...     '{"Datetime": "2026-03-02T09:00:00Z", "ClientRequestPath": "/", "ClientRequestQuery": '
    ...     '"?id=1%27%20or%20%271%27=%271", "Action": "block", "Source": "firewallmanaged", '
    ...     '"RuleID": "95bfdcf56eb4211b601810e309eb0873", "RayID": "8f1c2a3b4d5e6f70"}\\n')
    >>> done = agreement_of_files(folder / "access.log", events=folder / "events.ndjson")
    >>> done.headline()
    '1 request on example.com: 1 with a recorded decision, 1 agree, 0 disagree (100.0%)'
    >>> agreement_of_files(folder / "events.ndjson", events=folder / "access.log")
    Traceback (most recent call last):
    ...
    workbench.traffic.agreement_files.AgreementInputError: LOG .../events.ndjson: holds firewall events, not requests: ...
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..core.platform import Workbench
from ..replay.run import demo_zone
from .agreement import Agreement
from .importers import content_format, read_log_bytes
from .importers_events import FirewallEvents, read_firewall_events
from .log_reading import Imported, LogLineError

#: The zone's name when neither the log nor ``--config`` gives one (a combined log).
DEFAULT_HOST = "example.com"


class AgreementInputError(ValueError):
    """An input of the agreement that cannot be read; the message names it.

    ``source`` is the input's name (the file's), ``reason`` what is wrong; for a
    line that cannot be read, ``line`` (from 1) and ``field`` (the log's name
    for it, ``""`` when the whole line is at fault) too. The message is
    ``"<source>: line <line>: <reason>"``, without the line when there is none.
    """

    def __init__(
        self, message: str, *, source: str = "", reason: str = "", line: int = 0, field: str = ""
    ) -> None:
        super().__init__(message)
        self.source, self.reason, self.line, self.field = source, reason or message, line, field

    @classmethod
    def of(cls, source: str, reason: str, line: int = 0, field: str = "") -> AgreementInputError:
        """The error of ``source``: ``reason``, at ``line`` (0: the whole input)."""
        where = f"line {line}: " if line else ""
        return cls(
            f"{source}: {where}{reason}", source=source, reason=reason, line=line, field=field
        )


def agreement_of_files(
    log: str | Path,
    *,
    config: str | Path | None = None,
    events: str | Path | None = None,
    host: str = "",
    seed: int = 0,
) -> Agreement:
    """Read ``log`` (and ``events``), set up the zone, replay and compare (module docstring).

    ``host`` is the host of a combined log's requests (default: the zone's
    name); ``seed`` seeds the Workbench.
    """
    rule_ids: dict[str, str] | None = None
    wb: Workbench | None = None
    name = host
    if config is not None:
        from ..zone_import import ZoneImportError, import_zone

        wb = Workbench(seed=seed)
        try:
            done = import_zone(wb, config)
        except ZoneImportError as exc:
            raise AgreementInputError(f"--config: {exc}") from None
        zone_id, name, rule_ids = done.zone.id, done.zone.name, done.ids["firewall_rules"]
    imported, found = read_inputs(
        _bytes(log, "LOG"),
        f"LOG {log}",
        host or name or DEFAULT_HOST,
        None if events is None else _bytes(events, "--events"),
        f"--events {events}",
    )
    if wb is None:
        wb, zone_id = demo_zone(host or zone_name(r.host for r in imported.requests), seed)
    return wb.traffic.agreement(zone_id, imported, events=found, rule_ids=rule_ids)


def _bytes(path: str | Path, option: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise AgreementInputError(f"{option}: {exc}") from None


def agreement_of_uploads(
    wb: Workbench,
    zone_id: str,
    log: bytes,
    *,
    name: str = "the log",
    events: bytes | None = None,
    events_name: str = "the firewall events",
) -> Agreement:
    """Read ``log`` (a HAR, http_requests NDJSON or combined log, as bytes) and ``events``
    (firewall_events NDJSON or a GraphQL export), then replay through the zone and compare.

    ``name`` and ``events_name`` (the uploaded files' names) name them in
    errors. A combined log's requests get the zone's name as their host. An
    input that cannot be read raises :class:`AgreementInputError` with its
    line, field and reason; so does an empty log, and firewall events given as
    the log or a log given as the events (each says where it belongs).

        >>> from workbench.replay.run import demo_zone
        >>> wb, zone_id = demo_zone("shop.example")
        >>> line = b'192.0.2.1 - - [02/Mar/2026:09:00:00 +0000] "GET /?id=1%27%20or%20%271%27=%271 HTTP/1.1" 403 9'
        >>> event = (b'{"Datetime": "2026-03-02T09:00:00Z", "ClientRequestPath": "/", "ClientRequestQuery": '
        ...          b'"?id=1%27%20or%20%271%27=%271", "Action": "block", "Source": "waf", "RuleID": "x", '
        ...          b'"RayID": "8f1c2a3b4d5e6f70"}')
        >>> agreement_of_uploads(wb, zone_id, line, name="access.log", events=event).headline()
        '1 request on shop.example: 1 with a recorded decision, 1 agree, 0 disagree (100.0%)'
        >>> agreement_of_uploads(wb, zone_id, event, name="events.ndjson")
        Traceback (most recent call last):
        ...
        workbench.traffic.agreement_files.AgreementInputError: events.ndjson: holds firewall events, not requests: give it as the firewall events, with the log it belongs to
    """
    zone = wb.zone(zone_id)
    imported, found = read_inputs(log, name, zone.name, events, events_name)
    return wb.traffic.agreement(zone.id, imported, events=found)


def read_inputs(
    log: bytes, name: str, host: str, events: bytes | None, events_name: str
) -> tuple[Imported, FirewallEvents | None]:
    """``log`` and ``events`` read as :func:`agreement_of_uploads` says (``host``: a combined
    log's); the one reader of both entry points, so a file and an upload get the same errors."""
    if not bytes(log).strip():
        raise AgreementInputError.of(name, "the file is empty")
    try:
        imported = read_log_bytes(log, host=host)
    except LogLineError as exc:
        if _are_events(log):
            raise AgreementInputError.of(name, _EVENTS_AS_LOG) from None
        raise AgreementInputError.of(name, exc.reason, exc.line, exc.field) from None
    if not imported.requests:
        raise AgreementInputError.of(name, f"holds no requests (read as {imported.format})")
    if imported.format == "http_requests" and not any(imported.recorded) and _are_events(log):
        raise AgreementInputError.of(name, _EVENTS_AS_LOG)
    if events is None:
        return imported, None
    try:
        return imported, read_firewall_events(bytes(events))
    except LogLineError as exc:
        requests = _requests(events)
        if requests is not None:
            raise AgreementInputError.of(
                events_name,
                f"holds HTTP requests ({requests.format}), not firewall events: give it as the log",
            ) from None
        raise AgreementInputError.of(events_name, exc.reason, exc.line, exc.field) from None


_EVENTS_AS_LOG = (
    "holds firewall events, not requests: give it as the firewall events, with the log it "
    "belongs to"
)


def _are_events(content: bytes) -> bool:
    """Whether ``content`` reads whole as firewall events (at least one)."""
    try:
        return len(read_firewall_events(bytes(content))) > 0
    except LogLineError:
        return False


def _requests(content: bytes) -> Imported | None:
    """``content`` read as a request log that records decisions or is no NDJSON, else None."""
    try:
        imported = read_log_bytes(content)
    except LogLineError:
        return None
    if not imported.requests or (
        content_format(content) == "http_requests" and not any(imported.recorded)
    ):
        return None  # NDJSON of something else: the events' own error says more
    return imported


def zone_name(hosts: Iterable[str]) -> str:
    """The zone a log's hosts belong to: the one all others are subdomains of, else the commonest.

    >>> zone_name(["www.shop.example", "shop.example", "api.shop.example"])
    'shop.example'
    >>> zone_name(["a.example", "b.example", "b.example"]), zone_name([])
    ('b.example', 'example.com')
    """
    counts = Counter(h.lower() for h in hosts if h)
    for name in sorted(counts, key=len):
        if all(h == name or h.endswith("." + name) for h in counts):
            return name
    return counts.most_common(1)[0][0] if counts else DEFAULT_HOST
