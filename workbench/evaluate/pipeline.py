"""Run the text-level evaluations of a simulated run and write them beside it.

A run directory (``runs/NAME``) holds, after ``workbench simulate``:
``config.json``, ``ledger.parquet``, ``events.parquet``, ``summary.parquet``; after
``workbench audit redaction`` (or ``simulate --evaluate``) also:

* ``texts.parquet``     stored summaries and memory entries (redacted when SR-1 is on;
                        raw summarizer output is never written to disk)
* ``leakage.parquet``   one row per policy x continuity x planted secret x channel
* ``over_redaction.parquet``  hard negatives that reached derived text, and who destroyed them
* ``retention.parquet`` one row per planted fact x probe request
* ``evaluation.json``   the headline figures per policy (leaks, retention, SR-1)

The detect-secrets baseline columns are measured only when asked (``baseline=True``,
``--baseline`` on the CLI); otherwise they are null and ``over_redaction.detect_secrets``
in ``evaluation.json`` is null.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_run(run_dir: str | Path):
    """A :class:`SimulationResult` read back from a run directory (inputs re-prepared)."""
    import orjson
    import polars as pl

    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import SimulationResult, prepare_dataset
    from workbench.errors import WorkbenchError

    run_dir = Path(run_dir)
    if not (run_dir / "config.json").is_file():
        raise WorkbenchError(f"{run_dir}: not a run directory (no config.json); create one with `workbench simulate`")
    config = orjson.loads((run_dir / "config.json").read_bytes())
    ds = load_dataset(config["dataset"]["path"])
    inputs = {inp.continuity_id: inp for inp in prepare_dataset(ds, config["tokenizer"])}
    result = SimulationResult(
        ledger=pl.read_parquet(run_dir / "ledger.parquet"), events=pl.read_parquet(run_dir / "events.parquet"),
        summary=pl.read_parquet(run_dir / "summary.parquet"), config=config, run_id=config["run_id"],
        inputs=inputs)
    return result, ds


def evaluate_run(result, dataset, out: str | Path | None = None, *, summarizer: str = "modelled",
                 summarizer_options: dict | None = None, baseline: bool = False) -> dict[str, Any]:
    """Texts, leakage, over-redaction and retention; written into ``out`` when given.

    ``baseline=True`` also measures detect-secrets as the SR-1 redactor (the
    ``leaked_baseline`` and ``redacted_by_detect_secrets`` columns; null without it): an
    audit's side-by-side column, slow, so off unless asked for.
    """
    import orjson
    import polars as pl

    from workbench.evaluate.dataset_text import DatasetText
    from workbench.evaluate.leakage import (
        baseline_redactor,
        leakage_summary,
        leakage_table,
        over_redaction,
    )
    from workbench.evaluate.retention import retention_summary, retention_table
    from workbench.evaluate.texts import materialize_texts, policies_of
    from workbench.util.atomic import atomic_write_bytes

    dt = DatasetText.of(dataset)
    texts = materialize_texts(result, dataset, summarizer=summarizer,
                              summarizer_options=summarizer_options, dataset_text=dt)
    base = baseline_redactor(dt) if baseline else None
    leaks = leakage_table(result, dataset, texts, dataset_text=dt, baseline=base)
    over = over_redaction(result, dataset, texts, dataset_text=dt, baseline=base)
    retention = retention_table(result, dataset, texts, dataset_text=dt)
    by_policy, _ = retention_summary(retention)
    leak_sum = leakage_summary(leaks)
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
            "leaks": int(derived.filter(pl.col("leaked"))["secret_id"].n_unique()),
            "leaks_context": int(lp.filter((pl.col("channel") == "context") & pl.col("leaked"))["secret_id"].n_unique()),
            "retention": float(rp["retention"][0]) if rp.height else None,
            "fact_probes": int(rp["probes"][0]) if rp.height else 0,
        }
    detect_secrets = (int(over["redacted_by_detect_secrets"].sum()) if over.height else 0) if baseline else None
    report = {"run_id": result.run_id, "summarizer": summarizer, "policies": headline,
              "over_redaction": {"negatives_in_derived_text": over.height,
                                 "harness": int(over["redacted_by_harness"].sum()) if over.height else 0,
                                 "detect_secrets": detect_secrets}}
    if out is not None:
        out = Path(out)
        texts.drop("text_raw").write_parquet(out / "texts.parquet")
        leaks.write_parquet(out / "leakage.parquet")
        over.write_parquet(out / "over_redaction.parquet")
        retention.write_parquet(out / "retention.parquet")
        atomic_write_bytes(out / "evaluation.json", orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return {"texts": texts, "leakage": leaks, "leakage_summary": leak_sum, "over_redaction": over,
            "retention": retention, "retention_by_policy": by_policy, "report": report}
