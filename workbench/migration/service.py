"""``wb.migration``: check, configuration, status and saving, per plan, never backwards.

The API's three reads (:meth:`~MigrationService.check`, :meth:`~MigrationService.config`,
:meth:`~MigrationService.status`), the managed entry point PUT with
``waf_migration`` (:meth:`~MigrationService.put_entrypoint`), and the dashboard's
steps the wizard calls (:meth:`~MigrationService.review`, :meth:`~MigrationService.deploy`,
:meth:`~MigrationService.ready_to_update`, :meth:`~MigrationService.turn_off_previous`),
and which of them are open now, with why the others are not
(:meth:`~MigrationService.steps`, worked out in :mod:`.steps`; each step is refused
there, by :meth:`.Steps.require`, with the reason the steps give).

A refusal raises before anything is stored (the ruleset engine's
``before_save`` hook), so the entry point and the state stay as they were.
On success the new configuration is stored first and the old WAF is turned
off after, so some system inspects every request throughout. Nothing here
ever starts a migration by itself; the clock only completes a dashboard
deploy of a Pro or Business zone that the user started.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="business")
    >>> wb.migration.check(zone.id, phase_two=True).to_dict()
    {'compatible': True, 'migration_state': 'start'}
    >>> body = wb.migration.config(zone.id).result()
    >>> wb.migration.put_entrypoint(zone.id, "http_request_firewall_managed", body,
    ...                             waf_migration="pending", phase_two="1").version
    '1'
    >>> status = wb.migration.status(zone.id).to_dict()
    >>> status["old_waf_status"], status["new_waf_status"], status["migration_state"]
    ('off', 'on', 'done')
    >>> status["created"], status["source"]
    ('2026-01-01T00:00:00Z', 'api')
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.clock import iso
from ..core.errors import WorkbenchError
from ..core.plans import plan as plan_of
from ..rulesets.models import MANAGED_PHASE
from ..rulesets.service import check_phase
from ._eligibility import assess
from ._limits import check_limits
from ._params import PENDING, VALIDATION, migration_mode, phase_two_flag
from ._state import DONE, FINISHING, FINISHING_DELAY, START, Check, Review, Status, ZoneMigration
from ._state import VALIDATION as VALIDATION_STAGE
from .errors import (
    InvalidMigrationInput,
    MigrationFinished,
    MigrationIrreversible,
    MigrationRequired,
    ValidationModeNotInPlan,
)
from .generate import ProposedConfig, propose
from .setup import read_zone
from .steps import Steps, work_out

if TYPE_CHECKING:
    from ..core.platform import Workbench, Zone
    from ..rulesets.models import Rule, Ruleset


class MigrationService:
    """The WAF managed rules migration of every zone of ``wb``. All methods hold one lock."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.lock = threading.RLock()
        self._zones: dict[str, ZoneMigration] = {}
        self._finishing: set[str] = set()
        # A dashboard deploy finishes when the clock passes its time, not on the next read.
        wb.clock.on_advance(lambda _ms: self._settle_all())

    # -- state ---------------------------------------------------------------
    def _record(self, zone_id: str) -> tuple[Zone, ZoneMigration]:
        """The zone and its migration record, brought up to date with the clock."""
        zone = self.wb.zone(zone_id)
        record = self._zones.setdefault(zone.id, ZoneMigration())
        self._settle(zone, record)
        return zone, record

    def _settle(self, zone: Zone, record: ZoneMigration) -> None:
        if record.stage == FINISHING and record.finish_at and self.wb.now() >= record.finish_at:
            self._finish(zone, record)
        elif record.stage != DONE and self.wb.waf_legacy.retired(zone.id):
            record.move(DONE, self.wb.now())  # the old WAF was retired some other way

    def _settle_all(self) -> None:
        if not self._finishing:
            return  # the usual case: every clock step, nothing deploying
        with self.lock:
            for zone_id in list(self._finishing):
                self._record(zone_id)

    def _finish(self, zone: Zone, record: ZoneMigration) -> None:
        """Complete the migration: the new system is stored already, so turn the old one off."""
        record.move(DONE, self.wb.now())
        record.finish_at = None
        self._finishing.discard(zone.id)
        self.wb.waf_legacy.disable_for_good(zone.id)

    # -- the API's reads -------------------------------------------------------
    def check(self, zone_id: str, phase_two: Any = None) -> Check:
        """May the zone migrate now? (``phase_two``: 1/true selects phase 2 from 2022-09-19)."""
        two = phase_two_flag(phase_two)
        with self.lock:
            zone, record = self._record(zone_id)
            if record.stage == DONE:
                return Check(False, DONE, ("the zone already migrated",))
            if record.stage != START:
                return Check(True, record.state)
            found = assess(read_zone(self.wb, zone.id), phase_two=two, now=self.wb.now())
            return Check(found.compatible, START, found.reasons)

    def config(self, zone_id: str, phase_two: Any = None) -> ProposedConfig:
        """The new configuration equivalent to the zone's old one (any phase gives the same)."""
        phase_two_flag(phase_two)
        with self.lock:
            zone, record = self._record(zone_id)
            if record.stage == DONE:
                raise MigrationFinished("no configuration to generate")
            return propose(read_zone(self.wb, zone.id))

    def status(self, zone_id: str) -> Status:
        """Whether each system is on, and the migration state."""
        with self.lock:
            zone, record = self._record(zone_id)
            entry = self.wb.rulesets.find_entrypoint(zone.id, MANAGED_PHASE)
            runs_new = entry is not None and any(
                r.enabled and r.action == "execute" for r in entry.rules
            )
            return Status(
                old_waf_enabled=self.wb.waf_legacy.enabled(zone.id),
                new_waf_enabled=record.stage != START or runs_new,
                migration_state=record.state,
                finish_at=record.finish_at,
                created=record.log[0][0] if record.log else None,
            )

    # -- saving ------------------------------------------------------------------
    def put_entrypoint(
        self,
        zone_id: str,
        phase: str,
        body: Any,
        *,
        waf_migration: Any = None,
        phase_two: Any = None,
        dry_run: bool = False,
    ) -> Ruleset:
        """The entry point PUT: ``waf_migration`` (pending/1, validation/2) drives the migration.

        Without it, a zone that has not migrated may only save rules that are all
        disabled, unless its plan allows more (Enterprise, ``plans.json``). Other phases go straight to the ruleset engine.
        """
        mode = migration_mode(waf_migration)
        two = phase_two_flag(phase_two)
        if check_phase(phase) != MANAGED_PHASE:
            if mode is not None:
                raise InvalidMigrationInput(
                    "waf_migration", f"applies to the {MANAGED_PHASE} phase only, not {phase}"
                )
            return self.wb.rulesets.put_entrypoint(zone_id, phase, body, dry_run=dry_run)
        with self.lock:
            zone, record = self._record(zone_id)
            return self._save(zone, record, body, mode, two, dry_run=dry_run)

    def _save(
        self,
        zone: Zone,
        record: ZoneMigration,
        body: Any,
        mode: str | None,
        two: bool,
        *,
        dry_run: bool = False,
        finishing: bool = False,
    ) -> Ruleset:
        def gate(_zone: Zone, rules: Sequence[Rule]) -> None:
            self._gate(zone, record, rules, mode, two)

        if dry_run:
            made = self.wb.rulesets.put_entrypoint(zone.id, MANAGED_PHASE, body, dry_run=True)
            gate(zone, made.rules)
            return made
        made = self.wb.rulesets.put_entrypoint(zone.id, MANAGED_PHASE, body, before_save=gate)
        # Stored: now move the state (the old system goes off only after the new one is on).
        if mode == VALIDATION and record.stage != DONE:
            record.move(VALIDATION, self.wb.now())
        elif mode == PENDING and record.stage != DONE:
            if finishing:
                record.move(FINISHING, self.wb.now())
                record.finish_at = self.wb.now() + FINISHING_DELAY
                self._finishing.add(zone.id)
            else:
                self._finish(zone, record)
        return made

    def _gate(
        self,
        zone: Zone,
        record: ZoneMigration,
        rules: Sequence[Rule],
        mode: str | None,
        two: bool,
    ) -> None:
        """Raise the refusal of this save, if any (called before anything is stored)."""
        entitled = plan_of(zone.plan)
        if mode is None:
            # Only Enterprise may run managed rules beside the old WAF without migrating.
            gated = not entitled.enabled_managed_rules_without_migration
            if record.stage == START and gated and any(r.enabled for r in rules):
                raise MigrationRequired(entitled.name.title())
            return
        if record.stage == DONE:
            if mode == VALIDATION:
                raise MigrationIrreversible("waf_migration=validation")
            # A second Turn off previous version: refused, not a plain save that bumps the
            # version (the migration is over; a save without waf_migration changes the rules).
            raise MigrationFinished(
                "waf_migration=pending",
                "change the rules with a PUT of the entry point without waf_migration",
            )
        if mode == VALIDATION and not entitled.waf_validation_mode:
            raise ValidationModeNotInPlan(entitled.name.title())
        refusal = self._refusal_now(zone, two)  # an ineligible zone, then the limits
        if refusal is not None:
            raise refusal

    def _refusal_now(self, zone: Zone, two: bool) -> WorkbenchError | None:
        """The error a migrating save would raise now, if any (nothing is raised here)."""
        setup = read_zone(self.wb, zone.id)
        found = assess(setup, phase_two=two, now=self.wb.now())
        if not found.compatible:
            return found.refusal()
        try:
            check_limits(setup.bypass_rules)
        except WorkbenchError as exc:
            return exc
        return None

    # -- the dashboard's steps -----------------------------------------------------
    # Each asks the steps first (Steps.require): the table of :mod:`.steps` is the one decision.
    def review(self, zone_id: str) -> Review:
        """Review configuration: the proposal (edit ``config`` freely), what is left out, the check."""
        with self.lock:
            zone, _ = self._record(zone_id)
            self.steps(zone.id).require("review")
            proposed = propose(read_zone(self.wb, zone.id))
            procedure = "validation" if plan_of(zone.plan).waf_validation_mode else "direct"
            return Review(
                zone.id,
                zone.plan,
                procedure,
                proposed.result(),
                list(proposed.messages),
                self.check(zone.id, phase_two=True),
            )

    def deploy(self, zone_id: str, config: Any) -> Status:
        """Deploy: Enterprise enters validation mode; Pro and Business start finishing, which
        completes once :data:`~workbench.migration.FINISHING_DELAY` of clock time passed."""
        with self.lock:
            zone, record = self._record(zone_id)
            self.steps(zone.id).require("deploy")
            if plan_of(zone.plan).waf_validation_mode:
                self._save(zone, record, config, VALIDATION, True)
            else:
                self._save(zone, record, config, PENDING, True, finishing=True)
            return self.status(zone.id)

    def ready_to_update(self, zone_id: str) -> Status:
        """Ready to update (Enterprise, in validation mode): unlocks Turn off previous version."""
        with self.lock:
            zone, record = self._record(zone_id)
            self.steps(zone.id).require("ready_to_update")
            record.ready = True
            return self.status(zone.id)

    def turn_off_previous(self, zone_id: str) -> Status:
        """Turn off previous version: finishes an Enterprise migration after Ready to update."""
        with self.lock:
            zone, record = self._record(zone_id)
            self.steps(zone.id).require("turn_off_previous")
            self._finish(zone, record)
            return self.status(zone.id)

    def steps(self, zone_id: str) -> Steps:
        """Where the zone stands: its stage, the steps open now, why the others are closed.

        Like :meth:`review`, it checks with phase 2's rule (``phase_two=1``), as the
        dashboard and the wizard do.
        """
        with self.lock:
            zone, record = self._record(zone_id)
            refusal = None
            if record.stage in (START, VALIDATION_STAGE):
                refusal = self._refusal_now(zone, True)
            return work_out(
                plan_of(zone.plan),
                record.stage,
                ready=record.ready,
                check=self.check(zone.id, phase_two=True),
                refusal=refusal,
            )

    def history(self, zone_id: str) -> list[tuple[str, str]]:
        """The zone's state changes as (ISO time, stage), oldest first."""
        with self.lock:
            _, record = self._record(zone_id)
            return [(iso(when), stage) for when, stage in record.log]
