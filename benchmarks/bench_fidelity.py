"""Fidelity of the ``as-recorded`` replay against the recorded usage of the real logs.

Run::

    .venv/bin/python benchmarks/bench_fidelity.py                 # imports the workplace's shared/datasets/recorded
    .venv/bin/python benchmarks/bench_fidelity.py --dataset /tmp/rec --engine reference
    .venv/bin/python benchmarks/bench_fidelity.py --out /tmp/fidelity   # also write the frames

Prints the per-source summary of :func:`workbench.evaluate.fidelity.fidelity_table`
(median/p90 absolute percentage errors of the calibrated prompt, cache read, cache write
and output; cache misses recorded vs simulated; compaction requests and preTokens), the
per-continuity prompt errors next to the import manifest's own calibration errors, and
each compaction's summarizer call (recorded by a Claude Code ``agent-acompact`` file vs
the simulated compaction call).
These are measurements, not pass/fail targets; the module docstring explains them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT.parent / "shared" / "datasets" / "recorded"
sys.path.insert(0, str(ROOT))


def _f(v, nd: int = 1) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, help="an imported dataset (default: import the recorded logs)")
    ap.add_argument("--engine", default="kernel", choices=("kernel", "reference"))
    ap.add_argument("--tokenizer", default="cl100k")
    ap.add_argument("--out", type=Path, help="write requests/compactions/continuities/summary Parquet here")
    args = ap.parse_args(argv)

    from benchmarks._util import table
    from workbench.evaluate.fidelity import fidelity_table, render_summary

    with tempfile.TemporaryDirectory() as tmp:
        path = args.dataset
        if path is None:
            from workbench.sources.importer import import_paths

            path = Path(tmp) / "recorded"
            t0 = time.perf_counter()
            import_paths([RECORDED], path)
            print(f"imported {RECORDED} in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        res = fidelity_table(path, engine=args.engine, tokenizer=args.tokenizer)
        took = time.perf_counter() - t0
    print(f"fidelity_table ({args.engine} engine, {args.tokenizer}): {took:.2f} s\n")
    print(render_summary(res))
    print()
    rows = []
    for r in res["summary"].iter_rows(named=True):
        rows.append((r["source_format"], f"{r['cache_misses_recorded']}/{r['cache_misses_simulated']}",
                     f"{_f(r['cache_write_ape_median'])} / {_f(r['cache_write_ape_p90'])}",
                     _f(r["output_total_ratio"], 2), r["output_placeholders"],
                     f"{_f(r['output_ape_median_without_placeholders'])} / {_f(r['output_ape_p90_without_placeholders'])}"))
    print(table(rows, ("source", "cache misses rec/sim", "cache-write APE med/p90 %", "output sim/rec",
                       "output snapshots", "output APE w/o snapshots %")))
    print()
    rows = []
    for r in res["continuities"].iter_rows(named=True):
        rows.append((r["continuity_id"][:44], r["source_format"],
                     f"{r['requests_compared']}/{r['requests_recorded']}", r["calibration_status"][:24],
                     f"{_f(r['prompt_ape_median'])} / {_f(r['prompt_ape_p90'])}",
                     f"{_f(r['calibration_ape_median_pct'])} / {_f(r['calibration_cv_ape_median_pct'])}",
                     _f(r["prompt_uncalibrated_ape_median"]),
                     f"{_f(r['cache_read_ape_median'])} / {_f(r['cache_read_ape_p90'])}",
                     f"{_f(r['output_ape_median'])}"))
    print(table(rows, ("continuity", "source", "compared", "calibration", "prompt APE med/p90 %",
                       "manifest in/cv %", "uncal. %", "cache-read APE %", "output APE %")))
    print()
    rows = []
    for r in res["compactions"].iter_rows(named=True):
        rows.append((r["continuity_id"][:44], r["trigger"], r["recorded_request"], r["simulated_request"],
                     r["recorded_summarizer_prompt"] if r["recorded_summarizer_prompt"] is not None else "-",
                     r["recorded_summarizer_cache_read"] if r["recorded_summarizer_cache_read"] is not None else "-",
                     r["simulated_summarizer_prompt"], r["simulated_summarizer_cache_read"],
                     _f(r["calibrated_summarizer_prompt"], 0)))
    print(table(rows, ("compaction", "trigger", "recorded req", "simulated req", "summarizer rec prompt",
                       "rec read", "sim prompt", "sim read", "calibrated")))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for name in ("requests", "compactions", "continuities", "summary"):
            res[name].write_parquet(args.out / f"{name}.parquet")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
