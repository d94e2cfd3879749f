"""How libmodsecurity 3 reads an XML body: the root element's text and every attribute, or a parse error.

ModSecurity parses with libxml2 and answers ``XML:/*`` (the root element's
text content: text, CDATA and entity text of every descendant) and
``XML://@*`` (every attribute value, namespace declarations apart). This
reads the body with expat and adds the limits where libxml2 refuses what
expat accepts (see :class:`XmlDocument`).

    >>> doc = parse_xml(b'<a x="1">t<b y="&amp;">u</b><![CDATA[<v>]]></a>')
    >>> doc.root_text, doc.attributes, doc.error
    (b'tu<v>', [b'1', b'&'], False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.parsers import expat

__all__ = ["XmlDocument", "parse_xml"]


@dataclass
class XmlDocument:
    """The parts of an XML body CRS reads: the root element's text and every attribute value.

    ``root_text`` is None when no root element was read. ``error`` is True
    when libxml2 would call the document not well formed (then the text read
    so far is kept, as libxml2 keeps the partial tree). Expat reads it, made
    to refuse what libxml2 refuses: an XML version other than 1.x, 258 nested
    elements, an undeclared entity without an external subset (even after a
    skipped external parameter entity), and an entity expanding past 1000
    bytes and ten times the body (libxml2's guard, approximated). Still apart:
    a repeated namespace declaration (libxml2 forgives one that is empty,
    ``xmlns:p=""``; expat, reading without namespaces, refuses any repeated
    attribute).
    """

    root_text: bytes | None = None
    attributes: list[bytes] = field(default_factory=list)
    error: bool = False


_VERSION = re.compile(rb"""^(?:\xef\xbb\xbf)?<\?xml\s+version\s*=\s*(["'])(.*?)\1""")
# libxml2 (xmlParserMaxDepth 256) refuses the 258th nested element; 257 pass (checked).
_MAX_DEPTH = 257
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def parse_xml(body: bytes) -> XmlDocument:
    """Parse an XML body as ModSecurity's XML processor does (no external entities loaded)."""
    try:
        return _parse_xml(body, None)
    except (ValueError, LookupError):
        # Expat reads single-byte encodings only; libxml2 converts the others
        # (Shift_JIS, EUC-JP...) first, so do that with Python's codec.
        m = _DECLARED_ENCODING.match(body)
        if m is None:
            return XmlDocument(error=True)
        try:
            text = body.decode(m.group(1).decode())
        except (LookupError, UnicodeDecodeError):
            return XmlDocument(error=True)
        return _parse_xml(text.encode("utf-8"), "utf-8")


class _NotWellFormed(Exception):
    """Raised from a handler where libxml2 refuses what expat lets through."""


def _parse_xml(body: bytes, encoding: str | None) -> XmlDocument:
    doc = XmlDocument()
    m = _VERSION.match(body)
    if m is not None and not re.fullmatch(rb"1\.[0-9]+", m.group(2)):
        doc.error = True  # libxml2 reads XML 1.x only
        return doc
    parser = expat.ParserCreate(encoding)
    parser.ordered_attributes = True
    parser.specified_attributes = True
    # libxml2 expands parameter entities of the internal subset (not external ones).
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE)
    text: list[str] = []
    depth = 0
    attrs: list[str] = []
    external_subset = False

    def doctype(name: str, system_id: str | None, public_id: str | None, internal: int) -> None:
        nonlocal external_subset
        external_subset = system_id is not None or public_id is not None

    def skipped(name: str, is_parameter_entity: int) -> None:
        # An undeclared entity is only forgiven when an external subset might declare it.
        if not is_parameter_entity and not external_subset:
            raise _NotWellFormed(name)

    def start(name: str, attributes: list[str]) -> None:
        nonlocal depth
        depth += 1
        if depth > _MAX_DEPTH:
            raise _NotWellFormed("excessive depth")
        if depth == 1 and doc.root_text is None:
            doc.root_text = b""
        for i in range(0, len(attributes), 2):
            an = attributes[i]
            # Namespace declarations are not attribute nodes in XPath.
            if an != "xmlns" and not an.startswith("xmlns:"):
                attrs.append(attributes[i + 1])

    def end(name: str) -> None:
        nonlocal depth
        depth -= 1

    def chars(data: str) -> None:
        if depth > 0:
            text.append(data)

    entities: dict[str, str] = {}

    def entity(name: str, is_pe: int, value: str | None, *rest: object) -> None:
        if not is_pe and value is not None:
            entities.setdefault(name, value)

    parser.EntityDeclHandler = entity
    parser.StartDoctypeDeclHandler = doctype
    parser.SkippedEntityHandler = skipped
    parser.ExternalEntityRefHandler = lambda *args: 1  # never loaded, as in ModSecurity
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(body, True)
    except (expat.ExpatError, _NotWellFormed):
        doc.error = True
    if entities and not doc.error and _amplified(body, entities):
        doc.error = True
    if doc.root_text is not None:
        doc.root_text = "".join(text).encode("utf-8", "surrogatepass")
    doc.attributes = [a.encode("utf-8", "surrogatepass") for a in attrs]
    return doc


_ENTITY_REF = re.compile(r"&([^;&#\s]+);")


def _amplified(body: bytes, entities: dict[str, str]) -> bool:
    """libxml2's guard against entity expansion bombs, roughly (xmlParserEntityCheck).

    libxml2 refuses an entity whose expansion passes 1000 bytes and ten times
    the input read so far; here the input is the whole body and only entities
    referenced after the DOCTYPE count.
    """
    sizes: dict[str, int] = {}

    def size(name: str, seen: frozenset[str]) -> int:
        if name in sizes:
            return sizes[name]
        value = entities.get(name)
        if value is None or name in seen:
            return 0
        total = len(value.encode("utf-8", "surrogatepass"))
        for ref in _ENTITY_REF.findall(value):
            total += size(ref, seen | {name}) - len(ref) - 2
        sizes[name] = total
        return total

    tail = body.rsplit(b"]>", 1)[-1].decode("utf-8", "replace")
    used = set(_ENTITY_REF.findall(tail))
    return any(size(name, frozenset()) >= max(1000, 10 * len(body)) for name in used)
