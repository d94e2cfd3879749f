"""The WAF migration's refusals, each v4 code written here once.

No public source gives the real codes or texts of these refusals (the seed
says "not shown"), so the workbench picks its own block (10700-10710), one
per class, and ``messages`` code 10720 for what the configuration leaves out.
Each message names what the conventions of issue 12 ask it to name.

========================  =====  ====  ==================================================
class                     code   HTTP  when
========================  =====  ====  ==================================================
MigrationNotOpen          10700  400   ``waf_migration`` before 2022-05-04 (clock time)
ValidationModeNotInPlan   10701  400   validation mode on Pro or Business
MigrationRequired         10702  400   saving an enabled rule without it (not Enterprise)
UriOverridesBlock         10703  400   the zone has URI-based WAF overrides
NotEligibleInPhaseOne     10704  400   a phase-1 condition fails (no ``phase_two``)
TooManyFirewallRules      10705  400   more than 200 firewall rules to migrate
ExpressionTooLong         10706  400   a firewall rule expression over 4 KB (UTF-8)
MigrationIrreversible     10707  400   any attempt to go back after the migration
InvalidMigrationInput     10708  400   a bad ``waf_migration`` or ``phase_two`` value
StepOutOfOrder            10709  400   a dashboard step taken at the wrong time
MigrationFinished         10710  400   nothing left to migrate (config, steps, a pending PUT)
========================  =====  ====  ==================================================

    >>> err = TooManyFirewallRules(201)
    >>> err.code, "200" in err.message, "Cloudflare Support" in err.message
    (10705, True, True)
    >>> not_migrated("OWASP group 'XSS' set to off")["code"]
    10720
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.errors import Conflict, FeatureUnavailable, QuotaExceeded, ValidationError
from ..core.text import quotable

#: The ``messages`` code of a configuration entry that was not migrated.
NOT_MIGRATED = 10720
_SUPPORT = "contact Cloudflare Support to migrate this zone"


def not_migrated(setting: str) -> dict[str, Any]:
    """The config response's ``messages`` entry for a ``setting`` the migration leaves out."""
    return {"code": NOT_MIGRATED, "message": f"{setting}: not migrated"}


class MigrationNotOpen(FeatureUnavailable, code=10700):
    def __init__(self, now: str) -> None:
        super().__init__(
            f"the WAF managed rules migration opens on 2022-05-04 (UTC); the clock reads "
            f"{now}, so the zone cannot migrate yet"
        )


class ValidationModeNotInPlan(FeatureUnavailable, code=10701):
    def __init__(self, plan: str) -> None:
        super().__init__(
            f"validation mode (waf_migration=validation or 2) is for Enterprise zones only; "
            f"this zone is on the {plan} plan: migrate directly with waf_migration=pending"
        )


class MigrationRequired(FeatureUnavailable, code=10702):
    def __init__(self, plan: str) -> None:
        super().__init__(
            f"on the {plan} plan the http_request_firewall_managed entry point can hold "
            "enabled rules only as part of the migration: add waf_migration=pending (only "
            'Enterprise zones may enable managed rules without it), or save every rule "enabled": '
            "false"
        )


class UriOverridesBlock(Conflict, code=10703):
    def __init__(self, override_ids: Sequence[str]) -> None:
        super().__init__(
            f"the zone has {len(override_ids)} URI-based WAF overrides "
            f"({', '.join(override_ids)}); a zone with URI-based WAF overrides, paused or not, "
            "cannot migrate: delete them first (DELETE "
            "/zones/{zone_id}/firewall/waf/overrides/{overrides_id})"
        )


class NotEligibleInPhaseOne(Conflict, code=10704):
    def __init__(self, reasons: Sequence[str]) -> None:
        super().__init__(
            "the zone is not eligible in phase 1 of the migration: "
            + "; ".join(reasons)
            + " (from 2022-09-19, phase_two=1 lets every zone without URI-based WAF "
            "overrides migrate)"
        )


class TooManyFirewallRules(QuotaExceeded, code=10705):
    def __init__(self, count: int) -> None:
        super().__init__(
            f"the zone has {count} firewall rules to migrate (Bypass > WAF Managed Rules); "
            f"the migration handles at most 200: {_SUPPORT}"
        )


class ExpressionTooLong(ValidationError, code=10706):
    def __init__(self, rule_id: str, size: int) -> None:
        super().__init__(
            f"the firewall rule expression of rule {rule_id} is {size} bytes long (UTF-8); "
            f"the migration handles expressions up to 4 KB (4096 bytes): {_SUPPORT}"
        )


class MigrationIrreversible(Conflict, code=10707):
    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what}: the zone finished its migration to the new WAF Managed Rules, which "
            "cannot be undone; change the new configuration with the Rulesets API, and use "
            "exceptions (skip rules) to turn managed rules off"
        )


class InvalidMigrationInput(ValidationError, code=10708):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {quotable(message)}", source={"parameter": name})


class StepOutOfOrder(Conflict, code=10709):
    """A dashboard step taken at the wrong time; the message says what comes first."""


class MigrationFinished(Conflict, code=10710):
    def __init__(self, what: str, remedy: str = "") -> None:
        super().__init__(
            f"{what}: the zone already migrated to the new WAF Managed Rules, so there is "
            "nothing left to migrate; "
            + (
                remedy
                or "read and change its configuration with the Rulesets API "
                "(/zones/{zone_id}/rulesets/phases/http_request_firewall_managed/entrypoint)"
            )
        )
