"""Parts of a request that need parsing: argument lists, cookies, form and multipart bodies, MIME.

The platform hands rules these values *undecoded* (``red+apples`` stays
``red+apples``): only cookie names are URL-decoded. Parsers here never raise;
malformed input gives fewer or emptier parts, as a lenient edge would.

    >>> pairs("a=1&b&&a=2")
    [('a', '1'), ('b', ''), ('a', '2')]
    >>> cookies(["s=1; pref%5Fx=a%20b", "s=2"])
    {'s': ['1', '2'], 'pref_x': ['a%20b']}
    >>> sniff_mime(b"\\x89PNG\\r\\n\\x1a\\n...."), sniff_mime('{"a": 1}'), sniff_mime("")
    ('image/png', 'application/json', '')
    >>> parts = multipart('--xx\\r\\nContent-Disposition: form-data; name="f"; filename="a.txt"\\r\\n'
    ...                   'Content-Type: text/plain\\r\\n\\r\\nhi\\r\\n--xx--\\r\\n', "xx")
    >>> [(p.names, p.filenames, p.content_types, p.value) for p in parts]
    [(['f'], ['a.txt'], ['text/plain'], 'hi')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from .textvalues import ascii_lower

#: Multipart bodies with more parts than this are cut (the edge's own limit is not published).
MAX_PARTS = 1000


def pairs(text: str, separator: str = "&") -> list[tuple[str, str]]:
    """``name=value`` pieces of a query string or form body, in order, undecoded.

    Empty pieces are skipped; a piece without ``=`` has the value ``""``.
    """
    out = []
    for piece in text.split(separator):
        if not piece:
            continue
        name, _, value = piece.partition("=")
        out.append((name, value))
    return out


def grouped(items: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Values by name, each name's values in request order."""
    out: dict[str, list[str]] = {}
    for name, value in items:
        out.setdefault(name, []).append(value)
    return out


def cookies(headers: list[str]) -> dict[str, list[str]]:
    """The ``Cookie`` headers as a map: names URL-decoded (same names merge), values as sent."""
    out: dict[str, list[str]] = {}
    for header in headers:
        for piece in header.split(";"):
            piece = piece.strip(" \t")
            if not piece:
                continue
            name, eq, value = piece.partition("=")
            if not eq:
                continue  # a cookie is name=value; a bare word is no cookie
            name = name.strip(" \t")
            if "%" in name:
                name = unquote(name, errors="surrogateescape")
            out.setdefault(name, []).append(value.strip(" \t"))
    return out


def media_type(content_type: str) -> tuple[str, dict[str, str]]:
    """``("multipart/form-data", {"boundary": ...})`` from a Content-Type value."""
    kind, _, rest = content_type.partition(";")
    params: dict[str, str] = {}
    for piece in rest.split(";"):
        name, eq, value = piece.partition("=")
        if eq:
            params[ascii_lower(name.strip())] = value.strip().strip('"')
    return ascii_lower(kind.strip()), params


@dataclass
class Part:
    """One part of a multipart body: its Content-Disposition parameters and headers."""

    names: list[str] = field(default_factory=list)
    filenames: list[str] = field(default_factory=list)
    content_types: list[str] = field(default_factory=list)
    dispositions: list[str] = field(default_factory=list)
    transfer_encodings: list[str] = field(default_factory=list)
    value: str = ""


_DISPOSITION_PARAM = re.compile(r';\s*([A-Za-z0-9_*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))')


def multipart(body: str, boundary: str) -> list[Part]:
    """The parts of a ``multipart/form-data`` body (at most :data:`MAX_PARTS`)."""
    if not boundary:
        return []
    delimiter = "--" + boundary
    chunks = body.split(delimiter)
    out: list[Part] = []
    # chunks[0] is the preamble; a chunk starting with "--" is the closing delimiter.
    for chunk in chunks[1:]:
        if chunk.startswith("--") or len(out) >= MAX_PARTS:
            break
        chunk = chunk[2:] if chunk.startswith("\r\n") else chunk.lstrip("\n")
        head, sep, value = chunk.partition("\r\n\r\n")
        if not sep:
            head, sep, value = chunk.partition("\n\n")
        if value.endswith("\r\n"):
            value = value[:-2]
        elif value.endswith("\n"):
            value = value[:-1]
        part = Part(value=value)
        for line in re.split(r"\r?\n", head):
            name, colon, header_value = line.partition(":")
            if not colon:
                continue
            name, header_value = ascii_lower(name.strip()), header_value.strip()
            if name == "content-disposition":
                kind, _, _ = header_value.partition(";")
                part.dispositions.append(kind.strip())
                for m in _DISPOSITION_PARAM.finditer(header_value):
                    key = ascii_lower(m.group(1))
                    text = m.group(2) if m.group(2) is not None else m.group(3).strip()
                    if key == "name":
                        part.names.append(text)
                    elif key == "filename":
                        part.filenames.append(text)
            elif name == "content-type":
                part.content_types.append(header_value)
            elif name == "content-transfer-encoding":
                part.transfer_encodings.append(header_value)
        out.append(part)
    return out


# Leading bytes of common formats (as inner text: bytes >= 0x80 are surrogate escapes).
_MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
    (b"\x1aE\xdf\xa3", "video/webm"),
    (b"\x7fELF", "application/x-executable"),
    (b"MZ", "application/x-msdownload"),
]
_MAGIC_TEXT = [(m.decode("utf-8", "surrogateescape"), kind) for m, kind in _MAGIC]


def sniff_mime(body: str | bytes) -> str:
    """The MIME type the body's content looks like (``""`` for an empty body).

    A small table of leading bytes for binary formats, then text shapes
    (JSON, XML, HTML), then ``text/plain`` or ``application/octet-stream``.
    """
    text = body.decode("utf-8", "surrogateescape") if isinstance(body, bytes) else body
    if not text:
        return ""
    for magic, kind in _MAGIC_TEXT:
        if text.startswith(magic):
            return kind
    if text[4:8] == "ftyp":
        return "video/mp4"
    if text.startswith("RIFF") and text[8:12] in ("WEBP", "WAVE", "AVI "):
        return {"WEBP": "image/webp", "WAVE": "audio/wav", "AVI ": "video/x-msvideo"}[text[8:12]]
    head = text[:512].lstrip()
    lowered = ascii_lower(head[:64])
    if head[:1] in ("{", "["):
        return "application/json"
    if lowered.startswith("<?xml") or lowered.startswith("<svg"):
        return "image/svg+xml" if "<svg" in ascii_lower(head) else "application/xml"
    if lowered.startswith(("<!doctype html", "<html", "<head", "<body")):
        return "text/html"
    sample = text[:512]
    controls = sum(1 for c in sample if (ord(c) < 32 and c not in "\t\r\n") or "\udc80" <= c)
    return "application/octet-stream" if controls * 10 > len(sample) else "text/plain"
