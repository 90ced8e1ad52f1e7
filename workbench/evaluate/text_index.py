"""The per-dataset part of every evaluation, computed once and kept beside the dataset.

What an evaluation needs of a dataset before it looks at any run: each event's text
(dictionary-encoded: the distinct texts and one code per event), its seq, kind and role by
continuity; the facts probed (the planted ones, or on an imported log the facts it names
with every event naming each: :mod:`workbench.evaluate.log_facts`); the row where each
planted fact and secret was planted (its label span); and every leak fragment of every
planted secret (:class:`workbench.evaluate.matching.LeakScanner`). :func:`build` computes
it from the dataset's files; :func:`write` stores it in the dataset directory as
``text_index.npz`` (:data:`workbench.rundir.names.TEXT_INDEX`) so that the workers of a
sweep, and every later evaluation, read it instead (a million events: 3.6 s of work, a
0.1 s read).

The file is the workbench's own: it is claimed in the dataset's marker and written
atomically under the dataset's lock, its sha256 recorded in the marker. It is trusted only
when the marker lists it, its bytes are the ones recorded, its schema is this module's
and it was built from the dataset's current files (the manifest's sizes and sha256s,
:func:`dataset_digest`); a stale index of ours is rebuilt and replaced; a file the
workbench did not write (or one changed since) is never read, nor replaced.

>>> import tempfile
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = tempfile.TemporaryDirectory()
>>> dataset = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), f"{tmp.name}/d")
>>> read(dataset) is None, write(dataset), read(dataset).texts == build(dataset).texts
(True, 'written', True)
>>> write(dataset)
'current'
>>> tmp.cleanup()
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.rundir.names import TEXT_INDEX

SCHEMA = "workbench.text_index.v1"
_EVENT_COLUMNS = ("seq", "code", "kind", "role")
_UNSIGNED = {2, 4, 6, 8}  # Arrow type ids of uint8, uint16, uint32, uint64


@dataclass
class TextIndex:
    """A dataset's text index (see the module docstring). ``fact_rows`` / ``secret_rows``:
    the row of each facts / secrets table row in its continuity (-1: not found there);
    ``fragments``: every leak fragment, with the planted secret values owning it (indexes into
    ``leak_values``)."""

    texts: list[str]
    by_cont: dict[int, dict[str, np.ndarray]]
    facts: Any  # polars frame: the planted facts, or an imported log's named facts
    mention_rows: dict[str, np.ndarray]
    secrets: Any  # polars frame
    fact_rows: np.ndarray
    secret_rows: np.ndarray
    leak_values: list[str]
    fragments: dict[str, tuple[int, ...]]


def dataset_digest(dataset) -> str:
    """What the index was built from: the manifest's size and sha256 of every file."""
    files = dataset.manifest.get("files", {})
    h = hashlib.sha256(SCHEMA.encode())
    for name in sorted(files):
        h.update(f"\n{name}\t{files[name].get('bytes')}\t{files[name].get('sha256')}".encode())
    return h.hexdigest()


# ---- building ---------------------------------------------------------------------------------
def text_codes(column) -> tuple[list[str], np.ndarray]:
    """``(texts, codes)`` of a dictionary-encoded Arrow text column: its distinct texts (a
    null read as "") and each row's index into them (int32)."""
    import pyarrow as pa

    if column.num_chunks == 0:
        return [], np.zeros(0, dtype=np.int32)
    column = pa.table({"t": column}).unify_dictionaries().column("t")
    texts = ["" if t is None else t for t in column.chunk(0).dictionary.to_pylist()]
    codes = np.concatenate([_integers(c.indices if c.indices.null_count == 0 else c.indices.fill_null(-1))
                            for c in column.chunks]).astype(np.int32)
    if (codes < 0).any():  # a null text reads as ""
        empty = texts.index("") if "" in texts else len(texts)
        if empty == len(texts):
            texts.append("")
        codes[codes < 0] = empty
    return texts, codes


def _integers(array) -> np.ndarray:
    """An Arrow integer array without nulls as numpy, read from its buffer (``to_numpy``
    imports pandas: a second or more of an evaluated run's start-up)."""
    values = np.frombuffer(array.buffers()[1], dtype=np.dtype(f"int{array.type.bit_width}"))
    return values[array.offset:array.offset + len(array)]


def _column(chunked) -> np.ndarray:
    """A non-null Arrow integer column as numpy, in its own type."""
    dtype = np.dtype(f"{'u' if chunked.type.id in _UNSIGNED else ''}int{chunked.type.bit_width}")
    if chunked.num_chunks == 0:
        return np.zeros(0, dtype=dtype)
    return np.concatenate([_integers(c).view(dtype) for c in chunked.chunks])


def build(dataset) -> TextIndex:
    """The index of ``dataset``, computed from its files."""
    import polars as pl

    from workbench.evaluate.matching import fragment_owners

    # the text read dictionary-encoded: the distinct texts and a code per event, never a
    # string per event (a million events of a few thousand texts would take 600 MB)
    table = dataset.events_table(["continuity", "seq", "kind", "role", "text"], dictionary=["text"])
    texts, codes = text_codes(table.column("text"))
    columns = {k: _column(table.column(k)) for k in ("continuity", "seq", "kind", "role")}
    columns["code"] = codes
    del table
    import pyarrow as pa

    pa.default_memory_pool().release_unused()  # the text read's buffers, back to the system
    # (numpy, not a polars partition: polars' allocator kept its copies, 30 MB at a million events)
    order = np.lexsort((columns["seq"], columns["continuity"]))
    conts = columns["continuity"][order]
    starts = np.flatnonzero(np.r_[True, conts[1:] != conts[:-1]]) if len(order) else np.zeros(0, dtype=np.int64)
    bounds = [*starts.tolist(), len(order)]
    by_cont: dict[int, dict[str, np.ndarray]] = {
        int(conts[lo]): {k: columns[k][order[lo:hi]] for k in _EVENT_COLUMNS}
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)}
    del columns, order, conts
    facts = dataset.facts()
    # rows of every event naming a fact, beside its own row (the facts of a real log are
    # named again and again; a planted fact only where it was planted)
    mention_rows: dict[str, np.ndarray] = {}
    if facts.height == 0 and "import" in dataset.manifest:
        from workbench.evaluate.log_facts import dataset_log_facts

        facts = dataset_log_facts(dataset)
        for fid, cont, seqs in zip(facts["fact_id"].to_list(), facts["continuity"].to_list(),
                                   facts["mention_seqs"].to_list(), strict=True):
            mention_rows[fid] = np.searchsorted(by_cont[int(cont)]["seq"], np.asarray(seqs, dtype=np.int64))
        facts = facts.drop("mention_seqs")
    secrets = dataset.secrets()
    leak_values = secrets.filter(~pl.col("negative"))["value"].unique(maintain_order=True).to_list()
    return TextIndex(texts=texts, by_cont=by_cont, facts=facts, mention_rows=mention_rows, secrets=secrets,
                     fact_rows=_located(by_cont, facts), secret_rows=_located(by_cont, secrets),
                     leak_values=leak_values, fragments=fragment_owners(leak_values))


def _located(by_cont: dict[int, dict[str, np.ndarray]], labels) -> np.ndarray:
    """The row of each label (its continuity and seq) in its continuity, -1 where no event
    has that seq."""
    out = np.full(labels.height, -1, dtype=np.int64)
    if not labels.height:
        return out
    conts = labels["continuity"].to_numpy()
    seqs = labels["seq"].to_numpy().astype(np.int64)
    for c, d in by_cont.items():
        at = np.flatnonzero(conts == c)
        if not at.size or not len(d["seq"]):
            continue
        i = np.minimum(np.searchsorted(d["seq"], seqs[at]), len(d["seq"]) - 1)
        found = d["seq"][i] == seqs[at]
        out[at[found]] = i[found]
    return out


# ---- the file ---------------------------------------------------------------------------------
def _strings(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [v.encode("utf-8", "surrogatepass") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def _unstrings(blob: np.ndarray, offsets: np.ndarray) -> list[str]:
    data = blob.tobytes()
    bounds = offsets.tolist()
    return [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(bounds, bounds[1:], strict=False)]


def _frame_bytes(frame) -> np.ndarray:
    buf = io.BytesIO()
    frame.write_ipc(buf)
    return np.frombuffer(buf.getvalue(), dtype=np.uint8)


def to_bytes(index: TextIndex, digest: str) -> bytes:
    import orjson

    conts = sorted(index.by_cont)
    arrays: dict[str, np.ndarray] = {
        "meta": np.frombuffer(orjson.dumps({"schema": SCHEMA, "dataset": digest}), dtype=np.uint8),
        "continuities": np.asarray(conts, dtype=np.int64),
        "facts": _frame_bytes(index.facts), "secrets": _frame_bytes(index.secrets),
        "fact_rows": index.fact_rows, "secret_rows": index.secret_rows,
    }
    for k in _EVENT_COLUMNS:
        arrays[f"event_{k}"] = (np.concatenate([index.by_cont[c][k] for c in conts]) if conts
                                else np.zeros(0, dtype=np.int64))
    arrays["event_offsets"] = np.cumsum([0, *(len(index.by_cont[c]["seq"]) for c in conts)]).astype(np.int64)
    arrays["texts"], arrays["text_offsets"] = _strings(index.texts)
    ids = index.facts["fact_id"].to_list()
    rows = [index.mention_rows.get(f, np.zeros(0, dtype=np.int64)) for f in ids]
    arrays["mentioned"] = np.asarray([f in index.mention_rows for f in ids], dtype=bool)
    arrays["mention_rows"] = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    arrays["mention_offsets"] = np.cumsum([0, *map(len, rows)]).astype(np.int64)
    arrays["leak_values"], arrays["leak_value_offsets"] = _strings(index.leak_values)
    frags = list(index.fragments)
    arrays["fragments"], arrays["fragment_offsets"] = _strings(frags)
    owners = [index.fragments[f] for f in frags]
    arrays["owners"] = np.asarray([k for o in owners for k in o], dtype=np.int64)
    arrays["owner_offsets"] = np.cumsum([0, *map(len, owners)]).astype(np.int64)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def from_bytes(data: bytes, digest: str) -> TextIndex | None:
    """The index in ``data``, or None when it is not one of this schema built from the
    dataset whose digest is ``digest``."""
    import orjson
    import polars as pl

    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            meta = orjson.loads(z["meta"].tobytes())
            if not isinstance(meta, dict) or meta.get("schema") != SCHEMA or meta.get("dataset") != digest:
                return None
            a = {k: z[k] for k in z.files}
    except (OSError, ValueError, KeyError, orjson.JSONDecodeError):
        return None
    bounds = a["event_offsets"].tolist()
    by_cont = {int(c): {k: a[f"event_{k}"][lo:hi] for k in _EVENT_COLUMNS}
               for c, lo, hi in zip(a["continuities"].tolist(), bounds[:-1], bounds[1:], strict=True)}
    facts = pl.read_ipc(io.BytesIO(a["facts"].tobytes()))
    m = a["mention_offsets"].tolist()
    mention_rows = {f: a["mention_rows"][lo:hi] for f, lo, hi, on in
                    zip(facts["fact_id"].to_list(), m[:-1], m[1:], a["mentioned"].tolist(), strict=True) if on}
    owners = a["owners"].tolist()
    o = a["owner_offsets"].tolist()
    fragments = {f: tuple(owners[lo:hi]) for f, lo, hi in
                 zip(_unstrings(a["fragments"], a["fragment_offsets"]), o[:-1], o[1:], strict=True)}
    return TextIndex(texts=_unstrings(a["texts"], a["text_offsets"]), by_cont=by_cont, facts=facts,
                     mention_rows=mention_rows, secrets=pl.read_ipc(io.BytesIO(a["secrets"].tobytes())),
                     fact_rows=a["fact_rows"], secret_rows=a["secret_rows"],
                     leak_values=_unstrings(a["leak_values"], a["leak_value_offsets"]), fragments=fragments)


def _ours(dataset) -> tuple[bool, bytes | None]:
    """``(may write, trusted bytes)`` of the index file in ``dataset``'s directory: no file
    (may write, nothing to read); a file the marker lists with the sha256 it recorded (ours:
    may write, read it); anything else (not ours, or changed since: neither)."""
    from workbench.rundir.markers import read_marker

    path = Path(dataset.path) / TEXT_INDEX
    if not path.exists():
        return True, None
    marker = read_marker(Path(dataset.path))
    record = marker.files.get(TEXT_INDEX) if marker is not None and TEXT_INDEX in marker.entries else None
    if not record or not path.is_file():
        return False, None
    try:
        data = path.read_bytes()
    except OSError:
        return False, None
    if len(data) != record.get("bytes") or hashlib.sha256(data).hexdigest() != record.get("sha256"):
        return False, None
    return True, data


def read(dataset) -> TextIndex | None:
    """The index stored beside ``dataset``, when it is trusted and current; else None."""
    _, data = _ours(dataset)
    return None if data is None else from_bytes(data, dataset_digest(dataset))


def write(dataset, index: TextIndex | None = None) -> str:
    """Store the index of ``dataset`` beside it, unless a current one is there: ``"current"``
    (nothing to do), ``"written"``, or why not: ``"foreign"`` (a file the workbench did not
    write, or changed since, is at its name: left alone), ``"busy"`` (another command holds
    the dataset), ``"read-only"`` (the directory cannot be written)."""
    from workbench.rundir import LockedError, exclusive
    from workbench.rundir.output import OutputError, write_file

    digest = dataset_digest(dataset)
    try:
        with exclusive(dataset.path):
            may_write, data = _ours(dataset)
            if not may_write:
                return "foreign"
            if data is not None and from_bytes(data, digest) is not None:
                return "current"
            write_file(Path(dataset.path), TEXT_INDEX, to_bytes(index or build(dataset), digest))
    except LockedError:
        return "busy"
    except OutputError:
        return "foreign"
    except PermissionError:
        return "read-only"
    return "written"
