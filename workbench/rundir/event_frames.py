"""The rows of a run's ``events.parquet``, built from an engine's event records: ADR-0011
checkpoint frames, RFC 0012 ``memory.compacted`` events, flushes, overflows, truncations, a
two-layer policy's local checkpoints and provider metadata. Names come from
:mod:`workbench.rundir.wire`; :func:`workbench.engine.run.simulate` and the fidelity audit
call :func:`events_frame`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.engine import enums as E
from workbench.engine import provider_window as PW
from workbench.engine.records import EVENT_COLUMNS
from workbench.rundir import wire as W
from workbench.rundir.artifacts import artifact_id
from workbench.rundir.summary_docs import ROW_FIELDS, SummaryDocs

if TYPE_CHECKING:
    from workbench.engine.policy import Policy

STRATEGY_KIND_NAMES = {
    E.Strategy.SUMMARY: W.SUMMARY_KIND, E.Strategy.OPAQUE: W.OPAQUE_KIND,
    E.Strategy.TRUNCATE: W.TRUNCATION_KIND, E.Strategy.RECORDED: W.RECORDED_KIND,
    E.Strategy.CLEAR_TOOL_USES: W.CLEAR_KIND, E.Strategy.NONE: "none",
}
EVENT_TYPE_NAMES = {
    E.EventType.CHECKPOINT: W.CHECKPOINT_EVENT,
    E.EventType.FLUSH: W.FLUSH_EVENT,
    E.EventType.OVERFLOW: W.OVERFLOW_EVENT,
    E.EventType.CONTEXT_EDIT: W.EDIT_EVENT,
    E.EventType.MERGE: W.MERGE_EVENT,
    E.EventType.TRUNCATION: W.TRUNCATION_EVENT,  # overflow handling: not a checkpoint frame
    **PW.EVENT_NAMES,  # a two-layer policy's local checkpoints and rebuilds
}
def events_schema():
    import polars as pl

    return {
        "run_id": pl.String, "policy": pl.String, "continuity_id": pl.String, "event_type": pl.String,
        "request": pl.Int64, "source_request": pl.Int64, "ts": pl.String, "tokens_before": pl.Int64,
        "tokens_after": pl.Int64, "item_tokens": pl.Int64, "span_events": pl.Int64, "span_tokens": pl.Int64,
        # ADR-0011 checkpoint frame
        "frame_seq": pl.Int64, "from_seq": pl.Int64, "to_seq": pl.Int64, "from_message_id": pl.String,
        "to_message_id": pl.String, "to_is_message": pl.Boolean, "summary_artifact_id": pl.String,
        "cut_rule_id": pl.String, "summary_kind": pl.String, "actor_id": pl.String, "origin": pl.String,
        # RFC 0012 memory.compacted
        "memoryRef": pl.String, "outputId": pl.String, "sourceIds": pl.List(pl.String), "sourceCount": pl.Int64,
        "trigger": pl.String, "byteSize": pl.Int64, "tags": pl.List(pl.String), **PW.provider_columns(pl),
    }


def events_frame(ev: np.ndarray, inp, pol: Policy, run_id: str):
    """ADR-0011 checkpoint frames, RFC 0012 memory.compacted events, flushes, overflows,
    truncations (``context.truncated``: the span an overflow dropped, ``from_seq``..``to_seq``;
    no frame seq, no artifact, no memory.compacted: a truncation is not a compaction). An opaque
    provider item's frame is followed by ``provider.compacted`` metadata instead (:mod:`.provider_window`).

    Built by columns: some policies emit an overflow, a checkpoint or a context edit at
    almost every request (hundreds of thousands per continuity); only what chains from one
    summary to the next (artifact ids, memory.compacted source lists, merges) goes row by row.
    """
    import polars as pl

    ev = np.asarray(ev, np.int64).reshape(-1, len(EVENT_COLUMNS))
    col = {name: ev[:, i] for i, name in enumerate(EVENT_COLUMNS)}
    m = ev.shape[0]
    etype, req = col["type"], col["request"]
    has_requests = inp.n_requests > 0
    checkpoint = etype == E.EventType.CHECKPOINT
    edit = etype == E.EventType.CONTEXT_EDIT
    merge = etype == E.EventType.MERGE
    truncation = etype == E.EventType.TRUNCATION
    local, rebuilt = etype == E.EventType.LOCAL_CHECKPOINT, etype == E.EventType.REBUILD

    def at_rows(values: np.ndarray, rows: np.ndarray, where: np.ndarray) -> pl.Series:
        """values[rows] where ``where`` and the row exists, else null."""
        ok = where & (rows >= 0)
        out = values[np.where(ok, rows, 0)] if values.size else np.zeros(m, values.dtype)
        return pl.Series(out).set(pl.Series(~ok), None) if m else pl.Series(out)

    def message_ids(rows: np.ndarray) -> pl.Series:
        """The event's message id, or ``evt_<seq>`` when it has none."""
        ok = (checkpoint | local) & (rows >= 0)
        safe = np.where(ok, rows, 0)
        ids = (inp.message_id.gather(safe) if inp.n else pl.Series([None] * m, dtype=pl.String)).cast(pl.String)
        seqs = pl.Series(inp.seq[safe] if inp.n else np.zeros(m, np.int64)).cast(pl.String)
        filled = pl.select(pl.when(ids.is_null() | (ids == "")).then(pl.lit("evt_") + seqs).otherwise(ids)).to_series()
        return filled.set(pl.Series(~ok), None) if m else filled

    frame_seq = (int(inp.seq[-1]) + 1 if inp.n else 0) + np.cumsum(checkpoint) - 1
    seq_rows = checkpoint | edit | truncation | local | rebuilt
    frame = pl.DataFrame({
        "event_type": pl.Series(etype).replace_strict({int(k): v for k, v in EVENT_TYPE_NAMES.items()},
                                                      return_dtype=pl.String),
        "request": req,
        "source_request": inp.req_source[req] if has_requests else np.full(m, -1, np.int64),
        "ts": (pl.from_epoch(pl.Series(inp.req_ts[req] if has_requests else np.zeros(m, np.int64)), time_unit="ms")
               .dt.strftime("%Y-%m-%dT%H:%M:%S%.3fZ")),
        **{c: col[c] for c in ("tokens_before", "tokens_after", "item_tokens", "span_events", "span_tokens")},
        "frame_seq": pl.Series(frame_seq).set(pl.Series(~checkpoint), None) if m else frame_seq,
        "from_seq": at_rows(inp.seq, col["from_row"], seq_rows),
        "to_seq": at_rows(inp.seq, col["to_row"], seq_rows),
        "from_message_id": message_ids(col["from_row"]),
        "to_message_id": message_ids(col["to_row"]),
        "to_is_message": at_rows(inp.is_message, col["to_row"], checkpoint),
        "summary_kind": pl.Series(col["strategy"]).replace_strict(
            {int(k): v for k, v in STRATEGY_KIND_NAMES.items()}, default=None, return_dtype=pl.String)
        .set(pl.Series(~(checkpoint | edit | local)), None) if m else pl.Series([], dtype=pl.String),
        "_order": np.arange(m, dtype=np.int64) * 2,  # a memory.compacted row follows its checkpoint
    }).with_columns(
        run_id=pl.lit(run_id), policy=pl.lit(pol.name), continuity_id=pl.lit(inp.continuity_id),
        cut_rule_id=pl.when(pl.Series(checkpoint)).then(pl.lit(pol.trigger.rule_id())),
        actor_id=pl.when(pl.Series(checkpoint | local)).then(pl.lit("workbench-compactor")),
        origin=pl.when(pl.Series(checkpoint | local)).then(pl.lit("background")),
    )

    # what chains from one summary to the next: artifact ids, memory.compacted source
    # lists (the newly covered events and, when summaries fold, the previous summary), merges
    memory_ref = f"mem_{inp.continuity_id}_{pol.name}_context"
    recorded = pol.compaction.kind == "recorded"
    visible_rows = np.flatnonzero(inp.visible | inp.is_summary) if recorded else np.flatnonzero(inp.visible)
    folds = PW.readable_folds(pol)
    docs = SummaryDocs()
    artifacts: list[str | None] = [None] * m
    memory_rows: list[dict[str, Any]] = []
    previous: str | None = None
    segments: list[str] = []  # artifact ids currently in the context, for merges
    for k in np.flatnonzero(((checkpoint | local) & (col["artifact_no"] >= 0)) | merge).tolist():
        e = {name: int(col[name][k]) for name in EVENT_COLUMNS}
        base = {c: frame[c][k] for c in ("run_id", "policy", "continuity_id", "request", "source_request", "ts",
                                          "tokens_before", "tokens_after", "item_tokens", "span_events",
                                          "span_tokens")}
        base["event_type"] = frame["event_type"][k]
        base["_order"] = 2 * k + 1
        if not merge[k]:
            art = artifact_id(docs.add({c: frame[c][k] for c in ROW_FIELDS}))
            if e["strategy"] == E.Strategy.OPAQUE:  # a provider-window item: metadata, not memory (Holon §4.2)
                artifacts[k] = art
                continue
            end = int(np.searchsorted(visible_rows, e["to_row"], side="right"))
            span = visible_rows[max(0, end - e["span_events"]):end] if e["span_events"] else visible_rows[:0]
            before = [previous] if folds and previous is not None else []
            count = len(before) + span.size
            # ids are listed only up to the limit; past it the event carries the count alone
            sources = [*before, *(f"evt_{s}" for s in inp.seq[span].tolist())] if count <= W.SOURCE_IDS_LIMIT else None
            memory_rows.append(memory_compacted_row(base, memory_ref, art, sources, e, run_id, count=count))
            segments = [*segments, art] if not folds else [art]
        else:
            art = artifact_id(docs.add({c: frame[c][k] for c in ROW_FIELDS}))
            memory_rows.append(memory_compacted_row(base, memory_ref, art, segments, e, run_id))
            segments = [art]
        artifacts[k] = previous = art
    memory_rows += PW.provider_rows(frame, col, artifacts, pol, inp, W.BYTES_PER_TOKEN)
    frame = frame.with_columns(summary_artifact_id=pl.Series(artifacts, dtype=pl.String),
                               summary_kind=pl.when(pl.Series(merge)).then(pl.lit(W.MERGE_KIND))
                               .otherwise(pl.col("summary_kind")))
    # a fixed schema: the same columns and types whatever events a run happens to produce
    schema = {**events_schema(), "_order": pl.Int64}
    parts = [frame.select([pl.col(c).cast(t) if c in frame.columns else pl.lit(None, t).alias(c)
                           for c, t in schema.items()])]
    if memory_rows:
        parts.append(pl.DataFrame(memory_rows, schema=schema))
    return pl.concat(parts, how="vertical").sort("_order").drop("_order")


def memory_compacted_row(base, memory_ref, art, sources: list[str] | None, e, run_id, count: int | None = None):
    count = len(sources) if count is None else count
    source_ids = sources if 0 < count <= W.SOURCE_IDS_LIMIT else None
    return {**base, "event_type": W.COMPACTED_EVENT, "memoryRef": memory_ref, "outputId": art,
            "sourceIds": source_ids, "sourceCount": count, "trigger": W.TRIGGER_HOST,
            "byteSize": e["item_tokens"] * W.BYTES_PER_TOKEN, "tags": [f"compacted-from:{run_id}"],
            "summary_artifact_id": art}
