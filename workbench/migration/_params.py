"""The migration's two query parameters, ``waf_migration`` and ``phase_two``, read once.

>>> migration_mode("1"), migration_mode("validation"), migration_mode(None)
('pending', 'validation', None)
>>> phase_two_flag("1"), phase_two_flag(None), phase_two_flag(True)
(True, False, True)
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidMigrationInput

PENDING, VALIDATION = "pending", "validation"
_MODES = {"pending": PENDING, "1": PENDING, "validation": VALIDATION, "2": VALIDATION}
_TRUE, _FALSE = ("1", "true"), ("0", "false")


def migration_mode(value: Any) -> str | None:
    """``pending`` (``pending`` or ``1``), ``validation`` (``validation`` or ``2``) or None."""
    if value is None:
        return None
    text = str(value).lower() if isinstance(value, str | int) and value is not True else None
    if text is None or text not in _MODES:
        raise InvalidMigrationInput(
            "waf_migration", f"{value!r} is not a mode; use pending (or 1) or validation (or 2)"
        )
    return _MODES[text]


def phase_two_flag(value: Any) -> bool:
    """True for ``1``/``true``; False when absent, ``0`` or ``false``."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).lower() if isinstance(value, str | int) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InvalidMigrationInput("phase_two", f"{value!r} is not 1 (or true), 0 (or false)")
