"""The text-level evaluations of a simulated run: stored summaries and memory entries
(through SR-1 when the policy has it on), secret leakage by channel, over-redaction of hard
negatives, fact retention, the headline per policy, what each compaction kept and how it
drifts over later summaries (:mod:`workbench.evaluate.compactions`), and the spread over
repeated summary samples (:mod:`workbench.evaluate.samples`).
:func:`workbench.audits.redaction_audit` writes them into the run (``texts``, ``leakage``,
``over_redaction``, ``retention``, ``compactions``, ``generations``, ``summary_samples``
Parquet and ``evaluation.json``: :mod:`workbench.rundir.names`).

Leakage is measured against planted secrets: on a dataset without them (imported logs) the
leak figures are None and ``leaks_measured`` is false, never 0. The detect-secrets baseline
columns are measured only when asked (``baseline=True``, ``--baseline`` on the CLI);
otherwise they are null and ``over_redaction.detect_secrets`` is null.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def evaluate_run(result, dataset, *, summarizer: str = "modelled",
                 summarizer_options: dict | None = None, baseline: bool = False,
                 compactions: bool = True, summary_samples: int = 1,
                 root: str | Path | None = None, release: bool = False,
                 keep_index: bool = False) -> dict[str, Any]:
    """Texts, leakage, over-redaction and retention of ``result`` on ``dataset``.

    ``baseline=True`` also measures detect-secrets as the SR-1 redactor (the
    ``leaked_baseline`` and ``redacted_by_detect_secrets`` columns; null without it): an
    audit's side-by-side column, slow, so off unless asked for. ``compactions`` adds the
    inspector's tables (``compactions``, ``generations``; None without it: a sweep needs
    only the headline); ``summary_samples`` writes every text that many times in all
    (``samples``: one row per policy and sample; sample 0 is this evaluation); ``root``: where
    ``summarizer.prompt`` files are taken from (default: the current directory).

    ``release``: a one-shot evaluation (the CLI's ``simulate --evaluate``): once the last
    reader of each is done, the memoised summaries and redactions, ``result``'s prompt
    records, its inputs' replay-only arrays and its ledger are freed (a million-event run's
    peak: about 1.0 GB instead of 1.3 GB, ``benchmarks/bench_evaluate.py``). The tables are
    the same; ``result`` keeps its config, summary, events and ids, and is not for another
    evaluation.

    ``keep_index``: when the dataset's text index had to be built, store it beside the dataset
    (``DatasetText.of(keep=True)``): the CLI's evaluations do, so a dataset's later evaluations
    read it (a million events: ~1.1 s to build, ~0.1 s to read, ``benchmarks/bench_evaluate.py``).
    """

    from workbench.evaluate.dataset_text import DatasetText, return_freed_memory
    from workbench.evaluate.headline import policy_headlines
    from workbench.evaluate.leakage import (
        baseline_redactor,
        leakage_summary,
        leakage_table,
        over_redaction,
    )
    from workbench.evaluate.retention import retention_summary, retention_table
    from workbench.evaluate.texts import derive_texts

    dt = DatasetText.of(dataset, keep=keep_index)
    # a one-shot evaluation of a written run reads its ledger back for the compaction table,
    # its one reader: not held through the text work
    ledger_file = _written_ledger(result) if release and compactions else None
    if ledger_file is not None:
        result.ledger = None
    texts, checkpoints = derive_texts(result, dataset, summarizer=summarizer,
                                      summarizer_options=summarizer_options, dataset_text=dt, root=root)
    base = baseline_redactor(dt) if baseline else None
    leaks = leakage_table(result, dataset, texts, dataset_text=dt, baseline=base)
    retention = retention_table(result, dataset, texts, dataset_text=dt)
    by_policy, _ = retention_summary(retention)
    leak_sum = leakage_summary(leaks)
    labelled = dataset.manifest.get("counts", {}).get("secrets", 0) > 0
    headline = policy_headlines(result, texts, leaks, by_policy, labelled=labelled)
    out = {"texts": texts, "leakage": leaks, "leakage_summary": leak_sum, "over_redaction": None,
           "retention": retention, "retention_by_policy": by_policy,
           "report": {"policies": headline, "leaks_measured": labelled}, "compactions": None, "generations": None}
    from workbench.evaluate.samples import summary_samples as sample

    # the samples read the texts and the headline; with them done, nothing that follows
    # reads the prompt records or the summarizer's memos: a one-shot evaluation frees them
    out["samples"] = sample(result, dataset, out, summary_samples, summarizer=summarizer,
                            summarizer_options=summarizer_options, dataset_text=dt, root=root)
    if release:
        _release_replay(result, dt)
    over = over_redaction(result, dataset, texts, dataset_text=dt, baseline=base)
    if release:  # (over-redaction was the redaction memos' last reader)
        dt.redactions.clear()
        dt.baselines.clear()
        return_freed_memory()
    detect_secrets = (int(over["redacted_by_detect_secrets"].sum()) if over.height else 0) if baseline else None
    report = {"run_id": result.run_id, "summarizer": summarizer, "policies": headline,
              "leaks_measured": labelled,
              "over_redaction": {"negatives_in_derived_text": over.height,
                                 "harness": int(over["redacted_by_harness"].sum()) if over.height else 0,
                                 "detect_secrets": detect_secrets}}
    out["over_redaction"], out["report"] = over, report
    if compactions:
        from workbench.evaluate.compactions import Generations, TextScans, compaction_table

        if ledger_file is not None:
            import polars as pl

            result.ledger = pl.read_parquet(ledger_file)
        scans = TextScans(texts, dt)  # each summary scanned once for both tables
        out["compactions"] = compaction_table(result, texts, checkpoints, dt, scans)
        if release:
            result.ledger = None  # (the compaction table was its last reader)
            return_freed_memory()
        generations = Generations.read(result, checkpoints, dt, scans)
        if release:  # the texts' last reader: their scans go before the largest frame is built
            scans.release()
            dt.release_derived()
        out["generations"] = generations.table()
        from workbench.evaluate.degenerate import count_degenerate

        # beside the headline (a measure of the summaries, not of the policy's figures)
        report["degenerate"] = count_degenerate(out["compactions"])
    return out


def _written_ledger(result) -> Path | None:
    """The ledger file of the run directory ``result`` was written to, when it is there."""
    from workbench.rundir.names import LEDGER

    where = getattr(result, "written_to", None)
    return where / LEDGER if where is not None and (where / LEDGER).is_file() else None


def _release_replay(result, dt) -> None:
    """Free what only the text derivation, the context trackers and the samples read: what
    follows (over-redaction, the compaction tables) reads the inputs' seqs, the ledger, the
    texts, the redaction memos and the dataset's search indexes, nothing else of the replay."""
    from workbench.engine.lean import output_view
    from workbench.evaluate.dataset_text import return_freed_memory

    dt.summaries.clear()
    result.prompts = {}
    result.inputs = {cid: output_view(inp) for cid, inp in result.inputs.items()}
    return_freed_memory()
