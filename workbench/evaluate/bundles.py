"""Per-request context bundles (ADR-0011 ``rip.context_bundle.v1``): what each request's
compiled context holds, by reference, rebuilt from a run's events and its policy by the
context tracker (:class:`~workbench.evaluate.context.ContextTracker`).

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


def _bundle_values(tracker, r: int) -> tuple:
    """Request ``r``'s bundle (the tracker advanced to it), in :data:`_PER_REQUEST` order."""
    inp, policy = tracker.inp, tracker.policy
    seq = inp.seq
    p = int(inp.req_first_row[r])
    lo, hi = tracker.shown_window(p)
    window = tracker.visible_rows[lo:hi]
    # only policies that mask or clear show placeholders: the others skip the scan
    edits = (policy.masking.after_turns > 0 or tracker.mask_rule.bounded
             or policy.compaction.kind == "clear_tool_uses")
    placeholders = ([int(seq[i]) for i in window.tolist() if tracker.masked(i, r) or tracker.cleared(i)]
                    if edits else [])
    shown = tracker.shown_segments
    return (r, int(seq[p - 1]) if p > 0 else -1,
            seq[tracker.head(p)].tolist(),
            seq[tracker.state.retained].tolist() if tracker.state.retained else [],
            [a for a, _ in shown if a not in tracker.opaque_ids],
            [a for a, _ in shown if a in tracker.opaque_ids],
            int(seq[window[0]]) if window.size else None,
            int(seq[window[-1]]) if window.size else None,
            placeholders)


#: the columns that vary per request, in the order :func:`_bundle_values` gives them
_PER_REQUEST = ("request", "compile_from_seq", "head_seqs", "retained_seqs", "summary_refs", "provider_items",
                "raw_from_seq", "raw_to_seq", "placeholder_seqs")


def bundle_row(tracker, r: int, run_id: str, name: str) -> dict[str, Any]:
    """The bundle row of request ``r`` (the tracker advanced to it)."""
    return {"run_id": run_id, "policy": name, "continuity_id": tracker.inp.continuity_id, "request": r,
            "schema": BUNDLE_SCHEMA, "strategy": tracker.policy.compile.strategy,
            **dict(zip(_PER_REQUEST, _bundle_values(tracker, r), strict=True))}


def continuity_bundles(tracker, run_id: str, name: str):
    """The bundle rows of every request of one continuity x policy (``tracker`` fresh), a
    frame built column by column (a row dict per request is what made 60k requests slow)."""
    import polars as pl

    n = tracker.inp.n_requests
    schema = _schema()
    is_list = [isinstance(schema[key], pl.List) for key in _PER_REQUEST]
    # a list column as its values end to end and each row's length (no list kept per row)
    columns: list[list] = [[] for _ in _PER_REQUEST]
    lengths: list[list[int]] = [[] for _ in _PER_REQUEST]
    for r in range(n):
        tracker.advance(r)
        for k, value in enumerate(_bundle_values(tracker, r)):
            if is_list[k]:
                columns[k].extend(value)
                lengths[k].append(len(value))
            else:
                columns[k].append(value)
    data = {"run_id": pl.repeat(run_id, n, dtype=pl.String, eager=True),
            "policy": pl.repeat(name, n, dtype=pl.String, eager=True),
            "continuity_id": pl.repeat(tracker.inp.continuity_id, n, dtype=pl.String, eager=True),
            "schema": pl.repeat(BUNDLE_SCHEMA, n, dtype=pl.String, eager=True),
            "strategy": pl.repeat(tracker.policy.compile.strategy, n, dtype=pl.String, eager=True)}
    for k, key in enumerate(_PER_REQUEST):
        data[key] = (_list_column(key, columns[k], lengths[k], schema[key]) if is_list[k]
                     else pl.Series(key, columns[k], dtype=schema[key]))
    return pl.DataFrame(data).select(list(schema))


def _list_column(name: str, flat: list, lengths: list[int], dtype):
    """A list column from its values end to end and each row's length (one Arrow array, not
    a Series per row)."""
    import polars as pl
    import pyarrow as pa

    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=offsets[1:])
    inner = pa.array(flat, type=pa.int64() if dtype.inner == pl.Int64 else pa.large_string())
    return pl.Series(name, pa.LargeListArray.from_arrays(pa.array(offsets), inner)).cast(dtype)


def context_bundles(result, continuities=None):
    """One bundle row per request of each policy x continuity of ``result`` (a
    :class:`~workbench.engine.run.SimulationResult`); ``continuities``: only these ids."""
    import polars as pl

    from workbench.evaluate.context import ContextTracker
    from workbench.evaluate.texts import policies_of

    frames = [continuity_bundles(ContextTracker(inp, policy, result.events, window=0), result.run_id, name)
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
