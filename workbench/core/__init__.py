"""The platform core: clock, ids, errors and the Workbench itself."""

from ._ids import IdGenerator
from .clock import VirtualClock, iso
from .errors import (
    AuthenticationError,
    Conflict,
    FeatureUnavailable,
    NotFound,
    NotImplementedYet,
    QuotaExceeded,
    ValidationError,
    WorkbenchError,
)
from .platform import PLANS, Account, ApiToken, Workbench, Zone

__all__ = [
    "PLANS",
    "Account",
    "ApiToken",
    "AuthenticationError",
    "Conflict",
    "FeatureUnavailable",
    "IdGenerator",
    "NotFound",
    "NotImplementedYet",
    "QuotaExceeded",
    "ValidationError",
    "VirtualClock",
    "Workbench",
    "WorkbenchError",
    "Zone",
    "iso",
]
