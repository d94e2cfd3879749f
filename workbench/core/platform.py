"""The Workbench: one simulated platform (account, zones, clock, ids).

Every service of the workbench hangs off one ``Workbench``; faces receive it
and never build their own state, so a test or a notebook gets a fresh,
deterministic platform from one line.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=7)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> zone.plan, len(zone.id), wb.zone("example.com") is zone
    ('pro', 32, True)

The event log (``wb.logs``) is the platform's: the traffic service replays into
it and the Durable Object runtime (``wb.storage``, on ``wb.clock``) bills its
SQL statements into it, so one DuckDB query reads both.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ._ids import IdGenerator
from .clock import DEFAULT_START, VirtualClock, iso
from .errors import InvalidZone, ZoneExists, ZoneNotFound
from .paging import Page, page_args
from .plans import PLAN_NAMES, plan
from .text import quotable, utf8_problem

if TYPE_CHECKING:
    import os

    from ..firewall.service import FirewallService
    from ..logs.store import EventLog
    from ..migration.service import MigrationService
    from ..rulesets.service import RulesetsService
    from ..storage.runtime import Runtime
    from ..traffic.service import TrafficService
    from ..tuning.service import TuningService
    from ..waf_legacy.service import WafLegacyService

PLANS = PLAN_NAMES

# Zone names as the platform accepts them: dotted labels of letters, digits and hyphens.
_ZONE_NAME = re.compile(r"^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


@dataclass
class ApiToken:
    """An API token, scoped to some zones (``None`` means every zone of the account)."""

    id: str
    value: str
    zone_ids: frozenset[str] | None = None

    def allows(self, zone_id: str) -> bool:
        """True when the token may act on ``zone_id``."""
        return self.zone_ids is None or zone_id in self.zone_ids


@dataclass
class Account:
    """The account that owns the zones, with its global API key and tokens."""

    id: str
    email: str
    api_key: str
    tokens: list[ApiToken] = field(default_factory=list)


@dataclass
class Zone:
    """A zone: a domain on one plan. Services keep their per-zone state elsewhere."""

    id: str
    name: str
    plan: str
    created_on: datetime

    def to_dict(self) -> dict[str, Any]:
        """The zone as the v4 API shows it."""
        return {
            "id": self.id,
            "name": self.name,
            "status": "active",
            "plan": {
                "id": self.plan,
                "name": plan(self.plan).title,
                "legacy_id": self.plan,
            },
            "created_on": iso(self.created_on),
            "modified_on": iso(self.created_on),
        }


class Workbench:
    """One simulated platform: a virtual clock, seeded ids, an account and its zones.

    Parameters
    ----------
    seed:
        Seeds the id generator; the same seed gives the same ids and outputs.
    start:
        Where the virtual clock starts (timezone-aware).
    """

    def __init__(self, seed: int = 0, start: datetime = DEFAULT_START) -> None:
        self.seed = seed
        self.clock = VirtualClock(start)
        self.ids = IdGenerator(seed)
        self.account = Account(
            id=self.ids.new_id(),
            email="user@example.com",
            api_key=self.ids.hex(37),
        )
        self.account.tokens.append(ApiToken(id=self.ids.new_id(), value=self.ids.token(40)))
        self._zones: dict[str, Zone] = {}

    def __repr__(self) -> str:
        return f"Workbench(seed={self.seed}, now={iso(self.now())}, zones={len(self._zones)})"

    # -- time -------------------------------------------------------------
    def now(self) -> datetime:
        """The current virtual time."""
        return self.clock.now()

    def advance(self, delta: timedelta | None = None, **units: float) -> datetime:
        """Move the virtual clock forward (``wb.advance(minutes=5)``) and return the new time."""
        return self.clock.advance(delta, **units)

    def new_id(self) -> str:
        """A fresh seeded 32-hex id."""
        return self.ids.new_id()

    # -- zones ------------------------------------------------------------
    def create_zone(self, name: str, plan: str = "free") -> Zone:
        """Add a zone on ``plan`` (free, pro, business or enterprise)."""
        problem = utf8_problem(name) if isinstance(name, str) else None
        if problem is not None:
            raise InvalidZone(f"zone name {name!r} {problem}")
        if not isinstance(name, str) or not _ZONE_NAME.match(name.lower()):
            raise InvalidZone(f"zone name {name!r} is not a valid domain name")
        plan_name = _plan_name(plan)
        name = name.lower()
        if any(z.name == name for z in self._zones.values()):
            raise ZoneExists(f"{name} already exists")
        zone = Zone(id=self.new_id(), name=name, plan=plan_name, created_on=self.now())
        self._zones[zone.id] = zone
        return zone

    def import_zone(self, folder: str | os.PathLike[str]) -> Zone:
        """Add a zone from a folder of saved API responses; all or nothing.

        The file names and rules: :mod:`workbench.zone_import`.
        """
        from ..zone_import import import_zone

        return import_zone(self, folder).zone

    def zone(self, id_or_name: str) -> Zone:
        """The zone with this id or name."""
        zone = self._zones.get(id_or_name)
        if zone is None:
            zone = next((z for z in self._zones.values() if z.name == id_or_name), None)
        if zone is None:
            raise ZoneNotFound(quotable(id_or_name))
        return zone

    def zone_by_id(self, zone_id: str) -> Zone:
        """The zone with exactly this id (the API names zones by id only, never by name)."""
        zone = self._zones.get(zone_id)
        if zone is None:
            raise ZoneNotFound(quotable(zone_id))
        return zone

    @property
    def zones(self) -> list[Zone]:
        """All zones, in creation order."""
        return list(self._zones.values())

    def list_zones(
        self,
        *,
        name: str | None = None,
        visible: Callable[[str], bool] | None = None,
        page: Any = None,
        per_page: Any = None,
    ) -> Page[Zone]:
        """Zones in creation order, those ``visible(zone_id)`` allows, by exact ``name``, paged."""
        page_n, per_n = page_args(page, per_page, default=20, top=50)
        wanted = None if name is None else name.lower()
        found = [
            z
            for z in self._zones.values()
            if (visible is None or visible(z.id)) and (wanted is None or z.name == wanted)
        ]
        return Page.of(found, page_n, per_n)

    def set_plan(self, zone_id: str, plan: str) -> Zone:
        """Move a zone to another plan."""
        plan_name = _plan_name(plan)
        zone = self.zone(zone_id)
        zone.plan = plan_name
        return zone

    # -- credentials ------------------------------------------------------
    def create_token(self, zone_ids: list[str] | None = None) -> ApiToken:
        """A new API token, limited to ``zone_ids`` when given."""
        for zid in zone_ids or []:
            self.zone(zid)
        token = ApiToken(
            id=self.new_id(),
            value=self.ids.token(40),
            zone_ids=None if zone_ids is None else frozenset(zone_ids),
        )
        self.account.tokens.append(token)
        return token

    # -- services ---------------------------------------------------------
    @property
    def firewall(self) -> FirewallService:
        """Filters, firewall rules and page rules of every zone, made on first use."""
        if "_firewall" not in self.__dict__:
            from ..firewall.service import FirewallService

            self.__dict__["_firewall"] = FirewallService(self)
        return self.__dict__["_firewall"]

    @property
    def rulesets(self) -> RulesetsService:
        """Entry point rulesets and the managed rulesets of every zone, made on first use."""
        if "_rulesets" not in self.__dict__:
            from ..rulesets.service import RulesetsService

            # setdefault: two threads that both build one still share the first stored.
            self.__dict__.setdefault("_rulesets", RulesetsService(self))
        return self.__dict__["_rulesets"]

    @property
    def waf_legacy(self) -> WafLegacyService:
        """The old WAF managed rules and overrides of every zone, made on first use."""
        if "_waf_legacy" not in self.__dict__:
            from ..waf_legacy.service import WafLegacyService

            # setdefault: two threads that both build one still share the first stored.
            self.__dict__.setdefault("_waf_legacy", WafLegacyService(self))
        return self.__dict__["_waf_legacy"]

    @property
    def migration(self) -> MigrationService:
        """The WAF managed rules migration of every zone (check, config, status, saving,
        the dashboard's steps), made on first use."""
        if "_migration" not in self.__dict__:
            from ..migration.service import MigrationService

            # setdefault: two threads that both build one still share the first stored.
            self.__dict__.setdefault("_migration", MigrationService(self))
        return self.__dict__["_migration"]

    @property
    def logs(self) -> EventLog:
        """The event log (DuckDB): the security events of every zone and the SQL billing
        of ``wb.storage``, made on first use."""
        if "_logs" not in self.__dict__:
            from ..logs.store import EventLog

            # setdefault: two threads that both build one still share the first stored.
            self.__dict__.setdefault("_logs", EventLog())
        return self.__dict__["_logs"]

    @property
    def storage(self) -> Runtime:
        """The Durable Object runtime, on ``wb.clock``, billing into ``wb.logs``
        (table ``sql_billing``), made on first use."""
        if "_storage" not in self.__dict__:
            from ..logs.billing import billing_for
            from ..storage.runtime import Runtime

            # The Workbench's seed, not a draw from its ids: using storage must not
            # change the ids the rest of the platform hands out.
            runtime = Runtime(clock=self.clock, seed=self.seed, billing=billing_for(self.logs))
            self.__dict__.setdefault("_storage", runtime)
        return self.__dict__["_storage"]

    @property
    def traffic(self) -> TrafficService:
        """Requests replayed through zones into one event log, and its events, made on first use."""
        if "_traffic" not in self.__dict__:
            from ..traffic.service import TrafficService

            # setdefault: two threads that both build one still share the first stored.
            self.__dict__.setdefault("_traffic", TrafficService(self))
        return self.__dict__["_traffic"]

    @property
    def tuning(self) -> TuningService:
        """What-if replays, the OWASP score sweep and the narrowest exceptions, made on first use."""
        if "_tuning" not in self.__dict__:
            from ..tuning.service import TuningService

            # setdefault: two threads that both build one still share the first stored.
            self.__dict__.setdefault("_tuning", TuningService(self))
        return self.__dict__["_tuning"]


def _plan_name(name: str) -> str:
    return plan(name).name
