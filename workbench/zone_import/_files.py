"""Reading saved API responses for the zone import: envelopes, pages, JSON pointers.

Each file holds what ``curl`` saved from the real API: a v4 envelope
(``{"result": ..., "success": true, ...}``) or the bare result. A list may be
saved as several pages: ``filters.json`` and/or ``filters-1.json``,
``filters-2.json``... (numeric suffixes in numeric order). Every problem is a
:class:`ZoneImportError` naming the file and a JSON pointer into it:

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = Path(tmp.name)
    >>> _ = (folder / "filters-2.json").write_text(json.dumps([{"id": "b"}]))
    >>> _ = (folder / "filters-1.json").write_text(json.dumps({"success": True, "result": [{"id": "a"}]}))
    >>> [(i.source, i.pointer, i.data["id"]) for i in read_list(folder, "filters", "filters")]
    [('filters-1.json', '/result/0', 'a'), ('filters-2.json', '/0', 'b')]
    >>> _ = (folder / "pagerules.json").write_text('{"result": [}')
    >>> read_list(folder, "pagerules", "page rules")
    Traceback (most recent call last):
    ...
    workbench.zone_import.ZoneImportError: pagerules.json: line 1 column 13: malformed JSON (Expecting value)
    >>> tmp.cleanup()
"""

from __future__ import annotations

import glob
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ValidationError, json_kind


# Code 10790 is the workbench's own: no real API call imports a zone.
class ZoneImportError(ValidationError, code=10790):
    """A folder that cannot be imported; ``file`` and ``pointer`` say where, ``detail`` what.

    The message reads ``<file>: <pointer>: <detail>`` (the pointer is left out
    when the whole file is at fault).
    """

    def __init__(self, file: str, pointer: str, detail: str) -> None:
        self.file, self.pointer, self.detail = file, pointer, detail
        where = f"{file}: {pointer}" if pointer else file
        super().__init__(f"{where}: {detail}", source={"file": file, "pointer": pointer or "/"})


#: How an error names the JSON type of a value (one helper for every face's errors).
kind = json_kind


def pointer_key(key: str) -> str:
    """``key`` escaped as one JSON pointer step (``~`` and ``/`` per RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class Item:
    """One object of a saved response: which file, where in it, and its data."""

    source: str
    pointer: str
    data: Mapping[str, Any]

    def error(self, field: str, detail: str) -> ZoneImportError:
        """An error about ``field`` (a pointer relative to the item, ``""`` for all of it)."""
        return ZoneImportError(self.source, self.pointer + field, detail)

    def text(self, key: str) -> str:
        """The required string field ``key``."""
        if self.data.get(key) is None:
            raise self.error(f"/{pointer_key(key)}", "is required")
        value = self.data[key]
        if not isinstance(value, str):
            raise self.error(f"/{pointer_key(key)}", f"must be a string, got {kind(value)}")
        return value

    def child(self, key: str) -> Item:
        """The object under ``key`` as an item of its own (an error when it is not an object)."""
        value = self.data.get(key)
        if value is None:
            raise self.error(f"/{pointer_key(key)}", "is required")
        if not isinstance(value, Mapping):
            raise self.error(f"/{pointer_key(key)}", f"must be an object, got {kind(value)}")
        return Item(self.source, f"{self.pointer}/{pointer_key(key)}", value)


def read_response(path: Path) -> tuple[Any, str]:
    """The result a saved response holds, and the pointer to it (``/result`` or ``""``)."""
    name = path.name
    try:
        raw = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ZoneImportError(name, "", f"is not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ZoneImportError(
            name, "", f"line {exc.lineno} column {exc.colno}: malformed JSON ({exc.msg})"
        ) from None
    except (OSError, RecursionError) as exc:
        raise ZoneImportError(name, "", f"cannot be read ({exc})") from None
    # A v4 envelope has "result" beside at least one of the envelope's own fields;
    # anything else is taken as a bare result (curl | jq .result).
    if not (isinstance(raw, dict) and "result" in raw and raw.keys() & _ENVELOPE):
        return raw, ""
    success = raw.get("success", True)
    if not isinstance(success, bool):
        raise ZoneImportError(name, "/success", f"must be true or false, got {kind(success)}")
    if not success:
        errors = raw.get("errors")
        said = "; ".join(
            str(e.get("message", e))
            for e in (errors if isinstance(errors, list) else [])
            if isinstance(e, Mapping)
        )
        raise ZoneImportError(
            name, "/success", f"the saved response is a failure ({said or 'no error given'})"
        )
    return raw["result"], "/result"


_ENVELOPE = frozenset({"success", "errors", "messages", "result_info"})


def page_files(folder: Path, stem: str) -> list[Path]:
    """``<stem>.json`` first (when present), then ``<stem>-<page>.json`` in page order."""
    pages = [p for p in folder.glob(f"{glob.escape(stem)}-*.json") if p.is_file()]
    pages.sort(key=lambda p: _page_order(p.name[len(stem) + 1 : -len(".json")]))
    single = folder / f"{stem}.json"
    return ([single] if single.is_file() else []) + pages


def _page_order(suffix: str) -> tuple[int, int, str]:
    # Numeric pages in numeric order (2 before 10); other suffixes after, by name.
    return (0, int(suffix), "") if suffix.isdigit() else (1, 0, suffix)


def read_list(folder: Path, stem: str, what: str) -> list[Item]:
    """Every object of the list saved as ``<stem>.json`` / ``<stem>-*.json`` (none: empty)."""
    items: list[Item] = []
    for path in page_files(folder, stem):
        result, at = read_response(path)
        if not isinstance(result, list):
            raise ZoneImportError(path.name, at, f"must be an array of {what}, got {kind(result)}")
        for i, value in enumerate(result):
            if not isinstance(value, Mapping):
                raise ZoneImportError(
                    path.name, f"{at}/{i}", f"must be an object, got {kind(value)}"
                )
            items.append(Item(path.name, f"{at}/{i}", value))
    return items


def read_object(folder: Path, name: str, what: str) -> Item | None:
    """The object saved in ``name`` (None when the file is absent).

    A list holding exactly one object is taken as that object, so a saved
    list query (``GET /zones?name=...``) works as well as the single GET.
    """
    path = folder / name
    if not path.is_file():
        return None
    result, at = read_response(path)
    if isinstance(result, list) and len(result) == 1:
        result, at = result[0], f"{at}/0"
    if not isinstance(result, Mapping):
        raise ZoneImportError(name, at, f"must be {what} (an object), got {kind(result)}")
    return Item(name, at, result)


def unique(items: list[Item], what: str, key: Callable[[Item], str] | None = None) -> list[Item]:
    """``items`` with each id once: pages may overlap, so an identical repeat is dropped.

    Each item needs a string ``id``; the same key with other contents is an error.
    """
    seen: dict[str, Item] = {}
    out = []
    for item in items:
        item.text("id")
        k = key(item) if key is not None else item.data["id"]
        first = seen.get(k)
        if first is None:
            seen[k] = item
            out.append(item)
        elif first.data != item.data:
            raise item.error(
                "/id",
                f"{what} {item.data['id']} appears twice with different contents "
                f"(also in {first.source} at {first.pointer or '/'})",
            )
    return out
