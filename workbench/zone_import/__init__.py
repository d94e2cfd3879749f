"""Import a real zone from the API's own responses, saved as JSON files (``wb.import_zone``).

The files, their names and the rules of the import are described in
:mod:`workbench.zone_import._zone`; a failed import leaves the workbench as it
was and names the file and JSON pointer at fault.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from workbench import Workbench
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "zone.json").write_text(json.dumps(
    ...     {"id": "0" * 32, "name": "shop.example", "plan": {"legacy_id": "pro"}}))
    >>> import_zone(Workbench(seed=3), folder).zone.name
    'shop.example'
"""

from ._build import ZoneImport
from ._files import ZoneImportError
from ._zone import ZoneFolder, import_zone, read_zone_folder

# Tracebacks name the package, which is the interface, not the private module.
ZoneImportError.__module__ = __name__

__all__ = ["ZoneFolder", "ZoneImport", "ZoneImportError", "import_zone", "read_zone_folder"]
