"""Compaction calls: the model call that wrote a compaction's summary, recorded apart from
the conversation it compacted.

A harness that compacts by asking the model for a summary makes a call of its own, and
logs it in its own way:

* **Claude Code** writes the summarizer's call to ``<session>/subagents/agent-acompact-*.jsonl``
  (agent id ``acompact-…``): a user record with the summarizer instruction and the
  assistant record with the summary and the call's usage. It is not a conversation: its
  records are one call of the parent session, made right before the parent's
  ``compact_boundary`` (the boundary's timestamp follows the call's last record).
* **Codex** (≥ 0.154) writes a ``token_count`` for the compaction request and leaves it out
  of ``total_token_usage`` (openai/codex#47003): the parser keeps it as a USAGE event of
  origin BACKGROUND named ``token_count_compaction`` (never a request of the conversation).

Either way the import records the link in the manifest's per-continuity meta
(``manifest["import"]["continuities"][cid]``):

* on the conversation: ``compaction_calls``, one entry per call: ``source`` (``subagent`` or
  ``token_count``), ``boundary_seq`` and ``request`` of the compaction it made (the
  COMPACTION event and the first request after it; None when the log holds no boundary
  for it), the call's recorded ``input`` (uncached), ``cache_read``, ``cache_write``,
  ``output`` and, for a subagent, its ``continuity_id``;
* on a subagent's own continuity: ``compaction_call_of`` (``continuity_id``, ``boundary_seq``,
  ``request`` of its parent's compaction). Such a continuity is never replayed on its own
  (:func:`compaction_call_ids`: the engine's ``prepare_dataset`` leaves it out); its usage is
  the recorded usage of the parent's compaction call (the fidelity audit's compactions frame).

>>> calls = {"a": {"compaction_calls": [{"source": "subagent", "continuity_id": "a/agent-acompact-1"}]},
...          "a/agent-acompact-1": {"compaction_call_of": {"continuity_id": "a"}}}
>>> sorted(compaction_call_ids({"import": {"continuities": calls}}))
['a/agent-acompact-1']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workbench.continuity.enums import EventKind

COMPACTION_CALLS = "compaction_calls"  # meta key of the conversation: its compaction calls
COMPACTION_CALL_OF = "compaction_call_of"  # meta key of a subagent that is a compaction call
COMPACTION_AGENT = "compaction_agent"  # set by a parser on a continuity that is one compaction call
CLAUDE_CODE_AGENT_PREFIX = "agent-acompact"  # Claude Code's summarizer subagent files
USAGE_KEYS = ("input", "cache_read", "cache_write", "output")


def is_claude_code_compaction_agent(path: Path, agent_id: str | None) -> bool:
    """Claude Code's summarizer call: ``subagents/agent-acompact-*.jsonl`` (agent id ``acompact-*``)."""
    return Path(path).stem.startswith(CLAUDE_CODE_AGENT_PREFIX) or (
        agent_id is not None and agent_id.startswith(CLAUDE_CODE_AGENT_PREFIX.removeprefix("agent-")))


def usage_totals(cols: dict[str, list]) -> dict[str, int]:
    """Recorded usage summed over the rows of an :class:`~workbench.sources.base.EventRows`
    that carry usage (``usage_input >= 0``), plus how many (``calls``)."""
    ui = np.asarray(cols["usage_input"], np.int64)
    has = ui >= 0
    out = {"calls": int(has.sum())}
    for key, col in zip(USAGE_KEYS, ("usage_input", "usage_cache_read", "usage_cache_write", "usage_output"),
                        strict=True):
        out[key] = int(np.maximum(np.asarray(cols[col], np.int64)[has], 0).sum())
    return out


def _boundary_for(parent_cols: dict[str, list], first_ts: int, last_ts: int) -> int | None:
    """The parent's COMPACTION row the call made: the first boundary at or after the call's
    last record; else (clock skew, no time stamps) the one nearest in time; None if none."""
    kind = np.asarray(parent_cols["kind"], np.int64)
    rows = np.flatnonzero(kind == int(EventKind.COMPACTION))
    if rows.size == 0:
        return None
    ts = np.asarray(parent_cols["ts_ms"], np.int64)[rows]
    if last_ts >= 0:
        after = rows[ts >= last_ts]
        if after.size:
            return int(after[0])
    if first_ts >= 0 and (ts >= 0).any():
        known = ts >= 0
        return int(rows[known][np.argmin(np.abs(ts[known] - first_ts))])
    return int(rows[0]) if rows.size == 1 else None


def attach_compaction_calls(conts: list, ids: list[str], parents: list[int]) -> int:
    """Link every subagent flagged :data:`COMPACTION_AGENT` to its parent's compaction (see
    the module docstring); returns how many were attached. ``conts``: the parsed
    continuities (their ``meta`` is updated in place), ``ids`` their unique ids,
    ``parents`` each one's parent index (-1: none)."""
    attached = 0
    for i, c in enumerate(conts):
        if not c.meta.get(COMPACTION_AGENT):
            continue
        p = parents[i]
        if p < 0:
            continue  # no parent in this import: it stays a continuity of its own, as imported
        cols = c.rows.cols
        ts = np.asarray(cols["ts_ms"], np.int64)
        stamped = ts[ts >= 0]
        first_ts, last_ts = (int(stamped.min()), int(stamped.max())) if stamped.size else (-1, -1)
        parent = conts[p]
        row = _boundary_for(parent.rows.cols, first_ts, last_ts)
        req = int(parent.rows.cols["request"][row]) if row is not None else None
        link = {"continuity_id": ids[p], "boundary_seq": row,
                "request": req if req is not None and req >= 0 else None}
        c.meta[COMPACTION_CALL_OF] = link
        parent.meta.setdefault(COMPACTION_CALLS, []).append(
            {"source": "subagent", "continuity_id": ids[i], "boundary_seq": row,
             "request": link["request"], **usage_totals(cols)})
        attached += 1
    return attached


def _continuity_meta(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return ((manifest or {}).get("import") or {}).get("continuities") or {}


def compaction_call_ids(manifest: dict[str, Any]) -> set[str]:
    """Continuity ids of a dataset that are a compaction call of another (not replayed)."""
    return {cid for cid, meta in _continuity_meta(manifest).items()
            if isinstance(meta, dict) and meta.get(COMPACTION_CALL_OF)}


def compaction_calls(manifest: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per conversation id, its recorded compaction calls (entries described above)."""
    return {cid: list(meta[COMPACTION_CALLS]) for cid, meta in _continuity_meta(manifest).items()
            if isinstance(meta, dict) and meta.get(COMPACTION_CALLS)}


def calls_by_boundary(manifest: dict[str, Any]) -> dict[tuple[str, int], tuple[int, int]]:
    """``(conversation id, boundary seq) -> (prompt, cache read)`` of the recorded compaction
    calls, summed per boundary (the prompt: input + cache read + cache write)."""
    out: dict[tuple[str, int], tuple[int, int]] = {}
    for cid, entries in compaction_calls(manifest).items():
        for e in entries:
            if e.get("boundary_seq") is not None:
                prompt, read = out.get((cid, int(e["boundary_seq"])), (0, 0))
                out[(cid, int(e["boundary_seq"]))] = (prompt + e["input"] + e["cache_read"] + e["cache_write"],
                                                      read + e["cache_read"])
    return out


def parents_of_calls(manifest: dict[str, Any]) -> dict[str, tuple[str, int | None]]:
    """``compaction call's continuity id -> (conversation id, request of its compaction)``."""
    return {cid: (meta[COMPACTION_CALL_OF]["continuity_id"], meta[COMPACTION_CALL_OF].get("request"))
            for cid, meta in _continuity_meta(manifest).items()
            if isinstance(meta, dict) and meta.get(COMPACTION_CALL_OF)}


def recorded_compaction_costs(ds) -> dict[tuple[str, int], dict[str, Any]]:
    """What each recorded compaction cost, by the log's own usage: ``(conversation id, request
    after the boundary) ->`` the compaction call's recorded usage (``call_*`` tokens, summed
    over its calls; none recorded: ``calls`` 0) and ``call_usd``, and the re-write of the new
    prefix by the first request after the boundary: its recorded prompt, cache read and write
    and ``rewrite_usd``, what that prompt cost beyond reading it all from the cache (the
    compaction table's ``cache_loss_usd`` for a replay). ``compaction_usd`` is their sum. Prices
    are the continuity's model's (genai-prices); a model it does not know leaves the dollars None."""
    import polars as pl

    from workbench.continuity.enums import Origin
    from workbench.engine.pricing import price_table_for
    from workbench.errors import WorkbenchError

    conts = ds.continuities()
    ids = dict(zip(conts["continuity"].to_list(), conts["continuity_id"].to_list(), strict=True))
    models = dict(zip(conts["continuity_id"].to_list(), conts["model"].to_list(), strict=True))
    ev = ds.events(columns=["continuity", "kind", "request", "origin", "usage_input", "usage_cache_read",
                            "usage_cache_write", "usage_output"])
    usage = (ev.filter((pl.col("usage_input") >= 0) & (pl.col("origin") != int(Origin.BACKGROUND)))
             .unique(["continuity", "request"], keep="first", maintain_order=True))
    first_usage = {(ids[c], int(q)): (int(i), max(int(r), 0), max(int(w), 0))
                   for c, q, i, r, w in usage.select("continuity", "request", "usage_input", "usage_cache_read",
                                                     "usage_cache_write").iter_rows()}
    bounds = ev.filter(pl.col("kind") == int(EventKind.COMPACTION))
    calls = compaction_calls(ds.manifest)
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for c, q in bounds.select("continuity", "request").iter_rows():
        cid, q = ids[c], int(q)
        if q < 0 or (cid, q) in out:
            continue
        mine = [e for e in calls.get(cid, []) if e.get("request") == q]
        tok = {k: int(sum(e[k] for e in mine)) for k in USAGE_KEYS}
        try:
            prices = price_table_for(models.get(cid) or "")[0]
        except WorkbenchError:
            prices = None
        row: dict[str, Any] = {"calls": len(mine), **{f"call_{k}": v for k, v in tok.items()}}
        if prices is not None and mine:
            row["call_usd"] = float(prices.cost([tok["input"] + tok["cache_read"] + tok["cache_write"]],
                                                [tok["cache_read"]], [tok["cache_write"]], [tok["input"]],
                                                [tok["output"]])[0])
        else:
            row["call_usd"] = None if mine else 0.0
        nxt = first_usage.get((cid, q))
        if nxt is not None:
            i, r, w = nxt
            prompt = i + r + w
            row.update({"next_prompt": prompt, "next_cache_read": r, "next_cache_write": w})
            row["rewrite_usd"] = None if prices is None else max(0.0, float(
                prices.cost([prompt], [r], [w], [i], [0])[0] - prices.cost([prompt], [prompt], [0], [0], [0])[0]))
        else:
            row.update({"next_prompt": None, "next_cache_read": None, "next_cache_write": None, "rewrite_usd": None})
        parts = (row["call_usd"], row["rewrite_usd"])
        row["compaction_usd"] = None if any(p is None for p in parts) else parts[0] + parts[1]
        out[(cid, q)] = row
    return out
