"""The t: transformations agree with libmodsecurity 3.0.15, byte for byte.

Each value goes to the engine percent-encoded, every byte, in a urlencoded
POST body, so the body parser hands the transformation the exact bytes. A
rule captures the transformed value and logs it through ``t:hexEncode``,
which makes any bytes printable and is itself checked first.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

pytest.importorskip(
    "libmodsecurity", reason="libmodsecurity (the reference engine) is not installed"
)

from tools.crs_reference.oracle import Oracle  # noqa: E402
from workbench.rulesets.crs.request import RawRequest  # noqa: E402
from workbench.rulesets.crs.transforms import TRANSFORMS, apply_chain  # noqa: E402

NAMES = sorted(TRANSFORMS)
EXAMPLES_PER_TRANSFORM = 300

_ORACLES: dict[tuple[str, ...], Oracle] = {}


def engine(chain: tuple[str, ...], value: bytes) -> bytes:
    """What libmodsecurity makes of ``value`` through the transformations ``chain``."""
    if chain not in _ORACLES:
        actions = ",".join(f"t:{name}" for name in chain)
        _ORACLES[chain] = Oracle(
            config="SecRuleEngine On\nSecRequestBodyAccess On\n"
            'SecRule ARGS:v "@rx (?s)^(.*)$" '
            f"\"id:1,phase:2,pass,log,capture,t:none,{actions},t:hexEncode,logdata:'%{{TX.1}}'\"\n"
        )
    body = b"v=" + "".join(f"%{c:02X}" for c in value).encode("ascii")
    headers = (("Host", "a.example"), ("Content-Type", "application/x-www-form-urlencoded"))
    result = _ORACLES[chain].run(RawRequest("POST", "/", headers=headers, body=body))
    return bytes.fromhex(result.logdata[1])


# Values every transformation sees: encodings, broken escapes, NULs, bytes that are not UTF-8.
COMMON = [
    b"",
    b"a",
    b"\x00",
    b"a\x00b",
    b"ab\x00",
    b"\x00\x00",
    bytes(range(256)),
    b"\xff\xfe\x80\xc0\xc1",
    "caf\u00e9 \u4e2d\U0001f600".encode(),
    b"  \t\n\v\f\r padded \r\n\t ",
    b"%41%4a%zz%2%+%u0041%U0041%uFF21%u12%",
    b"&lt;script&gt;&#60;&#x3c;&#X3C&QUOT;&amp&nbsp;&foo;&#;&#x;&",
    b"\\x41\\u0041\\101\\n\\\\\\'\\",
    b"/* comment */ -- # <!-- x --> */",
    b"/a/./b/../../c//d/",
    b"C:\\Windows\\..\\system32\\",
    b"0x414243 0X4a 0x4 0xZZ",
    b"YWJjZA== YWJj",
    b"SeLeCt 1,2;  EXEC('x') /bin/sh",
    b"%" * 50 + b"&#" * 50 + b"\\" * 51,
    b"<script>alert(1)</script>" * 200,
]

EXTRA: dict[str, list[bytes]] = {
    "urlDecode": [b"%", b"%4", b"%41", b"%g1", b"%1g", b"+%2B+", b"%%41", b"%2541", b"%e9%FF"],
    "urlDecodeUni": [
        b"%u00e9",
        b"%u4e2d",
        b"%uff21",
        b"%UFF41",
        b"%uFF00",
        b"%uff5f",
        b"%u12",
        b"%uzzzz",
        b"%u+",
        b"%u0025%34%31",
        b"%25u0041",
        b"%u%41",
        b"%uFFFF",
    ],
    "htmlEntityDecode": [
        b"&#1234;",
        b"&#x414243;",
        b"&#65",
        b"&#x41",
        b"&ltx;",
        b"&quo;",
        b"&QUOT;",
        b"&nbsp",
        b"&#999;",
        b"&amp;amp;",
        b"&#99999999999999999999999;",
        b"&#x10000000000000041;",
        b"&#x7fffffffffffff41;",
        b"&#9223372036854775807;",
        b"&#9223372036854775808;",
        b"&#" + b"0" * 5000 + b"65;",
        b"&#" + b"9" * 5000 + b";",
        b"&#-1;",
        b"&#x&lt;",
        b"&&lt;",
        b"&l",
        b"&g;",
        b"&amplifier;",
        b"&\xe9;",
    ],
    "jsDecode": [
        b"\\u0041\\uFF21\\uff5e\\U0041\\u004",
        b"\\x4\\xZZ\\X41",
        b"\\0\\7\\8\\377\\400\\477\\1234",
        b"\\a\\b\\f\\n\\r\\t\\v\\z\\\\",
        b"\\",
        b"a\\",
    ],
    "escapeSeqDecode": [
        b"\\a\\b\\f\\n\\r\\t\\v\\\\\\?\\'\\\"",
        b"\\x41\\X41\\x4\\xzz",
        b"\\0\\7\\777\\400\\8\\1234",
        b"\\",
        b"a\\",
    ],
    "cssDecode": [
        b"\\41 b",
        b"\\41\tb",
        b"\\ff21",
        b"\\0ff21",
        b"\\00ff21",
        b"\\1ff21",
        b"\\FF5F",
        b"\\ff00",
        b"\\",
        b"a\\\nb",
        b"\\g",
        b"\\4142434445464748",
        b"\\0",
        b"\\123",
    ],
    "cmdLine": [
        b'C:\\Win"dows ; /c  (x)',
        b" /x",
        b"^A,,B",
        b"a ,;\t\r\n(b",
        b"  ",
        b"'\"\\^",
    ],
    "base64Decode": [
        b"YWJj",
        b"YWJjZA",
        b"YWJjZA==",
        b"YW Jj",
        b"YWJj\nZGVm",
        b"YWJj ZA==",
        b"YW!j",
        b"YW\x00Jj",
        b"YWJj\x00ZZ",
        b"\x00YWJj",
        b"YWJjZA=",
        b"Y",
        b"=",
        b"YQ==YQ==",
        b" YWJj ",
        b"YWJj  ",
        b"YWJj \nZGVm",
        b"YWJj\n ZGVm",
        b"YWJj\r\nZGVm",
        b"YWJj\rZGVm",
        b"YWJj\r\r\n",
        b"\n",
        b"   ",
        b"YR==",
        b"Y===",
        b"YQ=\n=",
        b"Y-Jj",
    ],
    "base64DecodeExt": [
        b"YWJjZA",
        b"YWJj9",
        b"YWJ9",
        b"YQ=b",
        b"YQ=",
        b"YWJ=jZA",
        b"!!",
        b"Y",
        b"YW-_Jj",
        b"YWJj\x00ZA",
        b"YWJjZ=",
        b"YWJjZ==",
        b"Y=",
        b"YW=",
        b"=Y",
    ],
    "hexDecode": [b"a", b"abc", b"41424", b"zz", b"4g41", b"4142\x00", b"GG"],
    "sqlHexDecode": [b"0x", b"0x4", b"0x41", b"0x414", b"0X4142zz", b"00x41", b"0x0x41"],
    "utf8toUnicode": [
        b"\xc3\xa9",
        b"\xe4\xb8\xad",
        b"\xf0\x9f\x98\x80",
        b"\xc0\x80",
        b"\xed\xa0\x80",
        b"\xf0\x8d\xa0\x80",
        b"\xf5\x80\x80\x80",
        b"\xf7\xbf\xbf\xbf",
        b"\xc3",
        b"\xc3A",
        b"\xe4\xb8",
        b"\xf0\x9f\x98",
        b"\x80",
        b"\xff",
        b"\xf8\x80",
        b"\xe0\x80\x80",
        b"\xf0\x80\x80\x80",
        b"\x00\xc3\xa9",
    ],
    "removeComments": [
        b"/**/",
        b"a/*x*/b",
        b"a/*x*/",
        b"a--b",
        b"ab#c",
        b"a<!--x-->y",
        b"a<!--x",
        b"/*x*/--",
        b"a/*b",
        b"x-->y",
        b"a*/b",
        b"/*/",
        b"<!---->",
    ],
    "removeCommentsChar": [b"<!---->", b"--->", b"/*/", b"*/*"],
    "replaceComments": [b"/*/", b"a/*b", b"/**/", b"/* */*/", b"*/"],
}
_PATHS = [
    b"/a/b/../c",
    b"a/../../b",
    b"/../a",
    b"/..",
    b"..",
    b".",
    b"./a",
    b"a/./b",
    b"a//b",
    b"a/b/",
    b"a/b/.",
    b"a/b/..",
    b"//",
    b"/",
    b"/./",
    b"../../x",
    b"a/..",
    b"x/y/../../..",
    b"a//\\b",
    b"\\a\\..\\b",
    b"c:\\x\\..\\y",
    b"a\\",
    b"\\\\srv\\share\\..",
    b"a/.../b",
    b".a/b./..c/",
]
for _name in ("normalizePath", "normalisePath", "normalizePathWin", "normalisePathWin"):
    EXTRA[_name] = _PATHS


def _bytes_of(chars: bytes) -> list[bytes]:
    return [bytes((c,)) for c in chars]


# Pieces the generated values are built from: what each transformation reacts to.
_PIECES: dict[str, list[bytes]] = {
    "url": [*_bytes_of(b"%+41aFfgu"), b"%u", b"%U", b"e9", b"ff"],
    "html": [*_bytes_of(b"&#xX;19a"), b"lt", b"gt", b"quot", b"amp", b"nbsp"],
    "escape": _bytes_of(b"\\uxX03478fFn?'"),
    "css": _bytes_of(b"\\0fF215e \n\tg"),
    "space": _bytes_of(b" \t\n\v\f\r\xa0\xc2\x85a\x00"),
    "cmd": _bytes_of(b"\\\"'^ ,;\t\r\n/(Ab"),
    "comment": [*_bytes_of(b"/*<!->#a "), b"/*", b"*/", b"<!--", b"-->"],
    "path": [*_bytes_of(b"/\\.ab"), b"..", b"//", b"./", b"../"],
    "utf8": _bytes_of(b"\x00A\x80\xbf\xc0\xc3\xdf\xe0\xed\xef\xf0\xf4\xf5\xf7\xf8\xff\x9f\xa0\xa9"),
    "base64": [*_bytes_of(b"YWJj9+/= \n\r-!"), b"=="],
    "hex": [*_bytes_of(b"0xX41aFgz "), b"0x"],
}
_FAMILY = {
    "urlDecode": "url",
    "urlDecodeUni": "url",
    "urlEncode": "url",
    "htmlEntityDecode": "html",
    "jsDecode": "escape",
    "escapeSeqDecode": "escape",
    "cssDecode": "css",
    "cmdLine": "cmd",
    "replaceComments": "comment",
    "removeCommentsChar": "comment",
    "removeComments": "comment",
    "normalizePath": "path",
    "normalisePath": "path",
    "normalizePathWin": "path",
    "normalisePathWin": "path",
    "utf8toUnicode": "utf8",
    "base64Decode": "base64",
    "base64DecodeExt": "base64",
    "hexDecode": "hex",
    "sqlHexDecode": "hex",
}


def values_for(name: str) -> st.SearchStrategy[bytes]:
    """Binary, UTF-8 text, and runs of the pieces ``name`` reacts to (most of the examples)."""
    pieces = _PIECES.get(_FAMILY.get(name, ""), _PIECES["space"])
    return st.one_of(
        st.binary(max_size=48),
        st.text(max_size=24).map(lambda s: s.encode("utf-8", "surrogatepass")),
        st.lists(st.sampled_from(pieces), max_size=30).map(b"".join),
        st.lists(st.sampled_from(pieces), max_size=30).map(b"".join),
    )


def test_the_probe_carries_every_byte_unchanged():
    value = bytes(range(256)) * 4
    assert engine(("none",), value) == value
    assert engine(("hexEncode",), value) == value.hex().encode()


def test_none_is_left_to_the_caller():
    assert "none" not in TRANSFORMS
    with pytest.raises(KeyError):
        apply_chain(["none"], b"x")


def test_names_ignore_case_as_the_rule_parser_does():
    # CRS 2.2.9 writes t:compressWhiteSpace 96 times.
    value = b"A  %41\t\t&LT;"
    for chain in [("compressWhiteSpace",), ("URLDECODEUNI", "htmlentitydecode")]:
        assert all(name in TRANSFORMS for name in chain)
        assert apply_chain(chain, value) == engine(chain, value)


@pytest.mark.parametrize("name", NAMES)
def test_fixed_values_agree_with_libmodsecurity(name):
    values = COMMON + EXTRA.get(name, [])
    wrong = [(v, TRANSFORMS[name](v), engine((name,), v)) for v in values]
    assert [w for w in wrong if w[1] != w[2]] == []


@pytest.mark.parametrize("name", NAMES)
def test_generated_values_agree_with_libmodsecurity(name):
    @settings(
        max_examples=EXAMPLES_PER_TRANSFORM,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(values_for(name))
    def agree(value):
        assert TRANSFORMS[name](value) == engine((name,), value)

    agree()


# The chains CRS 3.3.4 runs most (XSS 941, SQLi 942, RCE 932, path 930).
CHAINS = [
    ("utf8toUnicode", "urlDecodeUni", "htmlEntityDecode", "jsDecode", "cssDecode", "removeNulls"),
    ("urlDecodeUni", "lowercase", "removeCommentsChar", "compressWhitespace"),
    ("cmdLine", "normalizePath"),
    ("urlDecodeUni", "normalizePathWin", "replaceComments", "sqlHexDecode"),
    ("base64DecodeExt", "hexEncode", "length"),
]


@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: "+".join(c))
def test_chains_agree_with_libmodsecurity(chain):
    @settings(max_examples=100, deadline=None, database=None)
    @given(st.lists(st.sampled_from(sum(_PIECES.values(), [])), max_size=40).map(b"".join))
    def agree(value):
        assert apply_chain(chain, value) == engine(chain, value)

    agree()


_MULTI_ORACLES: dict[tuple[str, ...], Oracle] = {}


def engine_candidates(chain: tuple[str, ...], value: bytes) -> list[bytes]:
    """The values libmodsecurity tries for a ``multiMatch`` rule with transformations ``chain``:
    each candidate is captured and its hex appended to a TX variable a second rule logs."""
    if chain not in _MULTI_ORACLES:
        actions = ",".join(f"t:{name}" for name in chain)
        _MULTI_ORACLES[chain] = Oracle(
            config="SecRuleEngine On\nSecRequestBodyAccess On\n"
            'SecRule ARGS:v "@rx (?s)^(.*)$" "id:1,phase:2,pass,nolog,capture,multiMatch,'
            f"t:none,{actions},setvar:'tx.all=%{{tx.all}}[%{{tx.0}}]'\"\n"
            'SecRule TX:all "@rx ." "id:2,phase:2,pass,log,logdata:\'%{tx.all}\'"\n'
        )
    body = b"v=" + "".join(f"%{c:02X}" for c in value).encode("ascii")
    headers = (("Host", "a.example"), ("Content-Type", "application/x-www-form-urlencoded"))
    logged = _MULTI_ORACLES[chain].run(RawRequest("POST", "/", headers=headers, body=body))
    return [c.encode() for c in logged.logdata[2][1:-1].split("][")]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def ours_candidates(chain: tuple[str, ...], value: bytes) -> list[bytes]:
    from workbench.rulesets.crs.transforms import changed

    out, current = [value], value
    for name in chain:
        step = TRANSFORMS[name](current)
        if changed(name, current, step):
            out.append(step)
        current = step
    return out


# The multiMatch chains of CRS 3.3.4 and 2.2.9, and the flags that differ from "bytes differ".
MULTI_CHAINS = [
    ("utf8toUnicode", "urlDecodeUni", "removeNulls", "cmdLine"),
    ("utf8toUnicode", "urlDecodeUni", "removeNulls"),
    ("urlDecodeUni", "base64Decode"),
    ("urlDecodeUni", "replaceComments"),
    ("cmdLine", "compressWhitespace", "lowercase"),
    ("utf8toUnicode", "lowercase", "htmlEntityDecode", "removeNulls"),
]
# Printable bytes, NULs, case, separators and a two-byte character whose %u form's low byte
# is ASCII (U+0141): candidates stay UTF-8, which the engine's log needs.
_MULTI_PIECES = [
    b"A",
    b"a",
    b"..",
    b"/",
    b"\x00",
    b"%00",
    b"%2f",
    b"+",
    b" ",
    b";",
    b"\xc5\x81",
    b"/*",
    b"*/",
    b"Zm9v",
    b"%u0041",
    b"'",
    b"^",
]


@pytest.mark.parametrize("chain", MULTI_CHAINS, ids=lambda c: "+".join(c))
def test_multi_match_tries_what_libmodsecurity_tries(chain):
    for value in (b"..\x00/x", b"ABC", b"a\xc5\x81b", b"A%41\x00", b"AB\x00CD", b"&lt;"):
        assert ours_candidates(chain, value) == engine_candidates(chain, value), value

    @settings(max_examples=60, deadline=None, database=None)
    @given(st.lists(st.sampled_from(_MULTI_PIECES), min_size=1, max_size=12).map(b"".join))
    def agree(value):
        ours = ours_candidates(chain, value)
        # The engine's log carries text: a candidate that is not UTF-8 (base64Decode of
        # "Aaa/ ") cannot be read back from it, so such a value tells nothing here.
        assume(all(_is_utf8(c) for c in ours))
        assert ours == engine_candidates(chain, value)

    agree()


# Repeated, each of these defeats a naive regex or decoder somewhere (a quadratic
# one takes seconds on 50 KB; linear ones take milliseconds).
HOSTILE = [
    *(p for pieces in _PIECES.values() for p in pieces),
    *(b"&#", b"&#x", b"&#0", b"&#9", b"&lt", b"%u", b"%4", b"\\u", b"\\0", b"/..", b"../"),
    *(b"\\..", b"0x4", b"9=", b"\xc3\xa9", b"\x00a", b"a ", b" \r", b"  x", b"--", b"<!--"),
]


@pytest.mark.parametrize("name", NAMES)
def test_long_hostile_input_takes_linear_time(name):
    for piece in HOSTILE:
        value = piece * (50_000 // len(piece))
        started = time.perf_counter()
        TRANSFORMS[name](value)
        assert time.perf_counter() - started < 1.0, piece
