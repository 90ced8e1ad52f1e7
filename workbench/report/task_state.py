"""The task state in the reports, apart from the other facts: what users most often say
compaction loses (docs/targets.md). It reads the tables the redaction audit wrote — the fact
probes (``retention.parquet``: each probe's ``fact_kind``) and the compactions
(``compactions.parquet``: the fact ids each kept, paraphrased or lost) — and computes
nothing the evaluation did not: a fact's kind comes from the probe table, its fate from the
compaction table.

The task state is the facts of kind ``task``: on an imported log the todo items, the latest
request and the next step the log names (:mod:`workbench.evaluate.log_facts`); on a
synthetic dataset generated with ``--task-state`` the todo items opened, the items marked
done and the next steps (:mod:`workbench.synth.task_state`).

>>> import polars as pl
>>> probes = pl.DataFrame({"policy": ["p", "p", "p"], "fact_id": ["t1", "t2", "f1"],
...                        "fact_kind": ["task", "task", "port"], "status": ["summary", "lost", "raw"]})
>>> comps = pl.DataFrame({"policy": ["p"], "kept_fact_ids": [["t1", "f1"]], "paraphrased_fact_ids": [[]],
...                       "lost_fact_ids": [["t2"]]})
>>> task_state_table(probes, comps).row(0, named=True)["task_kept"]
1
"""

from __future__ import annotations

TASK_KIND = "task"

#: (column, header, format) of :func:`task_state_table` for ``html.table_html``
COLUMNS = (("policy", "policy", "s"), ("task_probes", "task-state probes", "int"),
           ("task_retention", "task state retained", "pct"), ("retention", "all facts retained", "pct"),
           ("task_in_span", "task facts dropped by a compaction", "int"),
           ("task_kept", "kept in the summary", "int"), ("task_paraphrased", "only paraphrased", "int"),
           ("task_lost", "lost", "int"))


def task_state_table(retention, compactions=None):
    """One row per policy: its task-state probes and the share retained, beside the share
    of every fact; and, given the compactions, the task facts they dropped and what their
    summaries did with them (kept, only paraphrased, lost). ``None`` when no fact probed is
    a task fact (a dataset generated without ``--task-state``)."""
    import polars as pl

    if retention is None or retention.height == 0 or retention.filter(pl.col("fact_kind") == TASK_KIND).height == 0:
        return None
    kept = pl.col("status") != "lost"
    is_task = pl.col("fact_kind") == TASK_KIND
    table = retention.group_by("policy", maintain_order=True).agg(
        is_task.sum().cast(pl.Int64).alias("task_probes"), kept.filter(is_task).mean().alias("task_retention"),
        kept.mean().alias("retention"))
    if compactions is None or compactions.height == 0:
        return table
    tasks = set(retention.filter(is_task)["fact_id"].unique().to_list())

    def count(col: str):
        return pl.col(col).list.eval(pl.element().is_in(list(tasks))).list.sum().sum().cast(pl.Int64)

    fates = compactions.group_by("policy", maintain_order=True).agg(
        count("kept_fact_ids").alias("task_kept"), count("paraphrased_fact_ids").alias("task_paraphrased"),
        count("lost_fact_ids").alias("task_lost"))
    fates = fates.with_columns((pl.col("task_kept") + pl.col("task_paraphrased") + pl.col("task_lost"))
                               .alias("task_in_span"))
    return table.join(fates, on="policy", how="left", maintain_order="left")
