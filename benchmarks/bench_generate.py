"""Generator throughput at 1 M and 10 M events, with peak memory (each size in a fresh process).

    .venv/bin/python benchmarks/bench_generate.py [--sizes 1000000 10000000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import in_subprocess, table  # noqa: E402

CODE = """
import json, tempfile, time, resource
from workbench.synth.generate import GeneratorConfig, build_continuity, generate_dataset
n = {n}
cfg = GeneratorConfig(profile="{profile}", events=n, seed=1)
build_continuity(GeneratorConfig(profile="{profile}", events=1000, seed=1))  # warm numba/tiktoken
t = time.perf_counter(); c = build_continuity(cfg); build = time.perf_counter() - t
with tempfile.TemporaryDirectory() as d:
    t = time.perf_counter(); generate_dataset(cfg, d + "/ds"); total = time.perf_counter() - t
print(json.dumps({{"build_s": build, "total_s": total, "text": c.text_mode,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--profile", default="coding")
    args = ap.parse_args()
    rows = []
    for n in args.sizes:
        r = json.loads(in_subprocess(CODE.format(n=n, profile=args.profile)))
        rows.append((f"{n:,}", r["text"], f"{r['build_s']:.2f}", f"{n / r['build_s']:,.0f}",
                     f"{r['total_s']:.2f}", f"{n / r['total_s']:,.0f}", f"{r['rss_mb']:,.0f}"))
    print(f"generator, profile {args.profile} (build = structure + text + tokens + planting; "
          "total = build + validation + Parquet write)")
    print(table(rows, ("events", "text", "build s", "build ev/s", "total s", "total ev/s", "peak RSS MB")))


if __name__ == "__main__":
    main()
