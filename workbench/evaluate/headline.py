"""The evaluation's headline per policy, from its texts, leakage and retention tables: the
one rule the redaction audit (:mod:`workbench.evaluate.pipeline`) and every summary sample
(:mod:`workbench.evaluate.samples`) count leaks and retention by."""

from __future__ import annotations

from typing import Any


def policy_headlines(result, texts, leaks, by_policy, *, labelled: bool) -> dict[str, dict[str, Any]]:
    """The headline per policy: derived texts and their redactions, secrets, leaks into
    stored summaries and memory and into the context, retention and the task state's retention
    (leaks None when the dataset has no planted secrets: nothing to count them against)."""
    import polars as pl

    from workbench.evaluate.texts import policies_of

    headline = {}
    policies = policies_of(result)
    for name in result.summary["policy"].unique(maintain_order=True).to_list():
        lp = leaks.filter(pl.col("policy") == name)
        derived = lp.filter(pl.col("channel").is_in(["summary", "memory"]))
        rp = by_policy.filter(pl.col("policy") == name)
        headline[name] = {
            "sr1": bool(policies[name].redaction.sr1_carry_forward),
            "derived_texts": int(texts.filter(pl.col("policy") == name).height),
            "redactions": int(texts.filter(pl.col("policy") == name)["redactions"].sum()),
            "secrets": int(lp["secret_id"].n_unique()),
            "leaks": int(derived.filter(pl.col("leaked"))["secret_id"].n_unique()) if labelled else None,
            "leaks_context": (int(lp.filter((pl.col("channel") == "context") & pl.col("leaked"))["secret_id"]
                                  .n_unique()) if labelled else None),
            "retention": float(rp["retention"][0]) if rp.height else None,
            "fact_probes": int(rp["probes"][0]) if rp.height else 0,
            # the task state apart (None without task probes: a dataset that plants none)
            "task_retention": (float(rp["task_retention"][0]) if rp.height and rp["task_retention"][0] is not None
                               else None),
        }
    return headline
