"""The compaction inspector's tables as they were built before they were made columnar
(issue 30): row by row in Python, each table scanning its own texts. The test oracle of
:mod:`workbench.evaluate.compactions` (its tables must equal these)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from degenerate_oracle import degenerate_flags

from workbench.evaluate.compactions import (
    FACT_STATUSES,
    READABLE,
    SECRET_STATUSES,
    _cache_loss,
    _calls,
    _compaction_schema,
    _secret_counts,
    fact_status,
    secret_status,
)
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.matching import Memo
from workbench.evaluate.texts import Checkpoint, policies_of
from workbench.rundir import wire as W

GENERATION_CHUNK = 100_000


class _Texts:
    """Stored and raw text by artifact id, and what each text holds."""

    def __init__(self, texts, dt: DatasetText):
        import polars as pl

        tx = texts.filter(pl.col("kind").is_in([*READABLE, "opaque"]))
        self.row = {r["artifact_id"]: r for r in tx.iter_rows(named=True)}
        self.dt = dt
        self._exact = Memo(20_000)

    def stored(self, artifact: str | None) -> str:
        return (self.row.get(artifact) or {}).get("text") or ""

    def raw(self, artifact: str | None) -> str:
        return (self.row.get(artifact) or {}).get("text_raw") or ""

    def facts(self, texts: Sequence[str]) -> tuple[frozenset[int], frozenset[int]]:
        exact: set[int] = set()
        forms: set[int] = set()
        for t in texts:
            if t:
                hit = self._exact.get(t)
                exact |= hit if hit is not None else self._exact.put(t, self.dt.answers.keys_in(t))
                forms |= self.dt.fact_forms.keys_in(t)
        return frozenset(exact), frozenset(forms)

    def leaks(self, texts: Sequence[str]) -> frozenset[int]:
        return self.dt.leak_scanner.leaks_in([t for t in texts if t])


def _labels(dt: DatasetText, inp, rows):
    import numpy as np

    facts, secrets = [], {}
    for lb in dt.labels(inp.continuity, rows):
        row = int(np.searchsorted(inp.seq, lb.seq))
        if lb.is_fact:
            facts.append((lb.label_id, lb.kind, lb.value, row))
        else:
            sid = lb.label_id.split("#", 1)[0]
            value, where, kind = secrets.get(sid, (lb.value, (), lb.kind))
            secrets[sid] = (value, (*where, row), kind)
    return facts, secrets


def compaction_table(result, texts, checkpoints: Sequence[Checkpoint], dt: DatasetText):
    """One row per compaction (see the module docstring)."""
    import polars as pl

    policies = policies_of(result)
    tx = _Texts(texts, dt)
    frames = result.events.filter(pl.col("event_type") == W.CHECKPOINT_EVENT)
    frames = frames.with_columns(pl.int_range(pl.len()).over("policy", "continuity_id").alias("_index"))
    frame_of = {(r["policy"], r["continuity_id"], r["_index"]): r for r in frames.iter_rows(named=True)}
    labelled = dt.secrets.filter(~pl.col("negative")).height > 0
    calls = _calls(result.ledger, [(c.policy, c.continuity_id, c.request) for c in checkpoints])
    last_at: dict[tuple[str, str, int], int] = {}  # the compaction whose prefix the request sends
    summarized_at: dict[tuple[str, str, int], int] = {}  # ... and the one its summarizer calls made
    for c in checkpoints:
        last_at[(c.policy, c.continuity_id, c.request)] = c.index
        if c.artifact_id is not None:
            summarized_at[(c.policy, c.continuity_id, c.request)] = c.index
    rows = []
    for c in checkpoints:
        inp, policy = result.inputs[c.continuity_id], policies[c.policy]
        f = frame_of[(c.policy, c.continuity_id, c.index)]
        stored, raw = tx.stored(c.artifact_id), tx.raw(c.artifact_id)
        retained = set(c.retained)
        exact, forms = tx.facts([stored])
        facts, secrets = _labels(dt, inp, c.dropped)
        fate: dict[str, list[str]] = {s: [] for s in (*FACT_STATUSES, *SECRET_STATUSES)}
        for fid, kind, answer, row in facts:
            fate[fact_status(dt, kind, answer, row, retained, exact, forms)].append(fid)
        leak_stored, leak_raw = tx.leaks([stored]), tx.leaks([raw])
        for sid, (value, where, _) in secrets.items():
            fate[secret_status(dt, value, where, retained, leak_stored, leak_raw)].append(sid)
        at = (c.policy, c.continuity_id, c.request)
        slot = calls.get(at, {"summarizer": [], "main": None})
        own = slot["summarizer"] if summarized_at.get(at) == c.index else []
        sends_prefix = last_at[at] == c.index
        loss_tokens, loss_usd = _cache_loss(slot["main"] if sends_prefix else None,
                                            result.config["policies"][c.policy]["providers"].get(c.continuity_id))
        text_row = tx.row.get(c.artifact_id) or {}
        judged = text_row.get("kind") in READABLE  # an opaque item or a truncation: no text to judge
        rows.append({
            "run_id": result.run_id, "policy": c.policy, "continuity_id": c.continuity_id, "compaction": c.index,
            "request": c.request, "source_request": f["source_request"], "frame_seq": f["frame_seq"],
            "trigger": "emergency" if c.emergency else policy.trigger.kind, "cut_rule_id": f["cut_rule_id"],
            "summary_kind": c.summary_kind, "artifact_id": c.artifact_id,
            "tokens_before": f["tokens_before"], "tokens_after": f["tokens_after"],
            "summary_tokens": f["item_tokens"] if c.artifact_id else 0,
            "summary_chars": len(stored), "summary_text_tokens": math.ceil(len(stored) / 4),
            "readable": bool(stored),
            "from_seq": f["from_seq"], "to_seq": f["to_seq"],
            "dropped_events": len(c.dropped), "dropped_tokens": f["span_tokens"],
            "dropped_from_seq": int(inp.seq[c.dropped[0]]) if c.dropped else None,
            "dropped_to_seq": int(inp.seq[c.dropped[-1]]) if c.dropped else None,
            "dropped_seqs": inp.seq[list(c.dropped)].tolist() if c.dropped else [],
            "retained_seqs": inp.seq[list(c.retained)].tolist() if c.retained else [],
            "facts_in_span": len(facts), "facts_kept": len(fate["kept"]),
            "facts_kept_raw": sum(1 for _, _, _, row in facts if row in retained),
            "facts_paraphrased": len(fate["paraphrased"]), "facts_lost": len(fate["lost"]),
            **_secret_counts(len(secrets), len(fate["leaked"]), len(fate["redacted"]), labelled),
            "redactions": text_row.get("redactions") or 0, "hallucinated": text_row.get("hallucinated") or 0,
            "summarizer_calls": len(own), "summarizer_cost_usd": float(sum(r["cost_usd"] for r in own)),
            "summarizer_prompt_tokens": int(sum(r["prompt_tokens"] for r in own)),
            "summarizer_output_tokens": int(sum(r["output_tokens"] for r in own)),
            "summarizer_cache_read_tokens": int(sum(r["cached_input_tokens"] for r in own)),
            "summarizer_cache_write_tokens": int(sum(r["cache_write_tokens"] for r in own)),
            "compaction_cost_usd": (None if loss_usd is None and sends_prefix and slot["main"] else
                                    float(sum(r["cost_usd"] for r in own)) + (loss_usd or 0.0)),
            "cache_loss": slot["main"]["cache_loss"] if sends_prefix and slot["main"] else None,
            "cache_loss_tokens": loss_tokens, "cache_loss_usd": loss_usd,
            "kept_fact_ids": fate["kept"], "paraphrased_fact_ids": fate["paraphrased"],
            "lost_fact_ids": fate["lost"], "leaked_secret_ids": fate["leaked"],
            "redacted_secret_ids": fate["redacted"],
            "degenerate": degenerate_flags(stored, budget_tokens=f["item_tokens"], span_tokens=f["span_tokens"])
            if judged else None,
        })
    return pl.DataFrame(rows, schema=_compaction_schema())


def generation_table(result, texts, checkpoints: Sequence[Checkpoint], dt: DatasetText):
    """One row per (label a compaction dropped, later compaction): see the module docstring."""
    import polars as pl

    policies = policies_of(result)
    tx = _Texts(texts, dt)
    by_run: dict[tuple[str, str], list[Checkpoint]] = {}
    for c in checkpoints:
        by_run.setdefault((c.policy, c.continuity_id), []).append(c)
    schema = {"policy": pl.String, "continuity_id": pl.String, "label_id": pl.String, "label": pl.String,
              "label_kind": pl.String, "first_compaction": pl.Int64, "first_request": pl.Int64,
              "generation": pl.Int64, "request": pl.Int64, "summarizes_summaries": pl.Boolean,
              "status": pl.String}
    # the table grows with labels x later compactions (millions of rows at a million events):
    # rows go into a frame every GENERATION_CHUNK, so no more than that are Python tuples at once
    parts: list = []
    rows: list[tuple] = []
    for (name, cid), seq in by_run.items():
        inp, policy = result.inputs[cid], policies[name]
        folds = not policy.compaction.accumulate or policy.compaction.max_segments > 0
        # what the context's summary holds after each compaction
        states = []
        for c in seq:
            stored = [tx.stored(a) for a in c.segments]
            exact, forms = tx.facts(stored)
            states.append((set(c.retained), exact, forms, tx.leaks(stored),
                           tx.leaks([tx.raw(a) for a in c.segments])))
        for c in seq:
            facts, secrets = _labels(dt, inp, c.dropped)
            if not facts and not secrets:
                continue
            for n, later in enumerate(seq[c.index:]):
                retained, exact, forms, stored, raw = states[later.index]
                for fid, kind, answer, row in facts:
                    rows.append((name, cid, fid, "fact", kind, c.index, c.request, n, later.request, folds,
                                 fact_status(dt, kind, answer, row, retained, exact, forms)))
                for sid, (value, where, fmt) in secrets.items():
                    rows.append((name, cid, sid, "secret", fmt, c.index, c.request, n, later.request, folds,
                                 secret_status(dt, value, where, retained, stored, raw)))
            if len(rows) >= GENERATION_CHUNK:
                parts.append(pl.DataFrame(rows, schema=schema, orient="row"))
                rows = []
    parts.append(pl.DataFrame(rows, schema=schema, orient="row"))
    frame = pl.concat(parts, rechunk=False) if len(parts) > 1 else parts[0]  # (no copy of the whole table)
    return frame.with_columns(pl.lit(result.run_id, pl.String).alias("run_id")).select("run_id", *schema)
