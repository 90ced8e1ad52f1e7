"""Determinism audit (ADR-0011): the same inputs give byte-identical checkpoints, ledgers
and compiled-context hashes across repeats, process restarts with an empty numba cache
(the workbench keeps no other sidecar index: every replay prepares from the truth log),
worker counts, and background summarization jobs racing to write the checkpoint of one cut
point (real threads released together: the frame appended last must win under every reading
order, :func:`check_race`). Token-budget policies are also re-run under a second tokenizer to
count the cut points that move (tokenizer drift), against message-stride policies.

Every check yields rows ``(check, policy, status, detail)``; ``status`` is ``pass``,
``fail`` or ``skip`` (a policy that made no checkpoint has nothing to race); drift rows are
measurements, status ``info``. The audit fails when no policy had a checkpoint to race.
"""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from workbench.engine.checkpoints import Checkpoint, select_checkpoint
from workbench.engine.policy import Policy
from workbench.rundir import wire as W

CHECKPOINT = W.CHECKPOINT_EVENT
TRUNCATION = W.TRUNCATION_EVENT  # an overflow's truncation: a cut, not a checkpoint frame
CUTS = (CHECKPOINT, TRUNCATION)


def _frame_hash(frame) -> str:
    """Hash of a frame's content (column names, types and values), independent of file
    format and memory layout. Arrow bytes are not canonical: string views keep sharing the
    buffers of the frame they were filtered from, null slots and validity bitmaps vary with
    how a column was built, so the same rows taken from a 17-policy run and from a 1-policy
    run would hash apart. The schema and NDJSON text of the values are canonical."""
    h = hashlib.sha256(repr(list(frame.schema.items())).encode())
    h.update(frame.write_ndjson().encode())
    return h.hexdigest()


def run_hashes(result) -> dict[str, dict[str, str]]:
    """Per policy: hashes of its ledger, its cuts (checkpoint frames and overflow truncations)
    and its compiled contexts."""
    import polars as pl

    out = {}
    for name in result.summary["policy"].unique(maintain_order=True).to_list():
        led = result.ledger.filter(pl.col("policy") == name).drop("run_id")
        cps = result.events.filter((pl.col("policy") == name) & pl.col("event_type").is_in(CUTS))
        cps = cps.drop("run_id").select(sorted(cps.drop("run_id").columns))
        out[name] = {"ledger": _frame_hash(led), "checkpoints": _frame_hash(cps),
                     "compiled_context": compiled_context_hash(result, name)}
    return out


def compiled_context_hash(result, policy_name: str) -> str:
    """Hash of the compiled context (items, in order) at every request after a compaction or
    a truncation and at the last request, for every continuity."""
    import polars as pl

    from workbench.evaluate.context import ContextTracker
    from workbench.evaluate.texts import policies_of

    policy = policies_of(result)[policy_name]
    h = hashlib.sha256()
    for cid, inp in sorted(result.inputs.items()):
        ev = result.events.filter((pl.col("policy") == policy_name) & (pl.col("continuity_id") == cid))
        cps = ev.filter(pl.col("event_type") == CHECKPOINT)
        cut_requests = ev.filter(pl.col("event_type").is_in(CUTS))["request"].to_list()
        probe = sorted(set(cut_requests) | ({inp.n_requests - 1} if inp.n_requests else set()))
        frames = [Checkpoint(int(r["frame_seq"]), int(r["from_seq"]), int(r["to_seq"]), r["summary_artifact_id"])
                  for r in cps.iter_rows(named=True)]
        tracker = ContextTracker(inp, policy, result.events, record=result.prompt_record(policy_name, cid))
        for r in probe:
            tracker.advance(r)
            p = int(inp.req_first_row[r])
            compile_from = int(inp.seq[p - 1]) if p > 0 else -1
            chosen = select_checkpoint(frames, compile_from)
            items = [("row", int(inp.seq[i])) for i in tracker.head(p)]
            items += [("ret", int(inp.seq[i])) for i in tracker.state.retained]
            items += [("seg", a, t) for a, t in tracker.shown_segments]
            items += [("raw", int(inp.seq[i])) for i in tracker.raw_rows(r)]
            h.update(repr((cid, r, chosen.artifact_id if chosen else None, chosen.to_seq if chosen else None,
                           items)).encode())
    return h.hexdigest()


def _simulate(dataset, policies, **kw):
    from workbench.engine.run import simulate

    return simulate(dataset, policies, **kw)


def _simulate_hashes(dataset_path: str, policy_dicts: list[dict], engine: str, tokenizer: str) -> dict:
    """Process-pool / subprocess entry point (module-level so it pickles)."""
    policies = [Policy.from_dict(d) for d in policy_dicts]
    return run_hashes(_simulate(dataset_path, policies, engine=engine, tokenizer=tokenizer))


def _compare(check: str, base: dict, other: dict, rows: list[dict], detail: str) -> None:
    for name, hashes in base.items():
        diff = [k for k, v in hashes.items() if other.get(name, {}).get(k) != v]
        rows.append({"check": check, "policy": name, "status": "fail" if diff else "pass",
                     "detail": detail + (f"; differs: {', '.join(diff)}" if diff else "")})


def audit_determinism(dataset, policies: Sequence[str | Policy], *, engine: str = "kernel",
                      tokenizer: str = "cl100k", drift_tokenizer: str = "approx", repeats: int = 2,
                      racers: int = 3, seed: int = 0, progress: bool = False) -> dict[str, Any]:
    """Byte-identical ledgers, checkpoints and compiled contexts across repeats, a cold
    process, worker counts, the reference engine, and concurrent checkpoint writers;
    tokenizer drift of the cuts."""
    import polars as pl

    from workbench.continuity.dataset import Dataset, load_dataset
    from workbench.engine.presets import get_policy

    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    pols = [p if isinstance(p, Policy) else get_policy(p) for p in policies]
    dicts = [p.to_dict() for p in pols]
    rows: list[dict[str, Any]] = []

    base_result = _simulate(ds, pols, engine=engine, tokenizer=tokenizer)
    base = run_hashes(base_result)
    for i in range(1, repeats):
        _compare("repeat", base, run_hashes(_simulate(ds, pols, engine=engine, tokenizer=tokenizer)), rows,
                 f"in-process repeat {i + 1}")

    # a fresh interpreter with an empty numba cache: process restart + dropped caches
    with tempfile.TemporaryDirectory() as cache:
        code = ("import json, sys; from workbench.evaluate.determinism import _simulate_hashes; "
                "print(json.dumps(_simulate_hashes(*json.loads(sys.stdin.read()))))")
        import json
        import os

        env = {**os.environ, "WORKBENCH_NUMBA_CACHE": cache}
        out = subprocess.run([sys.executable, "-c", code], input=json.dumps([str(ds.path), dicts, engine, tokenizer]),
                             capture_output=True, text=True, env=env)
        if out.returncode != 0:
            from workbench.errors import WorkbenchError

            raise WorkbenchError("the cold-process replay of the determinism audit failed "
                                 f"(exit {out.returncode}):\n{out.stderr[-2000:]}")
        _compare("process_restart_cold_cache", base, json.loads(out.stdout), rows,
                 "new interpreter, empty numba cache directory")

    # worker counts: one process per policy (2 workers) vs all in one
    import multiprocessing

    merged: dict = {}
    # spawn, not fork: forking a process that runs polars/numba thread pools can deadlock
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for h in pool.map(_simulate_hashes, [str(ds.path)] * len(dicts), [[d] for d in dicts],
                          [engine] * len(dicts), [tokenizer] * len(dicts)):
            merged.update(h)
    _compare("worker_count", base, merged, rows, "2 worker processes, one policy each, vs 1 process")

    # engines agree (the kernel engine against its reference oracle)
    if engine == "kernel":
        _compare("engine_parity", base, run_hashes(_simulate(ds, pols, engine="reference", tokenizer=tokenizer)),
                 rows, "numba kernel engine vs pure-Python reference engine")

    # concurrent background summarization jobs racing to write checkpoint frames
    rng = random.Random(seed)
    raced = 0
    for name in base:
        cps = base_result.events.filter((pl.col("policy") == name) & (pl.col("event_type") == CHECKPOINT))
        if cps.height == 0:
            rows.append({"check": "shuffled_background_jobs", "policy": name, "status": "skip",
                         "detail": "no compactions: nothing to race"})
            continue
        raced += cps.height
        problems = [p for _trial in range(3) for p in check_race(cps, racers, random.Random(rng.random()))]
        rows.append({"check": "shuffled_background_jobs", "policy": name, "status": "fail" if problems else "pass",
                     "detail": (f"{racers} writers per cut point released together, seeded delays, 3 trials; "
                                "the frame appended last wins under every reading order")
                               + (f"; {len(problems)} problems, first: {problems[0]}" if problems else "")})

    drift = tokenizer_drift(ds, pols, engine=engine, tokenizer=tokenizer, other=drift_tokenizer)
    table = pl.DataFrame(rows, schema={"check": pl.String, "policy": pl.String, "status": pl.String,
                                       "detail": pl.String})
    # an audit whose races had no checkpoint to select checked nothing of ADR-0011: no pass
    passed = bool((table["status"] != "fail").all()) and raced > 0
    return {"checks": table, "drift": drift, "passed": passed, "hashes": base,
            "checked": {"policies": len(base), "checkpoints_raced": raced, **check_counts(table)}}


def check_counts(table) -> dict[str, int]:
    """How many checks of a determinism table ran (``checks``: passed + failed), passed,
    failed, and were skipped (nothing to check: a skip is not a check). The one count the
    command line, the demo and the report print (:func:`describe_checks`)."""
    status = table["status"].to_list()
    passed, failed, skipped = status.count("pass"), status.count("fail"), status.count("skip")
    return {"checks": passed + failed, "passed": passed, "failed": failed, "skipped": skipped}


def describe_checks(counts: dict[str, int], policies: int) -> str:
    """``129 checks over 27 policies: 129 passed, 0 failed; 6 skipped``."""
    text = (f"{counts['checks']:,} checks over {policies} policies: {counts['passed']:,} passed, "
            f"{counts['failed']:,} failed")
    return text + (f"; {counts['skipped']:,} skipped (nothing to check)" if counts["skipped"] else "")


def race(cps, racers: int, rng: random.Random) -> dict[str, list[Checkpoint]]:
    """Background jobs racing to summarize each cut point of ``cps`` (checkpoint events):
    ``racers`` threads per cut point wait at a barrier, sleep a seeded delay (their
    "summarization") and append a frame with their own artifact (``<id>#job<k>``: two
    summaries of one range are two artifacts) to the continuity's stream; the append is the
    only serialised step and gives the frame its ``frame_seq`` (its stream position, after
    the frames of earlier cut points). Returns the streams by continuity id, in stream order."""
    stream: dict[str, list[Checkpoint]] = {}
    lock = threading.Lock()
    appended = [0]

    for row in cps.iter_rows(named=True):
        barrier = threading.Barrier(racers)
        delays = [rng.random() * 0.002 for _ in range(racers)]

        def job(k: int, row=row, barrier=barrier, delays=delays) -> None:
            barrier.wait()
            time.sleep(delays[k])
            with lock:
                appended[0] += 1
                stream.setdefault(row["continuity_id"], []).append(Checkpoint(
                    frame_seq=int(row["frame_seq"]) * 1_000_000 + appended[0], from_seq=int(row["from_seq"]),
                    to_seq=int(row["to_seq"]), artifact_id=f"{row['summary_artifact_id']}#job{k}"))

        threads = [threading.Thread(target=job, args=(k,)) for k in range(racers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return stream


def check_race(cps, racers: int, rng: random.Random, select=select_checkpoint) -> list[str]:
    """Race the writers of every cut point (:func:`race`), then compile right after each cut
    reading the stream in three shuffled orders: every reading must select the frame
    appended last for that cut point (stream order arbitrates, ADR-0011), whatever order it
    reads in. Returns what went wrong (empty: the tie-break holds)."""
    problems = []
    for cid, frames in race(cps, racers, rng).items():
        last = {}
        for f in frames:  # in stream order: the last one appended per cut point remains
            last[f.to_seq] = f.artifact_id
        for to_seq, want in last.items():
            for _reading in range(3):
                order = frames[:]
                rng.shuffle(order)
                got = select(order, to_seq)
                if got is None or got.artifact_id != want:
                    problems.append(f"{cid} cut {to_seq}: selected {got.artifact_id if got else None}, "
                                    f"appended last {want}")
                    break
    return problems


def tokenizer_drift(dataset, policies: Sequence[Policy], *, engine: str, tokenizer: str, other: str):
    """Cut points under ``tokenizer`` vs ``other``: how many move, per policy; compactions'
    cuts (``cuts``, ``moved``) and overflow truncations' (``truncations``, ``truncations_moved``)
    apart."""
    import polars as pl

    from workbench.tokens.tokenizers import add_token_column

    ds = dataset
    if other not in ds.tokenizers:
        ds = add_token_column(ds.path, other)
    a = _simulate(ds, policies, engine=engine, tokenizer=tokenizer)
    b = _simulate(ds, policies, engine=engine, tokenizer=other)

    def cuts(res, name: str, kind: str = CHECKPOINT) -> set:
        cp = res.events.filter((pl.col("policy") == name) & (pl.col("event_type") == kind))
        return set(zip(cp["continuity_id"].to_list(), cp["to_seq"].to_list(), strict=True)) if cp.height else set()

    rows = []
    for p in policies:
        ca, cb = cuts(a, p.name), cuts(b, p.name)
        ta, tb = cuts(a, p.name, TRUNCATION), cuts(b, p.name, TRUNCATION)
        rows.append({"policy": p.name, "trigger": p.trigger.kind, "tokenizer": tokenizer, "other": other,
                     "cuts": len(ca), "cuts_other": len(cb), "moved": max(len(ca - cb), len(cb - ca)),
                     "truncations": len(ta), "truncations_other": len(tb),
                     "truncations_moved": max(len(ta - tb), len(tb - ta)),
                     "identical": ca == cb and ta == tb})
    return pl.DataFrame(rows)
