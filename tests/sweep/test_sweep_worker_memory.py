"""What an evaluated sweep's worker keeps from one run to the next: the dataset's own share
(its text index, span events, labels, the leak scans of single lines), never what one
configuration derived (its summaries, their redactions, the scans of whole texts), so that
a worker's memory stays bounded over thousands of configurations; forgetting changes no
result. With shared draws, the summaries another configuration will meet are kept, within a
budget. Each result says where its worker's CPU time went (``cpu_s``)."""

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
    monkeypatch.setattr(runner, "_forget_run", lambda dt, **_: None)
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


# ---- shared draws: configurations that compact alike share their summaries -----------------

def _flush_tasks(make_spec, tmp_path, draws: str | None):
    """openclaw-flush with its soft flush threshold swept: the flushes move, the compactions
    do not (the same cuts, sizes and previous summaries in every configuration)."""
    evaluate = True if draws is None else {"options": {"draws": draws}}
    spec = SweepSpec.from_dict(make_spec(base="openclaw-flush", seeds=[0], evaluate=evaluate, parameters={
        "flush.soft_threshold_tokens": [1_000, 2_000, 4_000], "provider.context_window": 24_000,
        "trigger.reserve_tokens": 4_000, "flush.reserve_tokens": 4_000}))
    spec, ds, runs, _ = runner.plan(spec, tmp_path / f"plan-{draws}")
    path = str(Path(ds.path).resolve())
    return ds, [r.task(spec, path, evaluate=runner._evaluate_settings(spec, None)) for r in runs]


def _written_compactions(monkeypatch) -> list[str]:
    """The compaction summaries the modelled summarizer writes from now on (their draw keys)."""
    from workbench.summarize.modelled import ModelledSummarizer

    written: list[str] = []
    original = ModelledSummarizer.summarize

    def summarize(self, request):
        if request.purpose == "compaction":
            written.append(request.draw)
        return original(self, request)

    monkeypatch.setattr(ModelledSummarizer, "summarize", summarize)
    return written


def _run_all(tasks) -> list[dict]:
    out = []
    for task in tasks:
        (res,) = runner.execute_task(task)
        assert res["status"] == "ok", res.get("traceback")
        out.append(res)
    return out


def test_with_shared_draws_a_later_configuration_reuses_the_summaries(make_spec, tmp_path, monkeypatch):
    from workbench.evaluate import dataset_text

    dataset_text._RECENT.clear()
    ds, tasks = _flush_tasks(make_spec, tmp_path, "shared")
    written = _written_compactions(monkeypatch)
    results = _run_all(tasks)
    first = len(written)
    assert first > 0 and len(set(written)) == first  # the first configuration wrote them, nobody again
    # the summaries and the context they leave are the same: so are the context leaks
    assert len({r["evaluation"]["leaks_context"] for r in results}) == 1
    assert _kept(ds)["summaries"] > 0
    # each configuration drawing its own: every configuration writes its own summaries
    dataset_text._RECENT.clear()
    written.clear()
    _, own = _flush_tasks(make_spec, tmp_path, None)
    _run_all(own)
    assert len(written) == len(tasks) * first and len(set(written)) == len(written)


def test_keeping_shared_summaries_changes_no_result_and_stays_in_budget(make_spec, tmp_path, monkeypatch):
    from workbench.evaluate import dataset_text

    dataset_text._RECENT.clear()
    ds, tasks = _flush_tasks(make_spec, tmp_path, "shared")
    keeping = _run_all(tasks)
    kept = runner._summary_chars(dataset_text.DatasetText.of(ds))
    assert kept > 0
    # a budget no run fits: every run derives its own summaries again, with the same results
    dataset_text._RECENT.clear()
    monkeypatch.setattr(runner, "SHARED_TEXT_BUDGET", 1)
    forgetting = _run_all(tasks)
    assert _kept(ds)["summaries"] == 0
    for a, b in zip(keeping, forgetting, strict=True):
        assert pl.DataFrame(a["rows"]).equals(pl.DataFrame(b["rows"]))
        assert a["evaluation"] == b["evaluation"]


def test_a_run_that_passes_the_budget_keeps_what_earlier_runs_kept(make_spec, tmp_path, monkeypatch):
    from workbench.evaluate import dataset_text

    dataset_text._RECENT.clear()
    ds, tasks = _flush_tasks(make_spec, tmp_path, "shared")
    _run_all(tasks[:1])
    dt = dataset_text.DatasetText.of(ds)
    first = dict(dt.summaries)
    monkeypatch.setattr(runner, "SHARED_TEXT_BUDGET", runner._summary_chars(dt))
    _run_all(tasks[1:])  # their new memory entries would pass the budget: dropped, the rest kept
    assert dict(dt.summaries) == first
    assert runner._summary_chars(dt) <= runner.SHARED_TEXT_BUDGET
