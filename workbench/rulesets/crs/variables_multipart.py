"""libmodsecurity 3's multipart/form-data reader: fields, files, part headers and its strictness flags.

A re-implementation of the engine's line-buffered state machine (4096-byte
buffer, boundary lines, part headers, then data), because its quirks decide
what CRS sees:

* a field's line breaks are dropped (``a\\r\\nb`` arrives as ``ab``), while a
  file's size counts them;
* ``filename=""`` makes a field, not a file;
* an empty quoted boundary (``boundary=""``) makes the body be ignored;
* many malformed parts only set an error message and parsing goes on.

The result carries what the transaction exposes: ARGS/ARGS_POST pairs,
FILES and friends, MULTIPART_PART_HEADERS, the MULTIPART_* flags and the
error message behind REQBODY_ERROR.

    >>> body = b'--b\\r\\nContent-Disposition: form-data; name="a"\\r\\n\\r\\nx\\r\\ny\\r\\n--b--\\r\\n'
    >>> r = parse_multipart(b"multipart/form-data; boundary=b", body)
    >>> r.args, r.error, r.flags["MULTIPART_STRICT_ERROR"]
    ([(b'a', b'xy')], '', b'0')
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MultipartResult", "parse_multipart"]

_BUF = 4096
_SPACE = b" \t\n\v\f\r"  # C isspace
_MIME_CHARSET_SPECIAL = b"!#$%&+-^_`{}~"
_ATTR_CHAR_SPECIAL = b"!#$&+-.^_`~"
_BOUNDARY_CHARS = frozenset(
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=? "
)
_TOKEN_SEPARATORS = frozenset(b'()<>@,;:\\"/[]?=')
_ALNUM = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_XDIGIT = frozenset(b"0123456789ABCDEFabcdef")

_FLAG_NAMES = (
    "MULTIPART_UNMATCHED_BOUNDARY",
    "MULTIPART_DATA_BEFORE",
    "MULTIPART_DATA_AFTER",
    "MULTIPART_BOUNDARY_QUOTED",
    "MULTIPART_BOUNDARY_WHITESPACE",
    "MULTIPART_HEADER_FOLDING",
    "MULTIPART_LF_LINE",
    "MULTIPART_CRLF_LF_LINES",
    "MULTIPART_MISSING_SEMICOLON",
    "MULTIPART_INVALID_QUOTING",
    "MULTIPART_INVALID_PART",
    "MULTIPART_INVALID_HEADER_FOLDING",
    "MULTIPART_STRICT_ERROR",
)


@dataclass
class MultipartResult:
    """What one multipart body gives the transaction (all in insertion order)."""

    args: list[tuple[bytes, bytes]] = field(default_factory=list)
    #: name -> file name, one per file part
    files: list[tuple[bytes, bytes]] = field(default_factory=list)
    #: name -> size as text
    file_sizes: list[tuple[bytes, bytes]] = field(default_factory=list)
    #: the running total after the last file ("" when there is no file)
    files_combined_size: bytes = b""
    part_headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    names: list[bytes] = field(default_factory=list)
    filenames: list[bytes] = field(default_factory=list)
    #: MULTIPART_* variables as the engine sets them ("0"/"1"/"2")
    flags: dict[str, bytes] = field(default_factory=dict)
    #: the last error message, "" when none (REQBODY_ERROR follows it)
    error: str = ""
    #: bytes of headers and fields, for SecRequestBodyNoFilesLimit
    no_files_length: int = 0


def _is_token_char(c: int) -> bool:
    return 32 < c < 127 and c not in _TOKEN_SEPARATORS


def _count_boundary_params(value: bytes) -> int:
    """How often "boundary" appears with a '=' somewhere after it (case-insensitive)."""
    low = value.lower()
    count = 0
    i = low.find(b"boundary")
    while i >= 0:
        i += 8
        if low.find(b"=", i) >= 0:
            count += 1
        i = low.find(b"boundary", i)
    return count


def _boundary_valid(boundary: bytes) -> bool:
    """RFC 2046's boundary characters; a space only inside."""
    return all(c in _BOUNDARY_CHARS for c in boundary) and not boundary.endswith(b" ")


def _chomp(value: bytes) -> bytes:
    """ModSecurity's chomp: trailing CR/LF removed, unless the value is nothing else."""
    stripped = value.rstrip(b"\r\n")
    return stripped if stripped else value


class _Part:
    __slots__ = (
        "name",
        "filename",
        "is_file",
        "headers",
        "last_name",
        "last_line",
        "lines",
        "values",
        "size",
    )

    def __init__(self) -> None:
        self.name = b""
        self.filename = b""
        self.is_file = False
        self.headers: dict[bytes, bytes] = {}  # lower-cased name -> value
        self.last_name = b""
        self.last_line = b""
        self.lines: list[bytes] = []
        self.values: list[bytes] = []
        self.size = 0


class _Parser:
    """One body's parse; attribute names follow the engine's flags."""

    def __init__(self, header: bytes) -> None:
        self.r = MultipartResult()
        self.header = header
        self.boundary = b""
        self.error = False
        self.data_before = self.data_after = self.quoted = self.whitespace = 0
        self.folding = self.lf_line = self.crlf_line = self.unmatched = 0
        self.missing_semicolon = self.invalid_quoting = self.invalid_part = 0
        self.invalid_folding = 0
        self.part: _Part | None = None
        self.parts: list[_Part] = []
        self.in_data = False
        self.data_read = False
        self.reserve = 0
        self.boundary_count = 0
        self.complete = False
        self.seen_data = False
        self.contains_line = True
        self.crlf_state = 0
        self.crlf_state_end = 0
        self.pending = b""

    def fail(self, message: str, flag: bool = True) -> None:
        self.r.error = "Multipart: " + message
        if flag:
            self.error = True

    # -- Content-Type ---------------------------------------------------------

    def init(self) -> bool:
        full = self.header
        if not full:
            self.fail("Content-Type header not available.")
            return False
        if len(full) > 1024:
            self.fail("Invalid boundary in C-T (length).")
            return False
        header = full.split(b"\0", 1)[0]  # the rest works on the C string
        if header[:19].lower() != b"multipart/form-data":
            self.fail("Invalid MIME type.")
            return False
        if _count_boundary_params(header) > 1:
            self.fail("Multiple boundary parameters in C-T.")
            return False
        at = header.find(b"boundary")
        if at < 0:
            if _count_boundary_params(header) > 0:
                self.fail("Invalid boundary in C-T (case sensitivity).")
            else:
                self.fail("Boundary not found in C-T.")
            return False
        seen_semicolon = False
        for c in header[19:at]:
            if c in _SPACE:
                continue
            if not seen_semicolon and c == 0x3B:
                seen_semicolon = True
            else:
                self.fail("Invalid boundary in C-T (malformed).")
                return False
        if not seen_semicolon:
            self.missing_semicolon = 1
        eq = header.find(b"=", at + 8)
        if eq < 0:
            self.fail("Invalid boundary in C-T (malformed).")
            return False
        for c in header[at + 8 : eq]:
            if c in _SPACE:
                self.whitespace = 1
            else:
                self.fail("Invalid boundary in C-T (parameter name).")
                return False
        value = header[eq + 1 :]
        if value[:1] and value[0] in _SPACE:
            self.whitespace = 1
        if len(value) >= 2 and value[0] == 0x22 and value[-1] == 0x22:
            self.boundary = value[1:-1]
            if not self.boundary:
                return False  # no error is recorded: the body is simply not read
            self.quoted = 1
        else:
            if value[:1] == b'"' or (len(value) >= 2 and value[-1:] == b'"'):
                self.fail("Invalid boundary in C-T (quote).")
                return False
            self.boundary = value
            if not value:
                return False
            self.quoted = 0
        if _count_boundary_params(self.boundary) != 0:
            self.fail("Invalid boundary in C-T (content).")
            return False
        if not _boundary_valid(self.boundary) and b";" in self.boundary:
            # A charset after the boundary is tolerated.
            self.boundary = self.boundary[: self.boundary.index(b";")]
        if not _boundary_valid(self.boundary):
            self.fail("Invalid boundary in C-T (characters).")
            return False
        if not self.boundary:
            self.fail("Invalid boundary in C-T (empty).")
            return False
        return True

    # -- the body, one buffer ("line") at a time -------------------------------

    def process(self, data: bytes) -> None:
        if not data:
            return
        self.seen_data = True
        n = len(data)
        pos = 0
        while pos < n:
            nl = data.find(b"\n", pos, pos + _BUF)
            end = nl + 1 if nl >= 0 else min(pos + _BUF, n)
            if nl < 0 and end - pos < _BUF:
                # The rest waits in the buffer for a line end that never comes.
                self.pending = data[pos:end]
                return
            forced = end - pos == _BUF and data[end - 1] == 0x0D
            if forced:
                end -= 1  # a CR never goes last in the buffer: flush the bytes before it
            chunk = data[pos:end]
            # The CR/LF state before the byte that flushes: set by the byte before it.
            before = data[end - 1] if forced else (data[end - 2] if end - 2 >= 0 else -1)
            state = 1 if before == 0x0D else (self.crlf_state if before in (0x0A, -1) else 0)
            if not self._flush(chunk, forced):
                return
            last = 0x0D if forced else chunk[-1]
            self.contains_line = last == 0x0A
            if last == 0x0A:
                state = 3 if state == 1 else 2
            self.crlf_state_end = state
            self.crlf_state = 1 if last == 0x0D else (state if last == 0x0A else 0)
            pos = end
            if self.complete and pos < n:
                self.data_after = 1
                return

    def _flush(self, buf: bytes, forced: bool) -> bool:
        full = len(buf) == _BUF
        as_boundary = False
        b = self.boundary
        s = buf.split(b"\0", 1)[0]  # strlen/strncmp view
        if self.contains_line and len(s) > 3 and s[0] == 0x2D and s[1] == 0x2D:
            if len(s) >= len(b) + 2 and s[2 : 2 + len(b)] == b:
                if self.crlf_state_end == 2:
                    self.lf_line = 1
                if not self.data_read and self.boundary_count > 0:
                    self.invalid_part = 1
                else:
                    if self.boundary_count > 0:
                        self.unmatched = 2
                    rest = buf[2 + len(b) :]
                    final = rest[:2] == b"--"
                    if final:
                        rest = rest[2:]
                        if self.complete:
                            self.fail("Invalid boundary (final duplicate).")
                            return False
                    if rest in (b"\r\n", b"\n"):
                        if rest == b"\n":
                            self.lf_line = 1
                        else:
                            self.crlf_line = 1
                        self._boundary(final)
                        if final:
                            self.complete = True
                        as_boundary = True
                        self.boundary_count += 1
                    else:
                        self.fail("Invalid boundary: " + buf.decode("latin-1"))
                        return False
            else:
                if self.quoted and len(s) >= len(b) + 3 and s[2] == 0x22 and s[3 : 3 + len(b)] == b:
                    self.fail("Invalid boundary (quotes).")
                    return False
                p = 2
                while p < len(s) and s[p] in _SPACE:
                    p += 1
                if p != 2 and s[p : p + len(b)] == b:
                    self.fail("Invalid boundary (whitespace).")
                    return False
                self.unmatched = 1
        elif self.contains_line and b"--" + b in buf:
            self.unmatched = 1
        if not as_boundary:
            if self.part is None:
                self.data_before = 1
            elif not self.in_data:
                if full or forced:
                    self.fail(f"Part header line over {_BUF} bytes long")
                    return False
                self._header(buf)
            else:
                self._data(buf)
        return True

    def _boundary(self, last: bool) -> None:
        part = self.part
        if part is not None:
            for line in part.lines:
                self.r.part_headers.append((part.name, line))
            if part.name:
                self.parts.append(part)
            else:
                self.invalid_part = 1
            self.part = None
        if not last:
            self.part = _Part()
            self.in_data = False
            self.data_read = False
            self.reserve = 0

    def _header(self, buf: bytes) -> None:
        part = self.part
        assert part is not None
        if b"\0" in buf:
            self.fail("Nul byte in part headers.", flag=False)
            return
        self.r.no_files_length += len(buf)
        size = len(buf)
        line_len = size - 1
        if size > 1 and buf[-2] == 0x0D:
            self.crlf_line = 1
            line_len -= 1
        else:
            self.lf_line = 1
        if buf in (b"\r\n", b"\n"):
            if part.last_line:
                part.lines.append(part.last_line)
                part.last_line = b""
            disposition = part.headers.get(b"content-disposition")
            if disposition is None:
                self.fail("Part missing Content-Disposition header.", flag=False)
                return
            rc = self._disposition(disposition)
            if rc < 0:
                self.fail(
                    f"Invalid Content-Disposition header ({rc}): " + disposition.decode("latin-1"),
                    flag=False,
                )
                return
            if not part.name:
                self.fail("Content-Disposition header missing name field.", flag=False)
                return
            if part.filename:
                # A part only some parsers see as a file is refused.
                if b"filename=" not in disposition:
                    self.fail("Invalid Content-Disposition header (filename).", flag=False)
                    return
                part.is_file = True
            self.in_data = True
            self.data_read = False
            part.last_name = b""
            return
        if buf[0] in _SPACE:
            self.folding = 1
            if buf[0] not in b"\t ":
                self.invalid_folding = 1
            if not part.last_name:
                self.fail("Invalid part header (folding error).", flag=False)
                return
            i = 0
            while i < size and buf[i] in _SPACE:
                if buf[i] not in b"\t ":
                    self.invalid_folding = 1
                i += 1
            key = part.last_name.lower()
            value = part.headers[key] + b" " + _chomp(buf[i:])
            part.headers[key] = value
            if len(value) > _BUF:
                self.fail("Part header too long.", flag=False)
                return
            part.last_line = part.last_name + b": " + value
            return
        if part.last_line:
            part.lines.append(part.last_line)
            part.last_line = b""
        colon = buf.find(b":")
        if colon < 0:
            self.fail("Invalid part header (colon missing): " + buf.decode("latin-1"), flag=False)
            return
        if colon == 0:
            self.fail("Invalid part header (header name missing).", flag=False)
            return
        name = buf[:colon]
        if any(ch < 33 or ch > 126 for ch in name):
            self.fail("Invalid part header (contains invalid character).", flag=False)
            return
        i = colon + 1
        while i < size and buf[i] in b"\t ":
            i += 1
        value = _chomp(buf[i:])
        key = name.lower()
        if key in part.headers:
            return  # a repeated part header is dropped without an error
        part.last_name = name
        part.headers[key] = value
        part.last_line = buf[:line_len] if line_len > 0 else b""

    def _data(self, buf: bytes) -> None:
        part = self.part
        assert part is not None
        self.data_read = True
        reserved = 0
        if buf.endswith(b"\r\n"):
            reserved = 2
        elif buf.endswith(b"\n"):
            reserved = 1
        data = buf[: len(buf) - reserved]
        if part.is_file:
            part.size += len(data) + self.reserve
        else:
            self.r.no_files_length += len(data) + self.reserve
            # The engine keeps the line but drops the line break held back from
            # the previous line, so a field's lines run together.
            part.values.append(data)
        self.reserve = reserved

    def _disposition(self, v: bytes) -> int:
        part = self.part
        assert part is not None
        if not v.startswith(b"form-data"):
            return -1
        n = len(v)
        p = 9
        while p < n and v[p] in b"\t ":
            p += 1
        if p >= n:
            return 1
        if v[p] != 0x3B:
            return -2
        p += 1
        star = b""
        while p < n:
            while p < n and v[p] in b"\t ":
                p += 1
            if p >= n:
                return -3
            start = p
            while p < n and v[p] not in b"=\t ":
                p += 1
            if p >= n:
                return -4
            name = v[start:p]
            while p < n and v[p] in b"\t ":
                p += 1
            if p >= n:
                return -5
            if v[p] != 0x3D:
                return -13
            p += 1
            while p < n and v[p] in b"\t ":
                p += 1
            if p >= n:
                return -6
            quote = 0
            if name == b"filename*":
                start = p
                while p < n and (v[p] in _ALNUM or v[p] in _MIME_CHARSET_SPECIAL):
                    p += 1
                if p >= n or v[p] != 0x27 or p == start:
                    return -16
                p += 1
                while p < n and v[p] != 0x27:
                    p += 1
                if p >= n:
                    return -17
                p += 1
                start = p
                while p < n and v[p] != 0x3B:
                    if v[p] == 0x25:
                        if p + 2 >= n or v[p + 1] not in _XDIGIT or v[p + 2] not in _XDIGIT:
                            return -18
                        p += 3
                    elif v[p] in _ALNUM or v[p] in _ATTR_CHAR_SPECIAL:
                        p += 1
                    else:
                        return -19
                value = v[start:p]
            elif v[p] in b"\"'":
                quote = v[p]
                if quote == 0x27:
                    self.invalid_quoting = 1
                p += 1
                if p >= n:
                    return -7
                out = bytearray()
                while p < n:
                    if v[p] == 0x5C:
                        if p + 1 >= n:
                            return -8
                        if v[p + 1] == quote or v[p + 1] == 0x5C:
                            p += 1
                    elif v[p] == quote:
                        break
                    out.append(v[p])
                    p += 1
                if p >= n:
                    # No closing quote: 3.0.15 flags the quoting and refuses the header
                    # (with -15, checked) before it records the value.
                    self.invalid_quoting = 1
                    return -15
                p += 1
                value = bytes(out)
            else:
                start = p
                while p < n and _is_token_char(v[p]):
                    p += 1
                value = v[start:p]
            if name == b"name":
                if quote != 0x22 and b"'" in value:
                    self.invalid_quoting = 1
                self.r.names.append(value)
                if part.name:
                    return -14
                part.name = value
            elif name == b"filename":
                if quote != 0x22 and b"'" in value:
                    self.invalid_quoting = 1
                self.r.filenames.append(value)
                if part.filename:
                    return -15
                part.filename = value
            elif name == b"filename*":
                if star:
                    return -20
                star = value
            else:
                return -11
            if p < n:
                while p < n and v[p] in b"\t ":
                    p += 1
                if p < n:
                    if v[p] != 0x3B:
                        if v[p - 1] in b"'\"":
                            self.invalid_quoting = 1
                        return -12
                    p += 1
        if star and not part.filename:
            return -21
        return 1

    # -- the end ---------------------------------------------------------------

    def finish(self) -> None:
        r = self.r
        strict = int(
            self.error
            or self.quoted
            or self.whitespace
            or self.data_before
            or self.data_after
            or self.folding
            or self.lf_line
            or self.missing_semicolon
            or self.invalid_quoting
            or self.invalid_part
            or self.invalid_folding
        )
        values = (
            self.unmatched,
            self.data_before,
            self.data_after,
            self.quoted,
            self.whitespace,
            self.folding,
            self.lf_line,
            int(bool(self.crlf_line and self.lf_line)),
            self.missing_semicolon,
            self.invalid_quoting,
            self.invalid_part,
            self.invalid_folding,
            strict,
        )
        r.flags = {name: str(v).encode() for name, v in zip(_FLAG_NAMES, values, strict=True)}
        if self.seen_data and not self.complete:
            if self.boundary_count == 0:
                self.fail("No boundaries found in payload.", flag=False)
                return
            if self.contains_line and self.pending == b"--" + self.boundary + b"--":
                # A final boundary with no line end after it.
                if self.crlf_state_end == 2 and self.lf_line != 1:
                    self.lf_line = 1
                    r.flags["MULTIPART_LF_LINE"] = b"1"
                    r.flags["MULTIPART_CRLF_LF_LINES"] = str(int(bool(self.crlf_line))).encode()
                    r.flags["MULTIPART_STRICT_ERROR"] = b"1"
                if not self.data_read and self.invalid_part != 1:
                    self.invalid_part = 1
                    r.flags["MULTIPART_STRICT_ERROR"] = b"1"
                    r.flags["MULTIPART_INVALID_PART"] = b"1"
                self._boundary(True)
                self.complete = True
            if not self.complete:
                self.fail("Final boundary missing.", flag=False)
                return
        total = 0
        for part in self.parts:
            if part.is_file:
                r.files.append((part.name, part.filename))
                r.file_sizes.append((part.name, str(part.size).encode()))
                total += part.size
                r.files_combined_size = str(total).encode()
            else:
                r.args.append((part.name, b"".join(part.values)))


def parse_multipart(content_type: bytes, body: bytes) -> MultipartResult:
    """Read ``body`` as libmodsecurity does, given the request's (last) Content-Type value."""
    parser = _Parser(content_type)
    if parser.init():
        parser.process(body)
    parser.finish()
    return parser.r
