"""Figures of what compactions kept: the fate of the facts in dropped spans, facts
surviving over generations of summaries (drift), and retention over summary samples. They
read ``compactions.parquet``, ``generations.parquet`` and ``summary_samples.parquet`` and
draw; :func:`survival` is the one computation of the drift curve (a test re-derives a
point of it from the Parquet). Reached as ``workbench.report.figures.facts_surviving``
too (``wb.figures`` in a notebook).

>>> import polars as pl
>>> g = pl.DataFrame({"policy": ["p"] * 6, "label": ["fact"] * 6, "generation": [0, 0, 0, 1, 1, 1],
...                   "status": ["kept", "kept", "lost", "kept", "lost", "lost"],
...                   "summarizes_summaries": [True] * 6})
>>> survival(g, min_facts=3)["share"].round(3).to_list()
[0.667, 0.333]
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.report.figures import _figure, _message, policy_lines


def survival(generations, *, present: Sequence[str] = ("kept",), min_facts: int = 5):
    """Per policy and generation: planted facts a compaction dropped that are still in the
    context's summary ``n`` compactions later (status in ``present``), over those followed
    that far; generations with fewer than ``min_facts`` facts are left out (too few to say)."""
    import polars as pl

    facts = generations.filter(pl.col("label") == "fact")
    return (facts.group_by("policy", "generation", maintain_order=True)
            .agg(pl.len().alias("facts"), pl.col("status").is_in(list(present)).sum().alias("surviving"),
                 pl.col("summarizes_summaries").first())
            .filter(pl.col("facts") >= min_facts)
            .with_columns((pl.col("surviving") / pl.col("facts")).alias("share"))
            .sort("policy", "generation"))


def facts_surviving(generations, *, min_facts: int = 5, highlight: Sequence[str] | None = None):
    """Facts surviving after n generations: the share of planted facts a compaction dropped
    still exactly in the summary n compactions later (solid: policies that summarize their
    summary again; dashed: anchored summaries), and for the ``highlight`` policies (drawn in
    colour, see :func:`~workbench.report.figures.policy_lines`) kept or paraphrased (thin)."""
    import polars as pl

    if generations is None or generations.filter(pl.col("label") == "fact").height == 0:
        return _message("no planted fact was dropped by a compaction (or no redaction audit)")
    exact, loose = survival(generations, min_facts=min_facts), survival(
        generations, present=("kept", "paraphrased"), min_facts=min_facts)
    if exact.height == 0:
        return _message(f"fewer than {min_facts} dropped facts at every generation: too few to draw "
                        "(a longer continuity, or more planted facts)")
    names = generations["policy"].unique(maintain_order=True).to_list()
    fig = _figure(10, 4.8)
    ax = fig.add_subplot()
    ax.set_ylim(-0.02, 1.05)
    lines, styles, folds = {}, {}, {}
    for n in names:
        p = exact.filter(pl.col("policy") == n)
        if p.height:
            folds[n] = bool(p["summarizes_summaries"][0])
            lines[n] = (p["generation"].to_numpy(), p["share"].to_numpy())
            styles[n] = {"ls": "-" if folds[n] else "--"}
    col = policy_lines(ax, lines, highlight, styles=styles,
                       label=lambda n: f"{n} ({'re-summarized' if folds[n] else 'anchored'})")
    for n, c in col.items():
        q = loose.filter(pl.col("policy") == n)
        ax.plot(q["generation"].to_numpy(), q["share"].to_numpy(), color=c, lw=0.6, alpha=0.6)
    ax.set_xlabel("generations: compactions since the one that dropped the fact")
    ax.set_ylabel("facts still in the summary (exact answer)")
    ax.set_title(f"Facts surviving after n generations (thin: kept or paraphrased; ≥ {min_facts} facts a point)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, frameon=False, loc="lower left")
    ax.grid(alpha=0.3)
    return fig


def compaction_fates(compactions):
    """Per policy: planted facts in the spans its compactions dropped, by fate (kept,
    paraphrased, lost)."""
    import numpy as np
    import polars as pl

    if compactions is None or compactions.height == 0 or compactions["facts_in_span"].sum() == 0:
        return _message("no planted fact in any dropped span (or no redaction audit)")
    t = (compactions.group_by("policy", maintain_order=True)
         .agg(pl.col("facts_kept").sum(), pl.col("facts_paraphrased").sum(), pl.col("facts_lost").sum()))
    names = t["policy"].to_list()
    fig = _figure(10, 1.0 + 0.35 * max(3, len(names)))
    ax = fig.add_subplot()
    left = np.zeros(len(names))
    for column, label, c in (("facts_kept", "kept", "#66bb6a"), ("facts_paraphrased", "paraphrased", "#ffca28"),
                             ("facts_lost", "lost", "#ef5350")):
        v = t[column].to_numpy().astype(float)
        ax.barh(names, v, left=left, color=c, label=label)
        left += v
    ax.invert_yaxis()
    ax.set_xlabel("planted facts in dropped spans")
    ax.set_title("What the compactions kept of the facts they dropped")
    fig.legend(fontsize=8, frameon=False, ncols=3, loc="outside lower center")
    ax.grid(axis="x", alpha=0.3)
    return fig


def summary_spread(samples, *, metric: str = "retention"):
    """``metric`` per policy over the summary samples: every sample a dot, the mean a bar."""
    import polars as pl

    if samples is None or samples["sample"].n_unique() < 2:
        return _message("one summary sample: run the redaction audit with --summary-samples K")
    names = samples["policy"].unique(maintain_order=True).to_list()
    fig = _figure(10, 0.6 + 0.38 * max(3, len(names)))
    ax = fig.add_subplot()
    for i, n in enumerate(names):
        v = samples.filter(pl.col("policy") == n)[metric].drop_nulls().to_numpy()
        if v.size:
            ax.scatter(v, [i] * v.size, s=14, color="#1f77b4", alpha=0.7, zorder=3)
            ax.plot([v.mean()] * 2, [i - 0.3, i + 0.3], color="#d62728", lw=2)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(metric + (" (share of fact probes)" if metric == "retention" else ""))
    ax.set_title(f"{metric} over {samples['sample'].n_unique()} summary samples (dots; red: mean)")
    ax.grid(axis="x", alpha=0.3)
    return fig
