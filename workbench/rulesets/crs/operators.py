"""ModSecurity's rule operators as libmodsecurity 3.0.15 runs them, on the (transformed) value's bytes.

:func:`compile_operator` turns an operator name and its argument into a
function of the value that returns a :class:`Match` or ``None``. The name
comes without ``@`` and without ``!`` (the caller negates). The argument is
the rule's text after macro expansion, exactly as written between the
quotes: libmodsecurity does not unescape it (``@streq a\\"b`` compares with
the three bytes ``a\\"b``); ``@pm`` undoes its own escapes. Text becomes
bytes as UTF-8, the encoding of the rule files.

``Match.data`` is what the operator reports (the ``@rx`` match; for ``@pm``
the text of the phrase tree's node where matching stopped, spelt as in the
rule; the ``@detectSQLi`` fingerprint; the value itself for operators that
test the value as a whole). ``Match.groups`` is what the ``capture`` action
writes to ``TX.0``, ``TX.1``... (``@pm`` and libinjection set ``TX.0`` only).

The integer operators follow libmodsecurity: ``@eq`` reads both sides with
``std::stoi`` (no digits, or beyond 32 bits, reads as 0); ``@gt``, ``@ge``,
``@lt`` and ``@le`` use ``atoll`` (no digits reads as 0; beyond 64 bits
saturates). libmodsecurity's parser knows no ``@ne`` and no ``@noMatch``:
it takes ``"@ne 5"`` as the regex ``@ne 5``. Here ``ne`` is the negation of
``eq`` and ``noMatch`` never matches; neither CRS release uses them.

    >>> pm = compile_operator("pm", "passwd shadow")
    >>> pm(b"/etc/PASSWD")
    Match(data=b'passwd', groups=(b'passwd',))
    >>> compile_operator("eq", "0")(b"abc") is not None  # no digits reads as 0
    True
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import importlib.metadata
import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from pathlib import Path

import ahocorasick

from .rx import UNSUPPORTED_BY_RE2, Match, compile_rx

__all__ = [
    "LIBINJECTION_BACKEND",
    "UNSUPPORTED_BY_RE2",
    "Match",
    "Operator",
    "compile_operator",
    "phrase_operator",
]

Operator = Callable[[bytes], Match | None]

_C_SPACE = b" \t\n\x0b\x0c\r"  # the C locale's isspace()


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _c_integer(text: bytes) -> int | None:
    """strtoll's reading of a C string: blanks, a sign, decimal digits; None when there are no digits."""
    text = text.split(b"\0", 1)[0].lstrip(_C_SPACE)
    sign = 1
    if text[:1] in (b"+", b"-"):
        sign, text = (-1 if text[:1] == b"-" else 1), text[1:]
    n = 0
    while n < len(text) and 48 <= text[n] <= 57:
        n += 1
    return sign * int(text[:n]) if n else None


def _stoi(text: bytes) -> int:
    """std::stoi as @eq uses it: an exception (no digits, beyond int32) is caught and reads as 0."""
    n = _c_integer(text)
    return n if n is not None and -(2**31) <= n < 2**31 else 0


def _atoll(text: bytes) -> int:
    n = _c_integer(text) or 0
    return max(-(2**63), min(n, 2**63 - 1))


def _compare(name: str, argument: bytes) -> Operator:
    if name in ("eq", "ne"):
        expected, equal = _stoi(argument), name == "eq"
        return lambda v: Match(v) if (_stoi(v) == expected) is equal else None
    limit = _atoll(argument)
    test = {
        "gt": limit.__lt__,
        "ge": limit.__le__,
        "lt": limit.__gt__,
        "le": limit.__ge__,
    }[name]
    return lambda v: Match(v) if test(_atoll(v)) else None


# ---- @pm / @pmFromFile: libmodsecurity's own Aho-Corasick (acmp) and its quirks --------------


def _pm_phrases(argument: bytes) -> list[bytes]:
    """The phrases of an @pm argument: quotes, ``|hex|`` and ``\\:``-style escapes undone, then split."""
    body = argument.lstrip(b" \t")
    if not body:
        return argument.split()
    if len(body) >= 2 and body[:1] == b'"' and argument[-1:] == b'"':
        body = body[1:-1]
    if not body:
        return argument.split()
    out = bytearray()
    hexbuf = b""
    binary = escaped = False
    for byte in body:
        ch = bytes([byte])
        if ch == b"|":
            binary = not binary
        elif not escaped and ch == b"\\":
            escaped = True
        elif binary:
            if ch not in b"0123456789abcdefABCDEF":
                return argument.split()  # ModSecurity keeps the argument unparsed
            hexbuf += ch
            if len(hexbuf) == 2:
                out.append(int(hexbuf, 16))
                hexbuf = b""
        elif escaped:
            if ch not in b':;\\"':
                return argument.split()
            out += ch
            escaped = False
        else:
            out += ch
    return bytes(out).split()  # bytes.split() splits on the C locale's whitespace


class _Node:
    __slots__ = ("children", "text", "is_last", "fail", "o_match", "parent", "letter", "depth")

    def __init__(self, parent: _Node | None, letter: int, text: bytes) -> None:
        self.children: dict[int, _Node] = {}
        self.parent, self.letter, self.text = parent, letter, text
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.is_last = False
        self.fail: _Node = self
        self.o_match: _Node | None = None


def _acmp_letter(byte: int) -> int:
    return byte + 32 if 65 <= byte <= 90 else byte  # tolower() in the C locale


class _PhraseMatcher:
    """ModSecurity's acmp: stops where a phrase first ends and reports that trie node's text.

    Case-insensitive for ASCII letters only. Its failure links look one level up only (not
    along the whole chain), so with most phrase sets it misses some matches Aho-Corasick
    finds ("y" in "axy" for "axyz xq y"), and the node it stops in may be longer than the
    phrase ("abc" for "abcd bc" in "abcx"). pyahocorasick finds whether any phrase occurs at
    all; only then does the walk (or, when the links happen to be exact, a lookup) run.
    """

    def __init__(self, phrases: list[bytes]) -> None:
        root = self.root = _Node(None, 0, b"")
        for phrase in phrases:
            node = root
            for k, byte in enumerate(phrase):
                letter = _acmp_letter(byte)
                child = node.children.get(letter)
                if child is None:
                    child = node.children[letter] = _Node(node, letter, phrase[: k + 1])
                node = child
            if phrase:
                node.is_last = True
        nodes = self._levels()
        exact_links = True
        for node in nodes:
            if node.depth > 1 and node.parent is not None:
                node.fail = node.parent.fail.children.get(node.letter, root)
                exact_links = exact_links and node.fail is self._aho_fail(node)
            else:
                node.fail = root
        for node in nodes:
            om = node.fail
            while om is not root and not om.is_last:
                om = om.fail
            node.o_match = om if om is not root else None
        self.exact_links = exact_links
        # Aho-Corasick finds whether any phrase occurs at all (acmp can only report one that does).
        reachable = [p.lower().decode("latin-1") for p in phrases if p]
        self.prefixes = {n.text.lower(): n.text for n in nodes}
        self.longest = max((len(p) for p in reachable), default=0)
        first = b"".join(b"\\x%02x" % c for c in root.children)
        self.first_bytes = re.compile(b"[%s]" % first if first else b"(?!)")
        self.automaton = None
        if reachable:
            self.automaton = ahocorasick.Automaton()
            for p in reachable:
                self.automaton.add_word(p, len(p))
            self.automaton.make_automaton()

    def _levels(self) -> list[_Node]:
        order, level = [], list(self.root.children.values())
        while level:
            order.extend(level)
            level = [c for n in level for c in n.children.values()]
        return order

    def _aho_fail(self, node: _Node) -> _Node:
        assert node.parent is not None
        state = node.parent.fail
        while node.letter not in state.children and state is not self.root:
            state = state.fail
        found = state.children.get(node.letter)
        return found if found is not None and found is not node else self.root

    def __call__(self, value: bytes) -> Match | None:
        if self.automaton is None:
            return None
        low = value.lower()
        first = next(self.automaton.iter(low.decode("latin-1")), None)
        if first is None:
            return None
        end = first[0]
        if not self.exact_links:
            return self._walk(low)
        # With exact links, acmp stops at the first phrase end, in the node of the longest
        # suffix there that is a prefix of some phrase.
        for length in range(min(self.longest, end + 1), 0, -1):
            text = self.prefixes.get(low[end + 1 - length : end + 1])
            if text is not None:
                return Match(text, (text,))
        raise AssertionError("unreachable: a phrase ended here")

    def _walk(self, low: bytes) -> Match | None:
        """acmp_process_quick, step by step (from the root it jumps to the next possible first byte)."""
        root = node = self.root
        i, n = 0, len(low)
        while i < n:
            if node is root:
                if (found := self.first_bytes.search(low, i)) is None:
                    return None
                i = found.start()
            byte = low[i]
            i += 1
            go_to = None
            while go_to is None:
                go_to = node.children.get(byte)
                if go_to is not None and go_to.is_last:
                    return Match(go_to.text, (go_to.text,))
                if node is root:
                    break
                if go_to is None:
                    node = node.fail
            if go_to is not None:
                node = go_to
            if node.o_match is not None:
                return Match(node.text, (node.text,))
        return None


def pm_file_phrases(path: Path) -> list[bytes]:
    """The lines of a data file, except empty ones and those whose first non-blank is ``#``."""
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [ln for ln in lines if ln and not ln.lstrip(_C_SPACE).startswith(b"#")]


# ---- @detectSQLi / @detectXSS ----------------------------------------------------------------


def _load_libinjection(prefer_modsecurity: bool = True) -> tuple[ctypes.PyDLL, str]:
    """libinjection through ctypes: libmodsecurity's own copy when installed, else libinjection-python.

    Both export libinjection's C API. libmodsecurity 3.0.15 bundles a newer libinjection
    than libinjection-python 1.1.6 (3.9.2 and later fixes): they disagree on about 1 in
    3,000 SQL-like inputs (numbers with exponents such as ``1E``) and on a few XSS event
    handler names (``onforminput``, ``onend``...). PyDLL keeps the GIL held during the call.
    """
    try:
        if not prefer_modsecurity:
            raise ImportError
        # Optional (the oracle's test dependency), hence not a plain import.
        extension = importlib.import_module("libmodsecurity._libmodsecurity")
        lib = ctypes.PyDLL(extension.__file__)
        lib.libinjection_sqli  # noqa: B018 - raises AttributeError when the symbol is absent
        backend = f"libmodsecurity {importlib.metadata.version('libmodsecurity')}"
    except (ImportError, OSError, AttributeError):
        import libinjection

        lib = ctypes.PyDLL(libinjection.__file__)
        backend = f"libinjection-python {importlib.metadata.version('libinjection-python')}"
    lib.libinjection_sqli.argtypes = (ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p)
    lib.libinjection_sqli.restype = ctypes.c_int
    lib.libinjection_xss.argtypes = (ctypes.c_char_p, ctypes.c_size_t)
    lib.libinjection_xss.restype = ctypes.c_int
    return lib, backend


_LIBINJECTION, LIBINJECTION_BACKEND = _load_libinjection()
_FINGERPRINT = ctypes.create_string_buffer(8)


def _detect_sqli(value: bytes) -> Match | None:
    # Any non-zero result matches: libinjection's error result counts as SQLi (fail-safe).
    if _LIBINJECTION.libinjection_sqli(value, len(value), _FINGERPRINT) == 0:
        return None
    fingerprint = _FINGERPRINT.value
    return Match(fingerprint, (fingerprint,))


def _detect_xss(value: bytes) -> Match | None:
    if _LIBINJECTION.libinjection_xss(value, len(value)) == 0:
        return None
    return Match(value, (value,))


# ---- validators ------------------------------------------------------------------------------


def _byte_range(argument: bytes) -> Operator:
    allowed = bytearray(256)
    for part in argument.split(b","):
        lo_text, dash, hi_text = part.partition(b"-")
        lo, hi = _c_integer(lo_text), _c_integer(hi_text) if dash else _c_integer(lo_text)
        # libmodsecurity refuses the rule when a part is not a byte value or a rising range.
        if lo is None or hi is None or not 0 <= lo <= hi <= 255:
            raise ValueError(f"validateByteRange cannot read {part!r}")
        allowed[lo : hi + 1] = b"\1" * (hi + 1 - lo)
    outside = bytes(b for b in range(256) if not allowed[b])
    if not outside:
        return lambda v: None
    # bytes.translate deletes the outside bytes: a length change means one was present.
    return lambda v: Match(v) if len(v.translate(None, outside)) != len(v) else None


_HEX = frozenset(b"0123456789abcdefABCDEF")


def _url_encoding(value: bytes) -> Match | None:
    if not value:
        return None
    i, n = value.find(b"%"), len(value)
    while i >= 0:
        if i + 2 >= n or value[i + 1] not in _HEX or value[i + 2] not in _HEX:
            return Match(value)
        i = value.find(b"%", i + 3)
    return None


def _utf8_char(v: bytes, i: int) -> int:
    """Length of the UTF-8 character at ``i``, or 0 when ModSecurity calls it invalid."""
    c, left = v[i], len(v) - i
    if c < 0x80:
        return 1
    if c & 0xE0 == 0xC0:
        size, d = 2, c & 0x1F
    elif c & 0xF0 == 0xE0:
        size, d = 3, c & 0x0F
    elif c & 0xF8 == 0xF0:
        if c >= 0xF5:
            return 0
        size, d = 4, c & 0x07
    else:
        return 0
    if left < size:
        return 0
    for k in range(1, size):
        if v[i + k] & 0xC0 != 0x80:
            return 0
        d = d << 6 | v[i + k] & 0x3F
    if 0xD800 <= d <= 0xDFFF or d < (0, 0, 0x80, 0x800, 0x10000)[size]:
        return 0  # a surrogate, or an overlong form
    return size


def _utf8_encoding(value: bytes) -> Match | None:
    if value.isascii():
        return None
    i = 0
    while i < len(value):
        size = _utf8_char(value, i)
        if not size:
            return Match(value)
        i += size
    return None


# ---- string operators ------------------------------------------------------------------------


def _contains_word(word: bytes) -> Operator:
    if not word:
        return lambda v: Match(v)

    def word_edge(v: bytes, pos: int) -> bool:
        # Only ASCII letters continue a word (digits and "_" do not); a position outside the
        # value does not count as an edge, hence ModSecurity's special cases at either end.
        return 0 <= pos < len(v) and not (65 <= v[pos] <= 90 or 97 <= v[pos] <= 122)

    def search(v: bytes) -> Match | None:
        if not v:
            return None
        if v == word:
            return Match(word)
        pos = v.find(word)
        while pos >= 0:
            before, after = word_edge(v, pos - 1), word_edge(v, pos + len(word))
            at_end = pos + len(word) == len(v)
            if (pos == 0 and after) or (at_end and before) or (before and after):
                return Match(word)
            pos = v.find(word, pos + 1)
        return None

    return search


def _ip_match(argument: bytes) -> Operator:
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in argument.split(b","):
        if not entry:
            continue
        text = entry.decode("latin-1")
        v6 = ":" in text
        address, slash, bits = text.partition("/")
        if slash and ((":" if v6 else ".") in bits or not (0 < (_c_integer(bits.encode()) or 0))):
            raise ValueError(f"ipMatch cannot add {text!r}")
        prefix = (_c_integer(bits.encode()) or 0) if slash else (128 if v6 else 32)
        if prefix > (128 if v6 else 32) or (v6 and slash and prefix == 128):
            raise ValueError(f"ipMatch cannot add {text!r}")  # (libmodsecurity refuses "/128")
        try:
            packed = socket.inet_pton(socket.AF_INET6 if v6 else socket.AF_INET, address)
        except OSError:
            raise ValueError(f"ipMatch cannot add {text!r}") from None
        networks.append(ipaddress.ip_network((packed, prefix), strict=False))

    def search(value: bytes) -> Match | None:
        text = value.split(b"\0", 1)[0].decode("latin-1")
        try:
            addr = ipaddress.ip_address(
                socket.inet_pton(socket.AF_INET6 if ":" in text else socket.AF_INET, text)
            )
        except (OSError, ValueError):
            return None
        return Match(value) if any(addr in net for net in networks) else None

    return search


# ---- the table -------------------------------------------------------------------------------


def _string_operator(name: str, p: bytes) -> Operator:
    if name == "streq":
        return lambda v: Match(v) if v == p else None
    if name == "beginswith":
        return lambda v: Match(p) if v.startswith(p) else None
    if name == "endswith":
        return lambda v: Match(p) if v.endswith(p) else None
    if name in ("contains", "strmatch"):
        return lambda v: Match(p) if p in v else None
    if name == "within":  # the value is looked for in the argument; an empty value matches
        return lambda v: Match(v) if v in p else None
    return _contains_word(p)


def phrase_operator(phrases: Sequence[str | bytes]) -> Operator:
    """``@pm`` over phrases given one by one (as ``@pmFromFile`` reads its lines); str as UTF-8."""
    return _phrases_cached(tuple(p if isinstance(p, bytes) else _bytes(p) for p in phrases))


@functools.lru_cache(maxsize=1024)
def _phrases_cached(phrases: tuple[bytes, ...]) -> Operator:
    return _PhraseMatcher(list(phrases))


_NAMES = {
    name.lower(): name
    for name in (
        "rx pm pmFromFile pmf detectSQLi detectXSS validateByteRange validateUrlEncoding "
        "validateUtf8Encoding eq ne gt ge lt le within streq beginsWith endsWith contains "
        "containsWord ipMatch unconditionalMatch noMatch strmatch"
    ).split()
}


@functools.lru_cache(maxsize=8192)
def compile_operator(name: str, argument: str, data_dir: Path | None = None) -> Operator:
    """The operator ``@name argument`` as a function of the value (``None``: no match)."""
    key = name.lower()
    if key not in _NAMES:
        raise ValueError(f"unknown or unsupported operator @{name}")
    arg = _bytes(argument)
    if key == "rx":
        return compile_rx(argument)
    if key == "pm":
        return _PhraseMatcher(_pm_phrases(arg))
    if key in ("pmfromfile", "pmf"):
        path = Path(argument)
        if not path.is_absolute() and data_dir is not None:
            path = data_dir / path
        return _PhraseMatcher(pm_file_phrases(path))
    if key in ("eq", "ne", "gt", "ge", "lt", "le"):
        return _compare(key, arg)
    simple: dict[str, Operator] = {
        "detectsqli": _detect_sqli,
        "detectxss": _detect_xss,
        "validateurlencoding": _url_encoding,
        "validateutf8encoding": _utf8_encoding,
        "unconditionalmatch": Match,
        "nomatch": lambda v: None,
    }
    if key in simple:
        return simple[key]
    if key == "validatebyterange":
        return _byte_range(arg)
    if key == "ipmatch":
        return _ip_match(arg)
    return _string_operator(key, arg)
