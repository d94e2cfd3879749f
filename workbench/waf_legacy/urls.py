"""URL patterns (page rules, URI-based overrides) as Rules-language expressions.

A pattern is a URL where ``*`` matches any run of characters; it must match
the whole URL, ignoring case. Without a scheme it matches both ``http://`` and
``https://`` URLs. The expression reads ``http.request.full_uri`` (the whole
URL with its scheme and query, as the pipeline supplies it), so a pattern is
one more check of a plan and the SQL path gets it for free.

    >>> url_pattern_expression("example.com/admin*")
    '(http.request.full_uri wildcard "http://example.com/admin*" or http.request.full_uri wildcard "https://example.com/admin*")'
    >>> from workbench.rules_language import compile_expression
    >>> expr = compile_expression(url_pattern_expression("*.example.com/*.php"))
    >>> expr.matches({"http.request.full_uri": "https://WWW.example.com/x/index.php"})
    True

It agrees with :meth:`workbench.firewall.pagerules.PageRule.matches_url` (see
the tests). Past the ``wildcard`` operator's limit of stars the pattern
becomes an anchored, case-insensitive regular expression (``matches``).
"""

from __future__ import annotations

import re

FIELD = "http.request.full_uri"
#: The ``wildcard`` operator takes at most this many stars (the engine's limit).
WILDCARD_STARS = 10
_REGEX_SPECIAL = set("\\.+*?()|[]{}^$")


def url_pattern_expression(pattern: str) -> str:
    """A Rules-language expression true for the URLs ``pattern`` matches."""
    # Runs of stars mean the same as one star, and count once against the limit.
    pattern = re.sub(r"\*+", "*", pattern)
    has_scheme = "://" in pattern
    if pattern.count("*") > WILDCARD_STARS:
        return _regex(pattern, has_scheme)
    if has_scheme:
        return f"{FIELD} wildcard {_string(_wildcard_text(pattern))}"
    return (
        f"({FIELD} wildcard {_string(_wildcard_text('http://' + pattern))} or "
        f"{FIELD} wildcard {_string(_wildcard_text('https://' + pattern))})"
    )


def any_url_expression(patterns: list[str]) -> str:
    """One expression true when any of ``patterns`` (at least one) matches."""
    if not patterns:
        raise ValueError("at least one URL pattern is needed")
    parts = [url_pattern_expression(p) for p in patterns]
    return parts[0] if len(parts) == 1 else " or ".join(f"({p})" for p in parts)


def _wildcard_text(pattern: str) -> str:
    # In a wildcard a backslash escapes; every star of a page rule is a wildcard.
    return pattern.replace("\\", "\\\\")


def _regex(pattern: str, has_scheme: bool) -> str:
    body = ".*".join(
        "".join("\\" + c if c in _REGEX_SPECIAL else c for c in part) for part in pattern.split("*")
    )
    prefix = "" if has_scheme else "https?://"
    # A regex literal keeps its backslashes (only \" is an escape), unlike a string.
    regex = ("(?i)^" + prefix + body + "$").replace('"', '\\"')
    return f'{FIELD} matches "{regex}"'


def _string(text: str) -> str:
    """``text`` as a quoted Rules-language string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
