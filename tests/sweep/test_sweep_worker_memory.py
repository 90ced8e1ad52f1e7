"""What an evaluated sweep's worker keeps from one run to the next: the dataset's own share
(its text index, span events, labels, the leak scans of single lines), never what one
configuration derived (its summaries, their redactions, the scans of whole texts), so that
a worker's memory stays bounded over thousands of configurations; forgetting changes no
result. Each result says where its worker's CPU time went (``cpu_s``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from workbench.sweep import runner
from workbench.sweep.spec import SweepSpec


def _tasks(make_spec, tmp_path, reserves):
    spec = SweepSpec.from_dict(make_spec(parameters={"trigger.reserve_tokens": reserves}, seeds=[0],
                                         evaluate=True))
    spec, ds, runs, _ = runner.plan(spec, tmp_path / "plan")
    path = str(Path(ds.path).resolve())
    return ds, [r.task(spec, path, evaluate=runner._evaluate_settings(spec, None)) for r in runs]


def _kept(ds) -> dict[str, int]:
    from workbench.evaluate.dataset_text import DatasetText

    dt = DatasetText.of(ds)
    scanner = dt.leak_scanner
    return {"summaries": len(dt.summaries), "redactions": len(dt.redactions),
            "texts": len(scanner._text), "pairs": len(scanner._pair), "lines": len(scanner._line)}


def test_what_a_worker_keeps_across_evaluated_runs_does_not_grow(make_spec, tmp_path):
    ds, tasks = _tasks(make_spec, tmp_path, [13_000, 23_000, 33_000, 43_000])
    kept = []
    for task in tasks:
        (res,) = runner.execute_task(task)
        assert res["status"] == "ok", res.get("traceback")
        assert res["evaluation"]["secrets"] is not None
        kept.append(_kept(ds))
    # what one configuration derived is gone after it (before: every run's summaries stayed)
    for k in kept:
        assert k["summaries"] == k["redactions"] == k["texts"] == k["pairs"] == 0, kept
    # the dataset's lines stay scanned for the next run
    assert kept[0]["lines"] > 0


def test_forgetting_between_runs_changes_no_result(make_spec, tmp_path, monkeypatch):
    from workbench.evaluate import dataset_text

    reserves = [13_000, 33_000, 60_000]
    ds, tasks = _tasks(make_spec, tmp_path, reserves)
    forgetting = [runner.execute_task(t)[0] for t in tasks]
    dataset_text._RECENT.clear()  # a fresh worker that keeps everything
    monkeypatch.setattr(runner, "_forget_run", lambda dt: None)
    keeping = [runner.execute_task(t)[0] for t in tasks]
    assert _kept(ds)["summaries"] > 0  # (this worker did keep them)
    for a, b in zip(forgetting, keeping, strict=True):
        assert a["status"] == b["status"] == "ok"
        assert pl.DataFrame(a["rows"]).equals(pl.DataFrame(b["rows"]))
        assert a["evaluation"] == b["evaluation"]


def test_results_say_where_the_workers_cpu_went(make_spec, tmp_path):
    _, tasks = _tasks(make_spec, tmp_path, [13_000])
    (res,) = runner.execute_task(tasks[0])
    assert set(res["cpu_s"]) == {"dataset", "replay", "evaluate", "forget"}
    assert all(v >= 0 for v in res["cpu_s"].values())
    assert res["cpu_s"]["evaluate"] > 0
