r"""Build ``workbench/rules_language/unicode_binary.json``: the Unicode binary properties
the Rust ``regex`` crate accepts in ``\p{...}``, as code point ranges.

Neither RE2 nor Python's ``unicodedata`` has these tables, so this script asks the
``regex`` module (mrab), a development-only tool that the workbench never imports at
run time: every Unicode scalar value is scanned once per property and the runs it
matches become ranges. Names and short aliases are those of the crate's
``regex-syntax`` tables (``property_bool.rs`` and ``property_names.rs``), written here
as data. Run from the project root after upgrading ``regex``:

    .venv/bin/python tools/build_unicode_binary.py

The output stores each property as a flat list of alternating gaps and lengths
(``start - previous end - 1``, ``end - start``), which keeps the file small; see
``regex_unicode._binary_table`` for the reader.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import regex

OUT = Path(__file__).resolve().parent.parent / "workbench/rules_language/unicode_binary.json"
MAX = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
# The crate's binary properties (regex-syntax 0.8, Unicode 16.0) with the loose short
# aliases its property-name table gives them. InCB is in the crate's table but no
# name reaches it, so it is left out.
PROPERTIES: dict[str, list[str]] = {
    "ASCII_Hex_Digit": ["ahex"],
    "Alphabetic": ["alpha"],
    "Bidi_Control": ["bidic"],
    "Bidi_Mirrored": ["bidim"],
    "Case_Ignorable": ["ci"],
    "Cased": [],
    "Changes_When_Casefolded": ["cwcf"],
    "Changes_When_Casemapped": ["cwcm"],
    "Changes_When_Lowercased": ["cwl"],
    "Changes_When_Titlecased": ["cwt"],
    "Changes_When_Uppercased": ["cwu"],
    "Dash": [],
    "Default_Ignorable_Code_Point": ["di"],
    "Deprecated": ["dep"],
    "Diacritic": ["dia"],
    "Emoji": [],
    "Emoji_Component": ["ecomp"],
    "Emoji_Modifier": ["emod"],
    "Emoji_Modifier_Base": ["ebase"],
    "Emoji_Presentation": ["epres"],
    "Extended_Pictographic": ["extpict"],
    "Extender": ["ext"],
    "Grapheme_Base": ["grbase"],
    "Grapheme_Extend": ["grext"],
    "Grapheme_Link": ["grlink"],
    "Hex_Digit": ["hex"],
    "Hyphen": [],
    "IDS_Binary_Operator": ["idsb"],
    "IDS_Trinary_Operator": ["idst"],
    "IDS_Unary_Operator": ["idsu"],
    "ID_Compat_Math_Continue": [],
    "ID_Compat_Math_Start": [],
    "ID_Continue": ["idc"],
    "ID_Start": ["ids"],
    "Ideographic": ["ideo"],
    "Join_Control": ["joinc"],
    "Logical_Order_Exception": ["loe"],
    "Lowercase": ["lower"],
    "Math": [],
    "Modifier_Combining_Mark": ["mcm"],
    "Noncharacter_Code_Point": ["nchar"],
    "Other_Alphabetic": ["oalpha"],
    "Other_Default_Ignorable_Code_Point": ["odi"],
    "Other_Grapheme_Extend": ["ogrext"],
    "Other_ID_Continue": ["oidc"],
    "Other_ID_Start": ["oids"],
    "Other_Lowercase": ["olower"],
    "Other_Math": ["omath"],
    "Other_Uppercase": ["oupper"],
    "Pattern_Syntax": ["patsyn"],
    "Pattern_White_Space": ["patws"],
    "Prepended_Concatenation_Mark": ["pcm"],
    "Quotation_Mark": ["qmark"],
    "Radical": [],
    "Regional_Indicator": ["ri"],
    "Sentence_Terminal": ["sterm"],
    "Soft_Dotted": ["sd"],
    "Terminal_Punctuation": ["term"],
    "Unified_Ideograph": ["uideo"],
    "Uppercase": ["upper"],
    "Variation_Selector": ["vs"],
    "White_Space": ["space", "wspace"],
    "XID_Continue": ["xidc"],
    "XID_Start": ["xids"],
}


def loose(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in " _-")


def scalars() -> str:
    return "".join(map(chr, range(SURROGATES[0]))) + "".join(
        map(chr, range(SURROGATES[1] + 1, MAX + 1))
    )


def code_point(index: int) -> int:
    return index if index < SURROGATES[0] else index + (SURROGATES[1] - SURROGATES[0] + 1)


def ranges(name: str, text: str) -> list[tuple[int, int]] | None:
    try:
        runs = regex.compile(f"[\\p{{{name}}}]+")
    except regex.error:
        return None
    out: list[tuple[int, int]] = []
    for m in runs.finditer(text):
        lo, hi = code_point(m.start()), code_point(m.end() - 1)
        if lo < SURROGATES[0] < hi:
            out += [(lo, SURROGATES[0] - 1), (SURROGATES[1] + 1, hi)]
        else:
            out.append((lo, hi))
    return out


def encode(spans: list[tuple[int, int]]) -> list[int]:
    flat, end = [], -1
    for lo, hi in spans:
        flat += [lo - end - 1, hi - lo]
        end = hi
    return flat


def unicode_version() -> str:
    # The newest version whose additions `regex` knows: Unicode 17.0 added U+20C1.
    probes = {"17.0": 0x20C1, "16.0": 0x1CC00, "15.1": 0x2FFC, "15.0": 0x1E030}
    for version, cp in probes.items():
        if regex.match(r"\p{Assigned}", chr(cp)):
            return version
    return f"older than 15.0 (Python's unicodedata is {unicodedata.unidata_version})"


def main() -> None:
    text = scalars()
    properties: dict[str, list[int]] = {}
    names: dict[str, str] = {}
    missing = []
    for name, aliases in PROPERTIES.items():
        spans = ranges(name, text)
        if spans is None:
            missing.append(name)
            continue
        properties[name] = encode(spans)
        for alias in [name, *aliases]:
            names[loose(alias)] = name
    data = {
        "_about": (
            "Unicode binary properties the regex crate accepts in \\p{...}, generated by "
            "tools/build_unicode_binary.py from the Python regex module's tables (do not "
            "edit). names: loose name (lower case, no ' ', '_' or '-') to property. "
            "properties: alternating gap and length of each code point range "
            "(start - previous end - 1, end - start), read by _regex_unicode.py. "
            "missing: crate properties the regex module does not know (refused)."
        ),
        "unicode_version": unicode_version(),
        "regex_module_version": regex.__version__,
        "crate_unicode_version": "16.0",
        "names": dict(sorted(names.items())),
        "missing": missing,
        "properties": properties,
    }
    # One line per property: small enough to diff, short enough to read.
    lines = [f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in data.items()]
    rows = [
        f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in properties.items()
    ]
    lines[-1] = '"properties": {\n' + ",\n".join(rows) + "\n}"
    body = "{\n" + ",\n".join(lines) + "\n}"
    OUT.write_text(body + "\n", encoding="utf-8")
    print(f"{OUT}: {len(properties)} properties, {len(body)} bytes, missing {missing}")


if __name__ == "__main__":
    main()
