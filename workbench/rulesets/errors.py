"""The ruleset engine's errors, each v4 code written here once.

>>> err = EntrypointNotFound("http_request_firewall_managed")
>>> err.code, err.message
(10003, 'could not find entrypoint ruleset in the http_request_firewall_managed phase')
>>> InvalidRulesetInput("/rules/0/action", "is required").to_error()["source"]
{'pointer': '/rules/0/action'}
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.errors import InvalidInput, NotFound, ValidationError
from ..core.text import quotable


class InvalidRulesetInput(InvalidInput):
    """A ruleset or rule field that breaks a documented rule; ``source.pointer`` names it."""


class UnknownField(InvalidRulesetInput):
    """A field the Rulesets API does not take (``kind``/``phase`` on an entry point PUT).

    The message is the real API's own wording, without the pointer in front.
    """

    def __init__(self, pointer: str, name: str) -> None:
        super().__init__("", f'invalid JSON: unknown field "{name}"')
        self.extra["source"] = {"pointer": pointer or "/"}


class UnknownPhase(ValidationError):
    """A phase name the workbench does not simulate; the message lists the ones it does."""

    def __init__(self, phase: object, allowed: Iterable[str]) -> None:
        shown = quotable(phase)
        super().__init__(
            f"unknown phase {shown!r}: the workbench simulates the phases {', '.join(allowed)}",
            source={"parameter": "phase"},
        )


class RulesetNotFound(NotFound, code=10003):
    """No ruleset (or no such version of one) with this id in the zone."""


class EntrypointNotFound(RulesetNotFound):
    """The zone has no entry point ruleset in this phase yet (before the first PUT)."""

    def __init__(self, phase: str) -> None:
        super().__init__(f"could not find entrypoint ruleset in the {phase} phase")
        self.phase = phase
