"""SecLang, the rule language of ModSecurity, as far as the Core Rule Set writes it: a small parser.

It reads ``SecRule``, ``SecAction`` and ``SecMarker`` directives (with
backslash-continued lines and chains) into :class:`Rule` and :class:`Marker`
items, in file order. Other directives (``SecComponentSignature``,
``SecDefaultAction``...) are kept as :class:`Directive` so a caller can read
the ones it needs. A parser of our own rather than ``msc-pyparser``: the CRS
files use a small regular subset, and the evaluator wants the actions already
split and typed (see ``docs/decisions.md``).

    >>> items = parse('''SecRule ARGS|!ARGS:x "@rx a\\\\"b" "id:1,phase:2,block,t:none,t:lowercase,\\\\
    ...     msg:'A, B',setvar:'tx.s=+%{tx.critical_anomaly_score}',chain"
    ...     SecRule MATCHED_VAR "!@streq q" "t:urlDecodeUni"''')
    >>> rule = items[0]
    >>> rule.id, rule.links[0].operator, rule.links[0].argument, rule.msg
    (1, 'rx', 'a"b', 'A, B')
    >>> rule.links[0].transforms, rule.links[1].negated, rule.links[1].targets
    (('lowercase',), True, 'MATCHED_VAR')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


class SecLangError(ValueError):
    """A rule file the parser does not understand (names the file's line)."""


@dataclass(frozen=True)
class Link:
    """One ``SecRule`` of a rule's chain: targets, operator and the actions that apply per link."""

    targets: str
    operator: str
    argument: str
    negated: bool = False
    transforms: tuple[str, ...] = ()
    multi_match: bool = False
    capture: bool = False
    #: ``setvar`` actions in order, as written (``tx.name=+%{tx.critical_anomaly_score}``).
    setvars: tuple[str, ...] = ()
    ctls: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A rule: its chain of links and the actions of its first link (id, phase, msg, tags...)."""

    id: int
    phase: int
    links: tuple[Link, ...]
    msg: str = ""
    logdata: str = ""
    severity: str = ""
    tags: tuple[str, ...] = ()
    disruptive: str = ""
    log: bool = True
    skip_after: str = ""
    skip: int = 0
    ver: str = ""
    line: int = 0
    file: str = ""


@dataclass(frozen=True)
class Marker:
    """``SecMarker NAME``: where a ``skipAfter`` resumes."""

    name: str
    line: int = 0
    file: str = ""


@dataclass(frozen=True)
class Directive:
    """Any other directive, kept as its name and arguments."""

    name: str
    args: tuple[str, ...] = field(default_factory=tuple)
    line: int = 0
    file: str = ""


Item = Rule | Marker | Directive

_DISRUPTIVE = {"block", "deny", "pass", "drop", "allow", "redirect", "proxy"}


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines with their continuations joined, comments and blanks dropped, with the first line's number."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not buf:
            stripped = line.lstrip()
            if not stripped or stripped.startswith("#"):
                continue
            start = number
            line = stripped
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, "".join(buf)))
        buf = []
    if buf:
        out.append((start, "".join(buf)))
    return out


def _words(line: str, where: str) -> list[str]:
    """A directive's words: bare, or double-quoted with ``\\"`` escapes (kept as ``"``)."""
    words: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t":
            i += 1
            continue
        if c == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and line[j] != '"':
                if line[j] == "\\" and j + 1 < n and line[j + 1] == '"':
                    buf.append('"')
                    j += 2
                    continue
                buf.append(line[j])
                j += 1
            if j >= n:
                raise SecLangError(f"{where}: unterminated quoted argument")
            words.append("".join(buf))
            i = j + 1
            continue
        j = i
        while j < n and line[j] not in " \t":
            j += 1
        words.append(line[i:j])
        i = j
    return words


def split_actions(text: str) -> list[tuple[str, str]]:
    """``id:1,msg:'a, b',t:none`` into ``[("id", "1"), ("msg", "a, b"), ("t", "none")]``."""
    actions: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t,":
            i += 1
        if i >= n:
            break
        j = i
        while j < n and text[j] not in ":,":
            j += 1
        name = text[i:j].strip()
        value = ""
        if j < n and text[j] == ":":
            j += 1
            while j < n and text[j] == " ":
                j += 1
            if j < n and text[j] == "'":
                k = j + 1
                buf: list[str] = []
                while k < n and text[k] != "'":
                    if text[k] == "\\" and k + 1 < n and text[k + 1] == "'":
                        buf.append("'")
                        k += 2
                        continue
                    buf.append(text[k])
                    k += 1
                value = "".join(buf)
                j = k + 1
            else:
                k = j
                while k < n and text[k] != ",":
                    k += 1
                value = text[j:k].strip()
                j = k
        actions.append((name, value))
        i = j
    return actions


_OPERATOR = re.compile(r"^(!?)@([A-Za-z0-9]+)(?:\s(.*))?$", re.S)


def _operator(text: str) -> tuple[bool, str, str]:
    """``!@rx a b`` into ``(True, "rx", "a b")``; a bare pattern is ``@rx``, as in SecLang."""
    m = _OPERATOR.match(text)
    if m is None:
        negated = text.startswith("!")
        return negated, "rx", text[1:] if negated else text
    return m.group(1) == "!", m.group(2), m.group(3) or ""


def _link(targets: str, operator: str, actions: list[tuple[str, str]]) -> Link:
    negated, op, arg = _operator(operator)
    transforms: list[str] = []
    for name, value in actions:
        if name == "t":
            # t:none drops every transformation listed before it (SecDefaultAction's too).
            transforms = [] if value == "none" else [*transforms, value]
    return Link(
        targets=targets,
        operator=op,
        argument=arg,
        negated=negated,
        transforms=tuple(transforms),
        multi_match=any(n == "multiMatch" for n, _ in actions),
        capture=any(n == "capture" for n, _ in actions),
        setvars=tuple(v for n, v in actions if n == "setvar"),
        ctls=tuple(v for n, v in actions if n == "ctl"),
    )


def _rule(links: list[tuple[str, str, list[tuple[str, str]]]], line: int, file: str) -> Rule:
    first = dict(links[0][2])
    head = links[0][2]
    if "id" not in first:
        raise SecLangError(f"{file}:{line}: a rule without an id")
    disruptive = next((n for n, _ in head if n in _DISRUPTIVE), "")
    return Rule(
        id=int(first["id"]),
        phase=int(first.get("phase", "2")),
        links=tuple(_link(t, o, a) for t, o, a in links),
        msg=first.get("msg", ""),
        logdata=first.get("logdata", ""),
        severity=first.get("severity", "").upper(),
        tags=tuple(v for n, v in head if n == "tag"),
        disruptive=disruptive,
        log=not any(n == "nolog" for n, _ in head),
        skip_after=first.get("skipAfter", ""),
        skip=int(first.get("skip", "0") or 0),
        ver=first.get("ver", ""),
        line=line,
        file=file,
    )


def parse(text: str, file: str = "<text>") -> list[Item]:
    """Every directive of ``text`` in order; chained ``SecRule`` lines join their rule."""
    items: list[Item] = []
    chain: list[tuple[str, str, list[tuple[str, str]]]] = []
    chain_line = 0
    for line_no, line in _logical_lines(text):
        where = f"{file}:{line_no}"
        words = _words(line, where)
        name, args = words[0], words[1:]
        if name == "SecRule":
            if len(args) not in (2, 3):
                raise SecLangError(f"{where}: SecRule takes targets, an operator and actions")
            actions = split_actions(args[2]) if len(args) == 3 else []
            if not chain:
                chain_line = line_no
            chain.append((args[0], args[1], actions))
        elif name == "SecAction":
            if chain:
                raise SecLangError(f"{where}: SecAction inside a chain")
            actions = split_actions(args[0]) if args else []
            chain.append(("", "@unconditionalMatch", actions))
            chain_line = line_no
        else:
            if chain:
                raise SecLangError(f"{where}: {name} inside a chain")
            if name == "SecMarker":
                items.append(Marker(args[0] if args else "", line_no, file))
            else:
                items.append(Directive(name, tuple(args), line_no, file))
            continue
        if any(n == "chain" for n, _ in chain[-1][2]):
            continue
        items.append(_rule(chain, chain_line, file))
        chain = []
    if chain:
        raise SecLangError(f"{file}: the file ends inside a chain")
    return items


def rule_to_json(rule: Rule) -> dict[str, Any]:
    """A JSON-ready form of ``rule`` (what the catalogue stores under ``crs``)."""
    return {
        "phase": rule.phase,
        "links": [
            {
                k: v
                for k, v in (
                    ("targets", link.targets),
                    ("operator", ("!" if link.negated else "") + "@" + link.operator),
                    ("argument", link.argument),
                    ("transforms", list(link.transforms)),
                    ("multi_match", link.multi_match),
                    ("capture", link.capture),
                    ("setvars", list(link.setvars)),
                    ("ctls", list(link.ctls)),
                )
                if v or k in ("targets", "operator", "argument")
            }
            for link in rule.links
        ],
        **({"logdata": rule.logdata} if rule.logdata else {}),
        **({"skip_after": rule.skip_after} if rule.skip_after else {}),
        **({"log": False} if not rule.log else {}),
    }


def rule_from_json(rule_id: int, data: dict[str, Any], msg: str = "", severity: str = "") -> Rule:
    """The inverse of :func:`rule_to_json`."""
    links = []
    for d in data["links"]:
        negated, op, arg = _operator(d["operator"] + (" " + d["argument"] if d["argument"] else ""))
        links.append(
            Link(
                targets=d["targets"],
                operator=op,
                argument=d["argument"],
                negated=negated,
                transforms=tuple(d.get("transforms", ())),
                multi_match=bool(d.get("multi_match", False)),
                capture=bool(d.get("capture", False)),
                setvars=tuple(d.get("setvars", ())),
                ctls=tuple(d.get("ctls", ())),
            )
        )
    return Rule(
        id=rule_id,
        phase=int(data["phase"]),
        links=tuple(links),
        msg=msg,
        logdata=data.get("logdata", ""),
        severity=severity,
        log=bool(data.get("log", True)),
        skip_after=data.get("skip_after", ""),
    )
