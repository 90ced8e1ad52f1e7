"""A real model's speed on this machine: llama.cpp's server with SmolLM2-135M-Instruct (the
``local-llm`` extra, ``make local-llm``) as the HTTP summarizer.

    .venv/bin/python benchmarks/bench_local_llm.py                   # idle cores' threads, 60 events, 3 samples
    .venv/bin/python benchmarks/bench_local_llm.py --threads 1 --events 300 --samples 1

Prints the server's start time, its throughput on a short prompt (tokens/s, as
``workbench serve-model`` prints it), and an evaluated run's summaries/minute: a generated
coding continuity replayed under ``simulations/local-llm/small-spans.yaml`` (spans of 1-2.5k
tokens, summaries of at most 48 tokens), every compaction's summary written by the model
(no cassette), with the prompt and written tokens the server reported; then the summary
variance: every summary written ``--samples`` times in all (``--summary-samples``: the
server's default temperature, then temperature 1 with seeds 1, 2, ...) and the spread of
retention and summary size over the samples. Figures only, no
assertions; the machine may be shared: the load average is printed. Without the extra it
says so and exits 0 (``make bench`` runs every benchmark).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SPEC = ROOT / "simulations" / "local-llm" / "small-spans.yaml"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None,
                    help="model threads (default: the idle cores, 1 or 2: local_server.default_threads)")
    ap.add_argument("--events", type=int, default=60)
    ap.add_argument("--samples", type=int, default=3, help="summary samples (1: no variance)")
    args = ap.parse_args(argv)

    from workbench.summarize import local_server as L

    try:
        L.require_server()
        L.default_model_path()
    except L.LocalModelUnavailable as exc:
        print(f"skipped: {exc}")
        return 0
    from workbench.engine.run import simulate
    from workbench.evaluate.pipeline import evaluate_run
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-local-llm-") as tmp:
        ds = generate_dataset(GeneratorConfig(profile="coding", events=args.events, seed=3, facts=12, secrets=8),
                              Path(tmp) / "ds")
        result = simulate(ds, [str(SPEC)], keep_inputs=True)
        t0 = time.perf_counter()
        with L.LocalModelServer(threads=args.threads, context_tokens=8192) as server:
            started = time.perf_counter() - t0
            print(f"server: {server.model.name}, {server.threads} threads, answering after {started:.1f} s")
            print(server.throughput().describe())
            options = {"base_url": server.base_url, "model": L.MODEL_ALIAS}
            t1 = time.perf_counter()
            ev = evaluate_run(result, ds, summarizer="http", summarizer_options=options,
                              summary_samples=args.samples)
            seconds = time.perf_counter() - t1
        n = ev["texts"].height
        asked = n * args.samples
        comp = ev["compactions"]
        written = int(comp["summary_text_tokens"].sum())
        print(f"evaluated run: {asked} summaries ({n} x {args.samples} samples) in {seconds:.1f} s = "
              f"{60 * asked / seconds:.1f} summaries/minute ({args.events} events, "
              f"{comp['dropped_tokens'].sum():,} tokens summarized, ~{written:,} tokens written by sample 0)")
        flagged = comp.filter(comp["degenerate"].list.len() > 0).height
        print(f"degenerate summaries: {flagged} of {comp.height}")
        if args.samples > 1:
            from workbench.evaluate.samples import spread

            for policy, metrics in spread(ev["samples"]).items():
                r, t = metrics["retention"], metrics["summary_tokens"]
                print(f"summary variance over {args.samples} samples ({policy}): retention mean {r['mean']:.3f}, "
                      f"std {r['std']:.3f}, range {r['min']:.3f}-{r['max']:.3f}; summary tokens mean "
                      f"{t['mean']:.1f}, std {t['std']:.1f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
