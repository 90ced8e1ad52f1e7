"""The verdict a reviewer signs, read from a run's files (never recomputed).

A run directory (``workbench simulate``) holds ``config.json`` and ``summary.parquet``; the
audits add ``evaluation.json`` (leaks, retention), ``conformance.json`` and, when written
there, ``determinism.json``/``determinism.parquet``. :func:`build_verdict` turns them into

* the policies compared, one row each: the per-continuity rows of ``summary.parquet``
  summed (``cache_hit_rate`` = cached input tokens / prompt tokens of the sums, the same
  rule as ``workbench simulate``'s table) joined with ``evaluation.json``'s headline;
* the cheapest policy meeting the constraints (default: overflows == 0, leaks == 0,
  retention >= 0.95). A constraint whose figure is missing (no ``evaluation.json``, no
  planted facts) is *unverified*, never assumed to hold: the verdict says so;
* leaks found, determinism and conformance pass/fail when audited, and provenance (run
  id, git revision, package versions, dataset file hashes, checked against the files now).

:class:`TextGuard` is the only way a report shows text (summaries, excerpts, memory
entries): the redaction harness first, then a mask of the dataset's planted secret values
(``texts.parquet`` holds raw summarizer output for policies with SR-1 off, and a
fragment the harness cannot recognise must not reach a report either), then a length cap.

>>> v = build_verdict("runs/demo-synthetic")          # doctest: +SKIP
>>> v.chosen, v.table.select("policy", "cost_usd", "meets")   # doctest: +SKIP
>>> TextGuard(["sk-live-0123456789abcdefXYZ"])("key sk-live-0123456789abcdefXYZ ok", limit=80)
'key <REDACTED:planted> ok'
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

PLANTED_MARKER = "<REDACTED:planted>"
_MARKER = re.compile(r"<REDACTED:[^<>\s]{0,48}>")


class ReportError(WorkbenchError):
    """A run directory cannot be reported on (missing or unreadable files), or a notebook failed."""


# ---- constraints ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Constraints:
    max_overflows: int = 0
    max_leaks: int = 0
    min_retention: float = 0.95

    def as_strings(self) -> list[str]:
        """In ``workbench tune``'s syntax."""
        return [f"overflows<={self.max_overflows}", f"leaks<={self.max_leaks}",
                f"retention>={self.min_retention:g}"]

    def describe(self) -> str:
        return (f"overflows ≤ {self.max_overflows}, leaks ≤ {self.max_leaks}, "
                f"retention ≥ {self.min_retention:.0%}")

    def to_dict(self) -> dict[str, Any]:
        return {"max_overflows": self.max_overflows, "max_leaks": self.max_leaks,
                "min_retention": self.min_retention}


def load_constraints(path: str | Path | None = None) -> Constraints:
    """Constraints from a JSON file (``max_overflows``, ``max_leaks``, ``min_retention``), or
    the defaults when ``path`` is None."""
    if path is None:
        return Constraints()
    data = _read_json(Path(path))
    if data is None:
        raise ReportError(f"{path}: constraints file not found or not JSON")
    unknown = set(data) - {"max_overflows", "max_leaks", "min_retention"}
    if unknown:
        raise ReportError(f"{path}: unknown constraint key(s) {sorted(unknown)}")
    return Constraints(**data)


# ---- reading a run ----------------------------------------------------------------------------
def _read_json(path: Path) -> dict | None:
    import orjson

    if not path.is_file():
        return None
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise ReportError(f"{path}: not valid JSON ({exc})") from exc


def _read_parquet(path: Path):
    import polars as pl

    try:
        return pl.read_parquet(path)
    except Exception as exc:  # polars/arrow raise several types for a damaged file
        raise ReportError(f"{path}: unreadable Parquet ({type(exc).__name__}: {exc})") from exc


def load_config(run_dir: str | Path) -> dict[str, Any]:
    run_dir = Path(run_dir)
    config = _read_json(run_dir / "config.json")
    if config is None:
        raise ReportError(f"{run_dir}: not a run directory (no config.json); "
                          "create one with `workbench simulate`")
    return config


def load_table(run_dir: str | Path, name: str, *, required: bool = False):
    """``<run_dir>/<name>.parquet`` as a polars frame, or None when absent (and not required)."""
    path = Path(run_dir) / f"{name}.parquet"
    if not path.is_file():
        if required:
            raise ReportError(f"{path} is missing; the run directory is incomplete")
        return None
    return _read_parquet(path)


def load_evaluation(run_dir: str | Path) -> dict | None:
    return _read_json(Path(run_dir) / "evaluation.json")


def find_determinism(run_dir: str | Path, determinism_dir: str | Path | None = None) -> Path | None:
    """The directory holding ``determinism.json`` (the given one, else the run's), or None."""
    for d in ([Path(determinism_dir)] if determinism_dir else []) + [Path(run_dir)]:
        if (d / "determinism.json").is_file():
            return d
    if determinism_dir is not None:
        raise ReportError(f"{determinism_dir}: no determinism.json; write one with "
                          f"`workbench audit determinism --out {determinism_dir}`")
    return None


def load_determinism(run_dir: str | Path, determinism_dir: str | Path | None = None) -> dict | None:
    d = find_determinism(run_dir, determinism_dir)
    if d is None:
        return None
    meta = _read_json(d / "determinism.json") or {}
    checks = load_table(d, "determinism")
    drift = load_table(d, "drift")
    return {"dir": str(d), "passed": bool(meta.get("passed")), "hashes": meta.get("hashes", {}),
            "checks": checks, "drift": drift}


def load_secret_values(run_dir: str | Path, config: dict | None = None) -> list[str]:
    """The planted secret values of the run's dataset (hard negatives excluded)."""
    import polars as pl

    config = config or load_config(run_dir)
    path = Path(config.get("dataset", {}).get("path", "")) / "secrets.parquet"
    if not path.is_file():
        return []
    sec = _read_parquet(path)
    if sec.height == 0:
        return []
    return sorted(set(sec.filter(~pl.col("negative"))["value"].to_list()))


# ---- the policy table -------------------------------------------------------------------------
SUMS = ("requests", "calls", "prompt_tokens", "cached_input_tokens", "cache_write_tokens",
        "output_tokens", "cost_usd", "compaction_cost_usd", "flush_cost_usd", "compactions",
        "flushes", "overflows", "full_requests")
EVAL_KEYS = ("sr1", "secrets", "leaks", "leaks_context", "retention", "fact_probes")


def policy_table(summary, evaluation: dict | None, constraints: Constraints):
    """One row per policy (in run order): sums over continuities, the evaluation headline,
    and whether each constraint holds (null: not measured)."""
    import polars as pl

    present = [c for c in SUMS if c in summary.columns]
    agg = summary.group_by("policy", maintain_order=True).agg(
        pl.len().alias("continuities"), *[pl.col(c).sum() for c in present],
        pl.col("peak_context_tokens").max())
    agg = agg.with_columns(
        pl.when(pl.col("prompt_tokens") > 0)
        .then(pl.col("cached_input_tokens") / pl.col("prompt_tokens")).otherwise(0.0)
        .alias("cache_hit_rate"))
    heads = (evaluation or {}).get("policies", {})
    names = agg["policy"].to_list()
    ev = pl.DataFrame({
        "policy": names,
        "sr1": [heads.get(n, {}).get("sr1") for n in names],
        "secrets": [heads.get(n, {}).get("secrets") for n in names],
        "leaks": [heads.get(n, {}).get("leaks") for n in names],
        "leaks_context": [heads.get(n, {}).get("leaks_context") for n in names],
        "retention": [heads.get(n, {}).get("retention") for n in names],
        "fact_probes": [heads.get(n, {}).get("fact_probes") for n in names],
    }, schema={"policy": pl.String, "sr1": pl.Boolean, "secrets": pl.Int64, "leaks": pl.Int64,
               "leaks_context": pl.Int64, "retention": pl.Float64, "fact_probes": pl.Int64})
    table = agg.join(ev, on="policy", how="left", maintain_order="left")
    return _judge(table, constraints)


def _judge(table, c: Constraints):
    """Add ok_overflows / ok_leaks / ok_retention (null = unverified), meets, reasons."""
    import polars as pl

    def check(col: str, expr):
        if col not in table.columns:
            return pl.lit(None, dtype=pl.Boolean)
        return pl.when(pl.col(col).is_null()).then(None).otherwise(expr)

    table = table.with_columns(
        check("overflows", pl.col("overflows") <= c.max_overflows).alias("ok_overflows"),
        check("leaks", pl.col("leaks") <= c.max_leaks).alias("ok_leaks"),
        check("retention", pl.col("retention") >= c.min_retention).alias("ok_retention"),
    )
    oks = ["ok_overflows", "ok_leaks", "ok_retention"]
    rows = table.select(*oks).rows()
    meets, reasons = [], []
    for (o, lk, rt), r in zip(rows, table.iter_rows(named=True), strict=True):
        why = []
        if o is False:
            why.append(f"overflows {r['overflows']} > {c.max_overflows}")
        if lk is False:
            why.append(f"leaks {r['leaks']} > {c.max_leaks}")
        if rt is False:
            why.append(f"retention {r['retention']:.1%} < {c.min_retention:.0%}")
        unverified = [n for n, v in (("overflows", o), ("leaks", lk), ("retention", rt)) if v is None]
        if why:
            meets.append(False)
        elif unverified:
            meets.append(None)
            why.append("not measured: " + ", ".join(unverified))
        else:
            meets.append(True)
        reasons.append("; ".join(why))
    return table.with_columns(pl.Series("meets", meets, dtype=pl.Boolean),
                              pl.Series("reasons", reasons, dtype=pl.String))


def cheapest(table, cost: str = "cost_usd", name: str = "policy") -> tuple[str | None, bool]:
    """(name, verified): the cheapest row meeting every constraint; when none is verified,
    the cheapest that fails none (verified False); (None, False) when every row fails."""
    import polars as pl

    for verified, cond in ((True, pl.col("meets") == True),  # noqa: E712 - polars expression
                           (False, pl.col("meets").is_null())):
        cand = table.filter(cond & pl.col(cost).is_not_null())
        if cand.height:
            i = cand[cost].arg_min()
            return str(cand[name][i]), verified
    return None, False


def with_pareto(table, cost: str = "cost_usd", retention: str = "retention", leaks: str = "leaks"):
    """Add ``pareto`` (bool): rows no other row beats on cost (lower), retention (higher) and
    leaks (lower) at once; rows without a retention figure are never on the front."""
    import numpy as np
    import polars as pl

    objs = [(c, s) for c, s in ((cost, 1.0), (retention, -1.0), (leaks, 1.0)) if c in table.columns]
    if retention not in table.columns or table.height == 0:
        return table.with_columns(pl.lit(False).alias("pareto"))
    v = np.column_stack([table[c].cast(pl.Float64).fill_null(np.nan).to_numpy() * s for c, s in objs])
    has = ~np.isnan(v).any(axis=1)
    keep = has.copy()
    for i in np.flatnonzero(has):
        others = v[has]
        if (np.all(others <= v[i], axis=1) & np.any(others < v[i], axis=1)).any():
            keep[i] = False
    return table.with_columns(pl.Series("pareto", keep, dtype=pl.Boolean))


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
        "pricing_notes": [n["note"] for n in config.get("notes") or []],
        "summarizer": (evaluation or {}).get("summarizer"),
        "dataset": {"name": ds.get("name"), "path": ds.get("path"),
                    "source_format": ds.get("source_format")},
        "dataset_files": files,
        "versions": dict(config.get("versions") or {}),
        "policy_digests": {n: p.get("digest") for n, p in (config.get("policies") or {}).items()},
    }


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
    columns: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)  # (column, header, format)

    # -- rendering
    def to_html(self) -> str:
        items = [
            ("Compared", f"{len(self.compared)} {'policies' if self.subject == 'run' else 'configurations'}: "
                         + ", ".join(self.compared)),
            ("Constraints", self.constraints.describe()),
            ("Recommendation", self.statement),
            ("Leaks found", self.leaks["text"]),
            ("Determinism", self.determinism["text"] if self.determinism else
             "not audited (no determinism.json): run `workbench audit determinism --out RUN_DIR`"),
            ("Conformance", self.conformance["text"] if self.conformance else
             "not audited (no conformance.json): run `workbench audit conformance --run RUN_DIR`"),
            ("Run", f"{self.provenance.get('run_id') or self.provenance.get('name')} · "
                    f"git {self.provenance.get('git_revision')} · created {self.provenance.get('created_at')}"),
        ]
        items += [("Pricing", n) for n in self.provenance.get("pricing_notes") or []]
        status = ("pass" if self.chosen and self.chosen_verified else
                  "unverified" if self.chosen else "fail")
        parts = [_CSS, f'<div class="wb-verdict wb-{status}">',
                 '<table class="wb-kv">']
        for k, v in items:
            parts.append(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>")
        parts.append("</table>")
        for n in self.notes:
            parts.append(f'<p class="wb-note">{_e(n)}</p>')
        parts.append(table_html(self.table, self.columns, highlight=("policy" if self.subject == "run"
                                                                      else "config", self.chosen)))
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
        rows += [("dataset", f"{ds.get('name')} ({ds.get('source_format')}) at {ds.get('path')}")]
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
    ("overflows", "overflows", "int"), ("cache_hit_rate", "cache hit", "pct"),
    ("peak_context_tokens", "peak context", "int"), ("sr1", "SR-1", "bool"),
    ("leaks", "leaks", "int"), ("leaks_context", "leaks in context", "int"),
    ("retention", "retention", "pct"), ("meets", "meets constraints", "verdict"),
    ("reasons", "why not", "s"),
)


def build_verdict(run_dir: str | Path, *, determinism_dir: str | Path | None = None,
                  constraints: Constraints | None = None) -> Verdict:
    """The verdict of a simulated run directory (see the module docstring)."""
    run_dir = Path(run_dir)
    constraints = constraints or Constraints()
    config = load_config(run_dir)
    summary = load_table(run_dir, "summary", required=True)
    evaluation = load_evaluation(run_dir)
    table = policy_table(summary, evaluation, constraints)
    names = tuple(table["policy"].to_list())
    chosen, verified = cheapest(table)
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
        leaks=_leaks(table, evaluation, None if evaluation else len(load_secret_values(run_dir, config))),
        determinism=_determinism(run_dir, determinism_dir, names),
        conformance=_conformance(run_dir), provenance=provenance(config, run_dir=run_dir, evaluation=evaluation),
        notes=tuple(notes), columns=RUN_COLUMNS)


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
        text += f" ({checks.height} checks over {len(audited)} policies"
        text += ")" if failed.height == 0 else (
            "; failing: " + ", ".join(f"{r['check']}/{r['policy']}" for r in failed.head(6).iter_rows(named=True)) + ")")
    missing = [n for n in names if n not in audited]
    if missing:
        text += f"; not audited: {', '.join(missing)}"
    return {**det, "audited": audited, "text": text}


def _conformance(run_dir) -> dict[str, Any] | None:
    c = _read_json(Path(run_dir) / "conformance.json")
    if c is None:
        return None
    text = "PASS" if c.get("passed") else "FAIL"
    text += (f" (ADR-0011 invariants {'pass' if c.get('invariants_passed') else 'FAIL'}, "
             f"{c.get('scenario_failures', 0)} RFC 0012 scenario failures)")
    return {**c, "text": text}


# ---- sweeps -----------------------------------------------------------------------------------
SWEEP_METRICS = (("cost_usd", "cost $", "usd"), ("overflows", "overflows", "int"),
                 ("compactions", "compactions", "num"), ("flushes", "flushes", "num"),
                 ("cache_hit_rate", "cache hit", "pct"), ("peak_context_tokens", "peak context", "int"),
                 ("leaks", "leaks", "int"), ("retention", "retention", "pct"),
                 ("retention_min", "retention (worst seed)", "pct"), ("runs_ok", "runs ok", "int"),
                 ("feasible", "meets constraints", "verdict"), ("pareto", "Pareto", "bool"))


def sweep_results(sweep_dir: str | Path, constraints: Constraints | None = None):
    """The sweep runner's own tables: ``(tune result, aggregate frame)`` (runner + tune)."""
    from workbench.sweep.runner import aggregate, collect
    from workbench.sweep.tune import tune

    constraints = constraints or Constraints()
    agg = aggregate(collect(sweep_dir))
    cons = [c for c, col in zip(constraints.as_strings(), ("overflows", "leaks", "retention"), strict=True)
            if col in agg.columns]
    return tune(agg, "cost_usd", cons), agg


def build_sweep_verdict(sweep_dir: str | Path, *, constraints: Constraints | None = None) -> Verdict:
    """The verdict of a sweep directory (``workbench sweep``): the configurations, the
    cheapest feasible one (the tuner's choice), leaks, provenance from ``sweep.json``."""
    import polars as pl

    sweep_dir = Path(sweep_dir)
    constraints = constraints or Constraints()
    meta = _read_json(sweep_dir / "sweep.json")
    if meta is None:
        raise ReportError(f"{sweep_dir}: not a sweep directory (no sweep.json); run `workbench sweep` first")
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
        table = table.with_columns(pl.lit(None, dtype=pl.Boolean).alias("feasible"))
    best = result.best
    chosen = f"#{best['config_index']}" if best else None
    if best:
        settings = ", ".join(f"{k}={best[k]}" for k in params)
        statement = f"configuration #{best['config_index']} ({settings}) — the cheapest meeting every constraint (cost ${best['cost_usd']:,.4f})."
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


# ---- text shown in reports --------------------------------------------------------------------
def _variants(value: str) -> list[str]:
    raw = value.encode("utf-8", "surrogatepass")
    out = [value, base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("="),
           raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe="")]
    return list(dict.fromkeys(v for v in out if v))


class TextGuard:
    """The one way a report shows text: redaction harness, planted-value mask, length cap.

    ``known`` are secret values that must never be shown (the dataset's planted secrets);
    every fragment of >= 12 characters (or half of a short one) of a known value, in plain,
    base64, hex or percent-encoded form, is replaced by ``<REDACTED:planted>``.
    """

    def __init__(self, known: Iterable[str] = ()):
        self.fragments: dict[int, set[str]] = {}
        for value in known:
            if not value or len(value.strip()) < 6:
                continue
            for var in _variants(value):
                m = max(6, min(12, math.ceil(0.5 * len(var))))
                for i in range(len(var) - m + 1):
                    frag = var[i:i + m]
                    if frag.strip():
                        self.fragments.setdefault(m, set()).add(frag)

    @classmethod
    def for_run(cls, run_dir: str | Path) -> TextGuard:
        return cls(load_secret_values(run_dir))

    def mask_known(self, text: str) -> str:
        if not text or not self.fragments:
            return text
        marks = bytearray(len(text))
        for m, frags in self.fragments.items():
            for i in range(len(text) - m + 1):
                if text[i:i + m] in frags:
                    marks[i:i + m] = b"\x01" * m
        if not any(marks):
            return text
        out, i = [], 0
        while i < len(text):
            if marks[i]:
                j = i
                while j < len(text) and marks[j]:
                    j += 1
                out.append(PLANTED_MARKER)
                i = j
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    def __call__(self, text: str | None, limit: int | None = 600) -> str:
        from workbench.redaction.harness import redact

        if not text:
            return ""
        shown = redact(text).text
        cut = limit is not None and len(shown) > limit
        if cut:
            end = limit
            for m in _MARKER.finditer(shown, max(0, limit - 64)):
                if m.start() < limit < m.end():
                    end = m.end()  # never cut a marker in half
            shown = shown[:end]
        shown = self.mask_known(shown)
        return shown + (" …" if cut else "")


def text_samples(run_dir: str | Path, *, guard: TextGuard | None = None, per_policy: int = 1,
                 kinds: Sequence[str] = ("summary", "merge", "recorded"), limit: int = 600):
    """Stored texts (``texts.parquet``) to show, at most ``per_policy`` per policy and kind,
    every one through ``guard``; None when the redaction audit has not run."""
    import polars as pl

    tx = load_table(run_dir, "texts")
    if tx is None:
        return None
    guard = guard or TextGuard.for_run(run_dir)
    tx = tx.filter(pl.col("kind").is_in(list(kinds)) & pl.col("text").is_not_null() & (pl.col("text") != ""))
    tx = tx.group_by("policy", "kind", maintain_order=True).head(per_policy)
    shown = [guard(t, limit) for t in tx["text"].to_list()]
    return tx.select("policy", "continuity_id", "kind", "request", "artifact_id", "sr1", "redactions").with_columns(
        pl.Series("excerpt", shown, dtype=pl.String))


# ---- HTML helpers -----------------------------------------------------------------------------
_CSS = """<style>
.wb-verdict{border-left:6px solid #888;padding:6px 12px;margin:4px 0 12px 0;background:#fafafa}
.wb-pass{border-color:#2e7d32}.wb-fail{border-color:#c62828}.wb-unverified{border-color:#ef6c00}
table.wb-kv{margin:4px 0}
table.wb-kv th{text-align:left!important;padding:3px 14px 3px 0!important;vertical-align:top;white-space:nowrap}
table.wb-kv td{text-align:left!important;padding:3px 0!important;max-width:1000px}
table.wb-table{border-collapse:collapse;margin:6px 0;font-size:12px}
table.wb-table th,table.wb-table td{border:1px solid #ccc!important;padding:3px 6px!important;text-align:right!important}
table.wb-table td.s,table.wb-table th{text-align:left!important}
tr.wb-chosen td{background:#e8f5e9;font-weight:600}
td.wb-yes{color:#2e7d32}td.wb-no{color:#c62828;font-weight:600}td.wb-unk{color:#ef6c00}
pre.wb-excerpt{white-space:pre-wrap;font-size:11px;background:#f4f4f4;padding:6px;max-width:1100px}
p.wb-note{color:#ef6c00}p.wb-sign{margin-top:14px;color:#444}
</style>"""


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


def fmt(value: Any, kind: str) -> tuple[str, str]:
    """(text, css class) of one table cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—", "wb-unk" if kind == "verdict" else ""
    if kind == "usd":
        return f"{value:,.4f}", ""
    if kind == "int":
        return f"{int(value):,}", ""
    if kind == "num":
        return (f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"), ""
    if kind == "pct":
        return f"{value:.1%}", ""
    if kind == "bool":
        return ("on" if value else "off") if isinstance(value, bool) else str(value), "s"
    if kind == "verdict":
        return ("yes", "wb-yes") if value else ("NO", "wb-no")
    return str(value), "s"


def table_html(frame, columns: Sequence[tuple[str, str, str]] = (), *, highlight: tuple[str, Any] | None = None,
               max_rows: int = 200) -> str:
    """An escaped HTML table of ``frame``; ``columns`` are (column, header, format)."""
    if frame is None:
        return "<p><em>no data</em></p>"
    if not columns:
        columns = tuple((c, c, _guess(frame.schema[c])) for c in frame.columns)
    columns = [c for c in columns if c[0] in frame.columns]
    out = [_CSS, '<table class="wb-table"><tr>' + "".join(f"<th>{_e(h)}</th>" for _, h, _ in columns) + "</tr>"]
    for r in frame.head(max_rows).iter_rows(named=True):
        chosen = highlight is not None and highlight[1] is not None and r.get(highlight[0]) == highlight[1]
        cells = []
        for col, _, kind in columns:
            text, cls = fmt(r[col], kind)
            cells.append(f'<td class="{cls}">{_e(text)}</td>')
        out.append(f'<tr class="{"wb-chosen" if chosen else ""}">' + "".join(cells) + "</tr>")
    out.append("</table>")
    if frame.height > max_rows:
        out.append(f"<p><em>{frame.height - max_rows} more rows not shown</em></p>")
    return "\n".join(out)


def _guess(dtype) -> str:
    if dtype.is_float():
        return "num"
    if dtype.is_integer():
        return "int"
    return "s"


def excerpts_html(frame) -> str:
    """Guarded excerpts (from :func:`text_samples`) as HTML; the text is escaped."""
    if frame is None:
        return message_html("No stored texts: the redaction audit has not run on this run "
                            "(`workbench audit redaction --run RUN_DIR`).")
    if frame.height == 0:
        return message_html("No stored summaries or memory entries: no policy produced readable text.")
    out = [_CSS]
    for r in frame.iter_rows(named=True):
        out.append(f"<p><b>{_e(r['policy'])}</b> · {_e(r['kind'])} at request {_e(r['request'])} · "
                   f"{_e(r['continuity_id'])} · SR-1 {'on' if r['sr1'] else 'off'} · "
                   f"{_e(r['redactions'])} redactions when stored</p>"
                   f'<pre class="wb-excerpt">{_e(r["excerpt"])}</pre>')
    return "\n".join(out)


def message_html(text: str, level: str = "note") -> str:
    return f'{_CSS}<p class="wb-{"note" if level == "note" else "sign"}">{_e(text)}</p>'
