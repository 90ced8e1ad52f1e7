"""Import throughput on the bundled Claude Code logs (target: >= 20 MB/s), and calibration.

Run::

    .venv/bin/python benchmarks/bench_import.py            # Claude Code logs, 5 repeats
    .venv/bin/python benchmarks/bench_import.py --codex    # add the Codex rollouts
    .venv/bin/python benchmarks/bench_import.py --repeat 10 --path some/logs

Phases, timed separately (median and best of the repeats, after one warm-up run):

* parse + build: read files, detect, parse every record, build the Arrow events table
  (pairing, chars) — no tokenization; this is the figure the 20 MB/s target is about;
* tokenize: exact ``cl100k`` counts (:mod:`workbench.tokens.exact_count`: each distinct
  text or long-text piece once, on one thread per CPU) and the ``approx`` estimator;
* full import: :func:`workbench.sources.importer.import_paths` end to end (tokenizers,
  calibration, Parquet + manifest written atomically), with its phases.

MB/s is input bytes (the JSONL files) per second, 1 MB = 10^6 bytes. Wall times on a shared
machine swing with the other load (printed first): read the best-of column and the CPU
seconds (all threads) next to the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "datasets" / "bundled"  # the real logs shipped with the project


def _timeit(fn, repeat: int):
    """(median wall, best wall, median CPU seconds of the process, all threads)."""
    fn()  # warm-up: imports, numba compile/cache load, page cache
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(times), min(times), statistics.median(cpu)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", type=Path, action="append", help="logs to import (default: bundled Claude Code)")
    ap.add_argument("--codex", action="store_true", help="also import the bundled Codex rollouts")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)

    from workbench.sources import load_formats
    from workbench.sources.importer import build_tables, collect_files, import_paths, parse_files
    from workbench.tokens.tokenizers import count_texts

    paths = args.path or [RECORDED / "claude-code"]
    if args.codex:
        paths.append(RECORDED / "codex")
    for p in paths:
        if not p.exists():
            print(f"no such path: {p}", file=sys.stderr)
            return 2
    load_formats()
    files = collect_files(paths)
    res = parse_files(files)
    mb = res.bytes / 1e6
    events, *_ = build_tables(res, ())
    text = events.column("text")
    text_mb = sum(len(t.encode()) for t in text.to_pylist() if t) / 1e6

    rows = []

    def row(what, med, best, cpu, size_mb=mb, note=""):
        rows.append((what, med, best, cpu, size_mb / med, size_mb / best, note))

    row("parse + build (no tokens)", *_timeit(lambda: build_tables(parse_files(collect_files(paths)), ()),
                                              args.repeat))
    row("  of which parse", *_timeit(lambda: parse_files(collect_files(paths)), args.repeat))
    for tok in ("cl100k", "approx"):
        row(f"tokenize {tok}", *_timeit(lambda tok=tok: count_texts(text, tok), args.repeat),
            note=f"{text_mb:.1f} MB of text; MB/s of input")
    phases: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ds"

        def full() -> None:
            phases.append({})
            import_paths(paths, out, timings=phases[-1])

        row("full import (cl100k+approx, write)", *_timeit(full, args.repeat), note="target >= 20 MB/s")
        ds = import_paths(paths, out)
        cal = ds.manifest["import"]["calibration"]
        conts = ds.continuities()

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\ninput: {len(res.files)} files, {mb:.2f} MB, {events.num_rows:,} events, "
          f"{len(conts)} continuities; repeats: {args.repeat} (after 1 warm-up); "
          f"{os.cpu_count()} CPUs, load average {load:.2f}\n")
    head = (f"{'phase':38s} {'median s':>9s} {'best s':>8s} {'CPU s':>7s} {'MB/s med':>9s} "
            f"{'MB/s best':>10s}  note")
    print(head)
    print("-" * len(head))
    for what, m, b, c, r1, r2, note in rows:
        print(f"{what:38s} {m:9.3f} {b:8.3f} {c:7.3f} {r1:9.1f} {r2:10.1f}  {note}")
    keys = ("parse_s", "build_s", "tokenize_s", "calibrate_s", "write_s")
    med = {k: statistics.median(p.get(k, 0.0) for p in phases[1:]) for k in keys}  # [0]: warm-up
    print("full import, median seconds by phase: " + ", ".join(f"{k[:-2]} {v:.3f}" for k, v in med.items()))
    full_row = rows[-1]
    print(f"full import (target >= 20 MB/s): {full_row[4]:.1f} MB/s median wall, {full_row[5]:.1f} best, "
          f"{mb / full_row[3]:.1f} MB per CPU second (all threads: about the rate on one free core), "
          f"load average {load:.2f}")

    print("\ncalibration: recorded prompt tokens ≈ a + b · counted cl100k tokens of the visible context")
    head = (f"{'continuity':48s} {'reqs':>5s} {'b':>6s} {'a':>9s} {'APE med':>8s} {'APE p90':>8s} "
            f"{'CV med':>7s} {'raw med':>8s}  status")
    print(head)
    print("-" * len(head))
    def fmt(c: dict, key: str, spec: str = "{:.2f}%") -> str:
        return spec.format(c[key]) if key in c else "-"

    for cid in conts["continuity_id"].to_list():
        c = cal[cid]
        raw = c.get("uncalibrated", {}).get("ape_median_pct")
        raw_s = f"{raw:.1f}%" if raw is not None else "-"
        print(f"{cid[:48]:48s} {c['requests_with_usage']:5d} {fmt(c, 'factor', '{:.3f}'):>6s} "
              f"{fmt(c, 'intercept', '{:,.0f}'):>9s} {fmt(c, 'ape_median_pct'):>8s} "
              f"{fmt(c, 'ape_p90_pct'):>8s} {fmt(c, 'cv_ape_median_pct'):>7s} {raw_s:>8s}  {c['status']}")
    print("\nAPE: absolute percentage error of the fitted line per request (in sample); CV: 5-fold "
          "cross-validated median; raw: error of the uncalibrated count.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
