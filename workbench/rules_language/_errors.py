"""Parse errors in the engine's own form.

    Filter parsing error (1:14):
    http.host eq a
                 ^ unknown identifier

Columns are 1-based and count UTF-8 bytes; the caret line is indented by the
same byte count and has one caret per byte of the offending span (at least one).
The message itself is always valid UTF-8: a lone surrogate in the source (which
the parser refuses) is shown as U+FFFD, which takes the same three bytes.

    >>> err = ExpressionError.at("http.host eq a", 13, 14, "unknown identifier")
    >>> (err.line, err.column, err.reason)
    (1, 14, 'unknown identifier')
"""

from __future__ import annotations

import re

# Lone surrogates cannot be printed, logged or sent as JSON; U+FFFD stands in for them.
_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (same UTF-8 width: 3 bytes)."""
    return _SURROGATE.sub("\ufffd", text)


def _width(text: str) -> int:
    # Counted as the bytes the text would take, a lone surrogate as its 3-byte form.
    return len(text.encode("utf-8", "surrogatepass"))


class ExpressionError(ValueError):
    """An expression that does not parse or type-check.

    ``line`` and ``column`` (1-based, column in UTF-8 bytes) locate the error,
    ``reason`` is the engine's reason text and ``str(err)`` the whole message.
    """

    def __init__(self, message: str, line: int, column: int, reason: str, span: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.reason = reason
        self.span = span

    @classmethod
    def at(cls, source: str, start: int, end: int, reason: str) -> ExpressionError:
        """Build the error for the character range ``source[start:end]``."""
        start = max(0, min(start, len(source)))
        end = max(start, min(end, len(source)))
        line_start = source.rfind("\n", 0, start) + 1
        line_no = source.count("\n", 0, start) + 1
        line_end = source.find("\n", start)
        if line_end == -1:
            line_end = len(source)
        line_text = printable(source[line_start:line_end])
        column = _width(source[line_start:start]) + 1
        # The engine's carets stop at the end of the line the error starts on.
        span_bytes = max(1, _width(source[start : min(end, line_end)]))
        reason = printable(reason)
        message = (
            f"Filter parsing error ({line_no}:{column}):\n"
            f"{line_text}\n"
            f"{' ' * (column - 1)}{'^' * span_bytes} {reason}\n"
        )
        return cls(message, line_no, column, reason, span_bytes)


class ParseFail(Exception):
    """Internal: a failure at ``source[start:end]``; the parser turns it into ExpressionError."""

    def __init__(self, reason: str, start: int, end: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.start = start
        self.end = end
        self.flat = reason  # the one-line reason, where the engine words it differently
