"""Planted facts probed at later requests: still in the raw tail, in a summary, in flushed
memory, or lost — per policy and per distance (in requests) since the fact was planted.

Statuses are checked in that order (the first that holds wins): ``raw`` when the fact's
event is shown in full in the compiled context (not masked, cleared, cut or outside a
bounded window), ``summary`` when the current summary text contains the answer,
``memory`` when a memory entry written so far contains it, else ``lost``.
"""

from __future__ import annotations

from typing import Any

from workbench.evaluate.context import ContextTracker
from workbench.evaluate.texts import DatasetText, policies_of

DISTANCES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
STATUSES = ("raw", "summary", "memory", "lost")


def retention_table(result, dataset, texts, *, distances=DISTANCES,
                    dataset_text: DatasetText | None = None):
    import polars as pl

    dt = dataset_text or DatasetText(dataset)
    rows: list[dict[str, Any]] = []
    for name, policy in policies_of(result).items():
        for cid, inp in result.inputs.items():
            facts = dt.facts.filter(pl.col("continuity") == inp.continuity)
            if facts.height == 0 or inp.n_requests == 0:
                continue
            tx = texts.filter((pl.col("policy") == name) & (pl.col("continuity_id") == cid))
            seq_to_row = {int(s): i for i, s in enumerate(inp.seq)}
            probes: dict[int, list[tuple[dict, int, int]]] = {}
            for f in facts.iter_rows(named=True):
                row = seq_to_row[int(f["seq"])]
                planted = int(inp.row_request[row])
                if planted < 0:
                    continue
                for d in distances:
                    if planted + d < inp.n_requests:
                        probes.setdefault(planted + d, []).append((f, row, d))
            summaries = [(int(r), a, t or "") for r, a, t, k in zip(
                tx["request"].to_list(), tx["artifact_id"].to_list(), tx["text"].to_list(),
                tx["kind"].to_list(), strict=True) if k in ("summary", "merge", "recorded")]
            memories = [(int(r), t or "") for r, t, k in zip(tx["request"].to_list(), tx["text"].to_list(),
                                                             tx["kind"].to_list(), strict=True) if k == "memory"]
            text_of = {a: t for _, a, t in summaries}
            tracker = ContextTracker(inp, policy, result.events, window=0)
            for r in sorted(probes):
                tracker.advance(r)
                raw = set(tracker.raw_rows(r))
                current = " ".join(text_of.get(a, "") for a, _ in tracker.state.segments)
                recorded = " ".join(t for rr, a, t in summaries if rr <= r and a not in text_of)
                memory = " ".join(t for rr, t in memories if rr <= r)
                for f, row, d in probes[r]:
                    ans = f["answer"]
                    status = ("raw" if row in raw else "summary" if (ans in current or ans in recorded)
                              else "memory" if ans in memory else "lost")
                    rows.append({"run_id": result.run_id, "policy": name, "continuity_id": cid,
                                 "fact_id": f["fact_id"], "fact_kind": f["kind"], "planted_request": r - d,
                                 "probe_request": r, "distance": d, "status": status})
    return pl.DataFrame(rows, schema={"run_id": pl.String, "policy": pl.String, "continuity_id": pl.String,
                                      "fact_id": pl.String, "fact_kind": pl.String, "planted_request": pl.Int64,
                                      "probe_request": pl.Int64, "distance": pl.Int64, "status": pl.String})


def retention_summary(table):
    """Share of probes retained (any channel) per policy, and per distance."""
    import polars as pl

    retained = pl.col("status") != "lost"
    by_policy = table.group_by("policy", maintain_order=True).agg(
        pl.len().alias("probes"), retained.mean().alias("retention"),
        *[(pl.col("status") == s).mean().alias(f"share_{s}") for s in STATUSES])
    by_distance = table.group_by("policy", "distance", maintain_order=True).agg(
        pl.len().alias("probes"), retained.mean().alias("retention")).sort("policy", "distance")
    return by_policy, by_distance
