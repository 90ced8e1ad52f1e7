"""Running sweeps: run table first, process pool == Dask, resume, failures, SIGKILL + resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import polars as pl
import pytest

from workbench.sweep.executors import Executor
from workbench.sweep.runner import RESULTS_DIR, aggregate, collect, run_sweep, status
from workbench.sweep.spec import SweepSpec

VOLATILE = ("elapsed_s", "cpu_s", "finished_at", "worker", "worker_loads")  # timing and placement, not content


class Boom(RuntimeError):
    pass


class FailingExecutor(Executor):
    """Refuses every task: whatever exists on disk was written before any work started."""

    name = "failing"

    def imap_unordered(self, fn, tasks):
        raise Boom("executor down")
        yield  # pragma: no cover


def content(out: Path) -> tuple[pl.DataFrame, dict]:
    """Everything a sweep wrote, minus timings: the collected frame and each run's JSON."""
    frame = collect(out).drop("elapsed_s")
    metas = {}
    for p in sorted((out / RESULTS_DIR).glob("*.json")):
        meta = orjson.loads(p.read_bytes())
        metas[p.stem] = {k: v for k, v in meta.items() if k not in VOLATILE}
    return frame, metas


def test_run_table_is_written_before_any_work(make_spec, tmp_path):
    spec = SweepSpec.from_dict(make_spec())
    with pytest.raises(Boom):
        run_sweep(spec, tmp_path / "out", executor=FailingExecutor())
    table = pl.read_parquet(tmp_path / "out" / "runs.parquet")
    assert table.height == 6
    assert {"run_id", "seed", "trigger.reserve_tokens", "provider.model"} <= set(table.columns)
    assert table["run_id"].to_list() == [r.run_id for r in spec.runs(_files(make_spec))]
    assert (tmp_path / "out" / "sweep.json").is_file()
    assert not list((tmp_path / "out" / RESULTS_DIR).glob("*.parquet"))
    assert set(status(tmp_path / "out")["status"]) == {"pending"}


def _files(make_spec):
    from workbench.continuity.dataset import load_dataset
    from workbench.sweep.spec import dataset_files

    return dataset_files(load_dataset(make_spec()["dataset"]))


def test_failures_are_recorded_and_the_sweep_continues_then_resume_skips(make_spec, tmp_path, monkeypatch):
    # a floor above the summary cap is rejected by the policy (each field alone is valid, so the
    # spec loads); an engine that fails on one configuration is stood in for by a patched replay
    import workbench.engine.run as engine_run

    real_replay = engine_run.replay

    def flaky(inp, policy, provider, engine="kernel"):
        if policy.compaction.prompt_tokens == 901:
            raise RuntimeError("engine failure planted by the test")
        return real_replay(inp, policy, provider, engine)

    monkeypatch.setattr(engine_run, "replay", flaky)
    spec = SweepSpec.from_dict(make_spec(parameters={
        "trigger.reserve_tokens": [13_000, 33_000],
        "compaction.floor": [1_500, 50_000],
        "compaction.prompt_tokens": [900, 901]}, seeds=[0]))
    out = tmp_path / "out"
    report = run_sweep(spec, out, executor="serial")
    assert report.runs == 8 and report.completed == 2 and report.failed == 6
    st = status(out).join(pl.read_parquet(out / "runs.parquet"), on="run_id")
    bad_policy = st.filter(pl.col("compaction.floor") == 50_000)
    assert set(bad_policy["status"]) == {"error"}
    assert all("PolicyError" in e and "compaction.floor" in e for e in bad_policy["error"])
    bad_engine = st.filter((pl.col("compaction.floor") == 1_500) & (pl.col("compaction.prompt_tokens") == 901))
    assert set(bad_engine["status"]) == {"error"} and bad_engine.height == 2
    meta = orjson.loads((out / RESULTS_DIR / f"{bad_engine['run_id'][0]}.json").read_bytes())
    assert meta["status"] == "error" and meta["error"] and "Traceback" in meta["traceback"]
    ok = st.filter(pl.col("status") == "ok")
    assert ok.height == 2
    for rid in ok["run_id"]:
        assert (out / RESULTS_DIR / f"{rid}.parquet").is_file()

    agg = aggregate(collect(out))
    assert agg.height == 8 and agg["complete"].sum() == 2

    before = {p.name: p.stat().st_mtime_ns for p in (out / RESULTS_DIR).iterdir()}
    again = run_sweep(spec, out, executor="serial")
    assert (again.completed, again.failed, again.skipped) == (0, 0, 8)
    assert before == {p.name: p.stat().st_mtime_ns for p in (out / RESULTS_DIR).iterdir()}
    # asking for failed runs again re-runs exactly those
    retried = run_sweep(spec, out, executor="serial", retry_failed=True)
    assert (retried.completed, retried.failed, retried.skipped) == (0, 6, 2)


def test_run_summaries_match_simulate_for_every_preset(small_dataset):
    from workbench.engine.presets import PRESETS
    from workbench.engine.run import simulate
    from workbench.sweep.runner import execute_task
    from workbench.sweep.spec import Task, TaskRun

    ref = simulate(small_dataset, list(PRESETS.values()), run_id="r").summary
    for i, pol in enumerate(PRESETS.values()):
        (res,) = execute_task(Task(str(small_dataset), pol.to_dict(), "kernel", "cl100k",
                                   (TaskRun("r", "c", 0, {}),)))
        assert res["status"] == "ok", res["error"]
        (row,) = res["rows"]
        assert res["evaluation"] is None and row.pop("seed") == 0
        expected = ref.row(i, named=True)
        assert list(row) == list(expected)
        for k, v in expected.items():
            assert row[k] == (pytest.approx(v, rel=1e-12) if isinstance(v, float) else v), (pol.name, k)


def test_results_match_simulate(make_spec, tmp_path):
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate

    spec = SweepSpec.from_dict(make_spec(seeds=[0]))
    run_sweep(spec, tmp_path / "out", executor="serial")
    frame = collect(tmp_path / "out")
    for r in frame.iter_rows(named=True):
        pol = get_policy("claude-code", {"trigger.reserve_tokens": r["trigger.reserve_tokens"],
                                         "provider.model": "claude-sonnet-4-5"})
        ref = simulate(spec.dataset.path, [pol], run_id=r["run_id"]).summary.row(0, named=True)
        for k, v in ref.items():
            assert r[k] == pytest.approx(v) if isinstance(v, float) else r[k] == v, k


def test_process_pool_and_dask_give_identical_results(make_spec, tmp_path, dask_cluster):
    spec = SweepSpec.from_dict(make_spec())
    a = run_sweep(spec, tmp_path / "process", executor="process", workers=2)
    b = run_sweep(spec, tmp_path / "dask", executor="dask", scheduler=dask_cluster.scheduler_address)
    assert a.completed == b.completed == 6 and a.failed == b.failed == 0
    assert "dask" in b.executor
    fa, ma = content(tmp_path / "process")
    fb, mb = content(tmp_path / "dask")
    assert fa.drop("dataset").equals(fb.drop("dataset"))
    assert ma == mb
    # seeds do not change structural metrics
    agg = aggregate(fa)
    assert agg.height == 3 and agg["complete"].all() and (agg["runs_ok"] == 2).all()


SIGKILL_SCRIPT = """
import sys
from workbench.sweep.runner import run_sweep
from workbench.sweep.spec import SweepSpec
import orjson
spec = SweepSpec.from_dict(orjson.loads(sys.argv[1]))
run_sweep(spec, sys.argv[2], executor="process", workers=2)
"""


def test_sigkill_then_resume_equals_an_uninterrupted_sweep(make_spec, tmp_path):
    # evaluated runs take a second or more each: slow enough to be killed half-way
    d = make_spec(parameters={"trigger.reserve_tokens": [13_000, 33_000, 60_000]},
                  seeds=[0, 1], evaluate=True)
    killed = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", SIGKILL_SCRIPT, orjson.dumps(d).decode(), str(killed)],
                            start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = list((killed / RESULTS_DIR).glob("*.json")) if (killed / RESULTS_DIR).is_dir() else []
            if len(done) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver and its pool, mid-sweep
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()[-2000:]
    partial = len(list((killed / RESULTS_DIR).glob("*.json")))
    assert 2 <= partial < 6
    # the kill may land mid-write: what it leaves is a hidden temporary, never a result
    left = [p.name for p in (killed / RESULTS_DIR).iterdir()]
    assert all(not n.startswith(".") or n.endswith(".tmp") for n in left), left
    assert all(n.startswith(".") or n.endswith((".json", ".parquet")) for n in left), left

    resumed = run_sweep(SweepSpec.from_dict(d), killed, executor="serial")
    assert resumed.skipped == partial and resumed.completed == 6 - partial
    # a dead writer's temporary is recognised as ours (`workbench clean` removes it once stale)
    from workbench.rundir.temp import judge

    for tmp in (killed / RESULTS_DIR).glob(".*.tmp"):
        assert judge(tmp) is not None, tmp
    clean = tmp_path / "clean"
    run_sweep(SweepSpec.from_dict(d), clean, executor="serial")

    fk, mk = content(killed)
    fc, mc = content(clean)
    assert fk.equals(fc)
    assert mk == mc
    assert {"leaks", "retention"} <= set(fk.columns) and fk["retention"].null_count() == 0
    # evaluated runs are done for these evaluation settings only
    assert run_sweep(SweepSpec.from_dict(d), clean, executor="serial").skipped == 6
    structural = run_sweep(SweepSpec.from_dict({**d, "evaluate": False}), clean, executor="serial")
    assert structural.skipped == 6
    other = SweepSpec.from_dict({**d, "evaluate": {"summarizer": "extractive"}})
    assert [r.run_id for r in other.runs(_files(make_spec))] == fk["run_id"].unique(maintain_order=True).to_list()
    from workbench.sweep.runner import is_done

    assert not any(is_done(clean, r, evaluate={"summarizer": "extractive", "baseline": False, "options": {}})
                   for r in fk["run_id"].unique())


def test_executor_failures_surface_as_executor_errors(dask_cluster):
    import math

    from workbench.sweep.executors import DaskExecutor, ExecutorError, get_executor

    with DaskExecutor(dask_cluster.scheduler_address) as ex:
        assert sorted(ex.imap_unordered(math.sqrt, [4.0, 9.0, 16.0])) == [2.0, 3.0, 4.0]
        with pytest.raises(ExecutorError, match="math domain error"):
            list(ex.imap_unordered(math.sqrt, [4.0, -1.0]))
    with pytest.raises(ExecutorError, match="unknown executor"):
        get_executor("threads")
    with pytest.raises(ExecutorError, match="only for --executor dask"):
        get_executor("process", scheduler="tcp://127.0.0.1:1")
