"""Summary variance: every summary and memory entry written ``k`` times, and how retention,
leaks and summary length vary across the samples, per policy.

Sample 0 is the run's own evaluation; sample ``i`` > 0 writes every text again with the
modelled summarizer's seed ``stable_seed("summary-sample", seed, i)`` (the run's seed:
the same run gives the same samples), or asks the HTTP summarizer for another sample
(its ``seed`` in the request, a non-zero temperature: each sample is its own cassette
entry). The extractive summarizer is deterministic: its samples are identical, and the
spread 0 says so. The engines' costs do not depend on the text, so cost has no spread.

The table (``summary_samples.parquet``) has one row per policy and sample: ``retention``,
``leaks`` (secrets leaked into stored summaries or memory), ``leaks_context``,
``summary_tokens`` (mean size of the stored summaries, ``ceil(chars / 4)``) and
``summaries``. :func:`spread` gives mean, standard deviation (n − 1), min and max per
policy.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

METRICS = ("retention", "leaks", "leaks_context", "summary_tokens")
SUMMARY_KINDS = ("summary", "merge", "recorded")


def sample_seed(seed: int, sample: int) -> int:
    """The modelled summarizer's seed for sample ``sample`` of a run seeded ``seed``."""
    from workbench.summarize.base import stable_seed

    return seed if sample == 0 else stable_seed("summary-sample", seed, sample)


def sample_rows(result, texts, headline: dict[str, dict], sample: int, seed: int) -> list[dict[str, Any]]:
    import polars as pl

    rows = []
    for name, h in headline.items():
        stored = texts.filter((pl.col("policy") == name) & pl.col("kind").is_in(list(SUMMARY_KINDS)))
        sizes = [math.ceil(len(t) / 4) for t in stored["text"].to_list() if t]
        rows.append({"run_id": result.run_id, "policy": name, "sample": sample, "seed": seed,
                     "retention": h["retention"], "leaks": h["leaks"], "leaks_context": h["leaks_context"],
                     "summary_tokens": sum(sizes) / len(sizes) if sizes else None, "summaries": len(sizes)})
    return rows


def summary_samples(result, dataset, first: dict[str, Any], k: int, *, summarizer: str = "modelled",
                    summarizer_options: dict | None = None, dataset_text=None,
                    root: str | Path | None = None):
    """``k`` samples (``first``: the evaluation of sample 0, as ``evaluate_run`` returns it)."""
    import polars as pl

    from workbench.evaluate.dataset_text import DatasetText
    from workbench.evaluate.headline import policy_headlines
    from workbench.evaluate.leakage import leakage_table
    from workbench.evaluate.retention import retention_summary, retention_table
    from workbench.evaluate.texts import derive_texts

    if k < 1:
        from workbench.errors import WorkbenchError

        raise WorkbenchError(f"--summary-samples must be at least 1, got {k}")
    dt = dataset_text or DatasetText.of(dataset)
    seed = int(result.config.get("seed", 0))
    labelled = first["report"]["leaks_measured"]
    rows = sample_rows(result, first["texts"], first["report"]["policies"], 0, seed)
    for i in range(1, k):
        texts, _ = derive_texts(result, dataset, summarizer=summarizer, summarizer_options=summarizer_options,
                                seed=sample_seed(seed, i), sample=i, dataset_text=dt, root=root)
        leaks = leakage_table(result, dataset, texts, dataset_text=dt)
        by_policy, _ = retention_summary(retention_table(result, dataset, texts, dataset_text=dt))
        rows += sample_rows(result, texts, policy_headlines(result, texts, leaks, by_policy, labelled=labelled),
                            i, sample_seed(seed, i))
    return pl.DataFrame(rows, schema={"run_id": pl.String, "policy": pl.String, "sample": pl.Int64,
                                      "seed": pl.Int64, "retention": pl.Float64, "leaks": pl.Int64,
                                      "leaks_context": pl.Int64, "summary_tokens": pl.Float64,
                                      "summaries": pl.Int64})


def spread(samples) -> dict[str, dict[str, dict[str, float | None]]]:
    """``{policy: {metric: {mean, std, min, max}}}`` over the samples (None: not measured)."""
    import polars as pl

    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name in samples["policy"].unique(maintain_order=True).to_list():
        part = samples.filter(pl.col("policy") == name)
        out[name] = {}
        for m in METRICS:
            v = part[m].drop_nulls().cast(pl.Float64)
            # identical samples have no spread (not the rounding noise of a float std)
            same = v.len() < 2 or v.min() == v.max()
            out[name][m] = ({"mean": float(v.mean()), "std": 0.0 if same else float(v.std()),
                             "min": float(v.min()), "max": float(v.max())} if v.len() else
                            {"mean": None, "std": None, "min": None, "max": None})
    return out
