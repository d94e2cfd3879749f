"""Which ``@rx`` rules can match at all, asked once per value for many rules at a time.

Most CRS rules are one ``@rx`` over the same few target lists with the same few
transformation chains. A :class:`Screen` gathers the rules of one (targets,
transformations) pair into one RE2 set (:func:`.rx.screen_source`: the exact
pattern, or the prefilter of one that needs the fallback engine). The
interpreter asks the set once per value and then runs, in order and in full,
only the rules the set named: a rule the set did not name cannot match, so
skipping it changes nothing (it has no other effect than its match's actions).

Results are remembered per transformed value across requests (bounded), since
traffic repeats its header values, cookies and arguments.

    >>> screen = Screen(("ARGS", ()), [(1, "^a"), (2, "b$")])
    >>> sorted(screen.of(b"ab")), sorted(screen.of(b"xb"))
    ([1, 2], [2])
    >>> upper = Screen(("ARGS", ("uppercase",)), [(3, "^AB")])
    >>> group = ScreenGroup([screen, upper])
    >>> sorted(group.candidates([b"ab", b"zzz"], lambda v, names: v.upper()))
    [1, 2, 3]

The screens that read the same targets form a :class:`ScreenGroup`, asked once
per value for all of them; it remembers its answers (bounded), so a value seen
before costs one dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import re2

from .rx import SCREEN_OPTIONS, screen_source
from .seclang import Rule
from .variables import parse_targets

#: How many values a screen (or a group of screens) remembers before it starts again.
MEMO_LIMIT = 20_000
#: Longer values are asked afresh each time: they seldom repeat, and would fill the memory.
MEMO_LONGEST = 2_048

_NONE: frozenset[int] = frozenset()


class Screen:
    """One RE2 set over the patterns of rules that share targets and transformations."""

    def __init__(self, key: tuple[str, tuple[str, ...]], rules: Sequence[tuple[int, str]]) -> None:
        self.key = key
        self.ids = [rule_id for rule_id, _ in rules]
        self._set = re2.Set.SearchSet(SCREEN_OPTIONS)
        for _, pattern in rules:
            source = screen_source(pattern)
            if source is None or self._set.Add(source) < 0:
                raise ValueError(f"pattern cannot be screened: {pattern[:60]!r}")
        self._set.Compile()
        #: The screens over the same targets, this one included (set by :func:`build_screens`).
        self.group = ScreenGroup((self,))

    def of(self, value: bytes) -> frozenset[int]:
        """The rule ids whose pattern may match ``value`` (already transformed)."""
        indices = self._set.Match(value)
        return frozenset(self.ids[i] for i in indices) if indices else _NONE


class ScreenGroup:
    """The screens that read the same targets: asked once per value for all of them.

    A value's answer is the union of each screen's answer on the value as that screen
    transforms it; a rule belongs to one screen, so the union names it only when its own
    screen does.
    """

    def __init__(self, screens: Sequence[Screen]) -> None:
        self.screens = tuple(screens)
        self._memo: dict[bytes, frozenset[int]] = {}

    def candidates(
        self, values: Iterable[bytes], transform: Callable[[bytes, tuple[str, ...]], bytes]
    ) -> set[int]:
        """The rule ids of any screen of the group that may match one of ``values`` (raw);
        ``transform(value, transformations)`` gives a value as a screen reads it."""
        out: set[int] = set()
        memo = self._memo
        for value in values:
            found = memo.get(value)
            if found is None:
                found = _NONE
                for screen in self.screens:
                    names = screen.key[1]
                    hit = screen.of(transform(value, names) if names else value)
                    if hit:
                        found = found | hit
                if len(value) <= MEMO_LONGEST:
                    if len(memo) >= MEMO_LIMIT:
                        memo.clear()
                    memo[value] = found
            out |= found
        return out


def screenable(rule: Rule, request_collections: frozenset[str]) -> bool:
    """Whether ``rule`` can be screened on its first link: an ``@rx``, not negated, no macro
    in its pattern, each value tried once, over the request's own collections (not TX, whose
    values change as rules run). A chain whose first link cannot match does not match, and a
    link's actions run only when it matches, so the later links do not matter."""
    link = rule.links[0]
    if link.operator != "rx" or link.negated or link.multi_match or "%{" in link.argument:
        return False
    if not link.targets:
        return False
    targets = parse_targets(link.targets)
    return (
        all(t.name in request_collections for t in targets)
        and screen_source(link.argument) is not None
    )


def build_screens(rules: Iterable[Rule], request_collections: frozenset[str]) -> dict[int, Screen]:
    """A screen per (targets, transformations) pair of screenable rules, by rule id."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[int, str]]] = {}
    for rule in rules:
        if screenable(rule, request_collections):
            link = rule.links[0]
            groups.setdefault((link.targets, link.transforms), []).append((rule.id, link.argument))
    out: dict[int, Screen] = {}
    by_targets: dict[str, list[Screen]] = {}
    for key, members in groups.items():
        screen = Screen(key, members)
        by_targets.setdefault(key[0], []).append(screen)
        for rule_id in screen.ids:
            out[rule_id] = screen
    for screens in by_targets.values():
        group = ScreenGroup(screens)
        for screen in screens:
            screen.group = group
    return out
