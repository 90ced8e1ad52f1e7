"""Per-request context bundles (ADR-0011 ``rip.context_bundle.v1``): what each request's
compiled context holds, by reference, read from the engines' prompt record of each
request's main call (:mod:`workbench.engine.prompt_record`, through the context tracker
:class:`~workbench.evaluate.context.ContextTracker`).

A bundle lists, in prompt order: the pinned head, the raw items retained across cuts, one
``summary_ref`` item per summary in the context (its artifact id: the provider adapter
expands it by reading the immutable blob ``artifacts/blobs/<id>``; no hidden reads), one
``provider_item`` per opaque provider-window item (its compaction id: the provider holds its
content, the run's store does not, Holon §4.2; they follow the readable summaries, as in
every policy that makes both), then
the recent raw events after the cut (under ``recent_messages_limit``, from its L-th last
message on), tool outputs shown as placeholders marked. ``recent_messages_v1`` bundles hold
no ``summary_ref``.

:func:`context_bundles` gives one row per request (``bundles.parquet``, written by the
redaction audit for the continuities it audits): the raw window is stored as its first and
last seq (every compiled-in event between them is in it), so the table grows with the
requests, not with their contexts. :func:`bundle_document` expands a row into the bundle
document.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

BUNDLE_SCHEMA = "rip.context_bundle.v1"
SUMMARY_REF = "summary_ref"
PROVIDER_ITEM = "provider_item"


def _schema():
    import polars as pl

    seqs = pl.List(pl.Int64)
    return {"run_id": pl.String, "policy": pl.String, "continuity_id": pl.String, "request": pl.Int64,
            "schema": pl.String, "strategy": pl.String, "compile_from_seq": pl.Int64, "head_seqs": seqs,
            "retained_seqs": seqs, "summary_refs": pl.List(pl.String), "provider_items": pl.List(pl.String),
            "raw_from_seq": pl.Int64,
            "raw_to_seq": pl.Int64, "placeholder_seqs": seqs}


#: the columns that vary per request, in :func:`continuity_bundles`' order
_PER_REQUEST = ("request", "compile_from_seq", "head_seqs", "retained_seqs", "summary_refs", "provider_items",
                "raw_from_seq", "raw_to_seq", "placeholder_seqs")


def bundle_row(tracker, r: int, run_id: str, name: str) -> dict[str, Any]:
    """The bundle row of request ``r`` (``tracker``: a :class:`~workbench.evaluate.context.ContextTracker`)."""
    return continuity_bundles(tracker, run_id, name).row(r, named=True)


def _ranges(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, index)``: the integers of every range ``[start[j], end[j])`` end to end, with
    the range each came from (empty ranges give nothing)."""
    lengths = np.maximum(end - start, 0)
    total = int(lengths.sum())
    owner = np.repeat(np.arange(start.size), lengths)
    offsets = np.cumsum(lengths) - lengths
    return owner, np.arange(total) - np.repeat(offsets, lengths) + np.repeat(start, lengths)


def _in_windows(positions: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(owner, position)`` of the sorted ``positions`` inside each window ``[lo[j], hi[j])``."""
    owner, idx = _ranges(np.searchsorted(positions, lo), np.searchsorted(positions, hi))
    return owner, positions[idx]


def continuity_bundles(tracker, run_id: str, name: str):
    """The bundle rows of every request of one continuity x policy, read column by column
    from the prompt record of each request's main call (no row built one at a time)."""
    import polars as pl

    from workbench.engine.enums import Shown

    inp, rec, view = tracker.inp, tracker.record, tracker.view
    n = inp.n_requests
    seq = np.asarray(inp.seq, dtype=np.int64)
    schema = _schema()
    s = rec.shown[tracker.main_calls] if n else np.zeros((0, rec.shown.shape[1]), np.int64)
    col = {c: s[:, getattr(Shown, c)] for c in Shown._fields}
    first = np.asarray(inp.req_first_row, dtype=np.int64)[:n]
    data: dict[str, Any] = {"request": np.arange(n, dtype=np.int64),
                            "compile_from_seq": np.where(first > 0, seq[np.maximum(first - 1, 0)], -1)}
    rows = rec.rows

    def listed(key: str, owner: np.ndarray, values) -> None:
        lengths = np.bincount(owner, minlength=n) if n else np.zeros(0, np.int64)
        data[key] = _list_column(key, values, lengths, schema[key])

    owner, v = _ranges(np.zeros(n, np.int64), col["HEAD"])
    listed("head_seqs", owner, seq[rows[v]])
    owner, j = _ranges(col["RETAINED_HEAD"], col["RETAINED_TAIL"])
    listed("retained_seqs", owner, seq[rows[rec.retained[j]]])
    owner, j = _ranges(col["SEGMENTS_HEAD"], col["SEGMENTS_TAIL"])
    # a context shows the same few artifacts request after request: each distinct one is
    # named once, and the columns gathered from those
    numbers, which = np.unique(rec.segment_artifacts[j], return_inverse=True)
    names = [tracker.artifact_ids.get(a) for a in numbers.tolist()]
    opaque = np.fromiter((a in tracker.opaque_ids for a in names), bool, len(names))[which]
    ids = pl.Series(names, dtype=pl.String)
    listed("summary_refs", owner[~opaque], ids.gather(which[~opaque]))
    listed("provider_items", owner[opaque], ids.gather(which[opaque]))
    lo, hi = col["TAIL_START"], col["TAIL_END"]
    shown = hi > lo
    data["raw_from_seq"] = pl.Series(np.where(shown, seq[rows[np.where(shown, lo, 0)]], 0)).set(
        pl.Series(~shown), None) if n else np.zeros(0, np.int64)
    data["raw_to_seq"] = pl.Series(np.where(shown, seq[rows[np.where(shown, hi - 1, 0)]], 0)).set(
        pl.Series(~shown), None) if n else np.zeros(0, np.int64)
    # placeholders: masked tool results (each class below its bound) and cleared rows (clearable,
    # up to the clearing bound, not masked already): disjoint sets, merged in position order
    parts = []
    cleared_end = np.minimum(hi, col["CLEARED"] + 1)
    results1 = view.class1
    results0 = view.is_result & ~results1
    for cls, bound in ((results0, col["MASKED0"]), (results1, col["MASKED1"])):
        pos = np.flatnonzero(cls)
        parts.append(_in_windows(pos, lo, np.minimum(hi, bound)))
        parts.append(_in_windows(np.flatnonzero(cls & view.clearable), np.maximum(lo, bound), cleared_end))
    parts.append(_in_windows(np.flatnonzero(view.clearable & ~view.is_result), lo, cleared_end))
    owner = np.concatenate([o for o, _ in parts])
    pos = np.concatenate([p for _, p in parts])
    order = np.lexsort((pos, owner))
    listed("placeholder_seqs", owner[order], seq[rows[pos[order]]])
    constants = {"run_id": run_id, "policy": name, "continuity_id": inp.continuity_id, "schema": BUNDLE_SCHEMA,
                 "strategy": tracker.policy.compile.strategy}
    for key, value in constants.items():
        data[key] = pl.repeat(value, n, dtype=pl.String, eager=True)
    return pl.DataFrame({k: (v if isinstance(v, pl.Series) else pl.Series(k, v, dtype=schema[k])).alias(k)
                         for k, v in data.items()}).select(list(schema))


def _list_column(name: str, flat, lengths, dtype):
    """A list column from its values end to end and each row's length (one Arrow array, not
    a Series per row)."""
    import polars as pl
    import pyarrow as pa

    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=offsets[1:])
    # the Arrow arrays come from polars: ``pa.array`` imports pandas (about 1 s of CPU) to
    # look for its objects in what it converts
    inner = (flat if isinstance(flat, pl.Series) else pl.Series(flat, dtype=dtype.inner)).to_arrow()
    return pl.Series(name, pa.LargeListArray.from_arrays(pl.Series(offsets).to_arrow(), inner)).cast(dtype)


def context_bundles(result, continuities=None):
    """One bundle row per request of each policy x continuity of ``result`` (a
    :class:`~workbench.engine.run.SimulationResult`); ``continuities``: only these ids."""
    import polars as pl

    from workbench.evaluate.context import ContextTracker
    from workbench.evaluate.texts import policies_of

    frames = [continuity_bundles(ContextTracker(inp, policy, result.events, record=result.prompt_record(name, cid)),
                                 result.run_id, name)
              for name, policy in policies_of(result).items()
              for cid, inp in result.inputs.items() if continuities is None or cid in continuities]
    return pl.concat(frames) if frames else pl.DataFrame(schema=_schema())


def bundle_document(row: Mapping[str, Any], inp, policy) -> dict[str, Any]:
    """The ``rip.context_bundle.v1`` document of one bundle row: ``items`` in prompt order,
    each a raw event (``type`` its kind: ``message``, ``tool_call`` ...; ``seq``,
    ``message_id``; ``placeholder`` when a tool output stands as a placeholder), a
    ``summary_ref`` (``artifact_id``) or a ``provider_item`` (``compaction_id``)."""
    from workbench.continuity.enums import KIND_NAMES
    from workbench.evaluate.context import visible_mask

    seq = np.asarray(inp.seq)
    placeholders = set(row["placeholder_seqs"] or ())

    def event(s: int, part: str) -> dict[str, Any]:
        i = int(np.searchsorted(seq, s))
        mid = inp.message_id[i]
        return {"type": KIND_NAMES[int(inp.kind[i])], "seq": int(s), "message_id": mid or None, "part": part,
                "placeholder": s in placeholders}

    items = [event(s, "head") for s in row["head_seqs"] or ()]
    items += [event(s, "retained") for s in row["retained_seqs"] or ()]
    items += [{"type": SUMMARY_REF, "artifact_id": a} for a in row["summary_refs"] or ()]
    items += [{"type": PROVIDER_ITEM, "compaction_id": a} for a in row.get("provider_items") or ()]
    if row["raw_from_seq"] is not None:
        rows = np.flatnonzero(visible_mask(inp, policy))
        lo, hi = np.searchsorted(seq[rows], [row["raw_from_seq"], row["raw_to_seq"]])
        items += [event(int(s), "recent") for s in seq[rows[lo:hi + 1]].tolist()]
    return {"schema": BUNDLE_SCHEMA, "thread_id": row["continuity_id"], "request": row["request"],
            "compile": {"strategy": row["strategy"], "from_seq": row["compile_from_seq"],
                        "recent_messages_limit": policy.compile.recent_messages_limit},
            "items": items}
