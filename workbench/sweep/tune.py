"""Pick thresholds from a sweep: the best configuration meeting the constraints and the
Pareto front, by the one rule of :mod:`workbench.selection` (the sweep report uses it too).

Metrics are the columns of :func:`workbench.sweep.runner.aggregate` (``cost_usd``,
``overflows``, ``truncations``, ``compactions``, ``flushes``, ``peak_context_tokens``,
``cache_hit_rate``, ``full_requests`` ... summed over continuities, averaged over seeds;
``overflows``/``truncations``/``leaks`` take the worst seed) plus ``leaks`` and ``retention`` when the sweep evaluated its runs. A
constraint on a metric no run measured is an error here (``missing="unverified"`` makes it
unverified instead, as the report does); a configuration with a missing figure is
unverified, never chosen.

>>> c = parse_constraint("retention>=0.95")
>>> (c.metric, c.op, c.value)
('retention', '>=', 0.95)
>>> import polars as pl
>>> df = pl.DataFrame({"config_index": [0, 1, 2], "cost_usd": [3.0, 1.0, 2.0],
...                    "overflows": [0, 2, 0], "complete": [True] * 3})
>>> tune(df, "cost_usd", ["overflows==0"]).best["config_index"]
2
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.selection import (
    Constraint,
    SelectionError,
    best_row,
    judge,
    objectives,
    pareto_front,
    pareto_mask,
    parse_constraint,
)

__all__ = ["Constraint", "TuneError", "TuneResult", "pareto_mask", "parse_constraint", "tune",
           "best_policy", "render_table", "render_configs", "shipped_mask", "shown_configs"]

TuneError = SelectionError  # a bad constraint or objective, or nothing to choose from
# the provider cache-miss band of a configuration's cost (:mod:`workbench.sweep.bands`)
BAND_COLUMNS = ("cost_expected_usd", "cost_p10_usd", "cost_p90_usd")


@dataclass
class TuneResult:
    objective: str
    direction: str
    constraints: list[Constraint]
    configs: Any  # polars frame: every configuration, with feasible / pareto / rank columns
    best: dict[str, Any] | None
    pareto_objectives: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def feasible(self):
        import polars as pl

        return self.configs.filter(pl.col("feasible"))

    @property
    def pareto(self):
        import polars as pl

        return self.configs.filter(pl.col("pareto"))


def tune(frame, objective: str = "cost_usd", constraints: Sequence[str | Constraint] = (),
         direction: str = "min", *, missing: str = "error") -> TuneResult:
    """The best feasible configuration of an aggregated sweep frame (one row per configuration,
    see :func:`workbench.sweep.runner.aggregate`) and its Pareto front."""
    import polars as pl

    if direction not in ("min", "max"):
        raise TuneError("direction must be min or max")
    cons = [parse_constraint(c) for c in constraints]
    names = [objective] + ([c.metric for c in cons] if missing == "error" else [])
    for name in names:
        if name not in frame.columns:
            known = sorted(c for c in frame.columns if frame.schema[c].is_numeric() and "." not in c
                           and not c.endswith("_index"))
            hint = (" (leaks and retention need `evaluate: true` in the spec)"
                    if name in ("leaks", "retention", "task_retention") else
                    " (the cost band needs an imported log whose harness and provider have a cache-miss "
                    "profile)" if name in BAND_COLUMNS else "")
            raise TuneError(f"unknown metric {name!r}{hint}; available: {', '.join(known)}")
    if not frame.schema[objective].is_numeric():
        raise TuneError(f"objective {objective!r} is not numeric")
    df = judge(frame, cons)
    # a configuration without a figure for the objective cannot be ranked on it
    df = df.with_columns(pl.when(pl.col(objective).is_null() & pl.col("meets").fill_null(False))
                         .then(None).otherwise(pl.col("meets")).alias("meets"))
    df = df.with_columns(pl.col("meets").fill_null(False).alias("feasible"))
    df = df.with_columns(pareto_front(df, objective, direction))
    notes: list[str] = []
    if "complete" in df.columns and not df["complete"].all():
        notes.append(f"{int((~df['complete']).sum())} configuration(s) with failed or missing runs are "
                     "never chosen (see `status` in the results)")
    unverified = int(df["meets"].is_null().sum())
    if unverified:
        notes.append(f"{unverified} configuration(s) lack a figure a constraint needs: unverified, "
                     "never chosen")
    if not df["feasible"].any():
        notes.append("no configuration satisfies every constraint; the Pareto front is over all "
                     "complete configurations")
    best, _ = best_row(df, objective, direction)
    order = [pl.col("feasible").not_(), pl.col(objective) if direction == "min" else -pl.col(objective)]
    order += [pl.col(c) if d == "min" else -pl.col(c) for c, d in objectives(df) if c != objective]
    if "config_index" in df.columns:
        order.append(pl.col("config_index"))
    df = df.sort(order, nulls_last=True).with_row_index("rank", offset=1)
    if best is not None:
        best = df.filter(pl.col("config_index") == best["config_index"]).row(0, named=True) \
            if "config_index" in df.columns else df.row(0, named=True)
    return TuneResult(objective=objective, direction=direction, constraints=cons, configs=df,
                      best=best, pareto_objectives=objectives(df, objective, direction), notes=notes)


def best_policy(result: TuneResult, spec):
    """The chosen configuration as a resolved :class:`Policy` (spec base + its overrides)."""
    if result.best is None:
        raise TuneError("no feasible configuration")
    overrides = {}
    for key in spec.parameter_keys():
        value = result.best.get(key)
        if isinstance(value, str) and value[:1] in "[{":
            import orjson

            value = orjson.loads(value)
        from workbench.sweep.spec import coerce

        overrides[key] = coerce(key, value)
    return spec.base_policy().with_overrides(overrides)


def shown_configs(result: TuneResult, top: int = 10) -> list[int]:
    """The config indices :func:`render_table` shows: the first ``top`` by rank, the Pareto
    front and the chosen one."""
    import polars as pl

    df = result.configs
    if "config_index" not in df.columns:
        return []
    shown = set(df.filter((pl.col("rank") <= top) | pl.col("pareto"))["config_index"].to_list())
    if result.best is not None:
        shown.add(result.best["config_index"])
    return sorted(int(i) for i in shown)


def shipped_mask(agg, spec, swept: Sequence[str] | None = None) -> list[bool]:
    """Per configuration row of ``agg``: the base preset as it ships, every swept parameter
    (``swept``; by default those that vary in ``agg``) at the base policy's own value (the
    reports' star, ``tune``'s "as shipped" line)."""
    if swept is None:
        swept = [k for k in spec.parameter_keys() if k in agg.columns and agg[k].n_unique() > 1]
    base = spec.base_policy().to_dict()
    return [all(_same(row[k], _dotted(base, k)) for k in swept) for row in agg.iter_rows(named=True)]


def _dotted(policy: dict, key: str):
    section, _, name = key.partition(".")
    return (policy.get(section) or {}).get(name) if name else policy.get(section)


def _same(a, b) -> bool:
    import math

    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def render_table(result: TuneResult, *, top: int = 10, fmt: str = "table", file=None) -> None:
    """The best configurations, feasible first, plus the Pareto front (``fmt``: table | csv |
    json | markdown; numbers are never cut)."""
    import polars as pl

    from workbench.util.tables import emit

    df = result.configs
    params = _swept_columns(df)
    shown = df.filter((pl.col("rank") <= top) | pl.col("pareto"))
    shown_metrics = ("cost_usd", *BAND_COLUMNS, "overflows", "truncations", "compactions", "flushes", "peak_context_tokens",
                     "cache_hit_rate", "leaks", "retention", "task_retention")
    metric_cols = [result.objective] + [c for c in shown_metrics if c in df.columns and c != result.objective]
    metric_cols += [c.metric for c in result.constraints if c.metric not in metric_cols]
    rows = []  # `rank` is the tuner's order; `config` the configuration's index, as `sweep` prints it
    for r in shown.iter_rows(named=True):
        mark = "★" if result.best is not None and r["rank"] == 1 else str(r["rank"])
        rows.append({**r, "rank": mark if fmt == "table" else r["rank"],
                     "feasible": ("yes" if r["feasible"] else "") if fmt == "table" else r["feasible"],
                     "pareto": ("●" if r["pareto"] else "") if fmt == "table" else r["pareto"]})
    title = (f"{'minimise' if result.direction == 'min' else 'maximise'} {result.objective}"
             + (f" subject to {', '.join(map(str, result.constraints))}" if result.constraints else ""))
    display = {c: (lambda v, c=c: _fmt(v, c)) for c in [*params, *metric_cols]}
    display.update({"rank": str, "config_index": str, "feasible": str, "pareto": str})
    index = ["config_index"] if "config_index" in df.columns else []
    emit(rows, ["rank", *index, *params, *metric_cols, "feasible", "pareto"], fmt=fmt, title=title,
         headers={"config_index": "config"}, display=display, file=file)
    if fmt == "table":
        for n in result.notes:
            print(f"note: {n}", file=file)


def _swept_columns(df) -> list[str]:
    """Parameter columns that vary (all parameter columns when none does)."""
    params = [c for c in df.columns if "." in c]
    varying = [c for c in params if df[c].n_unique() > 1]
    return varying or params


def _fmt(v: Any, name: str = "") -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if name == "cost_usd" or name.endswith("_usd"):
            return f"{v:,.4f}"
        if name in ("cache_hit_rate", "retention", "task_retention"):
            return f"{v:.3f}"
        return f"{v:,.6g}" if not v.is_integer() else f"{int(v):,}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    return str(v)


SUMMARY_METRICS = ("cost_usd", *BAND_COLUMNS, "compactions", "flushes", "overflows", "truncations", "peak_context_tokens",
                   "cache_hit_rate", "full_requests", "leaks", "retention", "task_retention")


TABLE_LIMIT = 50  # rows of the sweep table (the other formats give every row)


def render_configs(agg, *, limit: int = TABLE_LIMIT, fmt: str = "table", file=None,
                   notes: Sequence[str] = ()) -> None:
    """An aggregated sweep (one row per configuration): at most ``limit`` rows as a table,
    every row in the other formats; ``notes`` printed under the table."""
    from workbench.util.tables import emit

    params = _swept_columns(agg)
    # the task state's column only where it was measured (a dataset that plants or names one)
    metrics = [c for c in SUMMARY_METRICS if c in agg.columns
               and (c != "task_retention" or agg[c].drop_nulls().len() > 0)]
    frame = agg.head(limit) if fmt == "table" else agg
    rows = [{**r, "runs": f"{r['runs_ok']}/{r['runs']}" if fmt == "table" and "runs_ok" in r else r.get("runs")}
            for r in frame.iter_rows(named=True)]
    display = {c: (lambda v, c=c: _fmt(v, c)) for c in [*params, *metrics]}
    display.update({"config_index": str, "runs": str})
    emit(rows, ["config_index", *params, *metrics, "runs"], fmt=fmt, title=f"{agg.height} configurations",
         headers={"config_index": "config"}, display=display, file=file)
    if fmt == "table" and agg.height > limit:
        print(f"... {agg.height - limit} more (see `collect` / runs.parquet, or --format csv)", file=file)
    if fmt == "table":
        for n in notes:
            print(f"note: {n}", file=file)
