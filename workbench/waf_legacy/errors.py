"""The old WAF's errors, each v4 code written here once.

No public source gives the real codes of these refusals, so the workbench
picks its own block (10600-10607), one per class:

====================  ======  ====  ==================================================
class                 code    HTTP  when
====================  ======  ====  ==================================================
InvalidWafInput       10600   400   a body field or query parameter breaks a rule
PackageNotFound       10601   404   no package with this id
GroupNotFound         10602   404   no group with this id in the package
WafRuleNotFound       10603   404   no rule with this id in the package
OverrideNotFound      10604   404   no URI-based override with this id in the zone
PackageNotEditable    10605   400   PATCH on a traditional package (only anomaly ones)
OldWafNotInPlan       10606   400   turning the ``waf`` setting on for a Free zone
OldWafRetired         10607   400   any old-WAF call after the zone migrated
====================  ======  ====  ==================================================

    >>> err = InvalidWafInput.body("/mode", "must be on or off")
    >>> err.code, err.message, err.extra["source"]
    (10600, '/mode: must be on or off', {'pointer': '/mode'})
    >>> OldWafRetired("abc").code
    10607
"""

from __future__ import annotations

from ..core.errors import Conflict, FeatureUnavailable, NotFound, ValidationError
from ..core.text import quotable


class InvalidWafInput(ValidationError, code=10600):
    """Bad input; ``source`` names the body field (``pointer``) or query ``parameter``."""

    def __init__(self, where: str, message: str, source: dict[str, str]) -> None:
        super().__init__(f"{where}: {message}" if where else message, source=source)

    @classmethod
    def body(cls, pointer: str, message: str) -> InvalidWafInput:
        """A problem with the body at ``pointer`` (a JSON pointer, ``""`` for the whole body)."""
        return cls(pointer, message, {"pointer": pointer or "/"})

    @classmethod
    def query(cls, name: str, message: str) -> InvalidWafInput:
        """A problem with the query parameter ``name``."""
        return cls(f"query parameter {name}", message, {"parameter": name})


class PackageNotFound(NotFound, code=10601):
    def __init__(self, package_id: str) -> None:
        super().__init__(f"WAF package {quotable(package_id)} does not exist in this zone")


class GroupNotFound(NotFound, code=10602):
    def __init__(self, package_id: str, group_id: str) -> None:
        super().__init__(
            f"WAF group {quotable(group_id)} does not exist in package {quotable(package_id)}"
        )


class WafRuleNotFound(NotFound, code=10603):
    def __init__(self, package_id: str, rule_id: str) -> None:
        super().__init__(
            f"WAF rule {quotable(rule_id)} does not exist in package {quotable(package_id)}"
        )


class OverrideNotFound(NotFound, code=10604):
    def __init__(self, override_id: str) -> None:
        super().__init__(f"WAF override {quotable(override_id)} does not exist in this zone")


class PackageNotEditable(ValidationError, code=10605):
    """Only an anomaly package's ``sensitivity`` and ``action_mode`` can change."""

    def __init__(self, package_id: str) -> None:
        super().__init__(
            f"WAF package {quotable(package_id)} uses traditional detection: only anomaly "
            "packages (OWASP) have a sensitivity and an action_mode to change; change the "
            "modes of its groups and rules instead",
            source={"pointer": "/"},
        )


class OldWafNotInPlan(FeatureUnavailable, code=10606):
    def __init__(self, plan: str) -> None:
        super().__init__(
            f"the WAF managed rules (previous version) need a Pro, Business or Enterprise "
            f"plan; this zone is on the {plan} plan",
            source={"pointer": "/value"},
        )


class OldWafRetired(Conflict, code=10607):
    """The zone migrated to the new WAF: the old system's APIs stop working for it."""

    def __init__(self, zone_id: str) -> None:
        super().__init__(
            f"zone {quotable(zone_id)} was upgraded to the new WAF Managed Rules: the previous "
            "version (packages, groups, rules, overrides and the waf setting) no longer "
            "applies; configure managed rulesets with the Rulesets API "
            "(/zones/{zone_id}/rulesets/phases/http_request_firewall_managed/entrypoint)"
        )
