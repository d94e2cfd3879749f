"""Runs a CRS program (SecLang rules and markers, in order) on one request, as libmodsecurity does.

The program is what :mod:`.seclang` parses: rules with chains, markers,
``skipAfter``. The interpreter keeps the transaction's ``TX`` collection,
``MATCHED_VAR(S)`` between a chain's links and the captures ``TX:0``-``TX:9``;
the request's own collections come from :class:`.variables.Variables`,
transformations from :mod:`.transforms`, operators from :mod:`.operators`.
Phase 1 runs before phase 2; a body the parser refused (``REQBODY_ERROR``) or
a multipart body that broke strict validation stops the request before phase 2,
as ModSecurity's recommended rules 200002-200004 do.

    >>> from .seclang import parse
    >>> from .request import RawRequest
    >>> program = Program(parse('SecRule ARGS "@rx ^a" "id:1,phase:2,pass,msg:\\'x\\',t:lowercase"'))
    >>> sorted(program.run(RawRequest("GET", "/?q=ABC")).hits)
    [1]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .operators import Match, Operator, compile_operator, phrase_operator
from .request import RawRequest
from .screen import ScreenGroup, build_screens
from .seclang import Item, Link, Marker, Rule
from .transforms import TRANSFORMS, changed
from .variables import OWNED, Target, Variables, parse_targets

#: Collections that exist only with persistent storage or GeoIP: always empty here.
_EMPTY = {"IP", "GEO", "SESSION", "USER", "GLOBAL", "RESOURCE"}

_MACRO = re.compile(r"%\{([^}]+)\}")
#: How many transformed values a program remembers across requests before it starts again.
TRANSFORM_MEMO_LIMIT = 100_000
#: How many values each compiled operator remembers its answer for.
OPERATOR_MEMO_LIMIT = 20_000
#: How many raw values each link remembers its (transformed value, answer) for.
LINK_MEMO_LIMIT = 2_048
#: Longer values are not remembered by links and transformations: they seldom repeat.
MEMO_LONGEST = 2_048
#: How much of a value a hit keeps for its logdata (CRS cuts at 100 characters too).
LOGDATA_LIMIT = 100


@dataclass(frozen=True)
class Hit:
    """Why a rule fired: the variable and value of its first link's last match, and the matched data."""

    name: str
    value: bytes
    data: bytes

    def text(self, limit: int = LOGDATA_LIMIT) -> str:
        """``Matched Data: X found within ARGS:q: value`` as CRS's logdata reads, cut to ``limit``."""
        data = self.data.decode("utf-8", "replace")[:limit]
        value = self.value.decode("utf-8", "replace")[:limit]
        return f"Matched Data: {data} found within {self.name}: {value}"


@dataclass
class Result:
    """One request's run: the logging rules that fired with their hit, and the final TX."""

    hits: dict[int, Hit] = field(default_factory=dict)
    tx: dict[str, bytes] = field(default_factory=dict)
    body_error: bool = False


@lru_cache(maxsize=4096)
def _targets(text: str) -> tuple[Target, ...]:
    return tuple(parse_targets(text)) if text else ()


@lru_cache(maxsize=65536)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


class _Run:
    """The state of one request's transaction."""

    def __init__(self, program: Program, request: RawRequest) -> None:
        self.program = program
        self.vars = Variables(request)
        self.tx: dict[str, bytes] = dict(program.tx_defaults)
        self.matched: list[tuple[str, bytes]] = []
        self.phase = 1
        self.current: Rule | None = None

    # -- values -----------------------------------------------------------------------------
    def expand(self, text: str) -> str:
        """Macros (``%{tx.name}``, ``%{MATCHED_VAR}``...) replaced by their current values."""
        if "%{" not in text:
            return text
        return _MACRO.sub(lambda m: self.macro(m.group(1)).decode("latin-1"), text)

    def macro(self, name: str) -> bytes:
        low = name.lower()
        if low.startswith("rule."):
            rule = self.current
            if rule is None:
                return b""
            found = {"rule.id": str(rule.id), "rule.msg": rule.msg, "rule.severity": rule.severity}
            return found.get(low, "").encode("latin-1", "replace")
        if low.startswith("tx."):
            return self.tx.get(low[3:], b"")
        if low == "matched_var":
            return self.matched[-1][1] if self.matched else b""
        if low == "matched_var_name":
            return _raw(self.matched[-1][0]) if self.matched else b""
        coll, _, key = name.partition(".")
        values = self.values(Target(coll.upper(), key or None))
        return values[0][1] if values else b""

    def values(self, target: Target) -> Sequence[tuple[str, bytes]]:
        name = target.name
        if name == "TX":
            return self.tx_values(target)
        if name in ("MATCHED_VAR", "MATCHED_VAR_NAME"):
            if not self.matched:
                return []
            var, value = self.matched[-1]
            return [(name, value if name == "MATCHED_VAR" else _raw(var))]
        if name in ("MATCHED_VARS", "MATCHED_VARS_NAMES"):
            if name == "MATCHED_VARS":
                return [(f"MATCHED_VARS:{v}", val) for v, val in self.matched]
            return [(f"MATCHED_VARS_NAMES:{v}", _raw(v)) for v, _ in self.matched]
        if name in _EMPTY or name not in OWNED:
            return []
        return self.vars.resolve([target], self.phase)

    def tx_values(self, target: Target) -> list[tuple[str, bytes]]:
        key = target.key
        if key is None:
            return [(f"TX:{k}", v) for k, v in self.tx.items()]
        if len(key) > 1 and key.startswith("/") and key.endswith("/"):
            rx = _regex(key[1:-1])
            return [(f"TX:{k}", v) for k, v in self.tx.items() if rx.search(k)]
        low = key.lower()
        return [(f"TX:{low}", self.tx[low])] if low in self.tx else []

    def resolve(self, text: str) -> Sequence[tuple[str, bytes]]:
        """The values of a link's targets, exclusions applied, counts as one value (shared:
        read it, do not change it)."""
        return self.vars.resolve(_targets(text), self.phase, self._other)

    def _other(self, target: Target, exclusions: Sequence[Target]) -> Sequence[tuple[str, bytes]]:
        """The collections the transaction owns (TX, MATCHED_VARS...), for :meth:`Variables.resolve`."""
        values = self.values(Target(target.name, target.key))
        if exclusions and not target.count:
            values = [v for v in values if not any(_excludes(x, v[0]) for x in exclusions)]
        return values

    def transformed(self, value: bytes, transforms: tuple[str, ...]) -> bytes:
        if not transforms:
            return value
        # Transformations are pure: their results are shared across requests (bounded).
        memo = self.program.transformed
        key = (value, transforms)
        got = memo.get(key)
        if got is None:
            got = value
            for name in transforms:
                got = TRANSFORMS[name](got)
            if len(value) <= MEMO_LONGEST:
                if len(memo) >= TRANSFORM_MEMO_LIMIT:
                    memo.clear()
                memo[key] = got
        return got

    # -- actions ----------------------------------------------------------------------------
    def setvar(self, spec: str) -> None:
        if spec.startswith("!"):
            coll, _, name = self.expand(spec[1:]).partition(".")
            if coll.lower() == "tx":
                self.tx.pop(name.lower(), None)
            return
        # The name ends at the first "=" of the action as written, before macros are
        # expanded: a variable name holding "=" (ARGS_NAMES:a=b) stays in the name.
        target, eq, value = spec.partition("=")
        target, value = self.expand(target), self.expand(value)
        coll, _, name = target.partition(".")
        if coll.lower() != "tx":
            return  # IP, GLOBAL... need persistent collections, which this engine has not
        name = name.lower()
        if not eq:
            self.tx[name] = b"1"
        elif value[:1] in ("+", "-"):
            current = tx_int(self.tx.get(name, b"0"))
            delta = tx_int(value[1:].encode("latin-1"))
            self.tx[name] = str(current + delta if value[0] == "+" else current - delta).encode()
        else:
            self.tx[name] = value.encode("latin-1")

    def ctl(self, spec: str) -> None:
        """A ``ctl:`` action. Only ``requestBodyProcessor`` in phase 1 changes what later rules
        see (CRS 2.2.9's set-up rule 900017 picks XML for any Content-Type holding ``text/xml``);
        libmodsecurity 3 ignores ``forceRequestBodyVariable``, ``auditLogParts`` is logging."""
        name, _, value = self.expand(spec).partition("=")
        if name.strip().lower() == "requestbodyprocessor" and self.phase == 1:
            self.vars.set_body_processor(value)

    # -- rules ------------------------------------------------------------------------------
    def link(self, link: Link) -> list[tuple[str, bytes, Match]]:
        """The matches of one link; runs its per-match actions (capture, setvar)."""
        values = [("", b"")] if not link.targets else self.resolve(link.targets)
        if not values:
            return []
        argument = self.expand(link.argument)
        op = self.program.operator(link.operator, argument)
        matches: list[tuple[str, bytes, Match]] = []
        if not link.multi_match:
            # One lookup per value: the link's transformations and operator answer together.
            memo = self.program.link_memo(link, argument)
            for name, value in values:
                got = memo.get(value)
                if got is None:
                    cand = self.transformed(value, link.transforms)
                    got = (cand, op(cand))
                    if len(value) <= MEMO_LONGEST:
                        if len(memo) >= LINK_MEMO_LIMIT:
                            memo.clear()
                        memo[value] = got
                if (got[1] is None) != link.negated:
                    continue  # no match, or a negated operator that matched: most values
                self._tried(link, name, *got, matches)
            return matches
        for name, value in values:
            # As libmodsecurity: the value, then each step's result that its transformation
            # says it changed (the chain goes on with every result); every candidate that
            # matches runs the actions (CRS 2's 950901 adds its score once per candidate).
            candidates = [value]
            current = value
            for t in link.transforms:
                step = TRANSFORMS[t](current)
                if changed(t, current, step):
                    candidates.append(step)
                current = step
            for cand in candidates:
                self._tried(link, name, cand, op(cand), matches)
        return matches

    def _tried(
        self,
        link: Link,
        name: str,
        cand: bytes,
        m: Match | None,
        matches: list[tuple[str, bytes, Match]],
    ) -> None:
        """The operator's answer ``m`` on ``cand``: when the link matches (a negated operator
        that did not), its captures, MATCHED_VARS and per-match actions."""
        if link.negated:
            if m is not None:
                return
            m = Match(cand)
        elif m is None:
            return
        if link.capture:
            # As the engine does: a group that took no part leaves its TX.n as it was.
            for i, g in enumerate(m.groups):
                if g is not None:
                    self.tx[str(i)] = g
        matches.append((name, cand, m))
        self.matched.append((name, cand))
        for spec in link.setvars:
            self.setvar(spec)
        for spec in link.ctls:
            self.ctl(spec)

    def rule(self, rule: Rule) -> Hit | None:
        """Run ``rule``'s chain; its hit when every link matched."""
        first: tuple[str, bytes, Match] | None = None
        self.matched = []
        for link in rule.links:
            previous = self.matched
            self.matched = list(previous)
            matches = self.link(link)
            if not matches:
                return None
            self.matched = [(n, v) for n, v, _ in matches]
            if first is None:
                first = matches[-1]
        assert first is not None
        return Hit(first[0], first[1], first[2].data)


def _excludes(target: Target, name: str) -> bool:
    """True when exclusion ``target`` (``!REQUEST_COOKIES:/__utm/``) names variable ``name``."""
    coll, _, key = name.partition(":")
    if coll != target.name:
        return False
    if target.key is None:
        return True
    k = target.key
    if len(k) > 1 and k.startswith("/") and k.endswith("/"):
        return _regex(k[1:-1]).search(key) is not None
    return key.lower() == k.lower()


def _remembered(op: Operator) -> Operator:
    """``op`` with its answers remembered per value (bounded): operators are pure, and traffic
    repeats its values from request to request."""
    memo: dict[bytes, Match | None] = {}

    def run(value: bytes) -> Match | None:
        try:
            return memo[value]
        except KeyError:
            pass
        found = op(value)
        if len(memo) >= OPERATOR_MEMO_LIMIT:
            memo.clear()
        memo[value] = found
        return found

    return run


def _raw(name: str) -> bytes:
    """A variable name's bytes (names that stood for bytes which are not UTF-8 keep them)."""
    return name.encode("utf-8", "surrogateescape")


def tx_int(value: bytes) -> int:
    """ModSecurity's integer reading of a TX value: leading digits, else 0."""
    m = re.match(rb"\s*([+-]?\d+)", value)
    return int(m.group(1)) if m else 0


class Program:
    """An ordered CRS program, with the TX values the set-up gives and the data files' folder."""

    def __init__(
        self,
        items: Sequence[Item],
        tx_defaults: Mapping[str, str | bytes] | None = None,
        data_dir: Path | None = None,
        phrases: Mapping[str, Sequence[str]] | None = None,  # latin-1 text: one char a byte
    ) -> None:
        self.items = list(items)
        #: The phrase files ``@pmFromFile`` names, by file name (the catalogue carries them).
        self.phrases = {
            k: tuple(p.encode("latin-1") for p in v) for k, v in (phrases or {}).items()
        }
        self._operators: dict[tuple[str, str], Operator] = {}
        self._link_memos: dict[tuple[int, str], dict[bytes, tuple[bytes, Match | None]]] = {}
        self.transformed: dict[tuple[bytes, tuple[str, ...]], bytes] = {}
        self.tx_defaults = {
            k.lower(): v if isinstance(v, bytes) else v.encode("latin-1")
            for k, v in (tx_defaults or {}).items()
        }
        self.data_dir = data_dir
        self.phases = {
            p: [i for i in self.items if not isinstance(i, Rule) or i.phase == p] for p in (1, 2)
        }
        self._drop_static_misses()
        # Screens only for the rules that can run: a group asks each of its screens per value.
        self.screens = build_screens(
            (i for items in self.phases.values() for i in items if isinstance(i, Rule)), OWNED
        )
        #: Each phase's items as the run loop reads them: (rule, marker name, screen group,
        #: whether a hit is logged); directives left out.
        self._steps: dict[int, list[tuple[Rule | None, str, ScreenGroup | None, bool]]] = {
            p: [
                (None, i.name, None, False)
                if isinstance(i, Marker)
                else (
                    i,
                    "",
                    s.group if (s := self.screens.get(i.id)) is not None else None,
                    i.log and bool(i.msg or i.severity),
                )
                for i in items
                if isinstance(i, Marker | Rule)
            ]
            for p, items in self.phases.items()
        }

    def _drop_static_misses(self) -> None:
        """Leave out rules whose first link reads only TX names no rule ever writes and, on the
        set-up's values, does not match: they can never match (the paranoia-level skips above
        the run's level, the limits the set-up leaves unset)."""
        written: set[str] = set()
        prefixes: list[str] = []
        for item in self.items:
            if not isinstance(item, Rule):
                continue
            for link in item.links:
                if link.capture:
                    written.update(str(i) for i in range(100))  # TX:0, TX:1... the captures
                for spec in link.setvars:
                    target = spec.lstrip("!").partition("=")[0]
                    coll, _, name = target.partition(".")
                    if coll.lower() != "tx":
                        continue
                    name = name.lower()
                    if "%{" in name:
                        prefixes.append(name.split("%{", 1)[0])
                    else:
                        written.add(name)

        def static(link: Link) -> bool:
            targets = _targets(link.targets)
            if not targets or "%{" in link.argument:
                return False
            for t in targets:
                key = (t.key or "").lower()
                if t.name != "TX" or not key or key.startswith("/") or key in written:
                    return False
                if any(key.startswith(p) for p in prefixes if p):
                    return False
            return True

        dummy = _Run(self, RawRequest())
        for phase, items in self.phases.items():
            dummy.phase = phase
            kept: list[Item] = []
            for item in items:
                if isinstance(item, Rule) and static(item.links[0]):
                    dummy.tx = dict(self.tx_defaults)
                    dummy.matched = []
                    if not dummy.link(item.links[0]):
                        continue
                kept.append(item)
            self.phases[phase] = kept

    def link_memo(self, link: Link, argument: str) -> dict[bytes, tuple[bytes, Match | None]]:
        """Raw value -> (transformed value, the operator's answer) for ``link`` with its macros
        expanded to ``argument``: both are pure, and traffic repeats its values."""
        key = (id(link), argument)
        memo = self._link_memos.get(key)
        if memo is None:
            if len(self._link_memos) >= LINK_MEMO_LIMIT:
                self._link_memos.clear()  # arguments holding request values (%{REQUEST_...})
            memo = self._link_memos[key] = {}
        return memo

    def operator(self, name: str, argument: str) -> Operator:
        """The compiled operator; ``@pmFromFile`` reads the catalogue's phrases when it has them."""
        key = (name, argument)
        op = self._operators.get(key)
        if op is None:
            if name in ("pmFromFile", "pmf") and argument in self.phrases:
                op = phrase_operator(self.phrases[argument])
            else:
                op = compile_operator(name, argument, self.data_dir)
            op = self._operators[key] = _remembered(op)
        return op

    def run(self, request: RawRequest) -> Result:
        """Every logging rule that fires on ``request``, with its hit."""
        run = _Run(self, request)
        result = Result()
        for phase in (1, 2):
            if phase == 2:
                # ModSecurity's recommended rules 200002-200004 deny as phase 2 starts when the
                # body processor (which phase 1 may have changed) failed, or a multipart body
                # broke strict validation: CRS 2 has rules of its own there, which never run.
                result.body_error = run.vars.body_error_rule is not None
                if result.body_error:
                    break
            skip_to = ""
            skip_n = 0
            run.phase = phase
            screened: dict[int, set[int]] = {}  # group id -> the rules it names, this phase
            for rule, marker, group, logs in self._steps[phase]:
                if rule is None:
                    if skip_to and marker == skip_to:
                        skip_to = ""
                    continue
                if skip_to:
                    continue
                if skip_n:
                    skip_n -= 1
                    continue
                if group is not None:
                    # The rule's screen group, asked once per phase: a rule it does not name
                    # cannot match.
                    found = screened.get(id(group))
                    if found is None:
                        values = [v for _, v in run.resolve(rule.links[0].targets)]
                        found = screened[id(group)] = group.candidates(values, run.transformed)
                    if rule.id not in found:
                        continue
                run.current = rule
                hit = run.rule(rule)
                if hit is None:
                    continue
                if logs:
                    result.hits[rule.id] = hit
                if rule.skip_after:
                    skip_to = rule.skip_after
                elif rule.skip:
                    skip_n = rule.skip
        result.tx = run.tx
        return result
