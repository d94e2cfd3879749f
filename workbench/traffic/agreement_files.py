"""The agreement from files, as the terminal's ``workbench agreement LOG`` runs it.

The log is a HAR, an http_requests NDJSON or a combined log, told apart by
its content (:func:`workbench.traffic.importers.log_format`). The zone is
built from saved API responses (``config``, as ``workbench import`` reads
them; its firewall rules' new ids are mapped back to the log's) or is the
demo zone of ``workbench replay`` (an Enterprise zone with the previous WAF on
and both managed rulesets deployed), named as the log's first host. Recorded
decisions come from the log (the Security fields) or from ``events``
(firewall events, :mod:`workbench.traffic.importers_events`). Anything that
cannot be read raises :class:`AgreementInputError` naming the input, and for
a log its line, field and reason.

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
    '1 requests on example.com: 1 with a recorded decision, 1 agree, 0 disagree (100.0%)'
    >>> agreement_of_files(folder / "events.ndjson", events=folder / "access.log")
    Traceback (most recent call last):
    ...
    workbench.traffic.agreement_files.AgreementInputError: --events .../access.log: line 1: not firewall events: ...
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..core.platform import Workbench
from ..replay.run import demo_zone
from .agreement import Agreement
from .importers import log_format, read_log
from .importers_events import FirewallEvents, read_firewall_events
from .log_reading import LogLineError

#: The zone's name when neither the log nor ``--config`` gives one (a combined log).
DEFAULT_HOST = "example.com"


class AgreementInputError(ValueError):
    """An input of the agreement that cannot be read; the message names it."""


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
    try:
        combined = log_format(log) == "combined"
        imported = read_log(log, host=(host or name or DEFAULT_HOST) if combined else "")
    except LogLineError as exc:
        raise AgreementInputError(f"LOG {log}: {exc}") from None
    except OSError as exc:
        raise AgreementInputError(f"LOG: {exc}") from None
    if wb is None:
        wb, zone_id = demo_zone(host or zone_name(r.host for r in imported.requests), seed)
    found: FirewallEvents | None = None
    if events is not None:
        found = _events(events)
    return wb.traffic.agreement(zone_id, imported, events=found, rule_ids=rule_ids)


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


def _events(path: str | Path) -> FirewallEvents:
    try:
        return read_firewall_events(Path(path))
    except LogLineError as exc:
        raise AgreementInputError(f"--events {path}: {exc}") from None
    except OSError as exc:
        raise AgreementInputError(f"--events: {exc}") from None
