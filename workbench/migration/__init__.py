"""The WAF managed rules migration: from the old WAF to managed rulesets, per seed 002.

The service is ``wb.migration`` (:class:`MigrationService`): the compatibility
check, the generated configuration, the status, the entry point PUT with
``waf_migration``, the dashboard's steps and which of them are open (:class:`Steps`).

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="enterprise")
    >>> wb.migration.status(zone.id).migration_state
    'start'
"""

# -- check, configuration, state machine (issue 12, core) --
from ._eligibility import MIGRATION_OPENS, PHASE_TWO_OPENS, Eligibility, assess
from ._limits import MAX_EXPRESSION_BYTES, MAX_FIREWALL_RULES, check_limits
from ._mapping import SENSITIVITY_TABLE
from ._state import FINISHING_DELAY, STATES, Check, Review, Status
from .clock import move_clock
from .errors import NOT_MIGRATED
from .generate import ProposedConfig, propose
from .service import MigrationService
from .setup import ZoneSetup, read_zone
from .steps import STAGES, Steps

__all__ = [
    "FINISHING_DELAY",
    "MAX_EXPRESSION_BYTES",
    "MAX_FIREWALL_RULES",
    "MIGRATION_OPENS",
    "NOT_MIGRATED",
    "PHASE_TWO_OPENS",
    "SENSITIVITY_TABLE",
    "STAGES",
    "STATES",
    "Check",
    "Eligibility",
    "MigrationService",
    "ProposedConfig",
    "Review",
    "Status",
    "Steps",
    "ZoneSetup",
    "assess",
    "check_limits",
    "move_clock",
    "propose",
    "read_zone",
]
# -- end of check, configuration, state machine --
