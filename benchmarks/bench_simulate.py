"""End to end, as `workbench simulate` does it: a dataset on disk -> prepared arrays ->
replay -> ledger/events/summary frames, for one structural preset at large sizes.

bench_engine.py times the replay alone on arrays cached beforehand; this one adds what a
user pays besides: reading the Parquet columns and preparing the continuity
(``prepare_dataset``), and building the output frames (``simulate(keep_inputs=False)``, as
the command line does without ``--evaluate``). Each size runs in a fresh interpreter (its
own peak-RSS counter) with the numba cache warm; then the command itself, ``workbench
simulate`` (writing the run directory), in its own process: its wall, CPU and peak RSS.
The load average is printed beside each size.

Measured (shared 2-core machine, load 2.1): 10 M events, 3.1 M calls: `workbench
simulate` peaks at 1,676 MB RSS, 8.0 s wall, 7.8 s CPU (3.0 GB before the events were read
a column at a time, prepare worked in place, the ledger frame was built by columns and the
replay-only arrays were freed before the output frames).

    .venv/bin/python benchmarks/bench_simulate.py                    # 1 M and 10 M events
    .venv/bin/python benchmarks/bench_simulate.py --sizes 1000000 --policy observation-masking

Datasets (labels-only text) are generated once under ``--cache`` (default
datasets/bench-simulate-<n>); generating 10 M events takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import in_subprocess, table  # noqa: E402

PROJECT = Path(__file__).resolve().parents[1]

MEASURE = """
import json, resource, time
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
from workbench.continuity.dataset import load_dataset
from workbench.engine.run import prepare_dataset, simulate
import workbench.engine.kernel  # compile (or load from cache) before timing
ds = load_dataset(r"{path}")
t0 = time.perf_counter(); c0 = time.process_time()
inputs = prepare_dataset(ds, "cl100k")
t1 = time.perf_counter(); c1 = time.process_time()
rss_prepared = peak_mb()
del inputs
t2 = time.perf_counter(); c2 = time.process_time()
res = simulate(ds, ["{policy}"], engine="kernel", keep_inputs=False)
t3 = time.perf_counter(); c3 = time.process_time()
print(json.dumps({{"requests": int(res.summary["requests"].sum()), "ledger_rows": res.ledger.height,
                  "prepare_s": t1 - t0, "prepare_cpu_s": c1 - c0, "peak_after_prepare_mb": rss_prepared,
                  "simulate_s": t3 - t2, "simulate_cpu_s": c3 - c2, "peak_mb": peak_mb()}}))
"""


def dataset(cache: Path, n: int) -> Path:
    path = cache / f"bench-simulate-{n}"
    if not (path / "manifest.json").is_file():
        print(f"generating {n:,} events (labels-only) -> {path}", flush=True)
        in_subprocess(
            "from workbench.synth.generate import GeneratorConfig, generate_dataset\n"
            f"generate_dataset(GeneratorConfig(profile='coding', events={n}, seed=1, text='labels-only'), r'{path}')")
    return path


def command(path: Path, policy: str) -> dict:
    """`workbench simulate` on ``path`` in its own process: wall s, CPU s, peak RSS MB."""
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as tmp:
        cmd = [str(Path(sys.executable).with_name("workbench")), "simulate", "--dataset", str(path),
               "--policy", policy, "--out", str(Path(tmp) / "run")]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--policy", default="claude-code")
    ap.add_argument("--cache", type=Path, default=PROJECT / "datasets")
    args = ap.parse_args()
    in_subprocess("import workbench.engine.kernel")  # warm the numba cache once
    print(f"load average before: {load()} on {os.cpu_count()} CPUs")
    rows, cli = [], []
    for n in args.sizes:
        path = dataset(args.cache, n)
        r = json.loads(in_subprocess(MEASURE.format(path=path, policy=args.policy)))
        rows.append((f"{n:,}", f"{r['requests']:,}", f"{r['prepare_s']:.1f}", f"{n / r['prepare_cpu_s'] / 1e6:.2f}",
                     f"{r['peak_after_prepare_mb']:,.0f}", f"{r['simulate_s']:.1f}",
                     f"{n / r['simulate_cpu_s'] / 1e6:.2f}", f"{r['peak_mb']:,.0f}", load()))
        c = command(path, args.policy)
        cli.append((f"{n:,}", f"{c['wall']:.1f}", f"{c['cpu']:.1f}", f"{c['rss']:,.0f}", load()))
    print(f"policy {args.policy}; wall seconds, CPU throughput in M events/s, peak RSS in MB")
    print(table(rows, ("events", "requests", "prepare s", "prepare M ev/s", "peak after prepare MB",
                       "simulate s", "simulate M ev/s", "peak MB", "load 1/5/15 min")))
    print(f"\n`workbench simulate --policy {args.policy}` (its own process, writing the run directory)")
    print(table(cli, ("events", "wall s", "cpu s", "peak MB", "load 1/5/15 min")))
    print("target (docs/targets.md): a 10 M-event structural replay in <= 2,048 MB RSS")


if __name__ == "__main__":
    main()
