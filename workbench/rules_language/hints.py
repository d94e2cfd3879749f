"""Plain-words hints for the common mistakes in Rules-language expressions.

The engine's message (:class:`~workbench.rules_language.ExpressionError`) says
where the parser stopped and why, in the engine's exact words, which is what
the platform shows too and what its documentation searches find. It is terse:
``expected ComparisonOp`` for a misspelt operator, ``expected digit`` for a
quoted number. :func:`hint_for` adds one sentence in plain words saying what to
change, to be shown *beneath* the engine's message, never instead of it; it
returns ``None`` when it has nothing useful to add. Code in a hint is marked
with backticks.

    >>> from workbench.rules_language import ExpressionError, compile_expression
    >>> def hint(source):
    ...     try:
    ...         compile_expression(source)
    ...     except ExpressionError as err:
    ...         return hint_for(source, err)
    >>> print(hint('http.request.uri.path contain "/admin"'))
    `contain` is not an operator: did you mean `contains`?
    >>> print(hint('cf.waf.score lt "50"'))
    `cf.waf.score` is an Integer field: compare it with a number, without quotes: `50`, not `"50"`.
    >>> print(hint('http.host eq'))
    A value is missing after `eq`: give text in double quotes, for example `http.host eq "example.com"`.
    >>> print(hint('http.hots eq "example.com"'))
    There is no field `http.hots`: did you mean `http.host`?
    >>> print(hint('(http.host eq "a" or ssl'))
    A `(` is not closed: add `)` where the group ends (1 opened, 0 closed).
    >>> print(hint('ip.src.country in ("US", "FR")'))
    After `in`, the values go in braces, separated by spaces: `ip.src.country in {"US" "FR"}` (or a named list: `in $name`).

A named list that is not defined is not an error: ``ip.src in $bad_ips``
compiles, and with no list called ``bad_ips`` it silently matches nothing.
:func:`undefined_lists` names such lists, so a panel can warn about them.

    >>> undefined_lists('ip.src in $bad_ips or ip.src in $office', {"office": ["192.0.2.0/24"]})
    ['bad_ips']
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ExpressionError
from ._expression import Expression, compile_expression
from ._scheme import Scheme, get_scheme
from .functions import FUNCTIONS
from .types import Type

__all__ = ["hint_for", "undefined_lists"]

#: Comparison operators in their English spelling, then the C-like ones.
COMPARISON_WORDS = (
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "contains",
    "matches",
    "wildcard",
    "in",
    "bitwise_and",
)
COMPARISON_SYMBOLS = ("==", "!=", "<", "<=", ">", ">=", "~", "&")
LOGICAL_WORDS = ("and", "or", "xor", "not")
_OPERATOR_LIST = "eq, ne, lt, le, gt, ge, contains, matches, wildcard, strict wildcard, in"

# Words people write for an operator the language spells differently.
_ALIASES: dict[str, str] = {
    "=": "eq",
    "===": "eq",
    "equals": "eq",
    "equal": "eq",
    "is": "eq",
    "eql": "eq",
    "<>": "ne",
    "!==": "ne",
    "=!": "ne",
    "neq": "ne",
    "not_equal": "ne",
    "not_equals": "ne",
    "notequal": "ne",
    "isnot": "ne",
    "=>": "ge",
    "=<": "le",
    "gte": "ge",
    "lte": "le",
    "less": "lt",
    "greater": "gt",
    "=~": "matches",
    "match": "matches",
    "regex": "matches",
    "like": "wildcard",
    "contain": "contains",
    "includes": "contains",
    "include": "contains",
    "has": "contains",
    "is_in": "in",
    "isin": "in",
    "within": "in",
    "one_of": "in",
}
# Infix words that are functions in the Rules language.
_FUNCTION_WORDS: dict[str, str] = {
    "starts_with": "starts_with",
    "startswith": "starts_with",
    "begins_with": "starts_with",
    "beginswith": "starts_with",
    "ends_with": "ends_with",
    "endswith": "ends_with",
}
_EXAMPLE_VALUE = {"Bytes": '"example.com"', "Int": "50", "Ip": "192.0.2.1"}

_WORD = re.compile(r"[A-Za-z0-9_]")
_SYMBOL = re.compile(r"[=!<>~&|^]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"?|[A-Za-z_][A-Za-z0-9_]*|[=!<>~&|^]+|\S)')
_STRING = re.compile(r'r(#*)".*?"\1|"(?:[^"\\]|\\.)*"?', re.S)


@dataclass(frozen=True)
class _Spot:
    """Where the engine stopped, in the text it parsed (the expression, stripped)."""

    text: str  # the whole stripped expression
    masked: str  # the same, with the insides of string literals blanked out
    start: int  # character offsets of the engine's span
    end: int
    scheme: Scheme

    @property
    def culprit(self) -> str:
        return self.text[self.start : self.end]

    @property
    def rest(self) -> str:
        return self.text[self.start :]

    @property
    def at_end(self) -> bool:
        """True when nothing but spaces follows the spot: something is missing."""
        return not self.rest.strip()

    def token_at(self) -> tuple[int, int]:
        """The whole word (or run of operator symbols) the spot starts in."""
        pattern = _SYMBOL if _SYMBOL.match(self.text, self.start) else _WORD
        a = self.start
        while a > 0 and pattern.match(self.text, a - 1):
            a -= 1
        b = self.start
        while b < len(self.text) and pattern.match(self.text, b):
            b += 1
        return a, b

    def first_word(self) -> str:
        """The word or symbol run starting at the spot (what the engine choked on)."""
        m = _TOKEN.match(self.text, self.start)
        return m.group(1) if m else ""

    def previous_token(self) -> str:
        """The token just before the spot (strings blanked out)."""
        before = self.masked[: self.start].rstrip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_.]*|[=!<>~&|^]+|\S)$", before)
        return m.group(1) if m else ""

    def field_before(self) -> tuple[str, Type] | None:
        """The last field named before the spot, with its type."""
        for m in reversed(list(_IDENT.finditer(self.masked[: self.start]))):
            t = self.scheme.field_type(m.group(0))
            if t is not None:
                return m.group(0), t
        return None

    def open_count(self, opener: str, closer: str) -> tuple[int, int]:
        """How many ``opener`` and ``closer`` appear before the spot, outside strings."""
        before = self.masked[: self.start]
        return before.count(opener), before.count(closer)

    def inside_call(self) -> str | None:
        """The function whose argument list the spot is in, if any."""
        depth = 0
        for i in range(self.start - 1, -1, -1):
            ch = self.masked[i]
            if ch == ")":
                depth += 1
            elif ch == "(":
                if depth == 0:
                    m = re.search(r"([a-z_][a-z0-9_]*)\s*$", self.masked[:i])
                    return m.group(1) if m and m.group(1) in FUNCTIONS else None
                depth -= 1
        return None


def _mask(text: str) -> str:
    """``text`` with the insides of string literals replaced by spaces (offsets kept)."""

    def blank(m: re.Match[str]) -> str:
        s = m.group(0)
        return s[0] + " " * (len(s) - 2) + s[-1] if len(s) >= 2 else s

    return _STRING.sub(blank, text)


def _locate(expression: str, error: ExpressionError, scheme: Scheme) -> _Spot | None:
    """Turn the error's line and byte column into character offsets in the parsed text."""
    text = expression.strip()  # the engine parses the stripped expression
    lines = text.split("\n")
    if not 1 <= error.line <= len(lines):
        return None
    line = lines[error.line - 1]
    col = max(0, error.column - 1)
    first = sum(len(x) + 1 for x in lines[: error.line - 1])
    start = first + _char_index(line, col)
    end = first + _char_index(line, col + max(1, error.span))
    return _Spot(text, _mask(text), start, end, scheme)


def _char_index(line: str, width: int) -> int:
    """The index of the character ``width`` UTF-8 bytes into ``line`` (columns count bytes)."""
    n = 0
    for i, ch in enumerate(line):
        if n >= width:
            return i
        n += len(ch.encode("utf-8", "surrogatepass"))
    return len(line)


def _closest_operator(word: str) -> str | None:
    """The operator ``word`` most likely meant, or None."""
    low = word.lower()
    if low in COMPARISON_WORDS or low in LOGICAL_WORDS:
        return low
    if low in _ALIASES:
        return _ALIASES[low]
    if low == "strict":
        return "strict wildcard"
    words = [*COMPARISON_WORDS, *LOGICAL_WORDS]
    close = difflib.get_close_matches(low, words, n=1, cutoff=0.6)
    return close[0] if close else None


def _closest_field(name: str, scheme: Scheme) -> str | None:
    """The field ``name`` most likely meant: same letters in another case, a close
    spelling, or the shortest field whose name ends with ``name``."""
    fields = sorted(scheme.fields)
    for f in fields:
        if f.lower() == name.lower():
            return f
    close = difflib.get_close_matches(name.lower(), fields, n=1, cutoff=0.75)
    if close:
        return close[0]
    tails = [f for f in fields if f.endswith("." + name.lower())]
    return min(tails, key=len) if tails else None


def _example(field: str, t: Type, op: str = "eq") -> str:
    """A small valid comparison on ``field``."""
    if t.kind == "Bool":
        return field
    if t.kind in ("Array", "Map"):
        index = '["name"]' if t.kind == "Map" else ""
        elem = t.element_type
        while elem.element is not None:
            elem = elem.element
        return f"any({field}{index}[*] eq {_EXAMPLE_VALUE.get(elem.kind, '1')})"
    if op == "in":
        value = {"Bytes": '{"a" "b"}', "Int": "{1..50}", "Ip": "{192.0.2.0/24}"}[t.kind]
        return f"{field} in {value}"
    if op in ("matches", "~"):
        return f'{field} {op} "^/admin"'
    if op == "wildcard":
        return f'{field} {op} "*.example.com"'
    return f"{field} {op} {_EXAMPLE_VALUE[t.kind]}"


def _type_name(t: Type) -> str:
    return t.friendly


# -- one function per kind of mistake; each returns a hint or None -------------------


def _misspelt_in_word(spot: _Spot, reason: str) -> str | None:
    """The engine read an operator's first letters and stopped inside the word:
    ``equals`` (``eq`` + ``uals``), ``containss``, ``===``, ``andd``."""
    a, b = spot.token_at()
    if a >= spot.start:
        return None
    word = spot.text[a:b]
    if word in COMPARISON_WORDS or word in COMPARISON_SYMBOLS or word in LOGICAL_WORDS:
        return None
    if spot.scheme.field_type(word) is not None or word in FUNCTIONS:
        return None
    prefix = spot.text[a : spot.start]
    if prefix not in (*COMPARISON_WORDS, *COMPARISON_SYMBOLS, *LOGICAL_WORDS, "&&", "||", "^^"):
        return None
    guess = _closest_operator(word)
    if word.lower() in _FUNCTION_WORDS:
        return _function_word(spot, word)
    if guess is None or guess == word:
        return f"`{word}` is not an operator. Comparison operators: {_OPERATOR_LIST}."
    return f"`{word}` is not an operator: did you mean `{guess}`?"


def _function_word(spot: _Spot, word: str) -> str:
    fn = _FUNCTION_WORDS[word.lower()]
    found = spot.field_before()
    field = found[0] if found else "http.request.uri.path"
    return (
        f'`{fn}` is a function, not an operator: write `{fn}({field}, "/admin")`, '
        f'or use `{field} contains "/admin"` or `matches`.'
    )


def _expected_operator(spot: _Spot, reason: str) -> str | None:
    if reason != "expected ComparisonOp":
        return None
    found = spot.field_before()
    if spot.at_end:
        if found is None:
            return "An operator and a value are missing at the end of the expression."
        field, t = found
        return (
            f"`{field}` is a {_type_name(t)} field: a condition needs an operator and a value "
            f"after it, for example `{_example(field, t)}`. Only Boolean fields (like `ssl`) "
            "stand alone."
        )
    word = spot.first_word()
    call = spot.inside_call()
    if call is not None and (word[:1] in ('"', "r") or word[:1].isdigit()):
        return f"Function arguments are separated by commas: put a `,` before `{word}`."
    if word[:1] in ('"', "{", "$") or word[:1].isdigit():
        example = f"`{_example(*found)}`" if found else '`http.host eq "example.com"`'
        return f"The operator is missing before the value: for example {example}."
    like = difflib.get_close_matches(word.lower(), list(_FUNCTION_WORDS), n=1, cutoff=0.8)
    if like:
        return _function_word(spot, like[0])
    if word == "not":
        return (
            "`not` goes in front of the whole condition, not before the operator: "
            'for example `not http.host contains "admin"`.'
        )
    guess = _closest_operator(word)
    if guess is not None and guess in LOGICAL_WORDS:
        guess = None
    if guess is None:
        return f"`{word}` is not an operator. Comparison operators: {_OPERATOR_LIST}."
    if guess == word.lower():
        return f"Operators are written in lowercase: `{guess}`, not `{word}`."
    return f"`{word}` is not an operator: did you mean `{guess}`?"


def _unknown_identifier(spot: _Spot, reason: str) -> str | None:
    if reason != "unknown identifier":
        return None
    word = spot.culprit
    low = word.lower()
    if low in LOGICAL_WORDS and word != low:
        return f"Logical operators are written in lowercase: `{low}`, not `{word}`."
    if word in LOGICAL_WORDS:
        return (
            f"A condition is missing before `{word}`, or there is one `{spot.previous_token()}` "
            "too many."
        )
    if low in ("true", "false", "null"):
        return (
            f"There is no `{word}` value: a Boolean field is a whole condition on its own. "
            "Write `ssl` for true and `not ssl` for false."
        )
    prev = spot.previous_token()
    if prev in COMPARISON_WORDS or prev in COMPARISON_SYMBOLS:
        bare = word.rstrip('"')
        return f'`{bare}` is read as a field name. Text values go in double quotes: `"{bare}"`.'
    if spot.text[spot.end : spot.end + 1] == "(" or spot.rest[len(word) :].lstrip()[:1] == "(":
        close = difflib.get_close_matches(word, sorted(FUNCTIONS), n=1, cutoff=0.6)
        if close:
            return f"There is no function `{word}`: did you mean `{close[0]}`?"
        return f"There is no function `{word}`."
    guess = _closest_field(word, spot.scheme)
    if guess is not None:
        if guess.lower() == low:
            return f"Field names are case-sensitive: write `{guess}`, not `{word}`."
        return f"There is no field `{word}`: did you mean `{guess}`?"
    return (
        f"There is no field `{word}` in the {spot.scheme.name} scheme. Field names are "
        "dotted and lowercase, such as `http.request.uri.path`, `ip.src` or `cf.waf.score`."
    )


def _unclosed_set(spot: _Spot) -> str | None:
    opened, closed = spot.open_count("{", "}")
    if spot.at_end and opened > closed:
        return "The set opened with `{` is not closed: add `}` after its last value."
    return None


#: Operators whose value is a pattern (a regex or a wildcard), in every spelling.
_PATTERN_OPERATORS = frozenset({"matches", "~", "wildcard"})


def _missing_value(spot: _Spot, kind: str) -> str:
    op = spot.previous_token()
    found = spot.field_before()
    if op == "{":
        return "The set opened with `{` is not closed: add `}` after its last value."
    what = {
        "Bytes": "give text in double quotes",
        "Int": "give a whole number",
        "Ip": "give an IP address",
        "pattern": "give a pattern in double quotes",
    }[kind]
    example = ""
    if found is not None:
        example = f", for example `{_example(found[0], found[1], op)}`"
    if kind == "Ip" and found is not None:
        example += f", or a set of addresses and ranges: `{_example(found[0], found[1], 'in')}`"
    subject = f"`{found[0]}` is an Integer field, so " if kind == "Int" and found else ""
    return f"A value is missing after `{op}`: {subject}{what}{example}."


def _integer_expected(spot: _Spot, reason: str) -> str | None:
    if reason != "expected digit":
        return None
    if spot.at_end:
        return _unclosed_set(spot) or _missing_value(spot, "Int")
    found = spot.field_before()
    field = f"`{found[0]}` is an Integer field" if found else "This value must be an Integer"
    quoted = re.match(r'"[^"]*"?', spot.rest)
    if quoted:
        inner = quoted.group(0).strip('"')
        number = inner if re.fullmatch(r"-?\d+", inner) else "50"
        return (
            f"{field}: compare it with a number, without quotes: "
            f"`{number}`, not `{quoted.group(0)}`."
        )
    return (
        f"{field}: the value must be a whole number such as `50`, or a range in a set: `{{1..50}}`."
    )


def _string_expected(spot: _Spot, reason: str) -> str | None:
    bytes_reasons = (
        reason.startswith("expected 2 characters, but found")
        or reason == "expected byte separator"
        or reason == "invalid digit found in string while parsing with radix 16"
    )
    if not bytes_reasons:
        return None
    if spot.at_end:
        return _unclosed_set(spot) or _missing_value(spot, "Bytes")
    first = spot.culprit[:1]
    if first == "'":
        m = re.match(r"'([^']*)'?", spot.rest)
        inner = m.group(1) if m else "text"
        return f"Text values take double quotes: `\"{inner}\"`, not `'{inner}'`."
    if first == ",":
        return 'Values in a set are separated by spaces, not commas: `{"a" "b"}`.'
    bare = re.match(r"[^\s(){}\"]+", spot.rest)
    value = bare.group(0) if bare else spot.culprit
    found = spot.field_before()
    subject = f"`{found[0]}` is a String field: its value" if found else "A text value"
    in_set = spot.open_count("{", "}")
    where = ", in a set too" if in_set[0] > in_set[1] else ""
    return f'{subject} goes in double quotes{where}: `"{value}"`.'


def _ip_expected(spot: _Spot, reason: str) -> str | None:
    if reason != "expected IP address character":
        return None
    if spot.at_end:
        return _unclosed_set(spot) or _missing_value(spot, "Ip")
    found = spot.field_before()
    field = f"`{found[0]}` is an IP address field" if found else "This value must be an IP address"
    quoted = re.match(r'"([^"]*)"?', spot.rest)
    if quoted:
        return f"{field}: write the address without quotes: `{quoted.group(1)}`."
    return f"{field}: give an address such as `192.0.2.1`, or a range in a set: `{{192.0.2.0/24}}`."


def _bad_address(spot: _Spot, reason: str) -> str | None:
    if reason != "couldn't parse address in network: invalid IP address syntax":
        return None
    culprit = spot.culprit
    opened, closed = spot.open_count("{", "}")
    if "/" in culprit and opened <= closed:  # a network after eq, <, ...: sets hold ranges
        found = spot.field_before()
        field = found[0] if found else "ip.src"
        try:
            cidr = str(ipaddress.ip_network(culprit, strict=False))
        except ValueError:
            cidr = "192.0.2.0/24"
        return f"A CIDR range goes in a set: `{field} in {{{cidr}}}`."
    return (
        f"`{culprit}` is not an IP address: write four numbers 0-255 separated by dots "
        "(`192.0.2.1`) or an IPv6 address (`2001:db8::1`); a range in a set is "
        "`192.0.2.1..192.0.2.9`, both ends whole addresses."
    )


def _pattern_expected(spot: _Spot, reason: str) -> str | None:
    if reason != 'expected " or r':
        return None
    if spot.at_end:
        return _missing_value(spot, "pattern")
    op = spot.previous_token()
    return f'The pattern after `{op}` must be a quoted string: `"..."`, or a raw string `r"..."`.'


def _in_without_braces(spot: _Spot, reason: str) -> str | None:
    if reason != 'expected literal "{"':
        return None
    found = spot.field_before()
    field = found[0] if found else "ip.src.country"
    if spot.at_end:
        return (
            "`in` needs a set of values in braces after it, "
            f"`{_example(found[0], found[1], 'in') if found else field + ' in {...}'}`, "
            "or a named list: `in $name`."
        )
    values = spot.culprit.strip()
    if values[:1] in "([" and values[-1:] in ")]":
        values = values[1:-1]
    values = " ".join(v for v in re.split(r"[\s,]+", values) if v)
    return (
        f"After `in`, the values go in braces, separated by spaces: `{field} in {{{values}}}` "
        "(or a named list: `in $name`)."
    )


def _quantifier_argument(spot: _Spot, reason: str) -> str | None:
    got = re.fullmatch(r"expected value of type Array<Bool>, but got (.+)", reason)
    called = re.search(r"\b(any|all)\s*\(\s*$", spot.text[: spot.start])
    if not got or not called:
        return None
    name, culprit = called.group(1), spot.culprit.strip()
    if got.group(1).startswith(("Array<", "Map<")):
        return f'`{name}()` tests each element: mark the list with `[*]`, as in `{name}({culprit}[*] eq "x")`.'
    return (
        f"`{name}()` takes a condition on a list's elements (`[*]`), and `{culprit}` is one "
        f'value: test it without `{name}()`, or write `{name}(http.request.headers.names[*] eq "x")`.'
    )


def _unbalanced(spot: _Spot, reason: str) -> str | None:
    if reason == 'expected literal "("' and spot.previous_token() in FUNCTIONS:
        name = spot.previous_token()
        return f"`{name}` is a function: give its arguments in parentheses, as in `{name}(...)`."
    if reason == 'expected literal ","':
        return (
            "A function's arguments are separated by commas and the call ends with `)`: add "
            "`,` before the next argument, or `)` where the call ends."
        )
    if reason == 'expected literal ")"':
        opened, closed = spot.open_count("(", ")")
        return (
            f"A `(` is not closed: add `)` where the group ends ({opened} opened, {closed} closed)."
        )
    if reason == "could not find an ending quote":
        if re.search(r'\\"[^"]*$', spot.rest):
            return (
                'A string is not closed: `\\"` is a quote inside the text, not its end. '
                'Add a closing `"`, or write a backslash at the end as `\\\\`.'
            )
        return 'A string is not closed: add a closing `"` after its text.'
    return None


def _unrecognised(spot: _Spot, reason: str) -> str | None:
    if reason != "unrecognised input":
        return None
    # Inside a call the engine says this of a name it cannot resolve (`any(cf.wafx[*] ...)`):
    # the hint is the unknown identifier's.
    name = re.match(r"[A-Za-z_][\w.]*", spot.culprit)
    if name and spot.scheme.field_type(name.group(0).rstrip(".")) is None:
        word = name.group(0).rstrip(".")
        if word not in FUNCTIONS and word.lower() not in LOGICAL_WORDS:
            named = _Spot(spot.text, spot.masked, spot.start, spot.start + len(word), spot.scheme)
            said = _unknown_identifier(named, "unknown identifier")
            if said:
                return said
    # The engine's word for a value or a set missing its end at the end of the expression.
    if spot.at_end and _unclosed_set(spot):
        return _unclosed_set(spot)
    if spot.at_end and spot.previous_token() in (*COMPARISON_WORDS, *COMPARISON_SYMBOLS):
        op = spot.previous_token()
        return _missing_value(spot, "pattern" if op in _PATTERN_OPERATORS else "Bytes")
    word = spot.first_word()
    first = word[:1]
    if first == ")":
        return "There is a `)` with no `(` before it: remove it, or add `(` where the group starts."
    if first == "}":
        return "There is a `}` with no `{` before it: remove it."
    if word.lower() in LOGICAL_WORDS:
        return f"Logical operators are written in lowercase: `{word.lower()}`, not `{word}`."
    prev = spot.previous_token()
    prev_type = spot.scheme.field_type(prev)
    if prev_type is not None and prev_type.kind == "Bool":
        return (
            f"`{prev}` is a Boolean field: it is a whole condition on its own. "
            f"Write `{prev}` for true or `not {prev}` for false, with no operator or value."
        )
    if first == "." and spot.text[spot.start - 1 : spot.start].isdigit():
        return "Integers are whole numbers: there is no decimal point in the Rules language."
    if first == "/":
        found = spot.field_before()
        field = found[0] if found else "ip.src"
        address = re.search(r"(\S+)$", spot.text[: spot.start])
        bits = re.match(r"/\d+", spot.rest)
        cidr = f"{address.group(1) if address else '192.0.2.0'}{bits.group(0) if bits else '/24'}"
        try:
            cidr = str(ipaddress.ip_network(cidr, strict=False))
        except ValueError:
            pass
        return f"A CIDR range goes in a set: `{field} in {{{cidr}}}`."
    if first == ";":
        return "An expression has no `;` at the end: remove it."
    if first == "#" or spot.culprit.startswith("//"):
        return "The Rules language has no comments: remove them."
    if first == "-" and re.search(r"\$[\w.]*$", spot.text[: spot.start]):
        return "List names use lowercase letters, digits and underscores: no `-`."
    return (
        "The expression is already complete before this point. To add a condition, "
        "join it with `and` or `or`."
    )


def _condition_expected(spot: _Spot, reason: str) -> str | None:
    if reason != "expected identifier character":
        return None
    prev = spot.previous_token()
    if spot.at_end:
        return f"The expression ends after `{prev}`: add a condition after it, or remove `{prev}`."
    return "A condition is expected here: a field (like `ssl`), a comparison, or a group in `( )`."


def _other(spot: _Spot, reason: str) -> str | None:
    if reason.startswith('expected ", xHH or OOO after'):
        return (
            'In a quoted string a backslash can only start `\\"`, `\\\\`, `\\xHH` or `\\OOO`. '
            'Write a backslash as `\\\\`, or use a raw string `r"..."` where nothing is escaped.'
        )
    if reason.startswith("invalid digit found in string while parsing with radix 8"):
        return "A number that starts with 0 is octal (digits 0-7): drop the leading zero."
    if reason.startswith("invalid digit found in string while parsing with radix 10"):
        return "Integers are written with digits only, such as `50`."
    if reason.startswith("regex parse error"):
        if "look-around" in reason:
            return (
                "Look-ahead and look-behind (`(?=`, `(?!`, `(?<=`) are not supported in `matches`."
            )
        if reason.rstrip().endswith("Unicode not allowed here"):
            return "Unicode classes such as `\\p{Hangul}` need Unicode on: start the pattern with `(?u)`."
        return (
            "The pattern is not a valid regular expression. To match characters such as "
            "`(`, `[`, `.` or `?` literally, put a backslash before them."
        )
    if reason.startswith("invalid list name"):
        return "List names are written in lowercase letters, digits and underscores: `$office`."
    m = re.match(r"cannot perform this operation on type (\w+)", reason)
    if m:
        found = spot.field_before()
        op = spot.first_word()
        if m.group(1) in ("Array", "Map") and found:
            return (
                f"`{found[0]}` holds several values: test them all with "
                f"`{_example(found[0], found[1])}`, or pick one by index."
            )
        if m.group(1) == "Ip":
            return f"`{op}` works on text; for an IP address use `eq` or `in {{192.0.2.0/24}}`."
        if m.group(1) == "Int":
            return f"`{op}` works on text; for an Integer use eq, ne, lt, le, gt, ge or in."
    return None


_RULES = (
    _misspelt_in_word,
    _expected_operator,
    _unknown_identifier,
    _integer_expected,
    _string_expected,
    _ip_expected,
    _bad_address,
    _pattern_expected,
    _in_without_braces,
    _quantifier_argument,
    _unbalanced,
    _unrecognised,
    _condition_expected,
    _other,
)


def hint_for(expression: str, error: ExpressionError, scheme: str | Scheme = "http") -> str | None:
    """A plain-words hint for ``error`` (raised compiling ``expression``), or None.

    The hint is meant to be shown beneath the engine's message, which stays as
    it is. Code in the hint is between backticks.
    """
    sch = get_scheme(scheme) if isinstance(scheme, str) else scheme
    spot = _locate(expression, error, sch)
    if spot is None:
        return None
    for rule in _RULES:
        hint = rule(spot, error.reason)
        if hint:
            return hint
    return None


def undefined_lists(
    expr: Expression | str, lists: Mapping[str, Any] | Iterable[str] | None
) -> list[str]:
    """The ``$list`` names ``expr`` uses that ``lists`` does not define, sorted.

    An undefined list is not an error: ``in $name`` with no such list matches
    nothing, silently. ``lists`` is a mapping of name to items, or just names.
    """
    compiled = compile_expression(expr) if isinstance(expr, str) else expr
    defined = set(lists or ())
    return [name for name in compiled.lists if name not in defined]
