"""Simulate policies on a dataset: the API the CLI, sweeps and notebooks share.

* :func:`simulate` replays every continuity under every policy and keeps everything: the
  per-call ledger, the events (ADR-0011 checkpoints, RFC 0012 ``memory.compacted``, ...),
  the summary rows and the run's configuration.
* :func:`run_totals` gives only the summary rows (:mod:`workbench.engine.metrics`), without
  building per-call frames; with ``engine="batch"`` many policies of one continuity are
  replayed in one compiled call (``prange`` over them), which is what sweeps use.

>>> import shutil, tempfile
>>> from pathlib import Path
>>> from workbench.engine.run import simulate
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = Path(tempfile.mkdtemp())
>>> ds = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp / "d")
>>> result = simulate(ds, ["claude-code", "observation-masking"], engine="reference")
>>> result.summary["policy"].to_list()
['claude-code', 'observation-masking']
>>> result.config["policies"]["claude-code"]["accounting"]["synthetic-coding-s1"]["source"]
'counted'
>>> (result.write(tmp / "run") / "ledger.parquet").is_file()
True
>>> shutil.rmtree(tmp)
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.engine import enums as E
from workbench.engine.lean import LEDGER_FRAME_INTS
from workbench.engine.lean import output_view as _output_view
from workbench.engine.lean import read_columns as _read_columns
from workbench.engine.policy import Policy
from workbench.engine.records import LEDGER
from workbench.errors import WorkbenchError
from workbench.rundir.event_frames import events_frame

ENGINES = ("kernel", "reference")
SUMMARY_ENGINES = (*ENGINES, "batch")  # batch: many policies per compiled call, summary rows only
CALL_NAMES = E.names(E.CallKind)
LOSS_NAMES = E.names(E.CacheLoss)
@dataclass
class SimulationResult:
    ledger: Any  # polars.DataFrame
    events: Any
    summary: Any
    config: dict[str, Any]
    run_id: str
    inputs: dict[str, Any] = field(default_factory=dict, repr=False)  # ReplayInput by continuity
    # what each call's prompt held (engine.prompt_record.PromptRecord), by (policy, continuity id);
    # kept with the inputs (what the evaluations read), not written to the run directory
    prompts: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)
    # the run directory this result was last written to (its ledger can be read back from there)
    written_to: Path | None = field(default=None, repr=False)

    def prompt_record(self, policy: str, continuity_id: str):
        """The prompt record of one policy x continuity of this run (a run read back from its
        directory replays its records once, with the kernel: they equal the reference's)."""
        if not self.prompts and self.inputs:
            self.prompts = replay_prompts(self)
        try:
            return self.prompts[(policy, continuity_id)]
        except KeyError:
            raise WorkbenchError(f"no prompt record of {policy}/{continuity_id} in run {self.run_id}: "
                                 "simulate with keep_inputs=True to evaluate it") from None

    def write(self, out: str | Path, *, force: bool = False) -> Path:
        """Write ledger/events/summary Parquet + config.json and the summary artifacts
        (:mod:`workbench.rundir.artifacts`) atomically into ``out`` (new, empty, or a run
        directory the workbench wrote: :mod:`workbench.rundir`)."""
        import orjson

        from workbench.rundir import Kind, names, replace_dir
        from workbench.rundir.artifacts import write_run_store

        out = Path(out)
        with replace_dir(out, Kind.RUN, force=force) as tmp:
            self.ledger.write_parquet(tmp / names.LEDGER, compression="zstd")
            self.events.write_parquet(tmp / names.RUN_EVENTS, compression="zstd")
            write_run_store(tmp, self.events)
            self.summary.write_parquet(tmp / names.SUMMARY, compression="zstd")
            (tmp / names.CONFIG).write_bytes(orjson.dumps(self.config, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        self.written_to = out
        return out


def policy_list(policies: str | Path | Policy | Sequence[str | Path | Policy]) -> list:
    """``policies`` as a list: one name, spec path or :class:`Policy` is a list of one (a
    name is never read as a sequence of letters)."""
    return [policies] if isinstance(policies, str | Path | Policy) else list(policies)


def _resolve_policies(policies: str | Path | Policy | Sequence[str | Path | Policy]) -> list[Policy]:
    from workbench.engine.presets import get_policy

    out = [p if isinstance(p, Policy) else get_policy(p) for p in policy_list(policies)]
    names = [p.name for p in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise WorkbenchError(f"policy names must be unique in one run: {sorted(dupes)}")
    if not out:
        raise WorkbenchError("give at least one policy")
    return out


def stable_run_id(dataset_manifest: dict, policies: list[Policy], tokenizer: str, seed: int,
                  model: str | None, acct=None) -> str:
    h = hashlib.sha256()
    for f, meta in sorted(dataset_manifest.get("files", {}).items()):
        h.update(f"{f}:{meta.get('sha256')}".encode())
    for p in policies:
        h.update(p.digest().encode())
    h.update(f"{tokenizer}|{seed}|{model}".encode())
    if acct is not None and (dataset_manifest.get("import") or acct.mode != "auto"):
        # how tokens were counted (a generated dataset under the default accounting keeps
        # the id it always had: nothing changes there)
        h.update(f"|{acct.mode}|{acct.line_source}|{acct.calibration_digest()}".encode())
    return "run_" + h.hexdigest()[:12]


def accountant(accounting: str = "auto", calibration: str | Path | None = None, line_source: str = "own",
               tokenizer: str = "cl100k"):
    """The :class:`~workbench.engine.accounting.Accountant` of a run (``calibration``: a
    profiles file; the packaged profiles when None)."""
    from workbench.engine.accounting import Accountant
    from workbench.sources.profiles import load_profiles

    profiles = load_profiles(calibration) if calibration is not None else None
    return Accountant(accounting, profiles, line_source, tokenizer)


def accounted(acct, inp, pol: Policy):
    """``(the rule replayed, the input in its tokens, the line)`` for one continuity under
    one policy: a versioned preset follows the log's harness version
    (:func:`~workbench.engine.presets.for_harness_version`); ``as-recorded`` on a continuity
    that recorded no compaction is ``no-compaction``
    (:func:`~workbench.engine.presets.without_recorded_compactions`)."""
    from workbench.engine.presets import replayed_rule

    rule = replayed_rule(pol, inp)
    view, line = acct.view(inp, rule)
    return rule, view, line


@dataclass(frozen=True)
class Job:
    """One (policy, continuity) replay, resolved: what both replay loops (:func:`simulate`,
    :func:`summarize_inputs`) replay and report."""

    policy_index: int
    input_index: int
    policy: Policy  # as asked
    rule: Policy  # as replayed (a release line of the log's harness version, ...)
    view: Any  # the continuity in the tokens this replay counts
    line: Any  # the accounting line of that view
    provider: Any  # the resolved provider (window, cache rules, prices)


def replay_jobs(inputs: list, policies: Sequence[Policy], acct, *, model: str | None = None,
                price_as: str | None = None, notes: dict[str, list[str]] | None = None,
                order: str = "policy") -> Iterator[Job]:
    """Every (policy, continuity) of a run, resolved the one way both loops share: the
    provider (``model`` override, ``price_as`` stand-in), the replayed rule and the view in
    the accountant's tokens; what was replayed otherwise than asked goes to ``notes`` (note
    -> where). ``order``: ``policy`` (policy-major) or ``input`` (continuity-major). An
    input is read from ``inputs`` when its job comes, so a caller may replace it after."""
    from workbench.engine.provider import resolve_provider

    notes = {} if notes is None else notes
    n_pol, n_inp = len(policies), len(inputs)
    pairs = ([(i, j) for i in range(n_pol) for j in range(n_inp)] if order == "policy"
             else [(i, j) for j in range(n_inp) for i in range(n_pol)])
    for i, j in pairs:
        pol, inp = policies[i], inputs[j]
        prov = resolve_provider(pol, continuity_model=inp.model, continuity_window=inp.context_window,
                                model_override=model, price_as=price_as)
        if prov.note:
            notes.setdefault(prov.note, []).append(f"{pol.name}/{inp.continuity_id}")
        rule, view, line = accounted(acct, inp, pol)
        if pol.trigger.kind == "recorded" and rule.trigger.kind != "recorded":
            notes.setdefault(f"{pol.name}: no compaction recorded in the log; replayed as no-compaction",
                             []).append(inp.continuity_id)
        yield Job(i, j, pol, rule, view, line, prov)


def replay(inp, policy: Policy, provider, engine: str = "kernel", *, record: bool = False):
    """Lower ``policy`` against ``provider`` and replay one prepared continuity: ``(ledger,
    events)``, and with ``record`` the prompt record (:mod:`workbench.engine.prompt_record`)."""
    cfg, params = policy.lower(provider.window, provider.cache_mode, provider.ttl_ms, provider.granularity)
    excluded = inp.excluded_mask(policy.compaction.exclude_tools)
    if engine == "reference":
        from workbench.engine.reference import replay_reference

        return replay_reference(inp, cfg, params, excluded, record=record)
    if engine == "kernel":
        from workbench.engine.kernel import replay_kernel

        return replay_kernel(inp, cfg, params, excluded, record=record)
    raise WorkbenchError(f"unknown engine {engine!r}; choose one of {ENGINES}")


def replay_prompts(result: SimulationResult) -> dict[tuple[str, str], Any]:
    """The prompt records of ``result``'s replays, replayed as its config says (policies,
    accounting, model and stand-in prices) over its inputs."""
    cfg = result.config
    acct_cfg = cfg.get("accounting") or {}
    profiles = acct_cfg.get("profiles")  # (the packaged profiles when the run's file is gone)
    acct = accountant(acct_cfg.get("mode", "auto"), profiles if profiles and Path(profiles).is_file() else None,
                      acct_cfg.get("line_source", "own"), cfg.get("tokenizer", "cl100k"))
    pols = [Policy.from_dict(v["policy"]) for v in cfg["policies"].values()]
    inputs = list(result.inputs.values())
    out = {}
    for job in replay_jobs(inputs, pols, acct, model=cfg.get("model_override"), price_as=cfg.get("model_price_as")):
        _, _, out[(job.policy.name, inputs[job.input_index].continuity_id)] = replay(
            job.view, job.rule, job.provider, "kernel", record=True)
    return out


def prepare_dataset(ds, tokenizer: str) -> list:
    """ReplayInput per continuity of a dataset (sorted by continuity index) but the compaction
    calls recorded as continuities (:mod:`workbench.sources.compaction_calls`)."""
    import polars as pl

    from workbench.continuity.schema import token_column
    from workbench.engine.prepare import prepare_continuity
    from workbench.sources.compaction_calls import compaction_call_ids

    if tokenizer not in ds.tokenizers:
        raise WorkbenchError(f"dataset {ds.name} has no {token_column(tokenizer)} column; "
                             f"add it with `workbench tokens {ds.path} --tokenizer {tokenizer}`")
    cols = ["continuity", "seq", "kind", "role", "flags", "request", "ts_ms", "pair_seq", "name",
            "message_id", token_column(tokenizer)]
    imported = (ds.manifest.get("import") or {})
    if imported:  # what the log recorded, for provider-token accounting
        cols += ["origin", "usage_input", "usage_cache_read", "usage_cache_write", "usage_output"]
    ev = _read_columns(ds, cols)
    conts = ds.continuities()
    bounds = _sorted_bounds(ev)
    calls, inputs = compaction_call_ids(ds.manifest), []
    for row in (r for r in conts.iter_rows(named=True) if r["continuity_id"] not in calls):
        if bounds is not None:  # a zero-copy slice
            lo, hi = bounds(row["continuity"])
            part = ev.slice(lo, hi - lo)
        else:
            part = ev.filter(pl.col("continuity") == row["continuity"]).sort("seq")
        inp = prepare_continuity(
            part, continuity=row["continuity"], continuity_id=row["continuity_id"], tokenizer=tokenizer,
            model=row["model"], provider=row["provider"], context_window=row["context_window"])
        if imported:
            inp = _with_log_facts(inp, part, row, imported, tokenizer)
        inputs.append(inp)
    return inputs


def _with_log_facts(inp, part, row: dict, imported: dict, tokenizer: str):
    """An imported continuity's harness, its version, its recorded usage per request and
    the import's calibration line (when fitted for this tokenizer)."""
    from dataclasses import replace

    from workbench.engine.accounting import Recorded

    meta = (imported.get("continuities") or {}).get(row["continuity_id"]) or {}
    cal = (imported.get("calibration") or {}).get(row["continuity_id"]) or {}
    own = ((float(cal["intercept"]), float(cal["factor"]))
           if cal.get("status") == "ok" and cal.get("tokenizer", "cl100k") == tokenizer else None)
    version = meta.get("harness_version") or meta.get("cli_version") or meta.get("version")
    if cal.get("status") == "not meaningful":
        # usage that is not one call's prompt (e.g. stats spanning several calls): no anchor
        return replace(inp, harness=row["source_format"], harness_version=version)
    rec = Recorded.from_events(part, inp)
    return replace(inp, harness=row["source_format"], own_line=own, harness_version=version,
                   **rec.input_fields())


def _sorted_bounds(ev):
    """``continuity -> (first row, end row)`` when ``ev`` is sorted by (continuity, seq), as
    datasets are written; else None (then each continuity is filtered and sorted, which
    copies the whole frame: gigabytes at 10 M events)."""
    cont = ev["continuity"].to_numpy()
    step = np.diff(cont)
    in_order = bool(((step > 0) | ((step == 0) & (np.diff(ev["seq"].to_numpy()) > 0))).all())
    del step
    if not in_order:
        return None
    return lambda c: (int(np.searchsorted(cont, c, side="left")), int(np.searchsorted(cont, c, side="right")))


def simulate(dataset, policies: Sequence[str | Policy], *, engine: str = "kernel",
             tokenizer: str = "cl100k", seed: int = 0, model: str | None = None,
             price_as: str | None = None, run_id: str | None = None,
             progress: bool = False, inputs: list | None = None, accounting: str = "auto",
             calibration: str | Path | None = None, line_source: str = "own",
             keep_inputs: bool = True) -> SimulationResult:
    """Replay every continuity of ``dataset`` under every policy.

    ``model`` prices every policy as that model; a model genai-prices does not know is an
    error unless ``price_as`` names the stand-in (recorded in the config's ``notes``).
    ``inputs``: the dataset already prepared (:func:`prepare_dataset` with this tokenizer),
    e.g. by a sweep worker. ``accounting`` (``auto``: provider tokens for imported logs,
    counted for generated ones; ``provider``; ``counted``), ``calibration`` (a profiles file
    of ``workbench calibrate``; the packaged profiles by default) and ``line_source``
    (``own``: a log's own fitted line first; ``profile``) choose the tokens a replay counts
    (:mod:`workbench.engine.accounting`); the config records each continuity's line.
    ``keep_inputs=False`` (nothing will evaluate the result): the result's ``inputs``
    stay empty and each continuity's prepared arrays are freed after its last replay,
    before its output frames are built (the peak of a 10 M-event run)."""
    import polars as pl

    from workbench.continuity.dataset import Dataset, load_dataset
    from workbench.engine import metrics
    from workbench.engine.cache_miss import cold_requests, replay_band
    from workbench.util.progress import progress_iter
    from workbench.util.provenance import git_revision, package_versions

    pols = _resolve_policies(policies)  # a bad spec fails before the dataset is read
    acct = accountant(accounting, calibration, line_source, tokenizer)
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    if model is not None and price_as is None:
        from workbench.engine.pricing import infer_provider, price_table

        price_table(model, infer_provider(model))  # an unknown model fails before any work
    run_id = run_id or stable_run_id(ds.manifest, pols, tokenizer, seed,
                                     model if price_as is None else f"{model}|price_as={price_as}",
                                     acct)
    inputs = prepare_dataset(ds, tokenizer) if inputs is None else list(inputs)
    cold = cold_requests(ds.manifest)  # requests that switched model: their cache is cold
    ledgers, events, keys, totals = [], [], [], []
    prompts: dict[tuple[str, str], Any] = {}
    resolved: dict[str, dict] = {}
    notes: dict[str, list[str]] = {}  # what was priced otherwise than asked, and where
    jobs = replay_jobs(inputs, pols, acct, model=model, price_as=price_as, notes=notes)  # policy-major
    for job in progress_iter(jobs, "simulating", enabled=progress, total=len(pols) * len(inputs)):
        i, j, pol, inp = job.policy_index, job.input_index, job.policy, inputs[job.input_index]
        rule, view, line, prov = job.rule, job.view, job.line, job.provider
        led, ev, *record = replay(view, rule, prov, engine, record=keep_inputs)
        if record:
            prompts[(pol.name, inp.continuity_id)] = record[0]
        band = replay_band(view, prov, led, engine=engine,  # an imported log's provider cache misses
                           cold=cold.get(inp.continuity_id, ()))
        keys.append((run_id, pol.name, inp.continuity_id, prov.model, prov.window))
        totals.append(metrics.replay_totals(led, ev, prov.prices))
        if not keep_inputs and i == len(pols) - 1:  # its last replay: free what only replays read
            acct.forget(inp)
            inputs[j] = inp = _output_view(inp)
            view = _output_view(view)
        ledgers.append(ledger_frame(led, view, pol, prov, run_id))
        del led  # before the events frame: the ledger matrix of 3 M calls is 300 MB
        events.append(events_frame(ev, view, pol, run_id))
        entry = resolved.setdefault(pol.name, {"policy": pol.to_dict(), "digest": pol.digest(),
                                               "cut_rule_id": pol.trigger.rule_id(), "providers": {},
                                               "accounting": {}, "release_lines": {}})
        entry["providers"][inp.continuity_id] = prov.as_dict()
        entry["accounting"][inp.continuity_id] = line.as_dict()
        if rule is not pol:
            entry["release_lines"][inp.continuity_id] = rule.name
        if band is not None:
            entry.setdefault("cost_bands", {})[inp.continuity_id] = {**band[0].as_dict(), "profile": band[1].as_dict()}
    for note, where in acct.notes.items():
        notes.setdefault(note, []).extend(where)
    config = {
        "run_id": run_id,
        "seed": seed,
        "engine": engine,
        "tokenizer": tokenizer,
        "accounting": acct.describe(),
        "model_override": model,
        "model_price_as": price_as,
        "notes": [{"note": n, "where": w} for n, w in notes.items()],
        "git_revision": git_revision(),
        "versions": package_versions(),
        "created_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "dataset": {"path": str(Path(ds.path).resolve()), "name": ds.name,
                    "files": {k: v["sha256"] for k, v in ds.manifest.get("files", {}).items()},
                    "source_format": ds.manifest.get("source", {}).get("format")},
        "policies": resolved,
    }
    return SimulationResult(
        ledger=pl.concat(ledgers, how="vertical"), events=pl.concat(events, how="vertical"),
        summary=_summary(keys, totals), config=config, run_id=run_id,
        inputs={inp.continuity_id: inp for inp in inputs} if keep_inputs else {}, prompts=prompts,
    )


def _summary(keys: list[tuple], totals: list[tuple[np.ndarray, np.ndarray]]):
    """The summary frame of replays: ``keys`` (run id, policy, continuity id, model,
    window) and ``(totals, costs)`` per replay."""
    from workbench.engine import metrics

    columns = list(zip(*keys, strict=True)) if keys else [()] * len(metrics.SUMMARY_KEYS)
    ints = np.array([t for t, _ in totals], np.int64)
    costs = np.array([c for _, c in totals], np.float64)
    return metrics.summary_frame(dict(zip(metrics.SUMMARY_KEYS, columns, strict=True)), ints, costs)


def run_totals(dataset, policies: Sequence[str | Policy], *, engine: str = "kernel",
              tokenizer: str = "cl100k", model: str | None = None, price_as: str | None = None,
              run_id: str | None = None,
              inputs: list | None = None, accounting: str = "auto", calibration: str | Path | None = None,
              line_source: str = "own"):
    """The summary rows of :func:`simulate` (same columns and integers; costs equal up to
    float summation order), without the per-call frames. ``engine``: ``kernel`` or
    ``reference`` replay each (continuity, policy) and reduce its ledger; ``batch`` replays
    all policies of a continuity in one compiled call and keeps only their totals."""
    from workbench.continuity.dataset import Dataset, load_dataset

    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    pols = _resolve_policies(policies)
    acct = accountant(accounting, calibration, line_source, tokenizer)
    run_id = run_id or stable_run_id(ds.manifest, pols, tokenizer, 0,
                                     model if price_as is None else f"{model}|price_as={price_as}", acct)
    inputs = prepare_dataset(ds, tokenizer) if inputs is None else inputs
    return summarize_inputs(inputs, pols, engine=engine, model=model, price_as=price_as, run_id=run_id,
                            acct=acct)


def summarize_inputs(inputs: Sequence, policies: Sequence[Policy], *, engine: str = "kernel",
                     model: str | None = None, price_as: str | None = None, run_id: str = "", acct=None,
                     notes: dict[str, list[str]] | None = None):
    """Summary rows of prepared continuities (:func:`prepare_dataset`) under ``policies``
    (names need not be unique: a sweep's configurations share one), policy-major: row
    ``i * len(inputs) + j`` is policy ``i`` on continuity ``j``. The jobs are
    :func:`simulate`'s (:func:`replay_jobs`: ``model``, ``price_as``, and what was replayed
    otherwise than asked added to ``notes``), continuity by continuity."""
    from workbench.engine import metrics

    if engine not in SUMMARY_ENGINES:
        raise WorkbenchError(f"unknown engine {engine!r}; choose one of {SUMMARY_ENGINES}")
    acct = acct if acct is not None else accountant()
    inputs = list(inputs)
    n_inputs = len(inputs)
    keys: list[tuple] = [()] * (len(policies) * n_inputs)
    totals: list[tuple] = [()] * len(keys)
    by_input: list[list[Job]] = [[] for _ in inputs]
    for job in replay_jobs(inputs, policies, acct, model=model, price_as=price_as, notes=notes, order="input"):
        row = job.policy_index * n_inputs + job.input_index
        keys[row] = (run_id, job.policy.name, inputs[job.input_index].continuity_id, job.provider.model,
                     job.provider.window)
        if engine != "batch":
            led, ev = replay(job.view, job.rule, job.provider, engine)
            totals[row] = metrics.replay_totals(led, ev, job.provider.prices)
            continue
        jobs = by_input[job.input_index]
        jobs.append(job)
        if len(jobs) < len(policies):
            continue
        # the continuity's last job: one compiled call per input view (policies of one
        # harness share theirs)
        by_view: dict[int, list[Job]] = {}
        for done in jobs:
            by_view.setdefault(id(done.view), []).append(done)
        for group in by_view.values():
            found = _batch_totals(group[0].view, [g.rule for g in group], [g.provider for g in group])
            for k, result in found.items():
                totals[group[k].policy_index * n_inputs + job.input_index] = result
        by_input[job.input_index] = []
    return _summary(keys, totals)


def _batch_totals(inp, policies: Sequence[Policy], provs: Sequence) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """``{policy index: (totals, costs)}`` of one continuity, one compiled call per set of
    clearable-tool exclusions (the only policy input the batch cannot vary per row)."""
    from workbench.engine.kernel import replay_kernel_totals

    groups: dict[tuple, list[int]] = {}
    lowered = []
    for i, (pol, prov) in enumerate(zip(policies, provs, strict=True)):
        lowered.append(pol.lower(prov.window, prov.cache_mode, prov.ttl_ms, prov.granularity))
        clearing = bool(lowered[-1].cfg[E.Cfg.CLEARING])
        groups.setdefault(tuple(pol.compaction.exclude_tools) if clearing else (), []).append(i)
    out = {}
    for exclude, idx in groups.items():
        totals, costs = replay_kernel_totals(
            inp, np.stack([lowered[i].cfg for i in idx]), np.stack([lowered[i].params for i in idx]),
            np.stack([provs[i].prices.array for i in idx]), inp.excluded_mask(exclude) if exclude else None)
        out.update({i: (totals[k], costs[k]) for k, i in enumerate(idx)})
    return out


def ledger_frame(led: np.ndarray, inp, pol: Policy, prov, run_id: str):
    """The ledger rows of one replay. Built by columns (a 10 M-event continuity has 3 M
    calls): kinds named by polars from their codes, the per-replay constants broadcast
    (no per-row Python objects)."""
    import polars as pl

    n = led.shape[0]
    cost = prov.prices.cost(led[:, LEDGER.prompt_tokens], led[:, LEDGER.cache_read_tokens],
                            led[:, LEDGER.cache_write_tokens], led[:, LEDGER.uncached_tokens],
                            led[:, LEDGER.output_tokens])
    flags = led[:, LEDGER.flags]
    req = led[:, LEDGER.request]

    def named(column: int, names: dict) -> pl.Series:
        return pl.Series(led[:, column]).replace_strict(names, return_dtype=pl.String)

    def constant(value) -> pl.Expr:
        return pl.lit(value, dtype=pl.String)

    frame = pl.DataFrame({
        "call": np.arange(n, dtype=np.int64),
        "request": req,
        "source_request": inp.req_source[req] if n else np.zeros(0, np.int64),
        "call_kind": named(LEDGER.call_kind, CALL_NAMES),
        "prompt_tokens": led[:, LEDGER.prompt_tokens],
        "input_tokens": led[:, LEDGER.uncached_tokens],
        "cached_input_tokens": led[:, LEDGER.cache_read_tokens],
        "cache_write_tokens": led[:, LEDGER.cache_write_tokens],
        "output_tokens": led[:, LEDGER.output_tokens],
        "context_before": led[:, LEDGER.context_before],
        "context_after": led[:, LEDGER.context_after],
        "compacted": (flags & E.LedgerFlag.COMPACTED) != 0,
        "flushed": (flags & E.LedgerFlag.FLUSHED) != 0,
        "overflow": (flags & E.LedgerFlag.OVERFLOW) != 0,
        "edited": (flags & E.LedgerFlag.EDITED) != 0,
        "truncated": (flags & E.LedgerFlag.TRUNCATED) != 0,
        "failed": (flags & E.LedgerFlag.FAILED) != 0,
        "flags": flags,
        "cache_loss": named(LEDGER.cache_loss, LOSS_NAMES),
        "cache_key": led[:, LEDGER.cache_key],
        "ts_ms": led[:, LEDGER.ts_ms],
        "cost_usd": cost,
    }, schema_overrides={c: pl.Int64 for c in LEDGER_FRAME_INTS})
    return frame.select(
        constant(run_id).alias("run_id"), constant(pol.name).alias("policy"),
        constant(inp.continuity_id).alias("continuity_id"), pl.all(), constant(prov.model).alias("model"))
