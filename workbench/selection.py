"""Which rows meet the constraints and which are on the Pareto front: the one rule that
``workbench tune``, the sweep report and the run report all use.

* A constraint is ``metric op number`` (``op`` one of ``== != <= >= < >``), parsed by a
  regular expression, never ``eval``.
* A row whose figure for a constrained metric is missing (null) is **unverified** for that
  constraint: it neither holds nor fails. A row **meets** the constraints when every one
  holds on a measured figure (``meets`` true); it **fails** when a measured figure breaks
  one (false); otherwise it is unverified (null). Only rows that meet them are *feasible*.
  A row with ``complete`` false (failed runs) fails.
* The **Pareto front** is taken over the feasible rows, or over every complete row when
  none is feasible. The objectives are cost (min), retention (max) and leaks (min) among
  the columns with at least one figure in that pool, the chosen objective first; a row
  missing any of them is never on the front and dominates nothing.

>>> import polars as pl
>>> t = pl.DataFrame({"policy": ["a", "b", "c"], "cost_usd": [3.0, 1.0, 2.0],
...                   "overflows": [0, 2, 0], "retention": [0.99, 0.99, None]})
>>> j = judge(t, [parse_constraint("overflows==0"), parse_constraint("retention>=0.95")])
>>> j["meets"].to_list(), j["reasons"].to_list()
([True, False, None], ['', 'overflows 2 (wants overflows==0)', 'not measured: retention'])
>>> pareto_front(j).to_list()
[True, False, False]
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.errors import WorkbenchError

OPS = {"==": operator.eq, "!=": operator.ne, "<=": operator.le, ">=": operator.ge,
       "<": operator.lt, ">": operator.gt}
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(==|!=|<=|>=|<|>)\s*"
                         r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
# Pareto objectives, in order of preference for ties
PARETO = (("cost_usd", "min"), ("retention", "max"), ("leaks", "min"))


class SelectionError(WorkbenchError):
    """A bad constraint or objective."""


@dataclass(frozen=True)
class Constraint:
    metric: str
    op: str
    value: float

    def __str__(self) -> str:
        v = int(self.value) if float(self.value).is_integer() else self.value
        return f"{self.metric}{self.op}{v}"

    def holds(self, value) -> bool:
        return bool(OPS[self.op](value, self.value))


def parse_constraint(text: str | Constraint) -> Constraint:
    if isinstance(text, Constraint):
        return text
    m = _CONSTRAINT.match(text)
    if not m:
        raise SelectionError(f"bad constraint {text!r}: write 'metric op number' with op one of "
                             f"{' '.join(OPS)} (e.g. 'overflows==0', 'retention>=0.95')")
    return Constraint(m.group(1), m.group(2), float(m.group(3)))


@dataclass(frozen=True)
class Constraints:
    """The report's constraints (``--max-overflows --max-leaks --min-retention``)."""

    max_overflows: int = 0
    max_leaks: int = 0
    min_retention: float = 0.95

    def as_list(self) -> list[Constraint]:
        return [Constraint("overflows", "<=", self.max_overflows), Constraint("leaks", "<=", self.max_leaks),
                Constraint("retention", ">=", self.min_retention)]

    def as_strings(self) -> list[str]:
        return [str(c) for c in self.as_list()]

    def describe(self) -> str:
        return (f"overflows ≤ {self.max_overflows}, leaks ≤ {self.max_leaks}, "
                f"retention ≥ {self.min_retention:.0%}")

    def to_dict(self) -> dict:
        return {"max_overflows": self.max_overflows, "max_leaks": self.max_leaks,
                "min_retention": self.min_retention}


def _why(c: Constraint, value) -> str:
    shown = f"{value:.1%}" if c.metric.startswith("retention") and isinstance(value, float) else (
        f"{value:,.4g}" if isinstance(value, float) else str(value))
    return f"{c.metric} {shown} (wants {c})"


def judge(frame, constraints: Sequence[str | Constraint]):
    """``frame`` with ``ok_<metric>`` per constraint (null: not measured), ``meets`` (true /
    false / null: unverified) and ``reasons`` (why not, or what is not measured). A
    constrained metric with no column at all counts as not measured on every row."""
    import polars as pl

    cons = [parse_constraint(c) for c in constraints]
    cols = {}
    for c in cons:
        col = pl.col(c.metric) if c.metric in frame.columns else pl.lit(None, dtype=pl.Float64)
        name = f"ok_{c.metric}" if f"ok_{c.metric}" not in cols else f"ok_{c.metric}_{len(cols)}"
        cols[name] = (c, pl.when(col.is_null()).then(None).otherwise(OPS[c.op](col, c.value)))
    table = frame.with_columns([expr.alias(name) for name, (_, expr) in cols.items()])
    complete = table["complete"].to_list() if "complete" in table.columns else [True] * table.height
    meets, reasons = [], []
    for i, r in enumerate(table.iter_rows(named=True)):
        failed = [_why(c, r.get(c.metric)) for name, (c, _) in cols.items() if r[name] is False]
        unmeasured = [c.metric for name, (c, _) in cols.items() if r[name] is None]
        if complete[i] is False:
            failed.insert(0, "failed runs")
        if failed:
            meets.append(False)
            reasons.append("; ".join(failed))
        elif unmeasured:
            meets.append(None)
            reasons.append("not measured: " + ", ".join(dict.fromkeys(unmeasured)))
        else:
            meets.append(True)
            reasons.append("")
    return table.with_columns(pl.Series("meets", meets, dtype=pl.Boolean),
                              pl.Series("reasons", reasons, dtype=pl.String))


def objectives(frame, objective: str | None = None, direction: str = "min") -> list[tuple[str, str]]:
    """The Pareto objectives present in ``frame`` (with a figure somewhere), ``objective`` first."""
    objs = [(c, d) for c, d in PARETO if c in frame.columns and frame[c].null_count() < frame.height]
    if objective is not None and objective not in {c for c, _ in objs}:
        objs = [(objective, direction), *objs]
    return objs


def pareto_pool(frame):
    """Boolean mask of the rows the front is taken over (see the module docstring)."""
    import polars as pl

    feasible = frame["meets"].fill_null(False) if "meets" in frame.columns else pl.Series([True] * frame.height)
    if feasible.any():
        return feasible.to_numpy()
    complete = frame["complete"].fill_null(False) if "complete" in frame.columns else pl.Series([True] * frame.height)
    return complete.to_numpy()


def pareto_mask(values: np.ndarray) -> np.ndarray:
    """Non-dominated rows of ``values`` (n x k, every column minimised); a row with a NaN is
    never kept and dominates nothing."""
    v = values.astype(np.float64)
    has = ~np.isnan(v).any(axis=1) if v.size else np.zeros(v.shape[0], bool)
    keep = has.copy()
    measured = v[has]
    for i in np.flatnonzero(has):
        if (np.all(measured <= v[i], axis=1) & np.any(measured < v[i], axis=1)).any():
            keep[i] = False
    return keep


def pareto_front(frame, objective: str | None = None, direction: str = "min", *, among: str = "feasible"):
    """A boolean Series: the rows on the Pareto front (see the module docstring). ``among``
    "all" takes it over every complete row whatever the constraints: the non-dominated rows
    (no other row is at least as good on every objective and better on one), which a figure
    marks beside the feasible ones."""
    import polars as pl

    if among not in ("feasible", "all"):
        raise SelectionError(f"among must be 'feasible' or 'all', not {among!r}")
    pool = pareto_pool(frame) if among == "feasible" else (
        frame["complete"].fill_null(False).to_numpy() if "complete" in frame.columns else np.ones(frame.height, bool))
    mask = np.zeros(frame.height, bool)
    objs = objectives(frame.filter(pl.Series(pool)), objective, direction) if pool.any() else []
    if objs and pool.any():
        idx = np.flatnonzero(pool)
        mat = np.column_stack([frame[c].cast(pl.Float64).fill_null(np.nan).to_numpy()[idx]
                               * (1.0 if d == "min" else -1.0) for c, d in objs])
        mask[idx[pareto_mask(mat)]] = True
    return pl.Series("pareto", mask, dtype=pl.Boolean)


def best_row(frame, objective: str, direction: str = "min", *, unverified: bool = False):
    """``(row, verified)``: the row meeting every constraint with the best objective; with
    ``unverified`` and none verified, the best that fails none (verified False); else
    ``(None, False)``. Ties: the other Pareto objectives, then row order."""
    import polars as pl

    for verified, cond in ((True, pl.col("meets") == True),  # noqa: E712 - polars expression
                           (False, pl.col("meets").is_null())):
        if not verified and not unverified:
            break
        cand = frame.with_row_index("_row").filter(cond & pl.col(objective).is_not_null())
        if cand.height:
            order = [pl.col(objective) if direction == "min" else -pl.col(objective)]
            order += [pl.col(c) if d == "min" else -pl.col(c) for c, d in PARETO
                      if c in cand.columns and c != objective]
            row = cand.sort([*order, pl.col("_row")], nulls_last=True).row(0, named=True)
            row.pop("_row")
            return row, verified
    return None, False


def load_constraints(path=None) -> Constraints:
    """Constraints from a JSON file (``max_overflows``, ``max_leaks``, ``min_retention``), or
    the defaults when ``path`` is None."""
    from pathlib import Path

    from workbench.rundir.read import read_json

    if path is None:
        return Constraints()
    data = read_json(Path(path))
    if data is None:
        raise SelectionError(f"{path}: constraints file not found")
    unknown = set(data) - {"max_overflows", "max_leaks", "min_retention"}
    if unknown:
        raise SelectionError(f"{path}: unknown constraint key(s) {sorted(unknown)}; known: "
                             "max_overflows, max_leaks, min_retention")
    return Constraints(**data)
