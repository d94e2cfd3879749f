"""Where a zone's migration stands: its stage, the steps open now, and why the others are closed.

:func:`work_out` is the migration's step machine, in one place for every face:
the API renders :meth:`Steps.to_dict` (``GET .../waf_migration/steps``), the
wizard enables a button when its step is open and says why when it is not.
The stages are the API's ``migration_state`` values (``start``,
``validation``, ``done``), with ``start`` split in two by the check
(``not_eligible`` when it answers ``compatible: false``) and ``finishing``
apart from ``validation`` (a Pro or Business dashboard deploy completing).
The steps are the dashboard's, named as :class:`MigrationService`'s methods,
plus ``preview`` (the simulator's own help, which the platform lacks: the reviewed
configuration tried on traffic before anything is deployed, on every plan) and
``compare`` (validation mode's analysis of both versions over traffic).
A refusal comes with what to do about it (:func:`~.remedies.remedy_for`).
:meth:`Steps.require` is how a step is refused: every step of
:class:`MigrationService` (and the tuning package's preview) asks it first.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("bank.example", plan="enterprise")
    >>> steps = wb.migration.steps(zone.id)
    >>> steps.stage, steps.open
    ('start', ('review', 'preview', 'deploy'))
    >>> steps.table()[3]
    ('compare', False, 'the new version is not on yet: Deploy first')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ._state import DONE, FINISHING, START, VALIDATION, Check
from .errors import MigrationFinished, StepOutOfOrder
from .remedies import remedy_for

if TYPE_CHECKING:
    from ..core.errors import WorkbenchError
    from ..core.plans import Plan

NOT_ELIGIBLE = "not_eligible"
#: The stages, in the order a zone goes through them (``not_eligible`` may become ``start``).
STAGES = (NOT_ELIGIBLE, START, VALIDATION, FINISHING, DONE)
#: The steps and the dashboard's name for each, in the order they come.
LABELS = {
    "review": "Review configuration",
    "preview": "Preview (the simulator's own)",
    "deploy": "Deploy",
    "compare": "Compare both versions",
    "ready_to_update": "Ready to update",
    "turn_off_previous": "Turn off previous version",
}
ACTIONS = tuple(LABELS)
_DONE = "the zone already migrated: nothing left to migrate"


class Refusal(NamedTuple):
    """Why a migrating save would be refused now: the API's error code and message."""

    code: int
    message: str


@dataclass(frozen=True)
class Action:
    """One step: open now, or closed with ``reason`` (plain words, never empty when closed).

    ``refused``: closed because the zone cannot migrate now (the refusal closes it).
    """

    name: str
    open: bool
    reason: str = ""
    refused: bool = False


@dataclass(frozen=True)
class Steps:
    """A zone's migration: ``stage`` (one of :data:`STAGES`), the steps, a refusal and its remedies.

    ``procedure`` is ``validation`` (Enterprise) or ``direct``; ``ready`` says
    whether Ready to update was selected in validation mode; ``error`` is the
    error a migrating save would raise now, if any.
    """

    stage: str
    migration_state: str
    procedure: str
    ready: bool
    actions: tuple[Action, ...]
    error: WorkbenchError | None = field(default=None, repr=False, compare=False)
    remedies: tuple[str, ...] = ()

    @property
    def refusal(self) -> Refusal | None:
        """The API's code and message of :attr:`error` (None when nothing would be refused)."""
        return Refusal(self.error.code, self.error.message) if self.error is not None else None

    @property
    def open(self) -> tuple[str, ...]:
        """The names of the steps open now, in order."""
        return tuple(a.name for a in self.actions if a.open)

    def reason(self, name: str) -> str:
        """Why step ``name`` is closed ("" when it is open)."""
        return self._action(name).reason

    def _action(self, name: str) -> Action:
        return next(a for a in self.actions if a.name == name)

    def require(self, name: str) -> None:
        """Raise why step ``name`` is closed; nothing when it is open.

        :class:`~.errors.MigrationFinished` once done; the refusal itself (:attr:`error`)
        when that is what closes the step; else :class:`~.errors.StepOutOfOrder` with
        the step's reason.
        """
        action = self._action(name)
        if action.open:
            return
        label = LABELS[name]
        if self.stage == DONE:
            raise MigrationFinished(label)
        if action.refused and self.error is not None:
            raise self.error
        why = action.reason
        raise StepOutOfOrder(why if why.startswith(label) else f"{label}: {why}")

    def table(self) -> list[tuple[str, bool, str]]:
        """One row per step: (action, open, reason), the form both faces show."""
        return [(a.name, a.open, a.reason) for a in self.actions]

    def to_dict(self) -> dict[str, Any]:
        """The API's ``result``: ``reason`` is null for an open step."""
        return {
            "stage": self.stage,
            "migration_state": self.migration_state,
            "procedure": self.procedure,
            "ready": self.ready,
            "open": list(self.open),
            "actions": [
                {"action": name, "label": LABELS[name], "open": is_open, "reason": why or None}
                for name, is_open, why in self.table()
            ],
            "refusal": self.refusal._asdict() if self.refusal else None,
            "remedies": list(self.remedies),
        }


def work_out(
    plan: Plan, stage: str, *, ready: bool, check: Check, refusal: WorkbenchError | None
) -> Steps:
    """The steps of a zone on ``plan`` at ``stage`` (a :class:`~._state.ZoneMigration` stage).

    ``check`` is the phase-2 check; ``refusal`` the error a migrating save
    would raise now (ineligible, or a limit that needs support), if any.
    """
    enterprise = plan.waf_validation_mode
    shown = NOT_ELIGIBLE if stage == START and not check.compatible else stage
    closed: dict[str, str] = {}
    refused: set[str] = set()  # closed by the refusal

    # Review configuration and Deploy: from the banner, once.
    if shown == NOT_ELIGIBLE:
        why = "the zone cannot migrate now: " + "; ".join(check.reasons)
        closed.update(review=why, deploy=why, preview=why)
        refused.update(closed)
    elif shown == START and refusal is not None:
        closed["deploy"] = f"Deploy would be refused ({refusal.code}): {refusal.message}"
        refused.add("deploy")
    elif shown in (VALIDATION, FINISHING):
        where = "the zone is in validation mode" if shown == VALIDATION else "it is finishing"
        closed.update(
            review=f"the configuration is deployed already: {where}",
            deploy=f"deployed already: {where}",
        )
    elif shown == DONE:
        closed.update(review=_DONE, deploy=_DONE)

    # Preview: before anything is deployed, on every plan (the platform itself has none).
    if shown in (VALIDATION, FINISHING):
        closed["preview"] = "the new version is on already: compare both versions instead"
    elif shown == DONE:
        closed["preview"] = _DONE

    # Compare both versions: while both run (validation mode), and after.
    if shown in (NOT_ELIGIBLE, START):
        closed["compare"] = "the new version is not on yet: Deploy first"
    elif shown == FINISHING:
        closed["compare"] = (
            "the deploy is finishing (a couple of minutes of the virtual clock): "
            "compare once it is done"
        )

    # Ready to update, then Turn off previous version: Enterprise's validation mode only.
    if shown == DONE:
        closed.update(ready_to_update=_DONE, turn_off_previous=_DONE)
    elif not enterprise:
        direct = (
            f"validation mode is for Enterprise zones: on the {plan.name.title()} plan "
            "Deploy finishes the migration by itself"
        )
        closed.update(ready_to_update=direct, turn_off_previous=direct)
    elif shown != VALIDATION:
        closed.update(
            ready_to_update="Ready to update comes in validation mode, after Deploy",
            turn_off_previous="Turn off previous version comes in validation mode, after "
            "Deploy and Ready to update",
        )
    elif not ready:
        closed["turn_off_previous"] = "select Ready to update first"
    else:
        closed["ready_to_update"] = "selected already: Turn off previous version is next"
        if refusal is not None:
            closed["turn_off_previous"] = (
                f"Turn off previous version would be refused ({refusal.code}): {refusal.message}"
            )
            refused.add("turn_off_previous")

    remedy = remedy_for(refusal.code) if refusal is not None else ""
    return Steps(
        stage=shown,
        migration_state=VALIDATION if stage == FINISHING else stage,
        procedure="validation" if enterprise else "direct",
        ready=ready,
        actions=tuple(Action(n, n not in closed, closed.get(n, ""), n in refused) for n in ACTIONS),
        error=refusal,
        remedies=(remedy,) if remedy else (),
    )
