"""Sweep throughput: 1,000 configurations x one 1 M-event continuity through the batch
kernel, Dask overhead per task, and the speed-up from 1 to 2 workers.

    .venv/bin/python benchmarks/bench_sweep.py [--events 1000000] [--configs 1000] [--skip-sweep]

Figures only, no assertions (docs/targets.md: <= 60 s for the 1,000 x 1 M sweep on
2 cores). The machine may be shared: the load average is printed first; read ratios with it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import peak_rss_mb, table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _tiny(x):
    return x


def dataset(events: int, text: str = "labels-only") -> Path:
    from workbench.continuity.dataset import MANIFEST_FILE
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    path = ROOT / "datasets" / f"bench-sweep-{events // 1000}k-{text}"
    if not (path / MANIFEST_FILE).is_file():
        t = time.perf_counter()
        generate_dataset(GeneratorConfig(profile="coding", events=events, seed=1, text=text,
                                         tokenizers=("cl100k",)), path)
        print(f"generated {path} in {time.perf_counter() - t:.1f} s")
    return path


def configs(n: int) -> dict:
    """One policy family: claude-code's reserve x kept tail (n = reserves x 4)."""
    reserves = [13_000 + 400 * i for i in range(max(1, n // 4))]
    return {"trigger.reserve_tokens": reserves, "trigger.keep_last_events": [0, 8, 32, 128]}


def bench_batch(path: Path, n: int) -> list[tuple]:
    from workbench._numba import set_num_threads
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.provider import resolve_provider
    from workbench.engine.run import prepare_dataset, replay
    from workbench.sweep.batch import batch_structural
    from workbench.sweep.spec import SweepSpec

    ds = load_dataset(path)
    t = time.perf_counter()
    (inp,) = prepare_dataset(ds, "cl100k")
    prep = time.perf_counter() - t
    spec = SweepSpec.from_dict({"dataset": str(path), "base": "claude-code", "parameters": configs(n)})
    base = spec.base_policy()
    pols = [base.with_overrides(c) for c in spec.configurations()]
    batch_structural(inp, pols[:2])  # compile / load the cache
    rows = [("prepare the continuity (once per worker)", f"{prep:.2f}", "", "", "")]
    per_thread = {}
    for threads in (1, 2):
        set_num_threads(threads)
        t, c = time.perf_counter(), time.process_time()
        frame = batch_structural(inp, pols)
        dt, cpu = time.perf_counter() - t, time.process_time() - c
        per_thread[threads] = dt
        rows.append((f"batch kernel, {len(pols):,} configs, {threads} thread(s)", f"{dt:.2f}", f"{cpu:.2f}",
                     f"{dt / len(pols) * 1e3:.1f}", f"{inp.n * len(pols) / dt / 1e6:,.1f}"))
    set_num_threads(os.cpu_count() or 1)
    # the per-run path for comparison: single-run kernel (ledger + events matrices), sampled
    sample = pols[:: max(1, len(pols) // 20)][:20]
    prov = resolve_provider(sample[0], continuity_model=inp.model, continuity_window=inp.context_window)
    replay(inp, sample[0], prov, "kernel")
    t, c = time.perf_counter(), time.process_time()
    for p in sample:
        replay(inp, p, prov, "kernel")
    single, single_cpu = (time.perf_counter() - t) / len(sample), (time.process_time() - c) / len(sample)
    rows.append((f"single-run kernel (ledger matrices), per config, x{len(sample)}", f"{single * len(pols):.2f}*",
                 f"{single_cpu * len(pols):.2f}*", f"{single * 1e3:.1f}", f"{inp.n / single / 1e6:,.1f}"))
    from workbench.engine.metrics import replay_totals
    from workbench.engine.run import ledger_frame, summarize_inputs
    from workbench.rundir.event_frames import events_frame

    summarize_inputs([inp], sample[:1], engine="kernel", run_id="r")  # load the price rule's kernel
    t, c = time.perf_counter(), time.process_time()
    for p in sample[:10]:
        summarize_inputs([inp], [p], engine="kernel", run_id="r")
    full, full_cpu = (time.perf_counter() - t) / 10, (time.process_time() - c) / 10
    rows.append(("per-run sweep task (single-run kernel + numpy summary), x10", f"{full * len(pols):.2f}*",
                 f"{full_cpu * len(pols):.2f}*", f"{full * 1e3:.1f}", f"{inp.n / full / 1e6:,.1f}"))
    t, c = time.perf_counter(), time.process_time()
    for p in sample[:2]:
        led, ev = replay(inp, p, prov, "kernel")
        ledger_frame(led, inp, p, prov, "r"), events_frame(ev, inp, p, "r"), replay_totals(led, ev, prov.prices)
    frames, frames_cpu = (time.perf_counter() - t) / 2, (time.process_time() - c) / 2
    rows.append(("  ... with simulate()'s ledger/events frames (evaluated runs need them), x2",
                 f"{frames * len(pols):.0f}*", f"{frames_cpu * len(pols):.0f}*", f"{frames * 1e3:.0f}",
                 f"{inp.n / frames / 1e6:,.2f}"))
    print(f"\n## structural sweep: {len(pols):,} configurations x one {inp.n:,}-event continuity "
          f"({inp.n_requests:,} requests); * = extrapolated from the sample; cpu s = this process's "
          "CPU time (all threads): what the work costs whatever else shares the machine")
    print(table(rows, ("what", "wall s", "cpu s", "ms/config (wall)", "M events/s (wall)")))
    print(f"batch speed-up 1 -> 2 threads: {per_thread[1] / per_thread[2]:.2f}x; "
          f"batch vs per-run task: {full * len(pols) / per_thread[2]:.1f}x; "
          f"compactions across configs: {frame['compactions'].min()}..{frame['compactions'].max()}")
    return rows


def bench_sweep_path(path: Path, n: int) -> None:
    """The whole `workbench sweep` path with engine batch (workers, prep, atomic writes)."""
    import resource

    from workbench.sweep.runner import run_sweep
    from workbench.sweep.spec import SweepSpec

    def cpu_all() -> float:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    rows = []
    for workers in (1, 2):
        out = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
        spec = SweepSpec.from_dict({"name": "bench", "dataset": str(path), "base": "claude-code",
                                    "parameters": configs(n), "engine": "batch"})
        t, c = time.perf_counter(), cpu_all()
        rep = run_sweep(spec, out, executor="process", workers=workers)
        dt, cpu = time.perf_counter() - t, cpu_all() - c  # the pool's workers have exited: counted
        t = time.perf_counter()
        again = run_sweep(spec, out, executor="process", workers=workers)
        resume = time.perf_counter() - t
        rows.append((f"process x{workers}", f"{rep.runs:,}", f"{dt:.1f}", f"{cpu:.1f}", f"{rep.runs / dt:,.1f}",
                     f"{resume:.1f} ({again.skipped:,} skipped)"))
        shutil.rmtree(out, ignore_errors=True)
    print(f"\n## `run_sweep` end to end, engine batch ({n:,} runs: spawn, prepare per worker, "
          "batch kernel, one atomic Parquet + JSON per run)")
    print(table(rows, ("executor", "runs", "wall s", "cpu s (all processes)", "runs/s", "resume s")))


def bench_dask_overhead(tasks: int = 400) -> None:
    from distributed import Client, LocalCluster

    from workbench.sweep.executors import DaskExecutor, ProcessExecutor

    rows = []
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                           host="127.0.0.1")
    try:
        with Client(cluster) as client:
            client.gather(client.map(_tiny, range(20), pure=False))
            t = time.perf_counter()
            client.gather(client.map(_tiny, range(tasks), pure=False))
            dt = time.perf_counter() - t
            rows.append(("client.map + gather", tasks, f"{dt:.2f}", f"{dt / tasks * 1e3:.2f}"))
            ex = DaskExecutor(client)
            list(ex.imap_unordered(_tiny, range(20)))
            t = time.perf_counter()
            list(ex.imap_unordered(_tiny, ({"run_id": str(i)} for i in range(tasks))))
            dt = time.perf_counter() - t
            rows.append(("DaskExecutor (windowed as_completed)", tasks, f"{dt:.2f}", f"{dt / tasks * 1e3:.2f}"))
    finally:
        cluster.close()
    with ProcessExecutor(2) as ex:
        list(ex.imap_unordered(_tiny, range(20)))
        t = time.perf_counter()
        list(ex.imap_unordered(_tiny, range(tasks)))
        dt = time.perf_counter() - t
        rows.append(("ProcessExecutor (2 workers)", tasks, f"{dt:.2f}", f"{dt / tasks * 1e3:.2f}"))
    print("\n## overhead per tiny task (2 workers on 127.0.0.1)")
    print(table(rows, ("executor", "tasks", "s", "ms/task")))


def bench_workers(runs: int = 12, events: int = 5_000) -> None:
    """Heterogeneous per-run tasks (engine kernel + evaluation, seconds each): 1 vs 2 workers,
    process pool and Dask."""
    from distributed import LocalCluster

    from workbench.sweep.runner import run_sweep
    from workbench.sweep.spec import SweepSpec

    path = dataset(events, text="auto")
    d = {"name": "w", "dataset": str(path), "base": "openclaw-flush", "engine": "kernel", "evaluate": True,
         "parameters": {"flush.soft_threshold_tokens": [1_000 + 500 * i for i in range(runs)]}}
    rows, times = [], {}
    for kind in ("process", "dask"):
        for workers in (1, 2):
            out = Path(tempfile.mkdtemp(prefix="bench-workers-"))
            cluster = None
            try:
                if kind == "dask":
                    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=None, host="127.0.0.1")
                t = time.perf_counter()
                run_sweep(SweepSpec.from_dict(d), out, executor=kind, workers=workers,
                          scheduler=cluster.scheduler_address if cluster else None)
                times[kind, workers] = time.perf_counter() - t
            finally:
                if cluster is not None:
                    cluster.close()
                shutil.rmtree(out, ignore_errors=True)
            rows.append((kind, workers, runs, f"{times[kind, workers]:.1f}",
                         f"{times[kind, 1] / times[kind, workers]:.2f}x"))
    print(f"\n## speed-up 1 -> 2 workers: {runs} evaluated runs (kernel + leakage/retention) on "
          f"{events:,} events, including worker start and one dataset preparation per worker")
    print(table(rows, ("executor", "workers", "runs", "s", "speed-up")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--configs", type=int, default=1_000)
    ap.add_argument("--skip-sweep", action="store_true", help="skip the end-to-end run_sweep timing")
    ap.add_argument("--skip-workers", action="store_true", help="skip the 1 -> 2 workers comparison")
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    path = dataset(args.events)
    bench_batch(path, args.configs)
    if not args.skip_sweep:
        bench_sweep_path(path, args.configs)
    bench_dask_overhead()
    if not args.skip_workers:
        bench_workers()
    print(f"\npeak RSS of this process: {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
