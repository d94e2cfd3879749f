r"""Unicode classes (``\p{...}``) for regexes that turn Unicode on with ``(?u)``.

The engine's regex crate matches such a class against the UTF-8 encoding of
one code point. RE2 knows the same general categories and scripts, so the
class is resolved by RE2's own tables: its code points, found once per name,
become UTF-8 byte sequences for the byte-wise (Latin-1) patterns, and a
class of code points for DuckDB's UTF-8 mode.

Names are matched loosely, as the crate does (case, spaces, ``_`` and ``-``
and an ``Is`` prefix do not matter; long general-category names and
``gc=``/``sc=`` prefixes are accepted). The crate's binary properties
(``Alphabetic``, ``Emoji``, ``Uppercase``, ``Math``, ... and their short
aliases) come from ``unicode_binary.json``, which ``tools/build_unicode_binary.py``
generates from the ``regex`` module's tables (a build-time tool, never imported
here); ``ASCII`` and ``Assigned`` from ``unicode_names.json``. Script extensions
are not known to RE2 and are refused. With Unicode on, ``\w``/``\d``/``\s`` are
Unicode classes too (:func:`perl_class`) and ``(?i)`` uses simple case folding
(:func:`fold_ranges`).

    >>> name, ranges = unicode_class("greek", negated=False)
    >>> print(name, any(lo <= 0x3B1 <= hi for lo, hi in ranges))
    \p{Greek} True
    >>> name, ranges = unicode_class("Is_Alpha", negated=False)
    >>> print(name, any(lo <= ord("é") <= hi for lo, hi in ranges))
    \p{Alphabetic} True
    >>> utf8_sequences(0x80, 0x7FF)
    [[(194, 223), (128, 191)]]
"""

from __future__ import annotations

import bisect
import functools
import json
from pathlib import Path
from typing import Any

import re2

from .regex_tree import _normalize

_MAX = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)
_NAMES = json.loads((Path(__file__).with_name("unicode_names.json")).read_text())
# Long general-category names (normalized) to RE2's short ones.
_CATEGORIES: dict[str, str] = _NAMES["general_categories"]
_BINARY = _NAMES["binary_properties"]
_BINARY_FILE = Path(__file__).with_name("unicode_binary.json")
_QUIET = re2.Options()
_QUIET.log_errors = False  # an unknown name is an answer here, not something to log


def _loose(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in " _-")


@functools.cache
def _all_scalars() -> str:
    # Every Unicode scalar value once, in order (surrogates cannot be in a str RE2 scans).
    return "".join(map(chr, range(_SURROGATES[0]))) + "".join(
        map(chr, range(_SURROGATES[1] + 1, _MAX + 1))
    )


def _code_point(index: int) -> int:
    return index if index < _SURROGATES[0] else index + (_SURROGATES[1] - _SURROGATES[0] + 1)


@functools.lru_cache(maxsize=128)
def _ranges_of(re2_name: str) -> tuple[tuple[int, int], ...] | None:
    try:
        runs = re2.compile(f"[\\p{{{re2_name}}}]+", _QUIET)
    except re2.error:
        return None
    out: list[tuple[int, int]] = []
    for m in runs.finditer(_all_scalars()):
        lo, hi = _code_point(m.start()), _code_point(m.end() - 1)
        if lo < _SURROGATES[0] < hi:
            out += [(lo, _SURROGATES[0] - 1), (_SURROGATES[1] + 1, hi)]
        else:
            out.append((lo, hi))
    return tuple(out)


def _resolve(name: str) -> str | None:
    """RE2's spelling of a property name the crate accepts, or None."""
    text = name.strip()
    for prefix in ("gc=", "generalcategory=", "sc=", "script=", "scx=", "scriptextensions="):
        if _loose(text).startswith(prefix.replace("=", "")) and "=" in text:
            text = text.split("=", 1)[1]
            break
    loose = _symbolic(text)
    if loose in _CATEGORIES:
        return _CATEGORIES[loose]
    texts = [text]
    if text[:2].lower() == "is" and loose != "isc":
        texts.append(text[2:].lstrip(" _-"))
    for plain in texts:
        title = "_".join(w.capitalize() for w in plain.replace("-", " ").replace("_", " ").split())
        for candidate in (plain, title):
            if candidate and _ranges_of(candidate) is not None:
                return candidate
    return None


def _symbolic(name: str) -> str:
    """The crate's loose form of a name (UAX44-LM3): no case, ``' '``, ``_``, ``-``,
    non-ASCII or leading ``is``; ``isc`` stays ``isc`` (ISO_Comment, not ``c``)."""
    text = name[2:] if name[:2].lower() == "is" else name
    loose = "".join(ch for ch in text.lower() if ch.isascii() and ch not in " _-")
    return "isc" if loose == "c" and text is not name else loose


@functools.cache
def _binary_data() -> dict[str, Any]:
    return dict(json.loads(_BINARY_FILE.read_text(encoding="utf-8")))


@functools.cache
def _crate_binary(symbolic: str) -> tuple[str, tuple[tuple[int, int], ...]] | None:
    """``(canonical name, ranges)`` of a binary property from the generated table."""
    data = _binary_data()
    canonical = data["names"].get(symbolic)
    if canonical is None or canonical not in data["properties"]:
        return None
    flat, out, end = data["properties"][canonical], [], -1
    # Stored as alternating gap and length, so each range is relative to the last one.
    for gap, length in zip(flat[::2], flat[1::2], strict=True):
        lo = end + 1 + gap
        end = lo + length
        out.append((lo, end))
    return canonical, tuple(out)


def unicode_class(name: str, negated: bool) -> tuple[str, list[tuple[int, int]]] | None:
    """``(class text, code point ranges)`` of ``\\p{name}`` (``\\P`` when negated), or None
    when no general category, script or supported binary property has that name."""
    if name.startswith("^"):
        name, negated = name[1:], not negated
    # The crate tries binary properties first, except for three names that are also
    # general categories (Format, Currency_Symbol, Cased_Letter).
    symbolic = _symbolic(name)
    crate = None if symbolic in ("cf", "sc", "lc") else _crate_binary(symbolic)
    found = _resolve(name) if crate is None else crate[0]
    if crate is not None:
        ranges = list(crate[1])
    elif found is not None:
        ranges = list(_ranges_of(found) or ())
    else:
        binary = _binary(symbolic)
        if binary is None:
            return None
        ranges = list(binary)
    resolved = found or name
    if negated:
        ranges = _complement(ranges)
    return ("\\P" if negated else "\\p") + "{" + resolved + "}", ranges


def unsupported_binary_property(name: str) -> bool:
    """True for a binary property the crate accepts but the workbench cannot build
    (one the ``regex`` module did not know when the table was generated)."""
    data = _binary_data()
    return data["names"].get(_symbolic(name.lstrip("^"))) in data["missing"]


@functools.cache
def _binary(loose: str) -> tuple[tuple[int, int], ...] | None:
    loose = _BINARY["aliases"].get(loose, loose)
    if loose in _BINARY["ranges"]:
        return tuple((lo, hi) for lo, hi in _BINARY["ranges"][loose])
    if loose in _BINARY["categories"]:
        cats = _BINARY["categories"][loose]
        return tuple(_normalize([r for cat in cats for r in _ranges_of(cat) or ()]))
    return None


def perl_class(letter: str) -> list[tuple[int, int]]:
    """Code point ranges of ``\\d``, ``\\s`` or ``\\w`` (upper case: negated) with Unicode on."""
    ranges = list(_perl(letter.lower()))
    return _complement(ranges) if letter.isupper() else ranges


@functools.cache
def _perl(letter: str) -> tuple[tuple[int, int], ...]:
    if letter == "d":
        return _ranges_of("Nd") or ()
    if letter == "s":
        return tuple((lo, hi) for lo, hi in _NAMES["white_space"])
    # The crate's \w: Alphabetic, marks, decimal digits, connector punctuation, Join_Control.
    parts = [r for cat in ("L", "M", "Nd", "Nl", "Pc") for r in _ranges_of(cat) or ()]
    parts += [(lo, hi) for lo, hi in _NAMES["word_extra"]]
    return tuple(_normalize(parts))


@functools.cache
def _fold_classes() -> dict[int, tuple[int, ...]]:
    """Each cased code point to every code point of its simple case folding class.

    The crate joins code points with the same simple (C and S) case folding.
    Python's ``casefold`` is the full (C and F) one: where it gives several
    characters the simple folding is the one-character lower case (``ẞ`` to
    ``ß``), and where there is none the code point stays alone (``ß`` is not
    ``ss``; the dotless ``ı`` is not ``i``, a Turkic-only folding).
    """
    parent: dict[int, int] = {}

    def root(cp: int) -> int:
        while parent.get(cp, cp) != cp:
            cp = parent[cp]
        return cp

    for cp in range(_MAX + 1):
        if _SURROGATES[0] <= cp <= _SURROGATES[1]:
            continue
        ch = chr(cp)
        other = ch.casefold()
        if len(other) != 1:
            other = ch.lower()
        if len(other) == 1 and other != ch:
            a, b = root(cp), root(ord(other))
            parent[max(a, b)] = min(a, b)
            parent.setdefault(min(a, b), min(a, b))
    members: dict[int, list[int]] = {}
    for cp in parent:
        members.setdefault(root(cp), []).append(cp)
    return {cp: tuple(sorted(group)) for group in members.values() for cp in group}


def fold_ranges(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ranges`` closed under Unicode simple case folding (the crate's ``(?iu)``).

    >>> [hex(lo) for lo, _ in fold_ranges([(0x3A3, 0x3A3)])]
    ['0x3a3', '0x3c2']
    """
    merged = _normalize(list(ranges))
    starts = [lo for lo, _ in merged]
    extra = []
    for cp, group in _fold_classes().items():
        i = bisect.bisect_right(starts, cp) - 1
        if i >= 0 and cp <= merged[i][1]:
            extra += [(other, other) for other in group]
    return _normalize(merged + extra)


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, start = [], 0
    for lo, hi in sorted(ranges + [_SURROGATES]):
        if lo > start:
            out.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= _MAX:
        out.append((start, _MAX))
    return out


def utf8_sequences(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """The UTF-8 encodings of code points ``lo..hi`` as byte-range sequences (no surrogates)."""
    out: list[list[tuple[int, int]]] = []
    _split(lo, hi, out)
    return out


def _split(lo: int, hi: int, out: list[list[tuple[int, int]]]) -> None:
    for bound in (0x7F, 0x7FF, 0xFFFF):
        if lo <= bound < hi:
            _split(lo, bound, out)
            _split(bound + 1, hi, out)
            return
    width = len(chr(lo).encode("utf-8"))
    for i in range(1, width):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask:
                _split(lo, lo | mask, out)
                _split((lo | mask) + 1, hi, out)
                return
            if hi & mask != mask:
                _split(lo, (hi & ~mask) - 1, out)
                _split(hi & ~mask, hi, out)
                return
    out.append(list(zip(chr(lo).encode("utf-8"), chr(hi).encode("utf-8"), strict=True)))
