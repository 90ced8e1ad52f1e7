"""The sweeps of the policies no harness ships (issue 31), found for the threshold-sweep
report: for each family, its specs ``simulations/<family>-*.yaml``, whether each has results
(in ``runs/sweeps/NAME``, where ``workbench sweep SPEC`` writes them), and its configurations
with the base preset's own setting marked, so the report draws each trade-off against the
harness as it ships. A family with no spec, or a spec not run yet, is said, never skipped.

>>> [s.status for s in find_policy_sweeps("/nonexistent") if s.family == "ttl-aware"]
['no spec']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# family -> what it compares (the report's heading); the specs are simulations/<family>-*.yaml
FAMILIES = {
    "ttl-aware": "compact early when the prompt cache has already expired",
    "compaction-call-prefix": "the compaction call on or off the cached prefix",
    "lower-threshold-1m": "lower thresholds on 1M windows (default vs 50 % vs 20 %)",
    "task-state-checkpoints": "summaries that always carry the task state",
}


@dataclass
class PolicySweep:
    family: str
    status: str  # no spec | invalid spec | not run | incomplete | results
    spec: Path | None = None
    out: Path | None = None
    base: str = ""  # the base policy's name
    swept: tuple[str, ...] = ()
    table: Any = None  # polars frame, one row per configuration (with ``shipped``, ``config``)
    failed: int = 0  # configurations whose runs failed (left out of ``table``)
    error: str = ""  # why the spec does not load (status ``invalid spec``)

    def message(self) -> str:
        pattern = f"simulations/{self.family}-*.yaml"
        if self.status == "no spec":
            return f"{self.family}: no sweep spec {pattern} in this checkout"
        if self.status == "invalid spec":
            return f"{self.spec.name}: {self.error}"
        if self.status == "not run":
            return f"{self.spec.name}: no results in {self.out}; run `workbench sweep {self.spec.as_posix()}`"
        if self.status == "incomplete":
            return (f"{self.spec.name}: the sweep in {self.out} has runs still pending; run "
                    f"`workbench sweep {self.spec.as_posix()}` again to finish it")
        failed = f"; {self.failed} failed configurations left out" if self.failed else ""
        return (f"{self.spec.name}: {self.table.height} configurations of {self.base} "
                f"({', '.join(self.swept)}){failed}")


def find_policy_sweeps(root: str | Path = ".", families: Sequence[str] = tuple(FAMILIES)) -> list[PolicySweep]:
    """One :class:`PolicySweep` per spec of each family (one ``no spec`` entry for a family
    without any), in family order, then spec name order."""
    root = Path(root)
    found: list[PolicySweep] = []
    for family in families:
        specs = sorted((root / "simulations").glob(f"{family}-*.yaml"))
        if not specs:
            found.append(PolicySweep(family, "no spec"))
        found += [_load(family, spec, root) for spec in specs]
    return found


def _load(family: str, path: Path, root: Path) -> PolicySweep:
    import polars as pl

    from workbench.errors import WorkbenchError
    from workbench.report.verdict import sweep_results
    from workbench.rundir import names
    from workbench.sweep.runner import default_out
    from workbench.sweep.spec import SweepSpec
    from workbench.sweep.tune import shipped_mask

    shown = path.relative_to(root) if path.is_relative_to(root) else path
    try:
        spec = SweepSpec.load(path)
    except WorkbenchError as exc:  # one broken spec must not hide the other families
        # the first clause says what is wrong; the list of known keys that follows is long
        return PolicySweep(family, "invalid spec", spec=shown, error=str(exc).split("; known:")[0])
    out = default_out(spec, root)
    entry = PolicySweep(family, "not run", spec=shown, out=out, base=spec.base.get("name", ""),
                        swept=tuple(spec.parameter_keys()))
    if not (out / names.SWEEP).is_file():
        return entry
    result, agg = sweep_results(out)
    pending = agg.filter(~pl.col("complete") & pl.col("error").is_null())
    if agg.height == 0 or pending.height:
        entry.status = "incomplete"
        return entry
    swept = tuple(k for k in spec.parameter_keys() if k in agg.columns and agg[k].n_unique() > 1)
    configs = result.configs.filter(pl.col("complete")).sort("config_index")
    entry.failed = result.configs.height - configs.height
    rows = list(configs.iter_rows(named=True))
    shipped = shipped_mask(configs, spec, swept)  # the base preset as shipped
    table = configs.with_columns(pl.Series("shipped", shipped, pl.Boolean),
                                 pl.Series("config", [_label(row, swept) for row in rows], pl.String))
    entry.status, entry.swept, entry.table = "results", swept, table
    return entry


def _label(row: dict, swept: Sequence[str]) -> str:
    def short(v):
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
    return ", ".join(f"{k.split('.', 1)[-1]}={short(row[k])}" for k in swept) or f"#{row['config_index']}"


def tradeoff(entries: Sequence[PolicySweep], *, title: str):
    """Cost against retention (and against task-state retention, when the sweep evaluated it)
    for the configurations of one family's sweeps, one colour per spec; the base preset as
    shipped is a black star. A sweep without retention figures (``evaluate: false``: a switch
    that moves cost only) is drawn as its cost per configuration; with no results at all, a
    message figure."""
    from workbench.report.figures import PALETTE, _band_bars, _figure, _message
    from workbench.report.figures_labels import label_points

    present = [e for e in entries if e.status == "results"]
    metrics = [m for m in ("retention", "task_retention")
               if any(m in e.table.columns and e.table[m].drop_nulls().len() for e in present)]
    if not present:
        return _message(f"{title}: no sweep results")
    if not metrics:
        return _costs(present, title)
    import numpy as np

    fig = _figure(5.2 * len(metrics) + 1, 4.8)
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    named = []  # (axis, xs, ys, labels): labelled last, once the layout is settled
    for ax, metric in zip(axes, metrics, strict=True):
        xs, ys, labels = [], [], []
        for i, e in enumerate(present):
            t = e.table.filter(e.table["cost_usd"].is_not_null() & e.table[metric].is_not_null()) \
                if metric in e.table.columns else None
            if t is None or t.height == 0:
                continue
            ax.scatter(t["cost_usd"].to_numpy(), t[metric].to_numpy(), s=40, color=PALETTE[i % len(PALETTE)],
                       zorder=3, label=e.spec.stem)
            _band_bars(ax, t, t[metric].to_numpy())  # an imported log's cache-miss band, where it has one
            mine = t.filter(t["shipped"])
            if mine.height:
                ax.scatter(mine["cost_usd"].to_numpy(), mine[metric].to_numpy(), s=220, marker="*",
                           color="black", zorder=4, label=f"{e.base} as shipped" if e.base else "as shipped")
            xs += t["cost_usd"].to_list()
            ys += t[metric].to_list()
            labels += t["config"].to_list()
        ax.set_xlabel("cost ($)")
        ax.set_ylabel({"retention": "fact retention", "task_retention": "task-state retention"}[metric])
        ax.grid(alpha=0.3)
        ax.margins(x=0.12, y=0.12)
        named.append((ax, np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), labels))
    fig.suptitle(f"{title}: cost vs retention")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        unique = dict(zip(labels, handles, strict=True))
        fig.legend(unique.values(), unique.keys(), fontsize=8, frameon=False, loc="outside lower center", ncols=3)
    for ax, xs, ys, labels in named:
        label_points(ax, xs, ys, labels)
    return fig


def _costs(present: Sequence[PolicySweep], title: str):
    """Cost per configuration, one bar each, one colour per spec; the base preset as shipped
    hatched and named so (retention was not evaluated: the sweep's switch moves cost)."""
    from workbench.report.figures import BAND, BAND_LABEL, PALETTE, _figure

    bars = [(f"{e.spec.stem}: {row['config']}" + (" (as shipped)" if row["shipped"] else ""),
             row["cost_usd"], PALETTE[i % len(PALETTE)], row["shipped"],
             tuple(row.get(c) for c in BAND))
            for i, e in enumerate(present) for row in e.table.iter_rows(named=True) if row["cost_usd"] is not None]
    fig = _figure(9, 1.2 + 0.38 * max(len(bars), 1))
    ax = fig.add_subplot()
    ys = list(range(len(bars)))[::-1]
    ax.barh(ys, [b[1] for b in bars], color=[b[2] for b in bars], hatch=None)
    banded = False
    for y, b in zip(ys, bars, strict=True):
        if b[3]:
            ax.barh([y], [b[1]], color="none", edgecolor="black", hatch="//", linewidth=1.2)
        lo, hi, mid = b[4]
        if mid is not None:  # an imported log's cache-miss band: p10 to p90 through the expected cost
            ax.errorbar([mid], [y], xerr=[[mid - lo], [hi - mid]], fmt="|", color="#ff7f0e", ms=10, capsize=3,
                        label=None if banded else BAND_LABEL + " (tick: expected)")
            banded = True
        ax.text(max(b[1], hi or 0.0), y, f" ${b[1]:,.2f}", va="center", fontsize=8)
    if banded:
        ax.legend(fontsize=8, frameon=False, loc="lower right")
    ax.set_yticks(ys, [b[0] for b in bars], fontsize=8)
    ax.set_xlabel("cost ($)")
    ax.margins(x=0.15)
    ax.set_title(f"{title} (retention not evaluated: cost only)")
    return fig
