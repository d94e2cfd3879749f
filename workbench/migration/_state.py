"""The migration state of one zone and what the check and status endpoints answer.

A zone moves through stages, never back: ``start`` -> (``validation`` ->)
``done``, or ``start`` -> ``finishing`` -> ``done`` when a Pro or Business
zone deploys from the dashboard ("this may take a couple of minutes": both
systems run until the virtual clock passes :data:`FINISHING_DELAY`). The
API shows three states: ``finishing`` is shown as ``validation``, since both
systems are on, the new one first.

    >>> record = ZoneMigration()
    >>> record.state, record.stage
    ('start', 'start')
    >>> Check(False, "done").to_dict(), Check(True, "start").to_dict()
    ({'compatible': False}, {'compatible': True, 'migration_state': 'start'})
    >>> Status(True, False, "start").to_dict()  # doctest: +NORMALIZE_WHITESPACE
    {'old_waf_enabled': True, 'new_waf_enabled': False, 'migration_state': 'start',
     'old_waf_status': 'on', 'new_waf_status': 'off', 'created': None, 'source': None}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..core.clock import iso

START, VALIDATION, FINISHING, DONE = "start", "validation", "finishing", "done"
#: The states the API shows, in order.
STATES = (START, VALIDATION, DONE)
#: How long a dashboard deploy of a Pro or Business zone takes to finish (virtual time).
FINISHING_DELAY = timedelta(minutes=2)


@dataclass
class ZoneMigration:
    """Where one zone stands; ``log`` records each change as (time, stage)."""

    stage: str = START
    finish_at: datetime | None = None
    ready: bool = False
    log: list[tuple[datetime, str]] = field(default_factory=list)

    @property
    def state(self) -> str:
        """The ``migration_state`` the API shows."""
        return VALIDATION if self.stage == FINISHING else self.stage

    def move(self, stage: str, when: datetime) -> None:
        """Go to ``stage`` (the caller checked it is a step forward)."""
        if stage != self.stage:
            self.log.append((when, stage))
        self.stage = stage


@dataclass(frozen=True)
class Check:
    """The compatibility check: ``reasons`` say why not (shown by the wizard, not the API)."""

    compatible: bool
    migration_state: str
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The check's ``result``: ``migration_state`` only beside ``compatible: true``."""
        if not self.compatible:
            return {"compatible": False}
        return {"compatible": True, "migration_state": self.migration_state}


#: ``source`` of a migration that has begun: every migration here is a ``waf_migration`` PUT.
SOURCE = "api"


@dataclass(frozen=True)
class Status:
    """The status: is each system on, and the migration state.

    The ``result`` carries the fields a real client reads (``old_waf_status``,
    ``new_waf_status`` as ``on``/``off``, ``migration_state``, ``created``: when the
    migration began, ``source``: how, both null before it begins) and the workbench's
    own booleans (``old_waf_enabled``, ``new_waf_enabled``).
    """

    old_waf_enabled: bool
    new_waf_enabled: bool
    migration_state: str
    finish_at: datetime | None = None
    created: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """The status ``result``."""
        return {
            "old_waf_enabled": self.old_waf_enabled,
            "new_waf_enabled": self.new_waf_enabled,
            "migration_state": self.migration_state,
            "old_waf_status": "on" if self.old_waf_enabled else "off",
            "new_waf_status": "on" if self.new_waf_enabled else "off",
            "created": None if self.created is None else iso(self.created),
            "source": None if self.created is None else SOURCE,
        }


@dataclass
class Review:
    """The dashboard's Review configuration step: the proposal, editable before Deploy.

    ``procedure`` is ``direct`` (Pro, Business) or ``validation`` (Enterprise).
    """

    zone_id: str
    plan: str
    procedure: str
    config: dict[str, Any]
    messages: list[dict[str, Any]]
    check: Check
