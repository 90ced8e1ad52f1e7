"""Planted facts probed at later requests: still in the raw tail, in a summary, in flushed
memory, or lost — per policy and per distance (in requests) since the fact was planted.

Statuses are checked in that order (the first that holds wins): ``raw`` when the fact's
event (for a real log's fact: any event that names it) is shown in full in the compiled
context (not masked, cleared, cut or outside a bounded window), ``summary`` when the current summary text (the summary items in the
context, joined by a space) contains the answer, ``memory`` when the memory entries written
so far (joined by a space) contain it, else ``lost``.

Every answer is looked for at once (one automaton per dataset, each text scanned once):
the summary items are scanned when the context's summary changes, the memory as each entry
is written (:class:`~workbench.evaluate.matching.JoinScan`), and a probe only asks whether
its row is shown (:meth:`~workbench.evaluate.context.ContextTracker.shows`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from workbench.evaluate.context import ContextTracker
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.matching import JoinScan, text_digest
from workbench.evaluate.texts import policies_of

DISTANCES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
# the task state (a real log's: workbench.evaluate.log_facts; a synthetic one's:
# workbench.synth.task_state), reported apart from the other facts
TASK_KIND = "task"
STATUSES = ("raw", "summary", "memory", "lost")


def retention_table(result, dataset, texts, *, distances=DISTANCES,
                    dataset_text: DatasetText | None = None):
    import numpy as np
    import polars as pl

    dt = dataset_text or DatasetText.of(dataset)
    index = dt.answers
    memo_answers_in = partial(answers_in, dt)

    rows: list[dict[str, Any]] = []
    for name, policy in policies_of(result).items():
        for cid, inp in result.inputs.items():
            facts = dt.facts.filter(pl.col("continuity") == inp.continuity)
            if facts.height == 0 or inp.n_requests == 0:
                continue
            tx = texts.filter((pl.col("policy") == name) & (pl.col("continuity_id") == cid))
            fact_rows = np.searchsorted(inp.seq, facts["seq"].to_numpy())
            probes: dict[int, list[tuple[dict, int, int]]] = {}
            for f, row in zip(facts.iter_rows(named=True), fact_rows.tolist(), strict=True):
                planted = int(inp.row_request[row])
                if planted < 0:
                    continue
                for d in distances:
                    if planted + d < inp.n_requests:
                        probes.setdefault(planted + d, []).append((f, row, d))
            # a summary's text is read from the frame when a context shows it (not held as a string)
            summaries = tx.filter(pl.col("kind").is_in(["summary", "merge", "recorded"]))
            text_at = {a: i for i, a in enumerate(summaries["artifact_id"].to_list())}
            summary_text = summaries["text"]
            flushed = tx.filter(pl.col("kind") == "memory")
            memories = [(int(r), t or "") for r, t in zip(flushed["request"].to_list(), flushed["text"].to_list(),
                                                          strict=True)]
            memories.sort(key=lambda m: m[0])  # stable: the join keeps the table's order
            tracker = ContextTracker(inp, policy, result.events, record=result.prompt_record(name, cid))
            summary_keys: dict[tuple[str, ...], set[int]] = {}
            memory = JoinScan(index, " ", memo_answers_in)
            written = 0
            for r in sorted(probes):
                tracker.advance(r)
                segs = tuple(a for a, _ in tracker.shown_segments)
                current = summary_keys.get(segs)
                if current is None:
                    scan = JoinScan(index, " ", memo_answers_in)
                    for a in segs:
                        at = text_at.get(a)
                        scan.add((summary_text[at] or "") if at is not None else "")
                    current = summary_keys[segs] = scan.found
                while written < len(memories) and memories[written][0] <= r:
                    memory.add(memories[written][1])
                    written += 1
                for f, row, d in probes[r]:
                    key = index.key_of[f["answer"]]
                    shown = tracker.shows(row, r) or any(tracker.shows(int(m), r)
                                                         for m in dt.mention_rows.get(f["fact_id"], ()))
                    status = ("raw" if shown else "summary" if key in current
                              else "memory" if key in memory.found else "lost")
                    rows.append({"run_id": result.run_id, "policy": name, "continuity_id": cid,
                                 "fact_id": f["fact_id"], "fact_kind": f["kind"], "planted_request": r - d,
                                 "probe_request": r, "distance": d, "status": status})
    return pl.DataFrame(rows, schema={"run_id": pl.String, "policy": pl.String, "continuity_id": pl.String,
                                      "fact_id": pl.String, "fact_kind": pl.String, "planted_request": pl.Int64,
                                      "probe_request": pl.Int64, "distance": pl.Int64, "status": pl.String})


def answers_in(dt: DatasetText, text: str) -> frozenset[int]:
    """The keys of the planted answers in ``text`` (``dt.answers``), each distinct text
    scanned once for every table that asks (retention, the compaction inspector), remembered
    by its digest (the texts themselves are a million-event run's largest strings)."""
    key = text_digest(text)
    hit = dt.answer_scans.get(key)
    return hit if hit is not None else dt.answer_scans.put(key, dt.answers.keys_in(text))


def retention_summary(table):
    """Share of probes retained (any channel) per policy, and per distance. The task state
    is reported apart too: ``task_probes`` and ``task_retention`` (null without task probes)."""
    import polars as pl

    retained = pl.col("status") != "lost"
    is_task = pl.col("fact_kind") == TASK_KIND
    by_policy = table.group_by("policy", maintain_order=True).agg(
        pl.len().alias("probes"), retained.mean().alias("retention"),
        *[(pl.col("status") == s).mean().alias(f"share_{s}") for s in STATUSES],
        is_task.sum().cast(pl.Int64).alias("task_probes"), retained.filter(is_task).mean().alias("task_retention"))
    by_distance = table.group_by("policy", "distance", maintain_order=True).agg(
        pl.len().alias("probes"), retained.mean().alias("retention")).sort("policy", "distance")
    return by_policy, by_distance


def task_retention(table) -> dict[str, float | None]:
    """Per policy, the share of task-state probes retained (the user's requests and todo
    items of a real log; the todo items, their completion and the next steps a synthetic
    dataset planted with ``task_state``): what users most often say compaction loses.
    ``None`` for a policy with no task probe."""
    by_policy, _ = retention_summary(table)
    return dict(zip(by_policy["policy"].to_list(), by_policy["task_retention"].to_list(), strict=True))
