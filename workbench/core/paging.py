"""Paging of list results: the page arguments every list takes, and one page of items.

Lists of every service page the same way (``page`` from 1, ``per_page`` within
a range), so the arguments are checked here once and the v4 ``result_info``
figures come from one class.

    >>> page_args("2", "5")
    (2, 5)
    >>> Page.of(list("abcdefg"), 2, 5).result_info
    {'page': 2, 'per_page': 5, 'count': 2, 'total_count': 7, 'total_pages': 2}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import ValidationError

T = TypeVar("T")

# ASCII digits only (Python's int() also takes "1_000", full-width and Arabic-Indic
# digits); a ".0" tail is allowed because the official SDK sends per_page as a float.
# Twelve digits: any real page number, and slicing stays cheap.
_WHOLE = re.compile(r"-?[0-9]{1,12}(?:\.0*)?")


@dataclass
class Page(Generic[T]):
    """One page of a list: the items and the v4 ``result_info`` figures."""

    items: list[T]
    page: int
    per_page: int
    total_count: int

    @classmethod
    def of(cls, everything: list[T], page: int, per_page: int) -> Page[T]:
        """Page ``page`` (from 1) of ``everything``; a page past the end is empty."""
        start = (page - 1) * per_page
        return cls(everything[start : start + per_page], page, per_page, len(everything))

    @property
    def result_info(self) -> dict[str, int]:
        """``page``, ``per_page``, ``count``, ``total_count`` and ``total_pages``."""
        pages = -(-self.total_count // self.per_page) if self.per_page else 0
        return {
            "page": self.page,
            "per_page": self.per_page,
            "count": len(self.items),
            "total_count": self.total_count,
            "total_pages": pages,
        }


def page_args(
    page: Any = None, per_page: Any = None, *, default: int = 25, top: int = 100
) -> tuple[int, int]:
    """``(page, per_page)`` as integers: page >= 1, per_page in 5..top.

    Text must be plain ASCII digits (``"1_000"``, full-width or Arabic-Indic
    digits are refused, though Python's ``int()`` takes them).
    """
    page_n = whole_number(page, "page", 1)
    per_n = whole_number(per_page, "per_page", default)
    if page_n < 1:
        raise _bad(f"page must be 1 or more, got {page_n}")
    if not 5 <= per_n <= top:
        raise _bad(f"per_page must be between 5 and {top}, got {per_n}")
    return page_n, per_n


def whole_number(value: Any, name: str, default: int) -> int:
    """``value`` (an int, or text of ASCII digits with an optional ``-``) as an int."""
    if value is None or value == "":
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _WHOLE.fullmatch(value):
        return int(value.split(".")[0])
    raise _bad(f"{name} must be a whole number, got {value!r}")


def _bad(message: str) -> ValidationError:
    return ValidationError(message, source={"pointer": "/"})
