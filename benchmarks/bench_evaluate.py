"""Evaluated runs at replay speed: `workbench simulate --evaluate` against the plain
`workbench simulate` on generated coding continuities, and evaluated sweep throughput.

    .venv/bin/python benchmarks/bench_evaluate.py                       # 40k, 200k, 1M events; sweep 100 x 100k
    .venv/bin/python benchmarks/bench_evaluate.py --sizes 40000 200000 --sweep-events 20000 --sweep-configs 24

Each command runs in its own process exactly as a user types it (interpreter start,
imports, reading the dataset, writing the run directory); wall time, CPU time (user +
system) and peak RSS are that process's own. The evaluation is the redaction audit's:
modelled summaries and memory entries through SR-1, leakage of every planted secret by
channel, fact retention (detect-secrets baseline off, as in sweeps). Then an evaluated sweep
(``evaluate: true``) over one continuity, on one worker and on ``--sweep-workers``, in runs/s
and CPU seconds, once with each configuration drawing its own summaries (a sweep's default)
and once with shared draws (``--sweep-draws``: common random numbers, the configurations that
compact alike share their summaries), with the one-worker sweep's CPU per configuration by
phase (each run's ``cpu_s``) and, for ``--sweep-split`` configurations run again in this process, the
evaluation's steps (summaries, SR-1 redaction, leakage, retention) timed. Both kinds of
run are run once, untimed, before the timed ones (numba cache and page cache warm). Each
dataset's text index is built once in its own process first (its CPU printed) and stored
beside the dataset, as a dataset's first evaluation leaves it: the timed evaluated runs read
it, as every later evaluation of the dataset does.

Every evaluated run and sweep is measured twice, the summarizer's filler on (the default) and
off (``--filler``; ``--no-filler``: a summary is its decided lines alone, the profile for sweeps
and large runs, whose figures are its own).

Figures only, no assertions. The targets (docs/targets.md) are printed beside the figures
they judge: at 1 M events evaluated <= 3x plain in CPU and peak <= 1 GB; each evaluated
size ratio <= 1.2x its event ratio (linear); an evaluated sweep of 100 configurations x 100k
events <= 120 s of CPU on one core. The machine may be shared: the load average is printed
with every figure; read the ratios with it. (The 10 M-event simulate peak and the README
figures come from bench_simulate.py.)

Datasets (full text, seed 1) are generated once under ``--cache`` (default
datasets/bench-evaluate-<n>); a million events take about 10 s and 80 MB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import in_subprocess, table  # noqa: E402

PROJECT = Path(__file__).resolve().parents[1]
WORKBENCH = str(Path(sys.executable).with_name("workbench"))


def dataset(cache: Path, n: int) -> Path:
    path = cache / f"bench-evaluate-{n}"
    if not (path / "manifest.json").is_file():
        print(f"generating {n:,} events -> {path}", flush=True)
        in_subprocess(
            "from workbench.synth.generate import GeneratorConfig, generate_dataset\n"
            f"generate_dataset(GeneratorConfig(profile='coding', events={n}, seed=1), r'{path}')")
    return path


def measured(cmd: list[str]) -> dict:
    """Run ``cmd``; its wall seconds, CPU seconds and peak RSS (MB), from its own rusage."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def stored_index(path: Path) -> float:
    """The CPU seconds building the text index of the dataset at ``path`` takes (in a fresh
    process); stored beside it when it is not there, as a dataset's first evaluation leaves
    it, so the timed evaluated runs read it as every later evaluation does."""
    return float(in_subprocess(
        "import time\n"
        "from workbench.continuity.dataset import load_dataset\n"
        "from workbench.evaluate import text_index\n"
        f"ds = load_dataset(r'{path}')\n"
        "t = time.process_time()\n"
        "index = text_index.build(ds)\n"
        "print(time.process_time() - t)\n"
        "text_index.write(ds, index)"))


#: the summarizer's filler (``--filler``): on, the default; off, ``--no-filler`` (a summary is its
#: decided lines alone, the profile for sweeps and large runs)
FILLER = {"on": [], "off": ["--no-filler"]}


def bench_runs(cache: Path, sizes: list[int], policy: str, tmp: Path,
               fillers: list[str]) -> dict[int, tuple[dict, dict[str, dict]]]:
    """Per size: the plain run, and the evaluated run per filler setting."""
    paths = {n: dataset(cache, n) for n in sizes}
    builds = {n: stored_index(paths[n]) for n in sizes}
    # one untimed run of each kind first: every kernel the runs call compiled or loaded into
    # the numba cache, the interpreter's files and the smallest dataset in the page cache
    # (without it the first timed run pays for compilation: 10+ s)
    for extra in ([], ["--evaluate"]):
        measured([WORKBENCH, "simulate", "--dataset", str(paths[min(sizes)]), "--policy", policy,
                  "--out", str(tmp / f"warm{len(extra)}"), *extra])
    out = {}
    for n in sizes:
        base = [WORKBENCH, "simulate", "--dataset", str(paths[n]), "--policy", policy]
        plain = measured([*base, "--out", str(tmp / f"plain-{n}")])
        evaluated = {}
        for filler in fillers:
            e = evaluated[filler] = measured([*base, "--out", str(tmp / f"evaluated-{n}-{filler}"), "--evaluate",
                                              *FILLER[filler]])
            e["load"], e["index"] = load(), builds[n]
            print(f"  {n:>9,} events: plain {plain['wall']:.1f} s, evaluated (filler {filler}) {e['wall']:.1f} s "
                  f"(load {e['load']})", flush=True)
        out[n] = (plain, evaluated)
    return out


SWEEP = """
name: bench-evaluate-sweep
dataset: {{path: {path}}}
base: openclaw-flush
parameters:
  flush.soft_threshold_tokens: [2000, 4000, 8000, 16000]
  trigger.reserve_tokens,flush.reserve_tokens: {reserves}
  provider.context_window: 60000
mode: product
seeds: [0]
evaluate: {evaluate}
engine: kernel
"""


def sweep_spec(cache: Path, events: int, configs: int, draws: str = "policy", filler: str = "on"):
    """The benchmark's sweep; ``draws``: how its summaries are drawn (``shared``: common random
    numbers, the configurations that compact alike share their summaries; in this grid the
    soft flush threshold moves no compaction, so four configurations compact each way);
    ``filler``: the summarizer's filler (:data:`FILLER`)."""
    import yaml

    from workbench.sweep.spec import SweepSpec

    path = dataset(cache, events)
    reserves = [8_000 + 1_000 * i for i in range(max(1, configs // 4))]
    data = yaml.safe_load(SWEEP.format(path=path, reserves=reserves, evaluate="true"))
    options = {**({"draws": draws} if draws != "policy" else {}), **({"filler": False} if filler == "off" else {})}
    if options:
        data["evaluate"] = {"options": options}
    return SweepSpec.from_dict(data, base_dir=PROJECT)


def worker_phases(out: Path) -> dict[str, list[float]]:
    """The CPU seconds each run's worker spent by phase (``cpu_s`` of its result), per phase
    in run order of completion."""
    import orjson

    phases: dict[str, list[float]] = {}
    for p in sorted((out / "results").glob("*.json"), key=lambda p: p.stat().st_mtime_ns):
        for phase, s in (orjson.loads(p.read_bytes()).get("cpu_s") or {}).items():
            phases.setdefault(phase, []).append(s)
    return phases


def bench_sweep(cache: Path, events: int, configs: int, tmp: Path, workers: list[int],
                draws: list[str], fillers: list[str]) -> tuple[list[tuple], dict]:
    from workbench.sweep.runner import run_sweep

    rows, phases = [], {}
    for how, filler, n_workers in ((d, f, w) for f in fillers for d in draws for w in workers):
        spec = sweep_spec(cache, events, configs, how, filler)
        out = tmp / f"sweep-{how}-{filler}-{n_workers}"
        c0 = os.times()
        report = run_sweep(spec, out, executor="process", workers=n_workers)
        c1 = os.times()
        cpu = (c1.children_user + c1.children_system + c1.user + c1.system) - (
            c0.children_user + c0.children_system + c0.user + c0.system)
        rows.append((how, filler, n_workers, report.runs, report.failed, f"{report.elapsed_s:.1f}",
                     f"{report.completed / report.elapsed_s:.2f}", f"{cpu:.1f}", load()))
        if n_workers == 1 and not phases:
            phases = {"cpu": cpu, "runs": report.runs, **worker_phases(out)}
        shutil.rmtree(out, ignore_errors=True)
    return rows, phases


# the evaluation's steps, timed in this process by wrapping each (what the pool's results
# cannot say: inside `evaluate`); nested names are parts of the one above
SPLIT = (("workbench.engine.run", "simulate", "replay (simulate: kernel, ledger, event frames)"),
         ("workbench.evaluate.pipeline", "evaluate_run", "evaluation"),
         ("workbench.evaluate.texts", "derive_texts", "  texts (summaries, memory entries)"),
         ("workbench.evaluate.texts", "_Derive.summarize", "    summaries written"),
         ("workbench.redaction.harness", "redact", "    SR-1 redaction"),
         ("workbench.evaluate.leakage", "leakage_table", "  leakage"),
         ("workbench.evaluate.leakage", "over_redaction", "  over-redaction"),
         ("workbench.evaluate.retention", "retention_table", "  retention"),
         ("workbench.sweep.runner", "_forget_run", "forgetting the run's memos"),
         ("workbench.sweep.runner", "write_result", "writing the result"))


def timed_split(cache: Path, events: int, configs: int, tmp: Path) -> tuple[list[dict[str, float]], list[str]]:
    """An evaluated sweep of ``configs`` configurations run in this process (the serial
    executor: one worker) with each step of :data:`SPLIT` timed: the CPU seconds of each
    step per configuration, in run order (the first carries the sweep's planning and the
    worker's start-up)."""
    import functools
    import importlib

    from workbench.sweep import runner

    spent: dict[str, float] = {}
    marks: list[tuple[dict[str, float], float]] = []
    wrapped = []
    for module, name, label in SPLIT:
        owner = importlib.import_module(module)
        *path, attr = name.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        original = getattr(owner, attr, None) if owner is not None else None
        if original is None:  # (a step another version of the workbench no longer has)
            continue

        def timer(*args, __original=original, __label=label, **kwargs):
            t0 = time.process_time()
            try:
                return __original(*args, **kwargs)
            finally:
                spent[__label] = spent.get(__label, 0.0) + time.process_time() - t0
                if __label == SPLIT[-1][2]:  # a run ends when its result is written
                    marks.append((dict(spent), time.process_time()))

        setattr(owner, attr, functools.wraps(original)(timer))
        wrapped.append((owner, attr, original, label))
    try:
        start = time.process_time()
        runner.run_sweep(sweep_spec(cache, events, configs), tmp / "split", executor="serial")
    finally:
        for owner, attr, original, _ in wrapped:
            setattr(owner, attr, original)
    per_run, before, at = [], {}, start
    for now, t in marks:
        per_run.append({**{k: v - before.get(k, 0.0) for k, v in now.items()}, "total": t - at})
        before, at = now, t
    return per_run, [label for *_, label in wrapped]


def print_split(per_run: list[dict[str, float]], labels: list[str], phases: dict) -> None:
    """Per configuration: the one-worker pool's phases (from its results) and the in-process
    split of the evaluation, first run apart from the mean of the others."""
    if phases:
        runs = phases.pop("runs")
        cpu = phases.pop("cpu")
        first = {k: v[0] for k, v in phases.items()}
        rest = {k: sum(v[1:]) / max(1, len(v) - 1) for k, v in phases.items()}
        rows = [(k, f"{first[k]:.2f}", f"{rest[k]:.2f}") for k in phases]
        worker = sum(sum(v) for v in phases.values())
        rows.append(("outside the runs (planning, text index, writing, start-up)", "", f"{(cpu - worker) / runs:.2f}"))
        rows.append(("all (pool CPU / runs)", "", f"{cpu / runs:.2f}"))
        print("\nevaluated sweep on one worker, CPU seconds per configuration by phase (each run's `cpu_s`)")
        print(table(rows, ("phase", "first run", "mean of the others")))
    if per_run:
        rest = per_run[1:] or per_run
        rows = [(label, f"{per_run[0].get(label, 0.0):.2f}",
                 f"{sum(r.get(label, 0.0) for r in rest) / len(rest):.2f}") for label in [*labels, "total"]]
        print(f"\nthe same, {len(per_run)} configurations in this process, the evaluation's steps timed "
              "(CPU seconds per configuration; indented: part of the line above)")
        print(table(rows, ("step", "first run", "mean of the others")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[40_000, 200_000, 1_000_000])
    ap.add_argument("--policy", default="openclaw-flush")
    ap.add_argument("--sweep-events", type=int, default=100_000)
    ap.add_argument("--sweep-configs", type=int, default=100, help="rounded down to a multiple of 4")
    ap.add_argument("--sweep-workers", type=int, nargs="+", default=[1, 2],
                    help="pool sizes the sweep is run with (0 or none: no sweep)")
    ap.add_argument("--sweep-draws", nargs="+", default=["policy", "shared"], choices=["policy", "shared"],
                    help="how the sweep's summaries are drawn: policy (each configuration its own, the "
                         "default of a sweep) and/or shared (common random numbers)")
    ap.add_argument("--filler", nargs="+", default=["on", "off"], choices=list(FILLER),
                    help="the summarizer's filler in the evaluated runs and sweeps: on (the default "
                         "profile) and/or off (--no-filler: a summary is its decided lines alone)")
    ap.add_argument("--sweep-split", type=int, default=8,
                    help="configurations of the sweep run once more in this process with the evaluation's "
                         "steps timed (0: none)")
    ap.add_argument("--cache", type=Path, default=PROJECT / "datasets")
    args = ap.parse_args()
    print(f"load average before: {load()} on {os.cpu_count()} CPUs")
    in_subprocess("import workbench.engine.kernel")  # warm the numba cache once
    with tempfile.TemporaryDirectory(prefix="bench-evaluate-") as tmp:
        tmp = Path(tmp)
        runs = bench_runs(args.cache, args.sizes, args.policy, tmp, args.filler)
        workers = [w for w in args.sweep_workers if w > 0]
        sweep, phases = ([], {})
        if workers:
            sweep, phases = bench_sweep(args.cache, args.sweep_events, args.sweep_configs, tmp, workers,
                                        args.sweep_draws, args.filler)
        split = timed_split(args.cache, args.sweep_events, args.sweep_split, tmp) if args.sweep_split else ([], [])
    rows = []
    for n, (p, evaluated) in runs.items():
        for filler, e in evaluated.items():
            rows.append((f"{n:,}", filler, f"{p['wall']:.1f}", f"{p['cpu']:.1f}", f"{p['rss']:,.0f}",
                         f"{e['wall']:.1f}", f"{e['cpu']:.1f}", f"{e['rss']:,.0f}", f"{e['wall'] / p['wall']:.2f}",
                         f"{e['cpu'] / p['cpu']:.2f}", f"{e['index']:.1f}", e["load"]))
    print(f"\n`workbench simulate --policy {args.policy}` without and with --evaluate, the summarizer's "
          "filler on (the default) and off (--no-filler) (wall and CPU seconds, peak RSS MB, one process each; "
          "the evaluated run reads the dataset's text index, which a dataset's first evaluation builds and "
          "stores: `index cpu s` more, once)")
    print(table(rows, ("events", "filler", "plain s", "plain cpu s", "plain MB", "evaluated s", "evaluated cpu s",
                       "evaluated MB", "wall ratio", "cpu ratio", "index cpu s", "load 1/5/15 min")))
    sizes = sorted(runs)
    for small, big in zip(sizes, sizes[1:], strict=False):
        for filler in args.filler:
            e_small, e_big = runs[small][1][filler], runs[big][1][filler]
            print(f"evaluated (filler {filler}) {big:,} / {small:,} events ({big / small:.0f}x the events): wall "
                  f"{e_big['wall'] / e_small['wall']:.2f}x, cpu {e_big['cpu'] / e_small['cpu']:.2f}x")
    print(f"\nevaluated sweep: {args.sweep_configs} openclaw-flush configurations x {args.sweep_events:,} events, "
          "process pool (cpu: this process and its workers; each worker pays its start-up once: "
          "imports, the dataset's text index)")
    if sweep:
        print(table(sweep, ("draws", "filler", "workers", "runs", "failed", "elapsed s", "runs/s", "cpu s",
                            "load 1/5/15 min")))
    for how, filler in ((d, f) for f in args.filler for d in args.sweep_draws):
        mine = [row for row in sweep if row[:2] == (how, filler)]
        if len(mine) == 2:
            print(f"speed-up ({how} draws, filler {filler}) {mine[0][2]} -> {mine[1][2]} workers: "
                  f"{float(mine[1][6]) / float(mine[0][6]):.2f}x")
    print_split(*split, phases)
    print(f"load average after: {load()}")
    acceptance(runs, sweep, args.sweep_configs - args.sweep_configs % 4, args.sweep_events)


def acceptance(runs: dict[int, tuple[dict, dict[str, dict]]], sweep: list[tuple], configs: int,
               events: int) -> None:
    """The targets of docs/targets.md beside the figures that judge them (figures, not
    assertions), per filler setting: at the largest size, evaluated / plain CPU and the
    evaluated peak; per pair of sizes, the evaluated CPU ratio over the event ratio; the
    one-worker sweep's CPU."""
    sizes = sorted(runs)
    for filler in (runs[sizes[-1]][1] if runs else {}):
        n = sizes[-1]
        p, e = runs[n][0], runs[n][1][filler]
        print(f"acceptance (filler {filler}): {n:,} events evaluated / plain CPU {e['cpu'] / p['cpu']:.2f}x "
              f"(target <= 3x at 1 M), evaluated peak {e['rss']:,.0f} MB (target <= 1,024 MB), evaluated "
              f"{e['cpu']:.1f} s CPU (target <= 15 s at 1 M; load {e['load']}); a first evaluation of the dataset "
              f"{(e['cpu'] + e['index']) / p['cpu']:.2f}x (it builds and stores the text index)")
        for small, big in zip(sizes, sizes[1:], strict=False):
            grow = runs[big][1][filler]["cpu"] / runs[small][1][filler]["cpu"]
            print(f"acceptance (filler {filler}): evaluated CPU {big:,} / {small:,}: {grow:.2f}x for "
                  f"{big / small:.1f}x the events = {grow / (big / small):.2f}x the event ratio (target <= 1.2x)")
    for row in (row for row in sweep if row[2] == 1):
        print(f"acceptance: evaluated sweep {configs} configurations x {events:,} events on one worker, "
              f"{row[0]} draws, filler {row[1]}: {row[7]} s CPU (target <= 120 s for 100 x 100k; load {row[8]})")


if __name__ == "__main__":
    main()
