"""The compaction inspector's tables as they were built before they were made columnar
(issue 30): the generations row by row in Python, each table scanning its own texts and
judging each summary on its own. The test oracle of :mod:`workbench.evaluate.compactions`
(its tables must equal these)."""

from __future__ import annotations

from collections.abc import Sequence

from degenerate_oracle import degenerate_flags

from workbench.evaluate.compactions import READABLE, fact_status, secret_status
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.matching import Memo
from workbench.evaluate.texts import Checkpoint, policies_of

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

    def labels(self, c: Checkpoint, inp) -> tuple[list, dict]:
        return _labels(self.dt, inp, c.dropped)


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


class _OldJudge:
    """The degenerate checks as they were: each summary judged from scratch."""

    @staticmethod
    def flags(text, *, budget_tokens, span_tokens):
        return degenerate_flags(text, budget_tokens=budget_tokens, span_tokens=span_tokens)


def compaction_table(result, texts, checkpoints: Sequence[Checkpoint], dt: DatasetText):
    """One row per compaction, from the scans and the degenerate checks as they were (each
    summary scanned and judged on its own, each compaction's labels found again): the row
    assembly, which issue 30 did not change, is the module's own."""
    from unittest import mock

    from workbench.evaluate import compactions

    with mock.patch.object(compactions, "SummaryJudge", _OldJudge):
        return compactions.compaction_table(result, texts, checkpoints, dt, _Texts(texts, dt))


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
