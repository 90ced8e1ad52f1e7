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


def bundle_row(tracker, r: int, run_id: str, name: str) -> dict[str, Any]:
    """The bundle row of request ``r`` (the tracker advanced to it)."""
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
    return {
        "run_id": run_id, "policy": name, "continuity_id": inp.continuity_id, "request": r,
        "schema": BUNDLE_SCHEMA, "strategy": policy.compile.strategy,
        "compile_from_seq": int(seq[p - 1]) if p > 0 else -1,
        "head_seqs": [int(seq[i]) for i in tracker.head(p)],
        "retained_seqs": [int(seq[i]) for i in tracker.state.retained],
        "summary_refs": [a for a, _ in tracker.shown_segments if a not in tracker.opaque_ids],
        "provider_items": [a for a, _ in tracker.shown_segments if a in tracker.opaque_ids],
        "raw_from_seq": int(seq[window[0]]) if window.size else None,
        "raw_to_seq": int(seq[window[-1]]) if window.size else None,
        "placeholder_seqs": placeholders}


def continuity_bundles(tracker, run_id: str, name: str) -> list[dict[str, Any]]:
    """The bundle row of every request of one continuity x policy (``tracker`` fresh)."""
    rows = []
    for r in range(tracker.inp.n_requests):
        tracker.advance(r)
        rows.append(bundle_row(tracker, r, run_id, name))
    return rows


def context_bundles(result, continuities=None):
    """One bundle row per request of each policy x continuity of ``result`` (a
    :class:`~workbench.engine.run.SimulationResult`); ``continuities``: only these ids."""
    import polars as pl

    from workbench.evaluate.context import ContextTracker
    from workbench.evaluate.texts import policies_of

    rows: list[dict[str, Any]] = []
    for name, policy in policies_of(result).items():
        for cid, inp in result.inputs.items():
            if continuities is None or cid in continuities:
                rows += continuity_bundles(ContextTracker(inp, policy, result.events, window=0), result.run_id,
                                           name)
    return pl.DataFrame(rows, schema=_schema())


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
