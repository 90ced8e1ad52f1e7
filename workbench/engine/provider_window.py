"""Two compaction layers (Holon's RFC "OpenAI Remote Compaction Boundary For Holon",
2026-04-30 draft, §4–§8): the provider window and the local semantic checkpoint, kept
apart.

A policy has the second layer when ``compaction.local_tokens > 0`` (it needs the opaque,
accumulating strategy: the ``holon-openai`` preset). Per request, in the engines' order:

1. **Provider-window compaction** (§4.2, §6, §8): at the trigger's threshold the span before
   the cut becomes one opaque item; items *accumulate* (several may sit in the window) and
   the session continues from that window (§5.2). It is observability, not memory: its
   checkpoint frame is followed by a ``provider.compacted`` metadata row (compaction id,
   trigger, request-shape hash, covered range ``from_seq..to_seq``, item count, usage,
   payload hash and length; :func:`provider_rows`), never by RFC 0012 ``memory.compacted``.
   The existing opaque presets (``codex-remote``, ``openai-responses-compact``) follow the
   same rule.
2. **Rebuild from local state** (§5.4, §7.2): when the opaque items exceed
   ``compaction.max_segments`` (they are never merged: nothing can read them) and a local
   checkpoint exists, the window is rebuilt as the pinned head + that checkpoint + the raw
   events after its cut. It is explicit (a ``provider_window.rebuilt`` event) and resets the
   continuation: the session's next call reads nothing back (cache loss ``reset``, counted
   as intentional). Without a local checkpoint the items keep accumulating.
3. **Local semantic checkpoint** (§4.1, §5.3): once ``local_tokens`` raw tokens followed the
   local cut, a readable summary of them, folded into the previous checkpoint
   (``clamp(previous + span)`` by the compaction's ratio, floor and cap), is made in a call of
   its own (the request's context plus ``local_prompt_tokens``, on the summarizer's cache
   key). The local cut moves to the latest safe row before the request. It leaves the
   provider window as it is, and it is skipped in a request whose window was compacted or
   rebuilt (§5.1: never both layers on one span in one round). It is the only layer that
   emits ``memory.compacted``.

Cache loss is reported in two summary columns (§5.5, :mod:`workbench.engine.metrics`):
intentional (compaction, edit, reset) and request-shape drift.

The reference engine takes steps 2 and 3 from here (:func:`rebuild`, :func:`local_checkpoint`);
``kernel_nb`` has their compiled twins (``_rebuild_nb``, ``_local_checkpoint_nb``).

>>> from workbench.engine.presets import PRESETS
>>> c = PRESETS["holon-openai"].compaction
>>> c.kind, c.accumulate, c.local_tokens > 0, c.max_segments
('opaque', True, True, 4)
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from workbench.engine import enums as E
from workbench.rundir.wire import LOCAL_EVENT, PROVIDER_EVENT, REBUILD_EVENT

EVENT_NAMES = {E.EventType.LOCAL_CHECKPOINT: LOCAL_EVENT, E.EventType.REBUILD: REBUILD_EVENT}
# why the provider compacted (§8): its threshold, or a context-window overflow
TRIGGER_THRESHOLD = "threshold"
TRIGGER_OVERFLOW = "context_window"


def has_local_layer(policy) -> bool:
    return policy.compaction.local_tokens > 0


def readable_folds(policy) -> bool:
    """Whether each readable artifact folds in the previous one (its ``memory.compacted``
    lists it as a source): summaries that fold, and a two-layer policy's local checkpoints
    (its accumulating items are opaque: not artifacts of memory)."""
    return not policy.compaction.accumulate or has_local_layer(policy)


# ---- the reference engine's steps (reference._Replay) -------------------------------------
def local_checkpoint(rp, r: int, p: int) -> None:
    """Step 3 on the reference replay ``rp`` at request ``r`` (first output row ``p``)."""
    inp = rp.inp
    lo = int(np.searchsorted(rp.visible_rows, rp.local_cut, side="right"))
    hi = int(np.searchsorted(rp.visible_rows, p, side="left"))
    rows = rp.visible_rows[lo:hi].tolist()
    if sum(int(inp.tokens[i]) for i in rows) < rp.c[E.Cfg.LOCAL_TOKENS]:
        return
    need_message = bool(rp.c[E.Cfg.CUT_AT_MESSAGE])
    safe = [i for i in rows if inp.open_after[i] == 0 and (not need_message or inp.is_message[i])]
    if not safe:
        return
    span = [i for i in rows if i <= safe[-1]]
    span_tokens = sum(int(inp.tokens[i]) for i in span)
    out = rp.summary_size(rp.local_tokens + span_tokens)
    items = rp.compile(r, p)
    context = rp.size(items)
    rp.account(1, items, int(rp.c[E.Cfg.LOCAL_PROMPT]), r, E.CallKind.COMPACTION, out, context, context, 0)
    artifact = rp.next_artifact
    rp.next_artifact += 1
    rp.event(E.EventType.LOCAL_CHECKPOINT, r, span[0], span[-1], artifact, context, context, out, len(span),
             span_tokens, E.Strategy.SUMMARY)
    rp.local_cut, rp.local_tokens, rp.local_artifact = span[-1], out, artifact


def rebuild(rp, r: int, p: int) -> None:
    """Step 2 on the reference replay ``rp``: called where a single-layer policy would merge
    its accumulated segments (they exceed ``max_segments``)."""
    if rp.local_artifact < 0:
        return
    before = rp.size(rp.compile(r, p))
    dropped = len(rp.segments)
    dropped_tokens = sum(t for _, t in rp.segments)
    rp.segments = [(rp.local_artifact, rp.local_tokens)]
    rp.cut = rp.local_cut
    rp.mark(compacted=True)
    rp.reset_since[0] = True
    after = rp.size(rp.compile(r, p))
    rp.event(E.EventType.REBUILD, r, -1, rp.local_cut, rp.local_artifact, before, after, rp.local_tokens,
             dropped, dropped_tokens, E.Strategy.SUMMARY)


# ---- events: the provider layer's metadata rows (rundir.event_frames) ---------------------
def provider_columns(pl) -> dict[str, Any]:
    """The ``provider.compacted`` columns of ``events.parquet`` (null on other rows)."""
    return {"compaction_id": pl.String, "provider_trigger": pl.String, "request_shape_hash": pl.String,
            "item_count": pl.Int64, "usage_input_tokens": pl.Int64, "usage_output_tokens": pl.Int64,
            "payload_sha256": pl.String, "payload_bytes": pl.Int64}


def request_shape_hash(policy, inp) -> str:
    """What a provider request is shaped by besides its input items (§7.1): the policy's
    parameters, the model and the harness's fixed prefix; 12 hex digits."""
    text = f"{policy.digest()}|{policy.provider.model or inp.model}|{int(inp.prefix_tokens)}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def provider_rows(frame, col: dict[str, np.ndarray], artifacts: list[str | None], policy, inp,
                  bytes_per_token: int) -> list[dict[str, Any]]:
    """One ``provider.compacted`` row after each opaque checkpoint frame (``artifacts[k]``:
    the id the frame's item got); fills the ``provider_window.rebuilt`` rows' artifact (the
    local checkpoint they rebuilt from) into ``artifacts``."""
    etype, strategy, req = col["type"], col["strategy"], col["request"]
    overflow_req = np.maximum.accumulate(np.where(etype == E.EventType.OVERFLOW, req, -1)) if etype.size else req
    accumulate = policy.compaction.accumulate
    shape = request_shape_hash(policy, inp)
    by_no: dict[int, str | None] = {}
    items = 0
    rows: list[dict[str, Any]] = []
    # row by row only where the provider window's items change (a policy may have an overflow
    # or an edit at nearly every request)
    moves = np.isin(etype, [E.EventType.LOCAL_CHECKPOINT, E.EventType.REBUILD, E.EventType.MERGE])
    for k in np.flatnonzero(moves | ((etype == E.EventType.CHECKPOINT) & (strategy == E.Strategy.OPAQUE))).tolist():
        t = int(etype[k])
        if t == E.EventType.LOCAL_CHECKPOINT:
            by_no[int(col["artifact_no"][k])] = artifacts[k]
        elif t in (E.EventType.REBUILD, E.EventType.MERGE):
            items = 0  # the window's items were replaced by one readable checkpoint
            if t == E.EventType.REBUILD:
                artifacts[k] = by_no.get(int(col["artifact_no"][k]))
        elif t == E.EventType.CHECKPOINT and strategy[k] == E.Strategy.OPAQUE and artifacts[k] is not None:
            items = items + 1 if accumulate else 1
            size = int(col["item_tokens"][k]) * bytes_per_token
            payload = f"{artifacts[k]}:{size}".encode()  # the modelled payload: an id and a size
            rows.append({
                **{c: frame[c][k] for c in ("run_id", "policy", "continuity_id", "request", "source_request", "ts",
                                             "tokens_before", "tokens_after", "item_tokens", "span_events",
                                             "span_tokens", "from_seq", "to_seq", "summary_kind")},
                "event_type": PROVIDER_EVENT, "_order": 2 * k + 1, "compaction_id": artifacts[k],
                "provider_trigger": TRIGGER_OVERFLOW if overflow_req[k] == req[k] else TRIGGER_THRESHOLD,
                "request_shape_hash": shape, "item_count": items,
                "usage_input_tokens": int(col["tokens_before"][k]) + policy.compaction.prompt_tokens,
                "usage_output_tokens": int(col["item_tokens"][k]),
                "payload_sha256": hashlib.sha256(payload).hexdigest(), "payload_bytes": size})
    return rows
