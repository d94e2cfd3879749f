"""Who may migrate, and when: the two phases of the migration on the virtual clock.

Before 2022-05-04 no zone may. From then the four phase-1 conditions apply
(old WAF off or OWASP off; no Bypass > WAF Managed Rules firewall rule; no
page rule with Disable Security or Web Application Firewall: Off/On; no
URI-based override). With ``phase_two`` and from 2022-09-19, only the last
one remains. A Free zone (no old WAF in its plan) meets the first condition
like a zone with the old WAF off. Paused overrides, paused firewall rules and
disabled page rules count like the others: the seed names objects, not their
status.

    >>> from datetime import UTC, datetime
    >>> from workbench import Workbench
    >>> from workbench.migration.setup import read_zone
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> setup = read_zone(wb, zone.id)
    >>> assess(setup, phase_two=True, now=datetime(2022, 9, 19, tzinfo=UTC)).compatible
    True
    >>> assess(setup, phase_two=True, now=datetime(2022, 9, 18, tzinfo=UTC)).blockers
    ('owasp',)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from ..core.clock import iso
from ..core.errors import WorkbenchError
from .errors import MigrationNotOpen, NotEligibleInPhaseOne, UriOverridesBlock
from .setup import ZoneSetup

#: Phase 1 opens (clock time, UTC).
MIGRATION_OPENS = datetime(2022, 5, 4, tzinfo=UTC)
#: Phase 2 opens: ``phase_two=1`` selects its rule from this day on.
PHASE_TWO_OPENS = datetime(2022, 9, 19, tzinfo=UTC)


@dataclass(frozen=True)
class Eligibility:
    """Whether a zone may migrate now: ``phase`` 0 (not open), 1 or 2, and what blocks it.

    ``blockers`` are short keys (``not_open``, ``uri_overrides``,
    ``owasp``, ``bypass_rules``, ``page_rules``); ``reasons`` the same as sentences.
    """

    phase: int
    blockers: tuple[str, ...]
    reasons: tuple[str, ...]
    now: datetime
    plan: str
    override_ids: tuple[str, ...] = ()

    @property
    def compatible(self) -> bool:
        """True when nothing blocks the zone."""
        return not self.blockers

    def refusal(self) -> WorkbenchError:
        """The error a migrating PUT answers with (call only when not compatible)."""
        if "not_open" in self.blockers:
            return MigrationNotOpen(iso(self.now))
        if "uri_overrides" in self.blockers:
            return UriOverridesBlock(self.override_ids)
        return NotEligibleInPhaseOne(self.reasons)


def phase_at(now: datetime, phase_two: bool) -> int:
    """0 before the migration opens, 2 with ``phase_two`` from 2022-09-19, else 1."""
    if now < MIGRATION_OPENS:
        return 0
    return 2 if phase_two and now >= PHASE_TWO_OPENS else 1


def assess(setup: ZoneSetup, *, phase_two: bool, now: datetime) -> Eligibility:
    """The eligibility of the zone in ``setup`` at ``now``."""
    phase = phase_at(now, phase_two)
    found: list[tuple[str, str]] = []
    if phase == 0:
        found.append(("not_open", "the migration opens on 2022-05-04"))
    overrides = tuple(o["id"] for o in setup.overrides)
    if overrides:
        found.append(("uri_overrides", f"the zone has {len(overrides)} URI-based WAF overrides"))
    if phase == 1:
        if setup.old_waf_runs and setup.owasp_on:
            found.append(
                (
                    "owasp",
                    "the WAF is on with the OWASP ModSecurity Core Rule Set on (turn the WAF "
                    "off, or set the OWASP package's sensitivity to off)",
                )
            )
        if setup.bypass_rules:
            found.append(
                (
                    "bypass_rules",
                    f"{len(setup.bypass_rules)} firewall rules use Bypass > WAF Managed Rules",
                )
            )
        if setup.page_rules:
            found.append(
                (
                    "page_rules",
                    f"{len(setup.page_rules)} page rules use Disable Security or Web "
                    "Application Firewall: Off/On",
                )
            )
    return Eligibility(
        phase=phase,
        blockers=tuple(k for k, _ in found),
        reasons=tuple(t for _, t in found),
        now=now,
        plan=setup.plan,
        override_ids=overrides,
    )
