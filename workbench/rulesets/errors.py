"""The ruleset engine's errors, each v4 code written here once.

>>> err = EntrypointNotFound("http_request_firewall_managed")
>>> err.code, err.message
(10003, 'could not find entrypoint ruleset in the http_request_firewall_managed phase')
>>> InvalidRulesetInput("/rules/0/action", "is required").to_error()["source"]
{'pointer': '/rules/0/action'}
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.errors import NotFound, ValidationError


class InvalidRulesetInput(ValidationError):
    """A ruleset or rule field that breaks a documented rule; ``source.pointer`` names it."""

    def __init__(self, pointer: str, message: str) -> None:
        text = f"{pointer}: {message}" if pointer else message
        super().__init__(text, source={"pointer": pointer or "/"})

    @classmethod
    def at(cls, pointer: str, message: str) -> InvalidRulesetInput:
        """The error with ``message`` shown as is (the expression engine's own text)."""
        err = cls(pointer, message)
        err.message = message
        err.args = (message,)
        return err


class UnknownField(InvalidRulesetInput):
    """A field the Rulesets API does not take (``kind``/``phase`` on an entry point PUT)."""

    def __init__(self, pointer: str, name: str) -> None:
        super().__init__(pointer, "")
        # The real API's own wording, without the pointer in front.
        self.message = f'invalid JSON: unknown field "{name}"'
        self.args = (self.message,)


class UnknownPhase(ValidationError):
    """A phase name the workbench does not simulate; the message lists the ones it does."""

    def __init__(self, phase: object, allowed: Iterable[str]) -> None:
        shown = str(phase).encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(
            f"unknown phase {shown!r}: the workbench simulates the phases {', '.join(allowed)}",
            source={"parameter": "phase"},
        )


class RulesetNotFound(NotFound):
    """No ruleset (or no such version of one) with this id in the zone."""

    code = 10003


class EntrypointNotFound(RulesetNotFound):
    """The zone has no entry point ruleset in this phase yet (before the first PUT)."""

    def __init__(self, phase: str) -> None:
        super().__init__(f"could not find entrypoint ruleset in the {phase} phase")
        self.phase = phase
