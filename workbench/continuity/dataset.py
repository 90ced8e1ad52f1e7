"""Datasets on disk: write atomically, load lazily, describe with a manifest.

>>> import tempfile
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = tempfile.TemporaryDirectory()
>>> _ = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), f"{tmp.name}/demo")
>>> ds = load_dataset(f"{tmp.name}/demo")
>>> ds.events().height, ds.events().select("seq", "kind", "tokens_cl100k").columns
(300, ['seq', 'kind', 'tokens_cl100k'])
>>> tmp.cleanup()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workbench import __version__
from workbench.continuity import schema as S
from workbench.errors import DatasetError
from workbench.rundir import names as N
from workbench.util.atomic import sha256_file

EVENTS_FILE = N.EVENTS
CONTINUITIES_FILE = N.CONTINUITIES
FACTS_FILE = N.FACTS
SECRETS_FILE = N.SECRETS
MANIFEST_FILE = N.MANIFEST


@dataclass(frozen=True)
class Dataset:
    """A dataset directory. Tables are read on demand (polars), never cached globally."""

    path: Path
    manifest: dict[str, Any] = field(repr=False)

    @property
    def name(self) -> str:
        return self.manifest.get("name", self.path.name)

    @property
    def tokenizers(self) -> list[str]:
        return list(self.manifest.get("tokenizers", []))

    def events(self, columns: list[str] | None = None):
        import polars as pl

        return self._read(EVENTS_FILE, lambda path: pl.read_parquet(path, columns=columns))

    def events_table(self, columns: list[str] | None = None, *, dictionary: list[str] | None = None):
        """The events as an Arrow table; ``dictionary``: columns read dictionary-encoded (a
        text repeated by a million events is one string, not a million). Read as one Parquet
        file (``pq.read_table`` would import ``pyarrow.dataset`` and with it pandas: seconds),
        streamed in 1 MB reads (the whole text column chunk read at once, then kept by Arrow's
        allocator, was 95 MB of a million-event evaluation's peak)."""
        import pyarrow.parquet as pq

        return self._read(EVENTS_FILE, lambda path: pq.ParquetFile(path, read_dictionary=dictionary,
                                                                  buffer_size=1 << 20, pre_buffer=False)
                          .read(columns=columns))

    def continuities(self):
        import polars as pl

        return self._read(CONTINUITIES_FILE, pl.read_parquet)

    def facts(self):
        import polars as pl

        return self._read(FACTS_FILE, pl.read_parquet)

    def secrets(self):
        import polars as pl

        return self._read(SECRETS_FILE, pl.read_parquet)

    # ---- the files checked against the manifest -------------------------------------------------
    def _damaged(self, name: str, why: str) -> DatasetError:
        how = "import" if self.manifest.get("source", {}).get("format") != "synthetic" else "generate"
        return DatasetError(f"{self.path / name} is damaged or incomplete ({why}); re-run `workbench "
                            f"{how}` for {self.path}")

    def _read(self, name: str, reader):
        """``reader(path)``, after checking the file's size against the manifest; an Arrow or
        Parquet error names the file and the remedy."""
        path = self.path / name
        rec = self.manifest.get("files", {}).get(name) or {}
        if not path.is_file():
            raise self._damaged(name, "the file is missing")
        size = path.stat().st_size
        if rec.get("bytes") is not None and size != rec["bytes"]:
            raise self._damaged(name, f"{size:,} bytes, the manifest says {rec['bytes']:,}")
        try:
            return reader(path)
        except Exception as exc:  # polars and pyarrow raise several types for a broken file
            raise self._damaged(name, f"{type(exc).__name__}: {str(exc)[:160]}") from exc

    def verify(self) -> list[str]:
        """Every file against the manifest's size and sha256; the problems found (empty: ok)."""
        problems = []
        for name, rec in sorted(self.manifest.get("files", {}).items()):
            path = self.path / name
            if not path.is_file():
                problems.append(f"{path}: missing")
            elif rec.get("bytes") is not None and path.stat().st_size != rec["bytes"]:
                problems.append(f"{path}: {path.stat().st_size:,} bytes, the manifest says {rec['bytes']:,}")
            elif rec.get("sha256") and sha256_file(path) != rec["sha256"]:
                problems.append(f"{path}: sha256 differs from the manifest's (the file was changed)")
        return problems


def load_dataset(path: str | Path) -> Dataset:
    path = Path(path)
    manifest_path = path / MANIFEST_FILE
    if not manifest_path.is_file():
        raise DatasetError(f"{path}: not a dataset (no {MANIFEST_FILE}); create one with "
                           "`workbench generate --out DIR` or `workbench import LOGS --out DIR`")
    try:
        manifest = orjson.loads(manifest_path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise DatasetError(f"{manifest_path}: manifest is not valid JSON: {exc}") from None
    version = manifest.get("schema_version")
    if version != S.SCHEMA_VERSION:
        raise DatasetError(f"{path}: schema_version {version!r} is not supported "
                           f"(this workbench reads version {S.SCHEMA_VERSION})")
    for required in (EVENTS_FILE, CONTINUITIES_FILE):
        if not (path / required).is_file():
            raise DatasetError(f"{path}: {required} is missing")
    return Dataset(path=path, manifest=manifest)


def _empty(schema):
    import pyarrow as pa

    return pa.Table.from_batches([], schema=schema)


def conform(table, schema):
    """Reorder/cast ``table`` to ``schema``; a missing non-nullable column is an error."""
    import pyarrow as pa

    cols = []
    for f in schema:
        if f.name in table.column_names:
            cols.append(table.column(f.name).cast(f.type))
        elif f.nullable:
            cols.append(pa.nulls(table.num_rows, f.type))
        else:
            raise DatasetError(f"column {f.name!r} is required by the canonical schema")
    return pa.Table.from_arrays(cols, schema=schema)


def write_dataset(
    path: str | Path,
    *,
    events,
    continuities,
    tokenizers: list[str],
    source: dict[str, Any],
    facts=None,
    secrets=None,
    extra: dict[str, Any] | None = None,
    name: str | None = None,
    force: bool = False,
) -> Dataset:
    """Write a dataset directory atomically and return it loaded.

    ``events``/``continuities``/``facts``/``secrets`` are Arrow tables (or anything
    ``pa.table`` accepts); they are conformed to the canonical schema first. ``path`` may
    be new, empty or a dataset the workbench wrote (:mod:`workbench.rundir`); the manifest
    has no timestamp, so the same inputs give the same bytes (the directory's marker
    records when it was written).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from workbench.continuity.validate import validate_events
    from workbench.rundir import Kind, replace_dir

    path = Path(path)
    ev = conform(pa.table(events) if not isinstance(events, pa.Table) else events,
                 S.events_schema(tokenizers))
    report = validate_events(ev)
    ct = conform(pa.table(continuities) if not isinstance(continuities, pa.Table)
                 else continuities, S.continuities_schema())
    fa = _empty(S.facts_schema()) if facts is None else conform(
        pa.table(facts) if not isinstance(facts, pa.Table) else facts, S.facts_schema())
    se = _empty(S.secrets_schema()) if secrets is None else conform(
        pa.table(secrets) if not isinstance(secrets, pa.Table) else secrets, S.secrets_schema())

    with replace_dir(path, Kind.DATASET, force=force) as tmp:
        files = {
            EVENTS_FILE: ev,
            CONTINUITIES_FILE: ct,
            FACTS_FILE: fa,
            SECRETS_FILE: se,
        }
        for fname, table in files.items():
            pq.write_table(table, tmp / fname, compression="zstd", row_group_size=1 << 20)
        manifest = {
            "schema_version": S.SCHEMA_VERSION,
            "name": name or path.name,
            "created_by": f"continuity-workbench {__version__}",
            "source": source,
            "tokenizers": list(tokenizers),
            "files": {f: {"sha256": sha256_file(tmp / f), "bytes": (tmp / f).stat().st_size}
                      for f in files},
            "counts": describe_counts(ev, ct, fa, se),
            "validation": report.as_dict(),
        }
        if extra:
            manifest.update(extra)
        (tmp / MANIFEST_FILE).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return load_dataset(path)


def describe_counts(events, continuities, facts, secrets) -> dict[str, Any]:
    import numpy as np
    import pyarrow.compute as pc

    from workbench.continuity.enums import KIND_NAMES

    kinds = events.column("kind").to_numpy()
    by_kind = {KIND_NAMES.get(int(k), str(k)): int(n)
               for k, n in zip(*np.unique(kinds, return_counts=True), strict=True)}
    req = events.column("request").to_numpy()
    cont = events.column("continuity").to_numpy()
    valid = req >= 0
    requests = int(np.unique(np.stack([cont[valid], req[valid]]), axis=1).shape[1]) if valid.any() else 0
    return {
        "events": events.num_rows,
        "continuities": continuities.num_rows,
        "requests": requests,
        "by_kind": by_kind,
        "facts": facts.num_rows,
        # a secret split across two messages has two rows (parts) but is one secret
        "secrets": len(pc.unique(secrets.filter(pc.invert(secrets.column("negative"))).column("secret_id"))),
        "hard_negatives": len(pc.unique(secrets.filter(secrets.column("negative")).column("secret_id"))),
    }
