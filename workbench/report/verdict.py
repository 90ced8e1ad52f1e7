"""The verdict a reviewer signs, read from a run's files (never recomputed).

A run directory (``workbench simulate``) holds ``config.json`` and ``summary.parquet``; the
audits add ``evaluation.json`` (leaks, retention), ``conformance.json`` and, when written
there, ``determinism.json``/``determinism.parquet``. :func:`build_verdict` turns them into

* the policies compared, one row each: the per-continuity rows of ``summary.parquet``
  summed (``cache_hit_rate`` = cached input tokens / prompt tokens of the sums, the same
  rule as ``workbench simulate``'s table) joined with ``evaluation.json``'s headline;
* the cheapest policy meeting the constraints (default: overflows == 0, leaks == 0,
  retention >= 0.95), by the rule of :mod:`workbench.selection` that ``workbench tune``
  uses too: a constraint whose figure is missing (no ``evaluation.json``, no planted
  facts) is *unverified*, never assumed to hold, and the verdict says so;
* leaks found, determinism and conformance pass/fail when audited, and provenance (run
  id, git revision, package versions, dataset file hashes, checked against the files now);
* with several summary samples (``summary_samples.parquet``, ``--summary-samples K``),
  whether the recommended policy still wins within their spread: the same rule picks a
  policy in each sample (its retention and leaks; cost does not vary), and the policy
  wins within the spread when it is picked in every sample.

Files are read by :mod:`workbench.rundir.read`; shown text passes through
:class:`workbench.report.textguard.TextGuard`; HTML pieces are :mod:`workbench.report.html`.

>>> import tempfile
>>> from pathlib import Path
>>> from workbench.engine.run import simulate
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = Path(tempfile.mkdtemp())
>>> dataset = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp / "d")
>>> run = simulate(dataset, ["claude-code", "observation-masking"], engine="reference").write(tmp / "run")
>>> v = build_verdict(run)
>>> v.table["policy"].to_list(), v.table["meets"].to_list()  # no leak audit yet: unverified
(['claude-code', 'observation-masking'], [None, None])
>>> import shutil; shutil.rmtree(tmp)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError
from workbench.report.html import _CSS, _e, flag_bounds, table_html
from workbench.rundir import names
from workbench.rundir.read import (
    find_determinism,
    load_config,
    load_conformance,
    load_determinism,
    load_evaluation,
    load_secret_values,
    load_table,
    read_json,
)
from workbench.selection import Constraints, best_row, judge, load_constraints, pareto_front

__all__ = ["Constraints", "ReportError", "Verdict", "build_sweep_verdict", "build_verdict",
           "find_determinism", "load_constraints", "load_determinism", "load_table", "policy_table",
           "provenance", "sweep_results"]


class ReportError(WorkbenchError):
    """A run directory cannot be reported on (missing or unreadable files), or a notebook failed."""


# ---- the policy table -------------------------------------------------------------------------
EVAL_KEYS = ("sr1", "secrets", "leaks", "leaks_context", "retention", "fact_probes", "task_retention")


def policy_table(summary, evaluation: dict | None, constraints: Constraints):
    """One row per policy (in run order): sums over continuities, the evaluation headline,
    and whether each constraint holds (null: not measured)."""
    import polars as pl

    from workbench.engine.metrics import policy_totals

    agg = policy_totals(summary)
    heads = (evaluation or {}).get("policies", {})
    degenerate = (evaluation or {}).get("degenerate") or {}
    names = agg["policy"].to_list()
    ev = pl.DataFrame({
        "policy": names,
        "sr1": [heads.get(n, {}).get("sr1") for n in names],
        "secrets": [heads.get(n, {}).get("secrets") for n in names],
        "leaks": [heads.get(n, {}).get("leaks") for n in names],
        "leaks_context": [heads.get(n, {}).get("leaks_context") for n in names],
        "retention": [heads.get(n, {}).get("retention") for n in names],
        "fact_probes": [heads.get(n, {}).get("fact_probes") for n in names],
        "task_retention": [heads.get(n, {}).get("task_retention") for n in names],
        # workbench.evaluate.degenerate: summaries empty, cut off, looping, longer than their span
        "degenerate_summaries": [degenerate.get(n, {}).get("degenerate_summaries") for n in names],
    }, schema={"policy": pl.String, "sr1": pl.Boolean, "secrets": pl.Int64, "leaks": pl.Int64,
               "leaks_context": pl.Int64, "retention": pl.Float64, "fact_probes": pl.Int64,
               "task_retention": pl.Float64, "degenerate_summaries": pl.Int64})
    table = agg.join(ev, on="policy", how="left", maintain_order="left")
    judged = judge(table, constraints.as_list())
    return judged.with_columns(pareto_front(judged))


# ---- provenance -------------------------------------------------------------------------------
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def provenance(config: dict[str, Any], *, run_dir: str | Path | None = None,
               evaluation: dict | None = None, check_files: bool = True) -> dict[str, Any]:
    """Run id, creation time, engine, git revision, package versions and the dataset's file
    hashes; each file is checked against its recorded hash when it is still on disk."""
    ds = config.get("dataset", {})
    files = []
    root = Path(ds.get("path", ""))
    for name, sha in sorted((ds.get("files") or {}).items()):
        path = root / name
        if not check_files or not path.is_file():
            status = "not checked" if not check_files else "missing now"
        else:
            status = "unchanged" if _sha256(path) == sha else "CHANGED since the run"
        files.append({"file": name, "sha256": sha, "status": status})
    return {
        "run_dir": str(run_dir) if run_dir is not None else None,
        "run_id": config.get("run_id"),
        "created_at": config.get("created_at"),
        "git_revision": config.get("git_revision"),
        "engine": config.get("engine"),
        "tokenizer": config.get("tokenizer"),
        "seed": config.get("seed"),
        "model_override": config.get("model_override"),
        "model_price_as": config.get("model_price_as"),
        "notes": [scoped_note(n, config) for n in config.get("notes") or []],
        "summarizer": (evaluation or {}).get("summarizer"),
        "dataset": {"name": ds.get("name"), "path": ds.get("path"),
                    "source_format": ds.get("source_format")},
        "dataset_files": files,
        "versions": dict(config.get("versions") or {}),
        "policy_digests": {n: p.get("digest") for n, p in (config.get("policies") or {}).items()},
    }


def scoped_note(note: dict[str, Any], config: dict[str, Any]) -> str:
    """A run's note (what was done otherwise than asked) with how much of the run it is true
    of: "as-recorded: no compaction recorded in the log; replayed as no-compaction (in 114 of
    117 continuities)". A note names continuities, or policy/continuity replays."""
    where = set(note.get("where") or [])
    policies = config.get("policies") or {}
    continuities = {c for p in policies.values() for c in (p.get("providers") or {})}
    if not where or not continuities:
        return note["note"]
    if where <= continuities:
        total, unit = len(continuities), "continuities"
    else:
        total, unit = sum(len(p.get("providers") or {}) for p in policies.values()), "replays (policy × continuity)"
    return f"{note['note']} (in {len(where):,} of {total:,} {unit})"


# ---- the verdict ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    subject: str                    # "run" or "sweep"
    compared: tuple[str, ...]       # policies (or configurations) compared
    table: Any                      # polars frame, one row per policy / configuration
    constraints: Constraints
    chosen: str | None
    chosen_verified: bool
    statement: str                  # the recommendation, one sentence
    leaks: dict[str, Any]
    determinism: dict[str, Any] | None
    conformance: dict[str, Any] | None
    provenance: dict[str, Any]
    notes: tuple[str, ...] = ()
    spread: dict[str, Any] | None = None  # the recommendation across summary samples
    columns: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)  # (column, header, format)

    # -- rendering
    def to_html(self, *, group_by_harness: bool = False) -> str:
        """The verdict as HTML; ``group_by_harness`` (a run's policies only) adds a harness
        column and groups the policy table by harness (:mod:`workbench.report.harness`)."""
        items = [
            ("Compared", f"{len(self.compared)} {'policies' if self.subject == 'run' else 'configurations'}: "
                         + ", ".join(self.compared)),
            ("Constraints", self.constraints.describe()),
            ("Recommendation", self.statement),
            *([("Within the spread", self.spread["text"])] if self.spread else []),
            ("Leaks found", self.leaks["text"]),
            ("Determinism", self.determinism["text"] if self.determinism else
             "not audited (no determinism.json): run `workbench audit determinism --out RUN_DIR`"),
            ("Conformance", self.conformance["text"] if self.conformance else
             "not audited (no conformance.json): run `workbench audit conformance --run RUN_DIR`"),
            ("Run", f"{self.provenance.get('run_id') or self.provenance.get('name')} · "
                    f"git {self.provenance.get('git_revision')} · created {self.provenance.get('created_at')}"),
        ]
        items += [("Note", n) for n in self.provenance.get("notes") or []]
        status = ("pass" if self.chosen and self.chosen_verified else
                  "unverified" if self.chosen else "fail")
        parts = [_CSS, f'<div class="wb-verdict wb-{status}">',
                 '<table class="wb-kv">']
        for k, v in items:
            parts.append(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>")
        parts.append("</table>")
        for n in self.notes:
            parts.append(f'<p class="wb-note">{_e(n)}</p>')
        highlight = ("policy" if self.subject == "run" else "config", self.chosen)
        if group_by_harness and self.subject == "run":
            from workbench.report.harness import HARNESS_COLUMN, by_harness

            parts.append(table_html(by_harness(self.table), (HARNESS_COLUMN, *self.columns),
                                    highlight=highlight, group="harness"))
        else:
            parts.append(table_html(self.table, self.columns, highlight=highlight))
        parts.append('<p class="wb-sign">Reviewed and signed off by: ______________________ '
                     'Date: ____________</p></div>')
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.to_html()

    def provenance_html(self) -> str:
        p = self.provenance
        rows = [(k, p.get(k)) for k in ("run_dir", "run_id", "name", "created_at", "git_revision",
                                        "engine", "tokenizer", "seed", "model_override", "model_price_as",
                                        "summarizer")
                if k in p]
        ds = p.get("dataset") or {}
        # a generated dataset has no source format: say only what is known
        rows += [("dataset", " ".join(part for part in (
            ds.get("name") or "—", ds.get("source_format") and f"({ds['source_format']})",
            ds.get("path") and f"at {ds['path']}") if part))]
        out = [_CSS, '<table class="wb-kv">']
        out += [f"<tr><th>{_e(k)}</th><td>{_e('—' if v is None else v)}</td></tr>" for k, v in rows]
        out.append("</table><h4>Dataset files (sha256)</h4><table class='wb-table'>"
                   "<tr><th>file</th><th>sha256</th><th>now</th></tr>")
        for f in p.get("dataset_files", []):
            out.append(f"<tr><td>{_e(f['file'])}</td><td><code>{_e(f['sha256'])}</code></td>"
                       f"<td>{_e(f['status'])}</td></tr>")
        out.append("</table><h4>Package versions</h4><table class='wb-table'>")
        out += [f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in sorted(p.get("versions", {}).items())]
        out.append("</table>")
        digests = p.get("policy_digests") or {}
        if digests:
            out.append("<h4>Policy digests</h4><table class='wb-table'>")
            out += [f"<tr><td>{_e(k)}</td><td><code>{_e(v)}</code></td></tr>" for k, v in digests.items()]
            out.append("</table>")
        return "\n".join(out)


RUN_COLUMNS = (
    ("policy", "policy", "s"), ("cost_usd", "cost $", "usd"), ("requests", "requests", "int"),
    ("calls", "calls", "int"), ("compactions", "compactions", "int"), ("flushes", "flushes", "int"),
    ("overflows", "overflows", "int"), ("truncations", "truncations", "int"),
    ("failed_requests", "failed requests", "int"),
    ("cache_hit_rate", "cache hit", "pct"), ("peak_context_tokens", "peak context", "int"), ("sr1", "SR-1", "bool"),
    ("leaks", "leaks", "int"), ("leaks_context", "leaks in context", "int"),
    ("retention", "retention", "pct"), ("task_retention", "task state", "pct"),
    ("degenerate_summaries", "degenerate summaries", "int"),
    ("meets", "meets constraints", "verdict"), ("reasons", "why not", "s"),
)


def build_verdict(run_dir: str | Path, *, determinism_dir: str | Path | None = None,
                  constraints: Constraints | None = None) -> Verdict:
    """The verdict of a simulated run directory (see the module docstring)."""
    run_dir = Path(run_dir)
    constraints = constraints or Constraints()
    config = load_config(run_dir)
    summary = load_table(run_dir, "summary", required=True)
    flag_bounds(summary)  # every table of the report names a policy whose figures break a bound
    evaluation = load_evaluation(run_dir)
    table = policy_table(summary, evaluation, constraints)
    names = tuple(table["policy"].to_list())
    row, verified = best_row(table, "cost_usd", unverified=True)
    chosen = row["policy"] if row is not None else None
    notes: list[str] = []
    if evaluation is None:
        notes.append("evaluation.json is missing: leaks and retention were not measured, so the "
                     "leak and retention constraints are unverified for every policy. Run "
                     f"`workbench audit redaction --run {run_dir}`.")
    elif evaluation.get("run_id") not in (None, config.get("run_id")):
        notes.append(f"evaluation.json belongs to run {evaluation.get('run_id')}, not "
                     f"{config.get('run_id')}: re-run the redaction audit.")
    if chosen is None:
        statement = "No policy meets the constraints (" + constraints.describe() + ")."
    else:
        row = table.row(names.index(chosen), named=True)
        statement = f"{chosen} — the cheapest policy "
        if verified:
            statement += f"meeting every constraint (cost ${row['cost_usd']:,.4f})."
        else:
            statement += (f"that fails no measured constraint (cost ${row['cost_usd']:,.4f}); "
                          f"UNVERIFIED: {row['reasons']}.")
    return Verdict(
        subject="run", compared=names, table=table, constraints=constraints, chosen=chosen,
        chosen_verified=verified, statement=statement,
        spread=within_spread(table, load_table(run_dir, "summary_samples"), constraints, chosen),
        leaks=_leaks(table, evaluation, None if evaluation else len(load_secret_values(run_dir, config))),
        determinism=_determinism(run_dir, determinism_dir, names),
        conformance=_conformance(run_dir), provenance=provenance(config, run_dir=run_dir, evaluation=evaluation),
        notes=tuple(notes), columns=RUN_COLUMNS)


def within_spread(table, samples, constraints: Constraints, chosen: str | None) -> dict[str, Any] | None:
    """Whether ``chosen`` is still the policy the selection rule picks in every summary
    sample (None without several samples): ``{samples, wins, winners, text}``."""
    import polars as pl

    if samples is None or samples["sample"].n_unique() < 2:
        return None
    k = samples["sample"].n_unique()
    winners: list[str | None] = []
    for _, part in samples.sort("sample").group_by("sample", maintain_order=True):
        figures = part.select("policy", "retention", "leaks")
        t = table.drop("retention", "leaks", "meets", "reasons", *[c for c in table.columns if c.startswith("ok_")],
                       "pareto", strict=False).join(figures, on="policy", how="left", maintain_order="left")
        row, _ = best_row(judge(t, constraints.as_list()), "cost_usd", unverified=True)
        winners.append(row["policy"] if row is not None else None)
    wins = sum(w == chosen for w in winners)
    mine = samples.filter(pl.col("policy") == chosen) if chosen else None

    def span(column: str, pct: bool) -> str:
        v = mine[column].drop_nulls() if mine is not None else None
        if v is None or v.len() == 0:
            return "not measured"
        show = (lambda x: f"{x:.1%}") if pct else str
        return show(v.min()) if v.min() == v.max() else f"{show(v.min())}–{show(v.max())}"
    if chosen is None:
        found = sorted({w for w in winners if w})
        text = (f"across {k} summary samples no policy meets the constraints in any sample" if not found else
                f"across {k} summary samples a policy meets the constraints in some: " + ", ".join(
                    f"{w} in {winners.count(w)}" for w in found))
    elif wins == k:
        text = (f"yes: across {k} summary samples {chosen} is the cheapest policy meeting the constraints in "
                f"every sample (its retention {span('retention', True)}, leaks {span('leaks', False)})")
    else:
        others = sorted({w for w in winners if w != chosen}, key=str)
        text = (f"NO: across {k} summary samples {chosen} is picked in {wins} of {k}; otherwise "
                + ", ".join(f"{w or 'no policy'} ({winners.count(w)})" for w in others)
                + f" (its retention {span('retention', True)}, leaks {span('leaks', False)})")
    return {"samples": k, "wins": wins, "winners": winners, "text": text}


def _leaks(table, evaluation: dict | None, planted: int | None = None) -> dict[str, Any]:
    if evaluation is None:
        text = "not evaluated (no evaluation.json): run `workbench audit redaction --run RUN_DIR`"
        if planted == 0:
            text += ("; the dataset has no planted secrets either (real logs), so leakage is not "
                     "measurable on it")
        return {"evaluated": False, "total": None, "by_policy": {}, "text": text}
    by = {r["policy"]: r["leaks"] for r in table.iter_rows(named=True) if r["leaks"] is not None}
    ctx = {r["policy"]: r["leaks_context"] for r in table.iter_rows(named=True) if r["leaks_context"]}
    secrets = max((r["secrets"] or 0 for r in table.iter_rows(named=True)), default=0)
    total = sum(by.values())
    if secrets == 0 or evaluation.get("leaks_measured") is False:
        findings = sum(int(h.get("redactions") or 0) for h in (evaluation.get("policies") or {}).values())
        return {"evaluated": True, "total": None, "by_policy": {}, "secrets": 0,
                "text": f"not measured (no labels): {findings} redactor findings carried into derived text"}
    elif total == 0:
        text = f"none: 0 of {secrets} planted secrets reached stored summaries or memory under any policy"
    else:
        text = (f"{total} (policy × secret) leaks of {secrets} planted secrets into stored summaries "
                "or memory: " + ", ".join(f"{p} {n}" for p, n in by.items() if n))
    if ctx:
        text += "; still in the compiled context after compaction: " + ", ".join(f"{p} {n}" for p, n in ctx.items())
    return {"evaluated": True, "total": total, "by_policy": by, "secrets": secrets, "text": text}


def _determinism(run_dir, determinism_dir, names: Sequence[str]) -> dict[str, Any] | None:
    import polars as pl

    det = load_determinism(run_dir, determinism_dir)
    if det is None:
        return None
    checks = det["checks"]
    audited = sorted(set(checks["policy"].to_list())) if checks is not None else sorted(det["hashes"])
    failed = (checks.filter(pl.col("status") == "fail") if checks is not None else None)
    text = "PASS" if det["passed"] else "FAIL"
    if checks is not None:
        from workbench.evaluate.determinism import check_counts, describe_checks

        text += f" ({describe_checks(check_counts(checks), len(audited))}"
        text += ")" if failed.height == 0 else (
            "; failing: " + ", ".join(f"{r['check']}/{r['policy']}" for r in failed.head(6).iter_rows(named=True)) + ")")
    missing = [n for n in names if n not in audited]
    if missing:
        text += f"; not audited: {', '.join(missing)}"
    return {**det, "audited": audited, "text": text}


def _conformance(run_dir) -> dict[str, Any] | None:
    c = load_conformance(run_dir)
    if c is None:
        return None
    text = "PASS" if c.get("passed") else "FAIL"
    text += (f" (ADR-0011 invariants {'pass' if c.get('invariants_passed') else 'FAIL'}, "
             f"{c.get('scenario_failures', 0)} RFC 0012 scenario failures)")
    return {**c, "text": text}


# ---- sweeps -----------------------------------------------------------------------------------
SWEEP_METRICS = (("cost_usd", "cost $", "usd"), ("cost_expected_usd", "expected cost $ (cache misses)", "usd"),
                 ("cost_p10_usd", "p10 $", "usd"), ("cost_p90_usd", "p90 $", "usd"), ("overflows", "overflows", "int"),
                 ("truncations", "truncations", "num"), ("compactions", "compactions", "num"),
                 ("flushes", "flushes", "num"),
                 ("cache_hit_rate", "cache hit", "pct"), ("peak_context_tokens", "peak context", "int"),
                 ("leaks", "leaks", "int"), ("retention", "retention", "pct"),
                 ("retention_min", "retention (worst seed)", "pct"), ("runs_ok", "runs ok", "int"),
                 ("meets", "meets constraints", "verdict"), ("pareto", "Pareto", "bool"))


def sweep_results(sweep_dir: str | Path, constraints: Constraints | None = None):
    """The sweep runner's own tables: ``(tune result, aggregate frame)`` (runner + tune, with
    the cost band of every configuration where a miss profile applies:
    :mod:`workbench.sweep.bands`; a constraint on a metric the sweep did not evaluate is
    unverified)."""
    from workbench.sweep.bands import tune_with_bands
    from workbench.sweep.runner import aggregate, collect

    constraints = constraints or Constraints()
    agg = aggregate(collect(sweep_dir))
    result, _ = tune_with_bands(sweep_dir, agg, "cost_usd", constraints.as_list(), missing="unverified",
                                top=agg.height)
    return result, agg


def build_sweep_verdict(sweep_dir: str | Path, *, constraints: Constraints | None = None) -> Verdict:
    """The verdict of a sweep directory (``workbench sweep``): the configurations, the
    cheapest feasible one (the tuner's choice), leaks, provenance from ``sweep.json``."""
    import polars as pl

    sweep_dir = Path(sweep_dir)
    constraints = constraints or Constraints()
    meta = read_json(sweep_dir / names.SWEEP)
    if meta is None:
        raise ReportError(f"{sweep_dir}: not a sweep directory (no sweep.json); run `workbench sweep SPEC --out {sweep_dir}` first")
    from workbench.sweep.bands import describe

    result, agg = sweep_results(sweep_dir, constraints)
    params = [c for c in agg.columns if "." in c and agg[c].n_unique() > 1] or \
             [c for c in agg.columns if "." in c]
    table = result.configs.sort("config_index").with_columns(
        pl.concat_str([pl.lit("#"), pl.col("config_index").cast(pl.String)]).alias("config"))
    notes = list(result.notes)
    missing = [n for n in ("leaks", "retention") if n not in agg.columns]
    if missing:
        notes.append(f"the sweep did not evaluate {', '.join(missing)} (`evaluate: true` in the spec): "
                     "those constraints are unverified for every configuration.")
    best = result.best
    chosen = f"#{best['config_index']}" if best else None
    if best:
        settings = ", ".join(f"{k}={best[k]}" for k in params)
        band = f"; {describe(best)}" if best.get("cost_expected_usd") is not None else ""
        statement = (f"configuration #{best['config_index']} ({settings}) — the cheapest meeting every constraint "
                     f"(cost ${best['cost_usd']:,.4f}{band}).")
    else:
        statement = "No configuration meets the constraints (" + constraints.describe() + ")."
    leaks = {"evaluated": "leaks" in agg.columns}
    if leaks["evaluated"]:
        lk = table.filter(pl.col("leaks") > 0)
        leaks["total"] = int(table["leaks"].fill_null(0).sum())
        leaks["text"] = ("none in any configuration" if lk.height == 0 else
                         f"{lk.height} of {table.height} configurations leak (worst seed): "
                         + ", ".join(f"#{r['config_index']} {r['leaks']}" for r in lk.head(10).iter_rows(named=True)))
    else:
        leaks["text"] = "not evaluated (the sweep spec has evaluate: false)"
    prov = {"name": meta.get("name"), "run_dir": str(sweep_dir), "created_at": meta.get("created_at"),
            "git_revision": meta.get("git_revision"), "engine": (meta.get("spec") or {}).get("engine"),
            "tokenizer": (meta.get("spec") or {}).get("tokenizer"),
            "dataset": {**(meta.get("dataset") or {}), "source_format": (meta.get("dataset") or {}).get("source_format")},
            "versions": dict(meta.get("versions") or {}), "policy_digests": {},
            "run_id": f"sweep {meta.get('name')} ({meta.get('runs')} runs, {meta.get('configurations')} configurations)"}
    prov["dataset_files"] = provenance({"dataset": {**(meta.get("dataset") or {})}})["dataset_files"]
    cols = (("config", "config", "s"), *[(p, p, "s") for p in params], *SWEEP_METRICS)
    cols = tuple(c for c in cols if c[0] in table.columns)
    return Verdict(subject="sweep", compared=tuple(table["config"].to_list()), table=table,
                   constraints=constraints, chosen=chosen, chosen_verified=best is not None,
                   statement=statement, leaks=leaks, determinism=None, conformance=None,
                   provenance=prov, notes=tuple(notes), columns=cols)


