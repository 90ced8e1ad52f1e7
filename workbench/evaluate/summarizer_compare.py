"""Two summarizers on the same compactions, side by side: e.g. a local model
(``--summarizer http`` against ``workbench serve-model``) and the modelled one
(``--summarizer calibrated``), each an evaluated run of the same dataset and policies.

The engine does not depend on the summarizer, so both runs hold the same compactions; they
are matched on (policy, continuity, compaction) and must have dropped the same events (else
:class:`~workbench.errors.WorkbenchError`). Per summarizer, over the matched readable
compactions:

* ``retention``: facts kept exactly / facts in the dropped spans (``facts_kept``), and
  ``retention_any_form`` with the paraphrased ones too;
* ``secret_copy_rate``: planted secrets the summarizer's raw output carried / secrets in the
  spans (``secrets_carried``: before SR-1; null on a dataset without planted secrets);
* ``size_ratio``: summary tokens (characters / 4) / tokens of the spans they replaced;
* ``degenerate``: summaries flagged (:mod:`workbench.evaluate.degenerate`);
* ``headline_retention_spread``: the lowest and highest of the run's headline retention
  (``evaluation.json``: the whole run, not only the dropped spans) over its summary samples
  (``--summary-samples``; for an HTTP model, temperature samples), when it has several.

:func:`compare_runs` returns ``{"summary": frame, "compactions": frame, "names": (a, b)}``;
:func:`compaction_pair` the two summaries of one compaction and what each kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

KEY = ("policy", "continuity_id", "compaction")
PER_ROW = ("facts_in_span", "facts_kept", "facts_paraphrased", "secrets_in_span", "secrets_carried",
           "summary_text_tokens",
           "dropped_tokens", "degenerate", "kept_fact_ids", "lost_fact_ids", "artifact_id")


def _name(run: Path) -> str:
    import orjson

    try:
        ev = orjson.loads((run / "evaluation.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        ev = {}
    return f"{ev.get('summarizer') or 'summarizer'} ({run.name})"


def compare_runs(run_a: str | Path, run_b: str | Path) -> dict[str, Any]:
    """The side-by-side tables of two evaluated runs (see the module docstring)."""
    import polars as pl

    from workbench.rundir.read import load_table

    runs = (Path(run_a), Path(run_b))
    names = tuple(_name(r) for r in runs)
    if names[0] == names[1]:
        names = (f"{names[0]} A", f"{names[1]} B")
    tables = [load_table(r, "compactions", required=True) for r in runs]
    left, right = tables
    joined = left.join(right, on=list(KEY), how="inner", suffix="_b")
    if joined.height != left.height or joined.height != right.height:
        raise WorkbenchError(f"{runs[0]} and {runs[1]} do not hold the same compactions ({left.height} and "
                             f"{right.height} rows, {joined.height} matched): evaluate one run of the same "
                             "dataset and policies with each summarizer")
    differ = joined.filter(pl.col("dropped_seqs") != pl.col("dropped_seqs_b"))
    if differ.height:
        r = differ.row(0, named=True)
        raise WorkbenchError(f"compaction {r['compaction']} of {r['policy']} on {r['continuity_id']} dropped other "
                             f"events in {runs[0]} than in {runs[1]}: not the same replay")
    readable = joined.filter(pl.col("readable") & pl.col("readable_b"))
    rows = []
    for side, suffix, run in ((names[0], "", runs[0]), (names[1], "_b", runs[1])):
        c = {k: readable[f"{k}{suffix}"] for k in PER_ROW}
        facts, secrets, span = int(c["facts_in_span"].sum()), c["secrets_in_span"].sum(), int(c["dropped_tokens"].sum())
        spread = _retention_spread(run)
        rows.append({
            "summarizer": side, "compactions": readable.height, "facts_in_span": facts,
            "retention": int(c["facts_kept"].sum()) / facts if facts else None,
            "retention_any_form": int(c["facts_kept"].sum() + c["facts_paraphrased"].sum()) / facts if facts else None,
            "secret_copy_rate": (int(c["secrets_carried"].sum()) / int(secrets)) if secrets else None,
            "size_ratio": int(c["summary_text_tokens"].sum()) / span if span else None,
            "degenerate": int((c["degenerate"].list.len() > 0).sum()),
            "headline_retention_spread": spread})
    summary = pl.DataFrame(rows, schema={"summarizer": pl.String, "compactions": pl.Int64, "facts_in_span": pl.Int64,
                                         "retention": pl.Float64, "retention_any_form": pl.Float64,
                                         "secret_copy_rate": pl.Float64,
                                         "size_ratio": pl.Float64, "degenerate": pl.Int64,
                                         "headline_retention_spread": pl.String})
    per = readable.select(
        *KEY, "facts_in_span", "secrets_in_span", "dropped_tokens",
        pl.col("facts_kept").alias("kept_a"), pl.col("facts_kept_b").alias("kept_b"),
        pl.col("secrets_carried").alias("secrets_copied_a"), pl.col("secrets_carried_b").alias("secrets_copied_b"),
        (pl.col("summary_text_tokens") / pl.col("dropped_tokens")).alias("size_ratio_a"),
        (pl.col("summary_text_tokens_b") / pl.col("dropped_tokens")).alias("size_ratio_b"),
        pl.col("degenerate").list.join(",").alias("degenerate_a"),
        pl.col("degenerate_b").list.join(",").alias("degenerate_b"))
    return {"summary": summary, "compactions": per, "names": names, "runs": runs, "joined": readable}


def _retention_spread(run: Path) -> str | None:
    """``"min–max"`` of the run's retention over its summary samples (None: one sample)."""
    from workbench.rundir.read import load_table

    samples = load_table(run, "summary_samples")
    if samples is None or samples["sample"].n_unique() < 2:
        return None
    values = samples["retention"].drop_nulls()
    if values.len() == 0:
        return None
    return f"{values.min():.1%}–{values.max():.1%} over {samples['sample'].n_unique()} samples"


def compaction_pair(compared: dict[str, Any], n: int | None = None) -> dict[str, Any]:
    """One compaction seen by both summarizers: ``n`` the row of ``compared["compactions"]``
    (default: the first whose span holds facts); each side's summary text and the facts it
    kept and lost."""
    import polars as pl

    from workbench.rundir.read import load_table

    joined = compared["joined"]
    if joined.height == 0:
        raise WorkbenchError("no readable compaction in both runs")
    if n is None:
        with_facts = [i for i, v in enumerate(joined["facts_in_span"].to_list()) if v]
        n = with_facts[0] if with_facts else 0
    if not 0 <= n < joined.height:
        raise WorkbenchError(f"compaction row {n}: the runs have {joined.height} readable compactions "
                             f"(0-{joined.height - 1})")
    row = joined.row(n, named=True)
    sides = []
    for name, suffix, run in zip(compared["names"], ("", "_b"), compared["runs"], strict=True):
        texts = load_table(run, "texts", required=True).filter(pl.col("artifact_id") == row[f"artifact_id{suffix}"])
        sides.append({"summarizer": name, "text": texts["text"][0] if texts.height else "",
                      "kept": row[f"kept_fact_ids{suffix}"], "lost": row[f"lost_fact_ids{suffix}"],
                      "degenerate": row[f"degenerate{suffix}"]})
    return {"policy": row["policy"], "continuity_id": row["continuity_id"], "compaction": row["compaction"],
            "facts_in_span": row["facts_in_span"], "dropped_tokens": row["dropped_tokens"], "sides": sides}
