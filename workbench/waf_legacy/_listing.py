"""Lists of packages, groups and rules: filters joined by ``match``, an order, pages.

Every list of the old WAF takes the same arguments: some filters (each the
value asked for and a predicate; one whose value is None was not asked for), ``match`` (``all``, the default, or ``any`` of them),
``order`` (one of the list's sort keys), ``direction`` (``asc`` or
``desc``) and ``page``/``per_page`` (50 a page by default, at most 100).

    >>> page = select(list("bcad"), [("d", lambda x: x != "d"), (None, lambda x: False)],
    ...               match=None, order=lambda x: x,
    ...               direction="desc", page=None, per_page=None)
    >>> page.items, page.result_info["total_count"]
    (['c', 'b', 'a'], 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..core.paging import Page, page_args
from ._inputs import query_choice

T = TypeVar("T")
DEFAULT_PER_PAGE = 50


def select(
    items: Sequence[T],
    filters: Sequence[tuple[object, Callable[[T], bool]]],
    *,
    match: str | None,
    order: Callable[[T], Any] | None,
    direction: str | None,
    page: Any,
    per_page: Any,
) -> Page[T]:
    """One page of ``items`` that pass the filters asked for, sorted by ``order`` (catalogue order if None)."""
    page_n, per_n = page_args(page, per_page, default=DEFAULT_PER_PAGE)
    joined = query_choice(match, "match", ("any", "all")) or "all"
    descending = query_choice(direction, "direction", ("asc", "desc")) == "desc"
    asked = [test for wanted, test in filters if wanted is not None]
    if not asked:
        kept = list(items)
    elif joined == "all":
        kept = [i for i in items if all(f(i) for f in asked)]
    else:
        kept = [i for i in items if any(f(i) for f in asked)]
    if order is not None:
        kept.sort(key=order, reverse=descending)
    elif descending:
        kept.reverse()
    return Page.of(kept, page_n, per_n)


def contains(text: str, wanted: str | None) -> bool:
    """Case-insensitive substring test (True when nothing is wanted)."""
    return wanted is None or wanted.lower() in text.lower()


def priority_key(priority: str) -> tuple[int, int, str]:
    """Sort rule priorities (strings) numerically when they are numbers, else as text."""
    if priority.isascii() and priority.isdigit():
        return (0, int(priority), "")
    return (1, 0, priority)
