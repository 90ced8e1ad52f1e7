"""Run a sweep: write the run table, execute the runs that are not done, collect.

Layout of a sweep directory::

    <out>/sweep.json              the resolved spec, dataset hashes, provenance
    <out>/runs.parquet            run_id + every parameter, one row per run (written first)
    <out>/results/<run_id>.parquet  summary rows of one run (one per continuity)
    <out>/results/<run_id>.json     status (ok | error), error text, evaluation headline, timing

Every file is written atomically, results by the driver as each run completes, so a
sweep killed at any point (even SIGKILL) leaves only whole results behind; running it
again skips every run whose ``.json`` says ``ok`` (or ``error``: a configuration the
policy rejects fails the same way twice; ``retry_failed=True`` runs those again) and
produces the same tables as an uninterrupted sweep.

Workers load a dataset once per process (cached by path and file hashes) and send back a
few summary rows per run, never per-request arrays. An evaluated sweep first stores the
dataset's text index beside it (:mod:`workbench.evaluate.text_index`), so each worker
reads it instead of computing it; every result says what its worker loaded so far
(``worker_loads``) and where the run's CPU time went (``cpu_s``: dataset, replay, evaluate,
forget). Between evaluated runs a worker forgets what the run derived (its summaries,
their redactions, its whole-text leak scans: no other configuration meets them) and keeps
the dataset's share, so its memory stays flat over any number of configurations.

>>> import tempfile
>>> from pathlib import Path
>>> from workbench.sweep.spec import SweepSpec
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = Path(tempfile.mkdtemp())
>>> _ = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp / "d")
>>> spec = SweepSpec.from_dict({"name": "s", "dataset": str(tmp / "d"), "base": "claude-code",
...                             "engine": "reference", "seeds": [0, 1],
...                             "parameters": {"trigger.reserve_tokens": [20_000, 40_000]}})
>>> report = run_sweep(spec, tmp / "sweep", executor="serial")
>>> report.completed, collect(tmp / "sweep").select("trigger.reserve_tokens", "seed", "cost_usd").height
(4, 4)
>>> import shutil; shutil.rmtree(tmp)
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import io
import os
import socket
import time
import traceback
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.rundir.names import SWEEP as SWEEP_FILE
from workbench.rundir.names import SWEEP_RESULTS as RESULTS_DIR
from workbench.rundir.names import SWEEP_RUNS as RUNS_FILE
from workbench.sweep.spec import RunSpec, SweepSpec, Task, TaskRun, dataset_files, runs_frame

#: with shared draws, the characters of summary text a worker keeps for later configurations
#: (with their redactions, about 3 bytes of memory a character in benchmarks/bench_evaluate.py's
#: sweep: at most ~300 MB)
SHARED_TEXT_BUDGET = 100_000_000
# evaluation headline columns (one value per run)
EVALUATION = ("leaks", "leaks_context", "secrets", "retention", "task_retention", "fact_probes")
# failures: the worst seed counts, not the mean
WORST_CASE = ("overflows", "truncations", "failed_requests", "leaks", "leaks_context")


@dataclass
class SweepReport:
    out: Path
    runs: int
    configurations: int
    skipped: int  # already done before this call
    completed: int  # finished ok in this call
    failed: int  # finished with an error in this call (invalid configurations included)
    elapsed_s: float
    executor: str

    def line(self) -> str:
        return (f"{self.runs} runs ({self.configurations} configurations): {self.completed} completed, "
                f"{self.failed} failed, {self.skipped} already done; {self.elapsed_s:.1f} s on {self.executor}")


def default_out(spec: SweepSpec, root: str | Path | None = None) -> Path:
    """``ROOT/runs/sweeps/NAME`` (root: the project, by default the current directory)."""
    return (Path(root) if root is not None else Path()) / "runs" / "sweeps" / spec.name


def _load_spec(spec: SweepSpec | str | Path) -> SweepSpec:
    return spec if isinstance(spec, SweepSpec) else SweepSpec.load(spec)


def _dumps(obj: Any) -> bytes:
    import orjson

    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY)


def _write_parquet(frame, path: Path) -> None:
    from workbench.util.atomic import atomic_write_bytes

    buf = io.BytesIO()
    frame.write_parquet(buf, compression="zstd")
    atomic_write_bytes(path, buf.getvalue())


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


# ---- planning -------------------------------------------------------------------------------
def plan(spec: SweepSpec | str | Path, out: str | Path | None = None, *, progress: bool = False,
         root: str | Path | None = None, force: bool = False):
    """Resolve the dataset (generating it if the spec says how), expand the runs and write
    ``sweep.json`` + ``runs.parquet`` atomically. Returns ``(spec, dataset, runs, out)``.
    ``out`` (default ``ROOT/runs/sweeps/NAME``) must be new, empty or a sweep directory."""
    from workbench.rundir import Kind, check_output, claim, update_dir
    from workbench.util.atomic import atomic_write_bytes
    from workbench.util.provenance import git_revision, package_versions

    spec = _load_spec(spec)
    out = Path(out) if out is not None else default_out(spec, root)
    check_output(out, Kind.SWEEP, force=force, replacing=False)  # before generating anything
    ds = spec.dataset.ensure(spec.tokenizer, progress=progress, root=root)
    files = dataset_files(ds)
    runs = spec.runs(files)
    update_dir(out, Kind.SWEEP, force=force)
    claim(out, [RUNS_FILE, SWEEP_FILE, RESULTS_DIR])
    (out / RESULTS_DIR).mkdir(exist_ok=True)
    _write_parquet(runs_frame(spec, runs, str(Path(ds.path).resolve())), out / RUNS_FILE)
    atomic_write_bytes(out / SWEEP_FILE, _dumps({
        "name": spec.name, "spec": spec.to_dict(),
        "dataset": {"path": str(Path(ds.path).resolve()), "name": ds.name, "files": files},
        "runs": len(runs), "configurations": len({r.config_id for r in runs}),
        "git_revision": git_revision(), "versions": package_versions(), "created_at": _now(),
    }))
    return spec, ds, runs, out


def _read_json(path: Path) -> dict | None:
    import orjson

    try:
        return orjson.loads(path.read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None


def is_done(out: Path, run_id: str, *, evaluate: dict | None, retry_failed: bool = False) -> bool:
    """A run is done when its JSON says ok (its Parquet present) and, if the spec evaluates,
    it was evaluated with the same settings; or when it failed (unless ``retry_failed``)."""
    meta = _read_json(out / RESULTS_DIR / f"{run_id}.json")
    if meta is None:
        return False
    if meta.get("status") == "error":
        return not retry_failed
    if meta.get("status") != "ok" or not (out / RESULTS_DIR / f"{run_id}.parquet").is_file():
        return False
    return evaluate is None or (bool(meta.get("evaluated")) and meta.get("evaluate") == evaluate)


# ---- execution ------------------------------------------------------------------------------
def run_sweep(spec: SweepSpec | str | Path, out: str | Path | None = None, *,
              root: str | Path | None = None, force: bool = False, **options: Any) -> SweepReport:
    """Run every run of ``spec`` that is not done yet; results land in ``out/results``.
    With ``engine: batch`` each task replays ``batch_size`` configurations in one compiled
    call (default: enough tasks for four per worker, at most 256 configurations each).
    Options: ``executor``, ``workers``, ``scheduler``, ``progress``, ``retry_failed``,
    ``batch_size``. One sweep writes ``out`` at a time; until it ends the directory is
    marked as being written (a killed sweep is resumed by running it again)."""
    from workbench.rundir import Kind, adding

    spec = _load_spec(spec)
    out = Path(out) if out is not None else default_out(spec, root)
    with adding(out, Kind.SWEEP, "sweep", force=force):
        return _run_sweep(spec, out, root=root, force=force, **options)


def _run_sweep(spec: SweepSpec, out: Path, *, executor: Any = "process", workers: int | None = None,
               scheduler: Any = None, progress: bool = False, retry_failed: bool = False,
               batch_size: int | None = None, root: str | Path | None = None,
               force: bool = False) -> SweepReport:
    from workbench.sweep.executors import get_executor
    from workbench.util.progress import progress_iter

    t0 = time.perf_counter()
    spec, ds, runs, out = plan(spec, out, progress=progress, root=root, force=force)
    evaluate = _evaluate_settings(spec, root)
    project = str(Path(root if root is not None else Path.cwd()).resolve())
    todo: list[RunSpec] = []
    skipped = failed = completed = 0
    for r in runs:
        if is_done(out, r.run_id, evaluate=evaluate, retry_failed=retry_failed):
            skipped += 1
        elif r.error is not None:  # rejected by the policy: recorded without a worker
            write_result(out, {**_meta(r.run_id, r.config_id, r.seed), "status": "error",
                               "error": f"PolicyError: {r.error}", "traceback": None,
                               "overrides": r.task_run().overrides, "policy_digest": r.policy_digest})
            failed += 1
        else:
            todo.append(r)
    ex = get_executor(executor, workers=workers, scheduler=scheduler)
    described = ex.name
    if todo and evaluate is not None:
        from workbench.evaluate import text_index

        # the dataset's share of every evaluation, computed here once and read by each worker
        text_index.write(ds)
    if todo:
        with ex:
            described = ex.describe()
            path = str(Path(ds.path).resolve())
            if spec.engine == "batch":
                tasks = batch_tasks(spec, path, todo, ex.workers, batch_size)
            else:
                tasks = (r.task(spec, path, evaluate=evaluate, root=project) for r in todo)
            results = (res for done in ex.imap_unordered(execute_task, tasks) for res in done)
            for res in progress_iter(results, f"sweep {spec.name}", enabled=progress, total=len(todo)):
                write_result(out, res)
                if res["status"] == "ok":
                    completed += 1
                else:
                    failed += 1
    return SweepReport(out=out, runs=len(runs), configurations=len({r.config_id for r in runs}),
                       skipped=skipped, completed=completed, failed=failed,
                       elapsed_s=time.perf_counter() - t0, executor=described)


def _evaluate_settings(spec: SweepSpec, root) -> dict[str, Any] | None:
    """What an evaluated run is evaluated with: the spec's ``evaluate`` and, when policies
    name prompt files, the sha256 of each (a run written with another prompt text is not
    done)."""
    if spec.evaluate is None:
        return None
    from workbench.summarize.settings import prompt_digests

    evaluate = dataclasses.asdict(spec.evaluate)
    paths = [c["summarizer.prompt"] for c in spec.configurations() if c.get("summarizer.prompt")]
    base = (spec.base.get("summarizer") or {}).get("prompt")
    paths += [base] if base else []
    if paths:
        evaluate["prompts"] = prompt_digests(paths, root=root)
    return evaluate


def batch_tasks(spec: SweepSpec, dataset_path: str, runs: list[RunSpec], workers: int,
                batch_size: int | None = None) -> Iterator[Task]:
    """Tasks of the batch engine: configurations (with the seeds still to run) in chunks."""
    import math

    by_config: dict[str, list[RunSpec]] = {}
    for r in runs:
        by_config.setdefault(r.config_id, []).append(r)
    configs = list(by_config.values())
    size = batch_size or max(1, min(256, math.ceil(len(configs) / (4 * max(1, workers)))))
    for i in range(0, len(configs), size):
        chunk = [r.task_run() for config in configs[i: i + size] for r in config]
        yield Task(dataset_path, spec.base, spec.engine, spec.tokenizer, tuple(chunk))


def _meta(run_id: str, config_id: str, seed: int) -> dict[str, Any]:
    return {"run_id": run_id, "config_id": config_id, "seed": seed}


def write_result(out: Path, res: dict[str, Any]) -> None:
    """Rows to ``<run_id>.parquet`` first, then ``<run_id>.json``: the JSON marks the run
    done, so a run interrupted between the two is simply run again."""
    import polars as pl

    from workbench.util.atomic import atomic_write_bytes

    res = dict(res)
    rows = res.pop("rows", None)
    d = Path(out) / RESULTS_DIR
    if res["status"] == "ok":
        _write_parquet(pl.DataFrame(rows, infer_schema_length=None), d / f"{res['run_id']}.parquet")
        res["rows"] = len(rows)
    res.setdefault("finished_at", _now())
    atomic_write_bytes(d / f"{res['run_id']}.json", _dumps(res))


# ---- the worker side ------------------------------------------------------------------------
_DATASETS: OrderedDict = OrderedDict()  # (path, tokenizer, files digest) -> (Dataset, inputs)
_MAX_DATASETS = 2
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # dataset index -> its memos' sizes kept
_PREPARED = [0]  # datasets this process prepared (load_prepared's misses)


def load_prepared(path: str, tokenizer: str):
    """``(Dataset, [ReplayInput])`` for a dataset path, prepared once per process."""
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import prepare_dataset

    ds = load_dataset(path)
    key = (str(Path(path).resolve()), tokenizer, tuple(sorted(dataset_files(ds).items())))
    hit = _DATASETS.get(key)
    if hit is not None:
        _DATASETS.move_to_end(key)
        return hit
    hit = (ds, prepare_dataset(ds, tokenizer))
    _PREPARED[0] += 1
    _DATASETS[key] = hit
    while len(_DATASETS) > _MAX_DATASETS:
        _DATASETS.popitem(last=False)
    return hit


def execute_task(task: Task) -> list[dict[str, Any]]:
    """The one worker: every run of ``task``, one result each; never raises (errors are
    returned as ``status: error`` with the exception text). The batch engine replays the
    task's configurations in one compiled call; the other engines run one at a time."""
    if task.engine == "batch":
        return _execute_batch(task)
    return [_execute_run(task, run) for run in task.runs]


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class _Phases(dict):
    """CPU seconds of this process by phase of a run (``cpu_s`` in its result: what a
    worker spends where, the benchmark's per-configuration split)."""

    def __init__(self) -> None:
        super().__init__()
        self._at = time.process_time()

    def done(self, phase: str) -> None:
        now = time.process_time()
        self[phase] = round(self.get(phase, 0.0) + now - self._at, 4)
        self._at = now


def _execute_run(task: Task, run: TaskRun) -> dict[str, Any]:
    """One configuration x seed over every continuity."""
    t0 = time.perf_counter()
    cpu = _Phases()
    meta = {**_meta(run.run_id, run.config_id, run.seed),
            "overrides": run.overrides, "engine": task.engine, "tokenizer": task.tokenizer}
    try:
        from workbench.engine.policy import Policy

        policy = Policy.from_dict(task.base).with_overrides(run.overrides)
        meta["policy_digest"] = policy.digest()
        ds, inputs = load_prepared(task.dataset, task.tokenizer)
        cpu.done("dataset")  # the first run of a worker: its imports and the dataset's loading
        rows, headline = _run_rows(ds, inputs, policy, run_id=run.run_id, seed=run.seed,
                                   engine=task.engine, tokenizer=task.tokenizer,
                                   evaluate=task.evaluate, root=task.root, cpu=cpu)
    except Exception as exc:  # a failing configuration must not stop the sweep
        return {**meta, "status": "error", "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=12), "elapsed_s": time.perf_counter() - t0,
                "worker": _worker()}
    return {**meta, "status": "ok", "error": None, "rows": rows, "evaluated": headline is not None,
            "evaluate": task.evaluate, "evaluation": headline, "elapsed_s": time.perf_counter() - t0,
            "cpu_s": dict(cpu), "worker": _worker(), "worker_loads": worker_loads()}


def _forget_run(dt, *, shared: bool = False) -> None:
    """Drop what an evaluated run derived that no other configuration reads, so that what a
    worker keeps across runs is bounded: the summaries and their redactions (their draws keyed
    by the policy's digest: a later configuration never meets them) and the leak scans of
    whole texts (mostly this run's summaries). Kept: the dataset's own share (its index, span
    events and labels) and the scans of single lines, which recur in every run's events.

    With shared draws (``shared``: :func:`workbench.summarize.settings.split_draws`) a later
    configuration that compacts alike meets the same summaries: they and their redactions are
    kept while the summaries' text stays within :data:`SHARED_TEXT_BUDGET` characters. A run
    that would pass it keeps nothing new (its own entries are dropped, the last ones in), so a
    sweep whose alike configurations lie further apart than the budget reaches still shares
    what the first runs kept, rather than nothing."""
    dt.baselines.clear()
    dt.leak_scanner.forget(lines=False)
    memos = (dt.summaries, dt.redactions)
    if shared:
        marks = _KEPT.get(dt, (0, 0))
        if _summary_chars(dt) > SHARED_TEXT_BUDGET:
            for memo, mark in zip(memos, marks, strict=True):
                while len(memo) > mark:
                    memo.popitem()  # (the last inserted: this run's)
        if _summary_chars(dt) <= SHARED_TEXT_BUDGET:
            _KEPT[dt] = (len(dt.summaries), len(dt.redactions))
            return
    for memo in memos:
        memo.clear()
    _KEPT.pop(dt, None)


def _summary_chars(dt) -> int:
    return sum(len(r.text or "") for r in dt.summaries.values())


def worker_loads() -> dict[str, int]:
    """What this process loaded per dataset so far: datasets prepared for the engines, text
    indexes built from a dataset's files and read from the stored index (a worker that keeps
    its state across tasks loads each once)."""
    from workbench.evaluate.dataset_text import LOADS

    return {"prepared": _PREPARED[0], "text_index_built": LOADS["built"], "text_index_read": LOADS["read"]}


def _execute_batch(task: Task) -> list[dict[str, Any]]:
    """Structural metrics of the task's configurations in one compiled call
    (:mod:`workbench.sweep.batch`); one result per run, as ``_execute_run`` returns them."""
    from workbench.engine.policy import Policy
    from workbench.errors import PolicyError

    t0 = time.perf_counter()
    worker = _worker()
    common = {"engine": task.engine, "tokenizer": task.tokenizer}
    out: list[dict[str, Any]] = []
    configs: dict[str, list[TaskRun]] = {}
    for run in task.runs:
        configs.setdefault(run.config_id, []).append(run)

    def fail(runs: list[TaskRun], error: str, tb: str | None = None) -> None:
        for run in runs:
            out.append({**_meta(run.run_id, run.config_id, run.seed), "overrides": run.overrides,
                        **common, "status": "error", "error": error, "traceback": tb,
                        "elapsed_s": 0.0, "worker": worker})

    base = Policy.from_dict(task.base)
    valid, policies = [], []
    for runs in configs.values():
        try:
            policies.append(base.with_overrides(runs[0].overrides))
            valid.append(runs)
        except PolicyError as exc:
            fail(runs, f"PolicyError: {exc}")
    if not valid:
        return out
    try:
        from workbench.engine.run import summarize_inputs

        _, inputs = load_prepared(task.dataset, task.tokenizer)
        summary = summarize_inputs(inputs, policies, engine="batch").to_dicts()
    except Exception as exc:  # the whole chunk failed: record it on each of its runs
        tb = traceback.format_exc(limit=12)
        for runs in valid:
            fail(runs, f"{type(exc).__name__}: {exc}", tb)
        return out
    per_run = (time.perf_counter() - t0) / max(1, sum(len(runs) for runs in valid))
    n = len(inputs)  # summary rows are policy-major
    for i, (runs, policy) in enumerate(zip(valid, policies, strict=True)):
        digest = policy.digest()
        for run in runs:
            rows = [{**row, "run_id": run.run_id, "seed": run.seed} for row in summary[i * n:(i + 1) * n]]
            out.append({**_meta(run.run_id, run.config_id, run.seed), "overrides": run.overrides,
                        **common, "policy_digest": digest, "status": "ok", "error": None, "rows": rows,
                        "evaluated": False, "evaluation": None, "elapsed_s": per_run,
                        "batched": len(valid), "worker": worker})
    return out


def _run_rows(ds, inputs, policy, *, run_id: str, seed: int, engine: str, tokenizer: str,
              evaluate: dict | None = None, root: str | None = None,
              cpu: _Phases | None = None) -> tuple[list[dict], dict | None]:
    """The summary rows of one run (the engine's :func:`~workbench.engine.run.summarize_inputs`,
    or :func:`~workbench.engine.run.simulate` and the evaluation when asked), with the
    evaluation headline (``root``: where ``summarizer.prompt`` files are taken from; ``cpu``:
    where the CPU time of each phase is added)."""
    from workbench.engine.run import simulate, summarize_inputs

    cpu = cpu if cpu is not None else _Phases()
    if evaluate is None:
        summary = summarize_inputs(inputs, [policy], engine=engine, run_id=run_id)
        cpu.done("replay")
        return [{**row, "seed": seed} for row in summary.to_dicts()], None
    from workbench.evaluate.dataset_text import DatasetText
    from workbench.evaluate.pipeline import evaluate_run
    from workbench.summarize.settings import SHARED_DRAWS, split_draws

    result = simulate(ds, [policy], engine=engine, tokenizer=tokenizer, seed=seed, run_id=run_id,
                      inputs=inputs)
    cpu.done("replay")
    ev = evaluate_run(result, ds, summarizer=evaluate.get("summarizer", "modelled"),
                      summarizer_options=evaluate.get("options") or None,
                      baseline=bool(evaluate.get("baseline", False)), compactions=False, root=root)
    cpu.done("evaluate")
    draws, _ = split_draws(evaluate.get("summarizer", "modelled"), evaluate.get("options"))
    _forget_run(DatasetText.of(ds), shared=draws == SHARED_DRAWS)  # (the index it used: kept, not rebuilt)
    cpu.done("forget")
    report = ev["report"]
    headline = dict(report["policies"][policy.name])
    headline["over_redaction"] = report.get("over_redaction")  # the headline carries task_retention
    rows = [{**row, "seed": seed, **{k: headline.get(k) for k in EVALUATION}}
            for row in result.summary.to_dicts()]
    return rows, headline


# ---- reading results ------------------------------------------------------------------------
def run_table(out: str | Path):
    import polars as pl

    from workbench.errors import WorkbenchError

    path = Path(out) / RUNS_FILE
    if not path.is_file():
        raise WorkbenchError(f"{out}: not a sweep directory (no {RUNS_FILE}); run `workbench sweep SPEC --out {out}` first")
    return pl.read_parquet(path)


def status(out: str | Path):
    """One row per run: ``status`` (ok | error | pending), ``error``, ``elapsed_s``."""
    import polars as pl

    out = Path(out)
    table = run_table(out)
    st, err, el = [], [], []
    for run_id in table["run_id"]:
        meta = _read_json(out / RESULTS_DIR / f"{run_id}.json")
        if meta is None or (meta.get("status") == "ok"
                            and not (out / RESULTS_DIR / f"{run_id}.parquet").is_file()):
            st.append("pending")
            err.append(None)
            el.append(None)
        else:
            st.append(meta.get("status"))
            err.append(meta.get("error"))
            el.append(meta.get("elapsed_s"))
    return table.select("run_id").with_columns(pl.Series("status", st, pl.String),
                                                pl.Series("error", err, pl.String),
                                                pl.Series("elapsed_s", el, pl.Float64))


def collect(out: str | Path):
    """The run table joined with every run's summary rows (one row per run x continuity;
    runs without results appear once, with ``status`` pending or error and null metrics)."""
    import polars as pl

    out = Path(out)
    table = run_table(out)
    st = status(out)
    ok = st.filter(pl.col("status") == "ok")["run_id"].to_list()
    parts = [pl.read_parquet(out / RESULTS_DIR / f"{rid}.parquet") for rid in ok]
    frame = table.join(st, on="run_id", how="left")
    if parts:
        res = pl.concat(parts, how="diagonal_relaxed").drop("policy", "seed", strict=False)
        frame = frame.join(res, on="run_id", how="left")
    sort = ["run_index"] + (["continuity_id"] if "continuity_id" in frame.columns else [])
    return frame.sort(sort, nulls_last=True)


def aggregate(frame):
    """One row per configuration: metrics summed over continuities, then averaged over seeds
    (overflows, truncations, leaks: the worst seed; retention: mean and ``retention_min``);
    ``cache_hit_rate`` is recomputed from the averaged token totals
    (:func:`workbench.engine.metrics.with_cache_hit_rate`). Only configurations whose runs all succeeded have
    ``complete`` true."""
    import polars as pl

    from workbench.engine import metrics

    params = [c for c in frame.columns if "." in c or c in ("emergency", "description")]
    keep_first = ["config_index", "policy", "policy_digest", "invalid", *params]
    present = set(frame.columns)
    add = [c for c in metrics.ADDITIVE if c in present]
    ev = [c for c in EVALUATION if c in present]
    per_run_aggs = metrics.total_aggs(frame.columns)
    per_run_aggs += [pl.col(c).first() for c in ev]
    per_run_aggs += [pl.col("status").first(), pl.col("error").first()]
    if "context_window" in present:
        per_run_aggs.append(pl.col("context_window").max())
    if "continuity_id" in present:
        per_run_aggs.append(pl.col("continuity_id").drop_nulls().n_unique().alias("continuities"))
    per_run = frame.group_by("run_id", "config_id", "seed", *keep_first, maintain_order=True).agg(per_run_aggs)
    tokens = {"prompt_tokens", "cached_input_tokens"} <= set(per_run.columns)
    if tokens:
        per_run = metrics.with_cache_hit_rate(per_run)
    okr = pl.col("status") == "ok"
    aggs = [pl.len().alias("runs"), okr.sum().alias("runs_ok"),
            pl.col("error").drop_nulls().first().alias("error")]
    # with the token columns the rate is the metrics module's, of the averaged tokens (never a
    # mean of the seeds' rates, which disagrees with the row's own token columns)
    for c in [*add, *([] if tokens else ["cache_hit_rate"]), "peak_context_tokens", *ev]:
        if c not in per_run.columns:
            continue
        vals = pl.col(c).filter(okr)
        if c in WORST_CASE or c == "peak_context_tokens":
            aggs.append(vals.max().alias(c))
        else:
            aggs.append(vals.mean().alias(c))
    if "retention" in per_run.columns:
        aggs.append(pl.col("retention").filter(okr).min().alias("retention_min"))
    for c in ("context_window", "continuities"):
        if c in per_run.columns:
            aggs.append(pl.col(c).max().alias(c))
    agg = per_run.group_by("config_id", *keep_first, maintain_order=True).agg(aggs)
    if tokens:
        measured = pl.col("prompt_tokens").is_not_null()  # no run succeeded: no rate
        agg = metrics.with_cache_hit_rate(agg).with_columns(
            pl.when(measured).then(pl.col("cache_hit_rate")).otherwise(None).alias("cache_hit_rate"))
    return agg.with_columns((pl.col("runs_ok") == pl.col("runs")).alias("complete")).sort("config_index")
