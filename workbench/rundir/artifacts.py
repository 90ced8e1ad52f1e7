"""A run's summary artifacts, content-addressed and written once (ADR-0011's artifact store).

Every summary artifact a run produced (the ``rip.compaction_summary.v1`` document of each
checkpoint frame and merge: coverage, provenance, the modelled summary, tags) is written as
its canonical JSON (sorted keys, no whitespace) to ``artifacts/blobs/<sha256>``: the name is
the hash of the bytes, so a blob that was rewritten no longer matches its name and is caught
when read. ``artifacts/index.json`` maps each artifact id (``summary_artifact_id`` of the
frames, ``outputId`` of ``memory.compacted``) to its blob. Writing never replaces a blob: the
same content is the same file, other content at an existing name is refused.

>>> import tempfile
>>> from pathlib import Path
>>> d = Path(tempfile.mkdtemp())
>>> index = write_blobs(d, {"art_1": {"schema": "x", "n": 1}})
>>> read_store(d)("art_1")
{'n': 1, 'schema': 'x'}
>>> blob = d / ARTIFACTS / BLOBS / index["art_1"]
>>> _ = blob.write_bytes(b'{"n":2,"schema":"x"}')
>>> try:
...     read_store(d)("art_1")
... except ArtifactError as e:
...     print(str(e).endswith("was rewritten: its content no longer hashes to its name"))
True
>>> import shutil; shutil.rmtree(d)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from workbench.errors import WorkbenchError

ARTIFACTS = "artifacts"
BLOBS = "blobs"
INDEX = "index.json"


class ArtifactError(WorkbenchError):
    """A blob of the store is missing, rewritten or not a document."""


def artifact_id(doc: Mapping[str, Any]) -> str:
    """A summary artifact's id (``summary_artifact_id`` of the frames, ``outputId`` of
    ``memory.compacted``): the hash of its canonical ``rip.compaction_summary.v1`` document
    (:mod:`workbench.rundir.summary_docs`), so the id names the content, two different
    summaries of one range get two ids, and the id is the blob's name in the store."""
    return blob_id(canonical(doc))


def canonical(doc: Mapping[str, Any]) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


def blob_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_blobs(run_dir: str | Path, docs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Write ``docs`` (artifact id -> document) into ``run_dir``'s store and its index;
    returns the index (artifact id -> blob id)."""
    from workbench.util.atomic import atomic_write_bytes

    blobs = Path(run_dir) / ARTIFACTS / BLOBS
    blobs.mkdir(parents=True, exist_ok=True)
    index: dict[str, str] = {}
    for art, doc in sorted(docs.items()):
        data = canonical(doc)
        name = blob_id(data)
        path = blobs / name
        if path.exists():
            if path.read_bytes() != data:  # a blob is never rewritten, even to repair it
                raise ArtifactError(f"artifact {art}: {path} exists with other content; refusing to rewrite it")
        else:
            atomic_write_bytes(path, data)
        index[art] = name
    atomic_write_bytes(Path(run_dir) / ARTIFACTS / INDEX, orjson.dumps(index, option=orjson.OPT_SORT_KEYS))
    return index


def write_run_store(run_dir: str | Path, events) -> dict[str, str]:
    """The store of a run's events: the document of every artifact its frames produced."""
    from workbench.conformance.scenarios import modelled_artifact_store

    return write_blobs(run_dir, modelled_artifact_store(events))


def has_store(run_dir: str | Path) -> bool:
    return (Path(run_dir) / ARTIFACTS / INDEX).is_file()


def read_store(run_dir: str | Path) -> Callable[[str], dict[str, Any] | None]:
    """``read(artifact_id)``: its document, None when the index has no such artifact; raises
    :class:`ArtifactError` when its blob is missing, rewritten or unreadable."""
    root = Path(run_dir) / ARTIFACTS
    index = orjson.loads((root / INDEX).read_bytes())

    def read(art: str) -> dict[str, Any] | None:
        name = index.get(art)
        if name is None:
            return None
        path = root / BLOBS / name
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ArtifactError(f"artifact {art}: blob {name} cannot be read ({e.strerror})") from None
        if blob_id(data) != name:
            raise ArtifactError(f"artifact {art}: blob {name} was rewritten: its content no longer hashes "
                                "to its name")
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            raise ArtifactError(f"artifact {art}: blob {name} is not a JSON document") from None

    return read
