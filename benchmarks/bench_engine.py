"""Replay engine benchmarks (docs/targets.md): kernel vs reference, structural replay
throughput at 1 M and 10 M events, per-request cost at 10 k vs 1 M events, peak memory of
the 10 M replay, and cold vs warm numba start. Prints tables; asserts nothing.

    .venv/bin/python benchmarks/bench_engine.py                  # everything (~5-10 min)
    .venv/bin/python benchmarks/bench_engine.py --sizes 10000 1000000 --ref-events 2000

Continuities are synthetic ``coding`` runs (``text="labels-only"``, no planted facts or
secrets), prepared once in a subprocess and kept as ``.npz`` under ``--cache``; every
measurement of a size runs in a fresh interpreter (fresh peak-RSS counter, numba cache
warmed first). "first" replays build the continuity's policy-independent position arrays;
"warm" replays reuse them, as a sweep over one continuity does. Times are wall clock and
process CPU; on a loaded machine the CPU figure is the steadier one.

Fresh memory is part of every replay (the ledger alone is 104 bytes per request). On VMs
whose memory is backed lazily by the host, first-touch page faults can dominate: a
sweep worker can keep freed memory in-process with ``MALLOC_MMAP_MAX_=0
MALLOC_TRIM_THRESHOLD_=<large>`` (glibc), which makes repeated replays steadier.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _util import table  # noqa: E402

POLICIES = ("claude-code", "no-compaction", "openhands-default", "observation-masking",
            "anthropic-clear-tool-uses")
WINDOW, CACHE_MODE, TTL_MS, GRANULARITY = 200_000, 1, 300_000.0, 1

# prepare a continuity and keep the arrays a replay needs (the kernel ignores message ids)
PREPARE = """
import dataclasses, numpy as np, polars as pl, time
from workbench.synth.generate import GeneratorConfig, build_continuity
from workbench.engine.prepare import prepare_continuity
t = time.perf_counter()
c = build_continuity(GeneratorConfig(profile="coding", events={n}, seed={seed}, text="labels-only",
                                     facts=0, secrets=0, hard_negatives=0))
cols = ["kind", "role", "flags", "seq", "tokens_cl100k", "request", "ts_ms", "pair_seq", "name", "message_id"]
inp = prepare_continuity(pl.from_arrow(c.events).select(cols), continuity=0, continuity_id="bench",
                         tokenizer="cl100k")
arrays = {{f.name: getattr(inp, f.name) for f in dataclasses.fields(inp)
          if isinstance(getattr(inp, f.name), np.ndarray)}}
np.savez(r"{path}", **arrays)
print(time.perf_counter() - t)
"""

# shared by the measuring subprocesses
LOAD = """
import json, os, resource, sys, time
import numpy as np
def rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
from workbench.engine.prepare import ReplayInput
def load(path):
    z = np.load(path)
    arrays = {{k: z[k] for k in z.files if k != "tool_name"}}
    arrays.setdefault("tool_code", np.full(arrays["seq"].size, -1, np.int64))  # caches from before the codes
    return lambda: ReplayInput(continuity=0, continuity_id="bench", message_id=[], tool_names=(),
                               model=None, provider=None, context_window=-1, **arrays)
"""

THROUGHPUT = LOAD + """
from workbench.engine.kernel import replay_kernel
from workbench.engine.presets import PRESETS
new_input = load(r"{path}")
small = load(r"{small}")()
for name in {policies!r}:  # warm the numba cache for every policy path before timing
    replay_kernel(small, *PRESETS[name].lower({window}, {mode}, {ttl}, {gran}))
inp = new_input()
base_rss = rss_mb()
out = {{"n": int(inp.n), "requests": int(inp.n_requests), "input_mb": base_rss}}
for name in {policies!r}:
    cfg, params = PRESETS[name].lower({window}, {mode}, {ttl}, {gran})
    inp = new_input()  # a fresh input: the first replay builds its position arrays
    t, c = time.perf_counter(), time.process_time()
    ledger, events = replay_kernel(inp, cfg, params)
    first = (time.perf_counter() - t, time.process_time() - c)
    del ledger, events
    warm = []
    for _ in range({reps}):
        t, c = time.perf_counter(), time.process_time()
        ledger, events = replay_kernel(inp, cfg, params)
        warm.append((time.perf_counter() - t, time.process_time() - c))
        rows = len(ledger)
        del ledger, events
    out[name] = {{"first": first, "warm_wall": min(w for w, _ in warm), "warm_cpu": min(c for _, c in warm),
                 "ledger_rows": rows}}
out["peak_mb"] = peak_mb()
print(json.dumps(out))
"""

COLD = LOAD + """
t0 = time.perf_counter()
from workbench.engine.kernel import replay_kernel
from workbench.engine.presets import PRESETS
inp = load(r"{small}")()
t1 = time.perf_counter()
replay_kernel(inp, *PRESETS["claude-code"].lower({window}, {mode}, {ttl}, {gran}))
t2 = time.perf_counter()
for name in {policies!r}:
    replay_kernel(inp, *PRESETS[name].lower({window}, {mode}, {ttl}, {gran}))
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first": t2 - t1, "all": t3 - t1, "total": t3 - t0}}))
"""


def run(code: str, env: dict | None = None) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    if out.returncode:
        raise SystemExit(f"subprocess failed:\n{out.stderr[-3000:]}")
    return out.stdout.strip().splitlines()[-1]


def prepared(cache: Path, n: int, seed: int = 1) -> Path:
    path = cache / f"coding-{n}-s{seed}.npz"
    if not path.exists():
        print(f"  preparing a {n:,}-event coding continuity ...", flush=True)
        secs = float(run(PREPARE.format(n=n, seed=seed, path=path)))
        print(f"  ... {secs:.0f} s (generate + prepare_continuity)", flush=True)
    return path


def fmt_rate(n: int, secs: float) -> str:
    return f"{n / secs / 1e6:.1f}"


def kernel_vs_reference(path: Path, policies: tuple[str, ...]) -> None:
    code = (LOAD + """
from workbench.engine.kernel import replay_kernel
from workbench.engine.reference import replay_reference
from workbench.engine.presets import PRESETS
new_input = load(r"{path}")
out = {{}}
for name in {policies!r}:
    cfg, params = PRESETS[name].lower({window}, {mode}, {ttl}, {gran})
    inp = new_input()
    replay_kernel(new_input(), cfg, params)  # numba cache load / compile, not timed
    t = time.perf_counter(); replay_kernel(inp, cfg, params); first = time.perf_counter() - t
    warm = []
    for _ in range(5):
        t = time.perf_counter(); k_led, k_ev = replay_kernel(inp, cfg, params); warm.append(time.perf_counter() - t)
    t = time.perf_counter(); r_led, r_ev = replay_reference(inp, cfg, params); ref = time.perf_counter() - t
    same = bool(np.array_equal(k_led, r_led) and np.array_equal(k_ev, r_ev))
    out[name] = {{"ref": ref, "first": first, "warm": min(warm), "same": same, "n": int(inp.n),
                 "requests": int(inp.n_requests)}}
print(json.dumps(out))
""").format(path=path, policies=policies, window=WINDOW, mode=CACHE_MODE, ttl=TTL_MS, gran=GRANULARITY)
    res = json.loads(run(code))
    rows = []
    for name, r in res.items():
        rows.append((name, f"{r['ref']:.2f}", f"{r['first'] * 1e3:.2f}", f"{r['warm'] * 1e3:.2f}",
                     f"{r['ref'] / r['first']:,.0f}x", f"{r['ref'] / r['warm']:,.0f}x", "yes" if r["same"] else "NO"))
    any_r = next(iter(res.values()))
    print(f"\n1. kernel vs reference: coding, {any_r['n']:,} events, {any_r['requests']:,} requests, "
          f"window {WINDOW:,} (target >= 100x)")
    print(table(rows, ("policy", "reference s", "kernel first ms", "kernel warm ms", "ratio first",
                       "ratio warm", "identical")))


def throughput(paths: dict[int, Path], small: Path, policies: tuple[str, ...], reps: int) -> dict:
    results = {}
    for n, path in paths.items():
        code = THROUGHPUT.format(path=path, small=small, policies=policies, reps=reps, window=WINDOW,
                                 mode=CACHE_MODE, ttl=TTL_MS, gran=GRANULARITY)
        results[n] = json.loads(run(code))
    rows = []
    for n, r in results.items():
        for name in policies:
            p = r[name]
            rows.append((f"{n:,}", name, f"{p['first'][0]:.3f}", fmt_rate(n, p["first"][0]),
                         fmt_rate(n, p["first"][1]), f"{p['warm_wall']:.3f}", fmt_rate(n, p["warm_wall"]),
                         fmt_rate(n, p["warm_cpu"])))
    print(f"\n2. structural replay throughput, one core (target >= 20 M events/s); M ev/s by wall "
          f"and by CPU time; first = a new ReplayInput (builds its position arrays), warm = best "
          f"of {reps} further replays")
    print(table(rows, ("events", "policy", "first s", "first M ev/s", "(cpu)", "warm s", "warm M ev/s",
                       "(cpu)")))
    return results


def per_request(results: dict, small_n: int, big_n: int, policies: tuple[str, ...]) -> None:
    if small_n not in results or big_n not in results:
        return
    rows = []
    for name in policies:
        a, b = results[small_n], results[big_n]
        us_a = a[name]["warm_cpu"] / a["requests"] * 1e6
        us_b = b[name]["warm_cpu"] / b["requests"] * 1e6
        rows.append((name, f"{us_a:.3f}", f"{us_b:.3f}", f"{us_b / us_a:.2f}"))
    print(f"\n3. per-request cost (warm replay CPU time / requests) at {small_n:,} vs {big_n:,} events "
          "(target ratio <= 2)")
    print(table(rows, ("policy", f"us/request @{small_n:,}", f"us/request @{big_n:,}", "ratio")))


def memory(results: dict) -> None:
    rows = [(f"{n:,}", f"{r['requests']:,}", f"{r['input_mb']:,.0f}", f"{r['peak_mb']:,.0f}")
            for n, r in results.items()]
    print("\n4. memory of the replay process (input arrays loaded, then every policy replayed; "
          "target <= 2,048 MB at 10 M)")
    print(table(rows, ("events", "requests", "RSS after loading input MB", "peak RSS MB")))


def cold_warm(small: Path, policies: tuple[str, ...]) -> None:
    code = COLD.format(small=small, policies=policies, window=WINDOW, mode=CACHE_MODE, ttl=TTL_MS,
                       gran=GRANULARITY)
    with tempfile.TemporaryDirectory() as d:
        env = {"WORKBENCH_NUMBA_CACHE": d}
        cold = json.loads(run(code, env))
        warm = json.loads(run(code, env))
    rows = [(label, f"{r['import']:.2f}", f"{r['first']:.2f}", f"{r['all']:.2f}", f"{r['total']:.2f}")
            for label, r in (("cold (empty cache)", cold), ("warm (cached)", warm))]
    print("\n5. numba start, fresh interpreter, WORKBENCH_NUMBA_CACHE in a temporary directory "
          "(first replay = claude-code on a small continuity; all = every benchmarked policy)")
    print(table(rows, ("start", "import s", "first replay s", "all policies s", "total s")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000, 10_000_000])
    ap.add_argument("--ref-events", type=int, default=3_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--policies", nargs="+", default=list(POLICIES))
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "workbench-bench-engine")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    policies = tuple(args.policies)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; window {WINDOW:,}, "
          "explicit cache (Anthropic), TTL 5 min")
    small = prepared(args.cache, 2_000)
    kernel_vs_reference(prepared(args.cache, args.ref_events), policies)
    paths = {n: prepared(args.cache, n) for n in args.sizes}
    results = throughput(paths, small, policies, args.reps)
    sizes = sorted(results)
    per_request(results, sizes[0], 1_000_000 if 1_000_000 in results else sizes[-1], policies)
    memory(results)
    cold_warm(small, policies)


if __name__ == "__main__":
    main()
