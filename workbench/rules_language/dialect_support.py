"""What each SQL dialect cannot compile, found by compiling one probe per feature.

:data:`PROBES` holds, for every operator and function of the Rules language (and
for the shapes the SQL treats apart: lists, maps, lists of lists, bytes that are
not ASCII), expressions using it. :func:`refusals` compiles them for a dialect
and keeps the features it refuses, with the error; :func:`markdown` writes the
list the README shows (a test compares the two, so they cannot drift).

    >>> refusals("spark")["`lookup_json_string()`"]
    'json_valid() is not supported on spark'
"""

from __future__ import annotations

import functools
import re
import sys

from ._expression import compile_expression
from .dialects import DIALECTS
from .sql_value import SqlTranslationError

#: Feature -> expressions using it (each compiles to DuckDB SQL).
PROBES: dict[str, tuple[str, ...]] = {
    # Operators.
    "`eq` `ne` `lt` `le` `gt` `ge` (text, integers)": (
        'http.host eq "a"',
        'http.host ne "a"',
        'http.host lt "b"',
        "cf.waf.score le 20",
        "cf.waf.score gt 20",
        "cf.waf.score ge 20",
    ),
    "comparisons of IP addresses": ("ip.src eq 192.0.2.1", "ip.src lt 2001:db8::1"),
    "`contains`": ('http.request.uri.path contains "/admin"',),
    "`matches` (regexes)": (
        'http.user_agent matches "^curl"',
        'http.request.uri.path matches "^/.{2}/"',
        'http.user_agent matches "(?m)^x$"',
        'http.user_agent matches "\\\\bcurl"',
    ),
    "`wildcard`, `strict wildcard`": (
        'http.host wildcard "*.example.com"',
        'http.host strict wildcard "*.Example.com"',
    ),
    "`in {...}` (text, integers, IPv4 and IPv6 ranges)": (
        'http.host in {"a.example" "b.example"}',
        "cf.waf.score in {1..20 80}",
        "ip.src in {192.0.2.0/24 2001:db8::/32}",
    ),
    "`in $list`": ("ip.src in $blocked",),
    "`&` (bitwise and)": ("cf.edge.server_port & 0x100",),
    "`and` `or` `xor` `not`": ("ssl and not cf.client.bot", "ssl or cf.client.bot xor ssl"),
    "`and` `or` `xor` over lists": (
        'any((http.request.headers.names[*] eq "a" and http.request.headers.names[*] eq "b"))',
    ),
    # Fields.
    "`[*]` with `any()` / `all()`": (
        'any(http.request.headers.names[*] eq "x")',
        'all(http.request.headers.names[*] ne "x")',
    ),
    "list elements `[0]`": ("cf.bot_management.detection_ids[0] eq 5",),
    'map values `["key"]`': ('http.request.headers["accept"][0] eq "x"',),
    "all of a map's values `[*]`": ('any(http.request.headers[*][*] eq "x")',),
    "lists of lists (`http.request.body.multipart.*`)": (
        'http.request.body.multipart.filenames[0][0] eq "a.png"',
    ),
    # Functions.
    "`bit_slice()`": ("bit_slice(http.host, 0, 7) eq 97",),
    "`cidr()`": ("cidr(ip.src, 24, 64) eq 192.0.2.0",),
    "`cidr6()`": ("cidr6(ip.src, 32) eq 2001:db8::",),
    "`coalesce()`": ('coalesce(http.referer, http.host) eq "a"',),
    "`concat()`": (
        'concat(http.host, ":", cf.edge.server_port) eq "a:443"',
        'concat(http.request.headers.names, http.request.headers.names)[0] eq "a"',
    ),
    "`contains()`": ('contains(http.host, "example")',),
    "`decode_base64()`": ('decode_base64(http.request.body.raw) eq "hello"',),
    "`encode_base64()`": ('encode_base64(http.host) eq "YQ=="',),
    "`ends_with()`": ('ends_with(http.request.uri.path, ".php")',),
    "`has_key()`": ('has_key(http.request.headers, "accept")',),
    "`has_value()`": ('has_value(http.request.headers.names, "Accept")',),
    "`hash_in_range()`": ("hash_in_range(1, 10, http.host) eq 1",),
    "`hmac()`": ('hmac(http.host, "k", "sha256") eq "x"',),
    "`ip_in_range()`": ('ip_in_range(ip.src, "192.0.2.0/24")',),
    "`is_jwt_present()`": ('is_jwt_present("cfg-id")',),
    "`is_jwt_valid()`": ('is_jwt_valid("cfg-id")',),
    "`is_timed_hmac_valid_v0()`": (
        'is_timed_hmac_valid_v0("secret", http.request.uri, 100000, http.request.timestamp.sec, 8)',
    ),
    "`join()`": ('join(http.request.headers.names, ",") eq "a,b"',),
    "`len()`": ("len(http.host) gt 5", "len(http.request.headers.names) eq 2"),
    "`lookup_json_integer()`": ('lookup_json_integer(http.request.body.raw, "n") eq 3',),
    "`lookup_json_string()`": ('lookup_json_string(http.request.body.raw, "a") eq "b"',),
    "`lower()`": ('lower(http.host) eq "a"',),
    "`regex_replace()`": (
        'regex_replace(http.request.uri.path, "^/admin/(.*)$", "/x/${1}") eq "/x/a"',
        'regex_replace(http.request.uri.path, "/+", "/") eq "/a"',
    ),
    "`remove_bytes()`": ('remove_bytes(http.host, ".") eq "wwwexamplecom"',),
    "`remove_query_args()`": ('remove_query_args(http.request.uri.query, "a") eq "b=1"',),
    "`sha256()`": ('sha256(http.host) eq "x"',),
    "`sha512()`": ('sha512(http.host) eq "x"',),
    "`split()`": ('split(http.request.uri.path, "/", 2)[1] eq "a"',),
    "`starts_with()`": ('starts_with(http.request.uri.path, "/a")',),
    "`substring()`": ('substring(http.request.uri.path, 1, 3) eq "é"',),
    "`to_string()`": ('to_string(cf.waf.score) eq "80"', 'to_string(ip.src) eq "2001:db8::1"'),
    "`trim()`, `trim_start()`, `trim_end()`": (
        'trim(http.host) eq "a"',
        'trim_start(http.host, "/") eq "a"',
        'trim_end(http.host) eq "a"',
    ),
    "`upper()`": ('upper(http.host) eq "A"',),
    "`url_decode()`": (
        'url_decode(http.request.uri.query) contains "<"',
        'url_decode(http.request.uri.query, "ur") contains "<"',
    ),
    "`uuidv4()`": ('uuidv4(http.host) eq "x"',),
    "`wildcard()`": ('wildcard(http.host, "*.example.com")',),
    "`wildcard_replace()`": (
        'wildcard_replace(http.request.uri.path, "/a/*", "/b/${1}") eq "/b/c"',
    ),
}

#: The named lists the probes use.
LISTS = {"blocked": ["192.0.2.0/24"]}


@functools.cache
def refusals(dialect: str) -> dict[str, str]:
    """Feature -> the error of the first of its probes ``dialect`` refuses (features it
    compiles are left out)."""
    out = {}
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))
    try:
        for feature, probes in PROBES.items():
            for probe in probes:
                try:
                    compile_expression(probe).to_sql(LISTS, dialect=dialect)
                except SqlTranslationError as exc:
                    out[feature] = str(exc)
                    break
    finally:
        sys.setrecursionlimit(old)
    return out


def _reason(message: str, dialect: str) -> str:
    """What the dialect lacks, from the error ("X is not supported on D (why)" -> "X: why")."""
    m = re.fullmatch(rf"(.*) is not supported on {dialect}(?: \((.*)\))?", message, re.S)
    if m is None:
        return message.replace(f"not supported on {dialect}: ", "")
    return m.group(1) + (f": {m.group(2)}" if m.group(2) else "")


def markdown() -> str:
    """The README's list: per dialect, the features it refuses, grouped by the error."""
    lines = []
    for dialect in DIALECTS:
        if dialect == "duckdb":
            continue
        grouped: dict[str, list[str]] = {}
        for feature, message in refusals(dialect).items():
            grouped.setdefault(_reason(message, dialect), []).append(feature)
        if not grouped:
            lines.append(f"- **{dialect}**: nothing; every feature compiles.")
            continue
        parts = [", ".join(features) + f" ({reason})" for reason, features in grouped.items()]
        lines.append(f"- **{dialect}**: " + "; ".join(parts) + ".")
    return "\n".join(lines) + "\n"
