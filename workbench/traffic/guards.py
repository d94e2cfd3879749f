"""Guards of the whole-table path: when a check's SQL may not be trusted for a row.

The SQL translation holds text, so a decoding function whose output is not
UTF-8 (``url_decode("%c0%ae")``, ``decode_base64`` of arbitrary bytes) reads
as *missing* in SQL, while the per-request path compares the decoded bytes.
For each such call in a check, a *guard* is a Rules-language expression that
is true where the SQL can be trusted: the call's output is there (it is not
missing). The pipeline evaluates guards in SQL next to the checks, and a
check whose guard fails on a row is evaluated per request, for that row only.
A guard that cannot be built leaves its check without SQL (per request on
every row), so the two paths agree either way.

``url_decode`` of text without ``%`` only turns ``+`` into spaces, so its
guard skips the decoding there (DuckDB evaluates ``or`` lazily).

    >>> from workbench.rules_language import compile_expression
    >>> guards(compile_expression('url_decode(http.request.uri, "r") contains "/.."'))
    ['not (http.request.uri contains "%") or len(url_decode(http.request.uri, "r")) ge 0']
    >>> guards(compile_expression('http.request.uri contains "/.."'))
    []
"""

from __future__ import annotations

from ..rules_language import Expression
from ..rules_language.ast import Call, walk

#: Functions whose output may be bytes that are not UTF-8.
DECODERS = ("url_decode", "decode_base64")


def guards(expr: Expression) -> list[str]:
    """Guard expressions (Rules language) for ``expr``; all must hold for its SQL to be trusted."""
    out: list[str] = []
    source = expr.source
    for node in walk(expr.tree):
        if not isinstance(node, Call) or node.name not in DECODERS:
            continue
        call = source[node.start : node.end]
        mapped = node.mapped or node.each
        present = f"all(len({call}[*])[*] ge 0)" if mapped else f"len({call}) ge 0"
        if node.name == "url_decode" and node.args:
            arg = node.args[0]
            text = source[arg.start : arg.end]
            plain = f'any({text} contains "%")' if arg.each else f'({text} contains "%")'
            present = f"not {plain} or {present}"
        if present not in out:
            out.append(present)
    return out
