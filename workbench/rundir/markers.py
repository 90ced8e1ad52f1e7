"""What the workbench wrote: the marker file of each directory it writes, and the kinds.

Every directory the workbench writes (a dataset, a run, a sweep, a report, an audit's
output) carries ``.workbench.json``::

    {"kind": "run", "written_by": "continuity-workbench 0.1.0",
     "created_at": "2026-11-25T10:00:00+00:00", "entries": ["config.json", "ledger.parquet", ...],
     "files": {"ledger.parquet": {"bytes": 1234, "sha256": "..."}, ...}, "writing": null}

``entries`` are the top-level names the workbench wrote there (a directory entry such as a
sweep's ``results`` is owned whole). A directory may be replaced only when every name in it
is one of its entries, so a file a user put beside ours is never deleted. ``files`` records
the size and hash of each file as written, so a reader can tell a damaged file. ``writing``
names the command adding files to the directory right now: a marker that still says so
after that command is gone marks the directory *incomplete* (it was interrupted).

Directories written before markers existed are recognised by their own files (a dataset's
``manifest.json`` names its writer; a run has ``config.json`` with a ``run_id``; a sweep
``sweep.json`` and ``runs.parquet``; a report only ``<kind>.html|.ipynb|-*.png`` files): what
such a directory owns is the set of names the workbench is known to write for that kind.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson

from workbench import __version__
from workbench.rundir import names as N

MARKER = ".workbench.json"
WRITTEN_BY = "continuity-workbench"


class Kind(StrEnum):
    DATASET = "dataset"
    RUN = "run"
    SWEEP = "sweep"
    REPORT = "report"
    AUDIT = "audit"  # determinism / fidelity tables written apart from a run
    EXPORT = "export"  # a dataset written in another format (workbench export)


@dataclass(frozen=True)
class Marker:
    kind: Kind
    entries: frozenset[str] = field(default_factory=frozenset)
    created_at: str | None = None
    legacy: bool = False  # recognised by its files, written before markers existed
    files: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # name -> bytes, sha256
    writing: str | None = None  # the command adding files now (None: complete)

    @property
    def complete(self) -> bool:
        return self.writing is None

    def to_json(self) -> bytes:
        return orjson.dumps({"kind": str(self.kind), "written_by": f"{WRITTEN_BY} {__version__}",
                             "created_at": self.created_at or now(), "entries": sorted(self.entries),
                             "files": dict(sorted(self.files.items())), "writing": self.writing},
                            option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


def now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def read_marker(path: Path) -> Marker | None:
    """The marker of directory ``path`` (or what its files say it is), else None."""
    path = Path(path)
    raw = path / MARKER
    if raw.is_file():
        try:
            data = orjson.loads(raw.read_bytes())
            return Marker(kind=Kind(data["kind"]), entries=frozenset(data.get("entries") or ()),
                          created_at=data.get("created_at"), files=dict(data.get("files") or {}),
                          writing=data.get("writing"))
        except (orjson.JSONDecodeError, KeyError, ValueError, TypeError):
            return None  # a damaged marker proves nothing: treated as not ours
    return _legacy(path)


def write_marker(directory: Path, kind: Kind, entries, created_at: str | None = None, *,
                 files: Mapping[str, Mapping[str, Any]] | None = None, writing: str | None = None) -> Marker:
    from workbench.util.atomic import atomic_write_bytes

    entries = frozenset(entries) - {MARKER}
    marker = Marker(kind=kind, entries=entries, created_at=created_at,
                    files={k: v for k, v in (files or {}).items() if k in entries}, writing=writing)
    atomic_write_bytes(Path(directory) / MARKER, marker.to_json())
    return marker


def update_marker(directory: Path, marker: Marker, **changes) -> Marker:
    """Rewrite ``directory``'s marker with ``changes`` (entries, files, writing)."""
    fields = {"entries": marker.entries, "created_at": marker.created_at, "files": marker.files,
              "writing": marker.writing, **changes}
    return write_marker(directory, marker.kind, fields.pop("entries"), fields.pop("created_at"), **fields)


def file_record(path: Path) -> dict[str, Any]:
    from workbench.util.atomic import sha256_file

    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}


def _json(path: Path) -> dict | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


_REPORT_FILE = re.compile(r"^(?P<kind>[a-z-]+?)(?:\.html|\.ipynb|\.constraints\.json|-[A-Za-z0-9_.-]+\.png)$")


def _legacy(path: Path) -> Marker | None:
    if not path.is_dir():
        return None
    manifest = _json(path / N.MANIFEST) if (path / N.MANIFEST).is_file() else None
    if manifest and str(manifest.get("created_by", "")).startswith(WRITTEN_BY):
        return Marker(Kind.DATASET, frozenset(N.DATASET_FILES), legacy=True)
    config = _json(path / N.CONFIG) if (path / N.CONFIG).is_file() else None
    if config and "run_id" in config and (path / N.LEDGER).is_file():
        return Marker(Kind.RUN, frozenset(N.RUN_FILES), legacy=True)
    if (path / N.SWEEP).is_file() and (path / N.SWEEP_RUNS).is_file():
        return Marker(Kind.SWEEP, frozenset(N.SWEEP_FILES), legacy=True)
    names = [p.name for p in path.iterdir()]
    if names and all(_REPORT_FILE.match(n) for n in names):
        return Marker(Kind.REPORT, frozenset(names), legacy=True)
    return None
