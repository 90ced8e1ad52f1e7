"""ADR-0011's compile is O(k): a request's context costs the events since the last checkpoint,
not the continuity. Replays ``rip-adr0011`` at a short stride (every 200 messages, so the
events since a cut stay few) on message-dense chat continuities of growing length and prints
the time per request of each engine and its ratio to the shortest: a constant ratio is O(k)
per request, one growing with the length is O(n). tests/engine/test_compile_cost.py checks
the same without a clock (rows walked per request).

    .venv/bin/python benchmarks/bench_compile.py
    .venv/bin/python benchmarks/bench_compile.py --kernel-sizes 10000 1000000 --reference-sizes 10000 100000

Measured (shared 2-core machine, load 0.9): kernel 10 k -> 100 k -> 1 M events: 1.00x, 1.15x,
1.16x per request (~0.05 us); reference 10 k -> 100 k: 1.00x, 1.05x (~135 us). The reference
walked every visible row per request before (34 k chat events: 232 s, now 18 s).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import table  # noqa: E402

from workbench.engine.prepare import prepare_continuity  # noqa: E402
from workbench.engine.presets import get_policy  # noqa: E402
from workbench.synth.generate import GeneratorConfig, build_continuity  # noqa: E402


def chat(events: int):
    c = build_continuity(GeneratorConfig(profile="chat", events=events, seed=5, text="labels-only", facts=0,
                                         secrets=0, hard_negatives=0))
    return prepare_continuity(pl.from_arrow(c.events), continuity=0, continuity_id=f"chat-{events}",
                              tokenizer="cl100k")


def per_request_us(engine, inp, repeats: int) -> float:
    policy = get_policy("rip-adr0011", {"trigger.every_messages": 200})
    cfg, params = policy.lower(200_000, 1, 300_000.0, 1)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        engine(inp, cfg, params, np.zeros(inp.n, bool))
        best = min(best, time.perf_counter() - t0)
    return best / max(1, inp.n_requests) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel-sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--reference-sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = ap.parse_args()
    from workbench.engine.kernel import replay_kernel
    from workbench.engine.reference import replay_reference

    replay_kernel(chat(1_000), *get_policy("rip-adr0011").lower(200_000, 1, 300_000.0, 1))  # compile first
    rows = []
    for name, engine, sizes, repeats in (("kernel", replay_kernel, args.kernel_sizes, 3),
                                         ("reference", replay_reference, args.reference_sizes, 1)):
        base = None
        for n in sizes:
            inp = chat(n)
            us = per_request_us(engine, inp, repeats)
            base = base or us
            rows.append((name, f"{n:,}", f"{inp.n_requests:,}", f"{us:,.2f}", f"{us / base:.2f}x"))
    print(table(rows, ("engine", "events", "requests", "us/request", "vs shortest")))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
