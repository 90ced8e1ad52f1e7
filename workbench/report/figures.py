"""Matplotlib figures the report notebooks call: they take frames read from a run's Parquet
and draw; the only arithmetic is what a plot needs (a cumulative sum, a group count). Which
rows are non-dominated or feasible is :mod:`workbench.selection`'s rule, asked, never redone.
With many policies the line figures draw the few a reviewer compares (:func:`compared`) in
colours told apart, named at their line ends, and every other policy grey.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot (so a
notebook never shows it twice); :func:`show` displays it as a PNG output tagged with its
name, which ``workbench report`` exports as ``<kind>-<name>.png``.

>>> import polars as pl
>>> from workbench.report import figures as F
>>> ledger = pl.read_parquet("runs/demo-synthetic/ledger.parquet")   # doctest: +SKIP
>>> F.show(F.sawtooth(ledger), "sawtooth")                           # doctest: +SKIP
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from workbench.report.figures_labels import (  # noqa: F401 - re-exported: F.compared, F.HIGHLIGHT_MAX
    HIGHLIGHT,
    HIGHLIGHT_MAX,
    MUTED,
    compared,
    highlighted,
    label_points,
    policy_lines,
)

FIGURE_KEY = "workbench_figure"  # output metadata key naming an exported figure
# the figures of what compactions kept live in workbench.report.figures_compaction; they
# are reached from here too (``F.facts_surviving``), loaded when first asked for
COMPACTION_FIGURES = ("survival", "facts_surviving", "compaction_fates", "summary_spread")
DPI = 100
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
           "#7b4173", "#3182bd", "#e6550d")


def _figure(w: float = 10.0, h: float = 4.5):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=DPI, layout="constrained")
    return fig


def colors(names: Sequence[str]) -> dict[str, str]:
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def png_bytes(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def show(fig, name: str) -> None:
    """Display ``fig`` in a notebook as a PNG output named ``name`` (exported by the renderer)."""
    from IPython.display import Image, display

    display(Image(data=png_bytes(fig), format="png"), metadata={FIGURE_KEY: name})


def _message(text: str, w: float = 10.0, h: float = 1.2):
    fig = _figure(w, h)
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.01, 0.5, text, va="center", ha="left", fontsize=11, color="#555")
    return fig


def _pick_continuity(ledger, continuity_id: str | None) -> str | None:
    import polars as pl

    if continuity_id is not None:
        return continuity_id
    if ledger.height == 0:
        return None
    # the continuity with the most requests shows the shape best
    counts = (ledger.filter(pl.col("call_kind") == "main").group_by("continuity_id", maintain_order=True)
              .len().sort("len", descending=True, maintain_order=True))
    return counts["continuity_id"][0] if counts.height else ledger["continuity_id"][0]


# ---- cost and context -------------------------------------------------------------------------
def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _sawtooth_title(name: str, row: dict | None, main, *, width: int | None = None) -> str:
    """``NAME: N compactions, M truncations, K overflows`` from the summary row of the drawn
    continuity, or (without one) from the main ledger rows' flags, which count requests.
    ``width``: a panel's title, the counts on lines of their own of at most ``width``
    characters (a panel is a third of the figure: one line would run into the next one's)."""
    if row is not None:
        parts = [_plural(int(row["compactions"]), "compaction")]
        parts += [_plural(int(row[c]), c[:-1]) for c in ("truncations", "overflows") if row.get(c)]
    else:
        n = {c: int(main[c].sum()) for c in ("_compacted", "_truncated", "overflow")}
        parts = [f"compacted at {_plural(n['_compacted'], 'request')}"]
        parts += [f"{w} at {_plural(n[c], 'request')}" for c, w in (("_truncated", "truncated"), ("overflow", "overflowed"))
                  if n[c]]
    if width is None:
        return f"{name}: " + ", ".join(parts)
    lines = [""]
    for part in parts:
        joined = f"{lines[-1]}, {part}" if lines[-1] else part
        if lines[-1] and len(joined) > width:
            lines[-1] += ","
            lines.append(part)
        else:
            lines[-1] = joined
    return f"{name}:\n" + "\n".join(lines)


PANEL_TITLE_CHARS = 50  # a small-multiple panel's title line at 8 pt: a third of a 12-inch figure
OVERLAY_MAX = 4  # more policies than this: one panel each (small multiples)


def sawtooth(ledger, *, summary=None, continuity_id: str | None = None, policies: Sequence[str] | None = None,
             window: int | None = None, overlay: bool | None = None):
    """Context size over requests per policy, with compaction (▼), flush (●), overflow (✕)
    and truncation (■, at the size it cut the context to) markers: the sawtooth. Compactions
    are the policy's own (the ledger's ``compacted`` flag); a truncation is the overflow's
    last resort (the oldest raw events dropped), never drawn or counted as a compaction.
    ``summary``: the run's ``summary.parquet``; the panel titles then give its counts for the
    drawn continuity (compactions, truncations, overflows: the same figures as the verdict
    table), else the ledger's (requests with a compaction, a truncation, an overflow).
    ``window``: draw the context window as a dashed line. Up to four policies share one
    plot; more get one panel each with shared axes (``overlay`` forces either). A policy far
    beyond the window is clipped at 1.25 × window, and said so."""
    import polars as pl

    from workbench.engine.enums import LedgerFlag

    cid = _pick_continuity(ledger, continuity_id)
    if cid is None:
        return _message("no requests in this run")
    led = ledger.filter(pl.col("continuity_id") == cid).with_columns(
        _compacted=(pl.col("flags") & LedgerFlag.COMPACTED) != 0,
        _truncated=(pl.col("flags") & LedgerFlag.TRUNCATED) != 0)
    counted = {} if summary is None else {
        r["policy"]: r for r in summary.filter(pl.col("continuity_id") == cid).iter_rows(named=True)}
    names = list(policies or led["policy"].unique(maintain_order=True).to_list())
    col = colors(names)
    overlay = len(names) <= OVERLAY_MAX if overlay is None else overlay
    if overlay:
        fig = _figure(11, 5)
        axes = {n: fig.add_subplot() for n in names[:1]}
        axes = {n: axes[names[0]] for n in names}
    else:
        ncols = 3
        nrows = -(-len(names) // ncols)
        fig = _figure(12, 2.4 * nrows + 0.8)
        grid = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
        axes = dict(zip(names, grid, strict=False))
        for ax in grid[len(names):]:
            ax.axis("off")
        for ax in grid[max(0, len(names) - ncols):len(names)]:
            ax.tick_params(labelbottom=True)  # the last panel of each column shows the request axis
            ax.set_xlabel("request", fontsize=8)
    peaks: dict[str, int] = {}
    for name in names:
        ax = axes[name]
        lp = led.filter(pl.col("policy") == name)
        main = lp.filter(pl.col("call_kind") == "main").sort("call")
        if main.height == 0:
            continue
        ax.plot(main["request"].to_numpy(), main["context_before"].to_numpy(), lw=1.0 if overlay else 0.7,
                color=col[name], label=name, drawstyle="steps-post")
        ymax = dict(zip(main["request"].to_list(), main["context_before"].to_list(), strict=True))
        for pts, marker, size in ((main.filter(pl.col("_compacted")), "v", 40),
                                  (lp.filter(pl.col("call_kind") == "flush"), "o", 28)):
            if pts.height:
                small = pts.height > 60 or not overlay
                ax.scatter(pts["request"].to_numpy(), [ymax.get(r, c) for r, c in
                                                       zip(pts["request"].to_list(), pts["context_before"].to_list(), strict=True)],
                           marker=marker, s=size / 3 if small else size, color=col[name], edgecolors="black",
                           linewidths=0.3 if small else 0.5, zorder=3)
        ov = main.filter(pl.col("overflow"))
        if ov.height:
            ax.scatter(ov["request"].to_numpy(), ov["context_before"].to_numpy(), marker="x",
                       s=50 if ov.height <= 50 and overlay else 6, color="#c62828", zorder=4)
        cut = main.filter(pl.col("_truncated"))
        if cut.height:
            ax.scatter(cut["request"].to_numpy(), cut["context_after"].to_numpy(), marker="s",
                       s=24 if cut.height <= 50 and overlay else 5, color="#6d4c41", zorder=3.5)
        peaks[name] = int(main["context_before"].max() or 0)
        if not overlay:
            ax.set_title(_sawtooth_title(name, counted.get(name), main, width=PANEL_TITLE_CHARS), fontsize=8,
                         color="#c62828" if ov.height else "black")
    clipped = []
    if window and peaks and max(peaks.values()) > 1.5 * window:
        # a policy far beyond the window would flatten every other line: clip, and say so
        next(iter(axes.values())).set_ylim(0, 1.25 * window)
        clipped = [f"{n} (peak {v / 1000:,.0f}k)" for n, v in peaks.items() if v > 1.25 * window]
    for ax in dict.fromkeys(axes.values()):
        if window:
            ax.axhline(window, ls="--", lw=0.8, color="#c62828", alpha=0.6)
        ax.yaxis.set_major_formatter(_kfmt())
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7 if not overlay else 9)
    from matplotlib.lines import Line2D

    markers = [Line2D([], [], marker="v", ls="", color="#555", label="compaction"),
               Line2D([], [], marker="o", ls="", color="#555", label="flush"),
               Line2D([], [], marker="x", ls="", color="#c62828", label="overflow"),
               Line2D([], [], marker="s", ls="", color="#6d4c41", label="truncation (oldest events dropped)")]
    if window:
        markers.append(Line2D([], [], ls="--", color="#c62828", label="context window"))
    title = f"Context size over requests — {cid}"
    if clipped:
        title += "\nclipped at 1.25 × window: " + ", ".join(clipped)
    if overlay:
        ax = next(iter(axes.values()))
        handles, _ = ax.get_legend_handles_labels()
        ax.legend(handles=handles + markers, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.set_xlabel("request")
        ax.set_ylabel("context tokens (before the request)")
        ax.set_title(title, fontsize=10)
    else:
        fig.legend(handles=markers, fontsize=8, loc="outside lower center", ncols=len(markers), frameon=False)
        fig.supylabel("context tokens (before the request)", fontsize=9)
        fig.suptitle(title, fontsize=10)
    return fig


def cumulative_cost(ledger, *, continuity_id: str | None = None, policies: Sequence[str] | None = None,
                    highlight: Sequence[str] | None = None):
    """Cumulative $ per policy over model calls (main, compaction, flush); all continuities
    one after the other unless ``continuity_id`` is given. The ``highlight`` policies in
    colour, named with their total at their line's end, every other one grey."""
    import numpy as np
    import polars as pl

    led = ledger if continuity_id is None else ledger.filter(pl.col("continuity_id") == continuity_id)
    names = list(policies or led["policy"].unique(maintain_order=True).to_list())
    fig = _figure(11, 4.8)
    ax = fig.add_subplot()
    lines = {}
    for name in names:
        lp = led.filter(pl.col("policy") == name).sort("continuity_id", "call")
        if lp.height:
            y = lp["cost_usd"].cum_sum().to_numpy()
            lines[name] = (np.arange(len(y)), y)
    positive = [y[-1] for _, y in lines.values() if y[-1] > 0]
    if positive and max(positive) / min(positive) > 30:
        ax.set_yscale("log")  # costs spanning orders of magnitude
    policy_lines(ax, lines, highlight, label=lambda n: f"{n} (${lines[n][1][-1]:,.2f})",
                 styles={n: {"marker": ""} for n in lines})
    ax.set_xlabel("model call (main, compaction and flush calls)")
    ax.set_ylabel("cumulative cost ($)" + (", log scale" if ax.get_yscale() == "log" else ""))
    ax.set_title("Cumulative cost per policy")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, frameon=False, loc="upper left")
    ax.grid(alpha=0.3)
    return fig


def cache_hit_rate(table, *, name: str = "policy", rate: str = "cache_hit_rate"):
    """Cache-hit rate (cached input tokens / prompt tokens) per policy, as bars."""
    names = [str(n) for n in table[name].to_list()]
    vals = [float(v or 0.0) for v in table[rate].to_list()]
    fig = _figure(10, 0.6 + 0.35 * max(3, len(names)))
    ax = fig.add_subplot()
    ax.barh(names, vals, color="#1f77b4")  # one colour: the bar's name is on its axis
    for i, v in enumerate(vals):
        ax.text(min(v, 1.0) + 0.005, i, f"{v:.1%}", va="center", fontsize=8)
    ax.set_xlim(0, 1.08)
    ax.invert_yaxis()
    ax.set_xlabel("cached input tokens / prompt tokens")
    ax.set_title("Cache-hit rate")
    ax.grid(axis="x", alpha=0.3)
    return fig


def pareto(table, *, cost: str = "cost_usd", retention: str = "retention", label: str = "policy",
           front: str | None = None, feasible: str | None = None, title: str = "Cost vs retention"):
    """Cost against retention, one point per row. A red diamond marks every non-dominated
    row: no other row is at least as cheap, retains as much and leaks as little while better
    on one of them (:func:`workbench.selection.pareto_front` over every row, the constraints
    aside). With ``feasible`` (a bool column) the rows meeting the constraints are filled and
    the others hollow; with ``front`` (bool, the selection rule's front: taken over the
    feasible rows) those rows get a green ring too."""
    import polars as pl

    from workbench.selection import pareto_front

    if retention not in table.columns or cost not in table.columns:
        return _message(f"no {retention} figures: run the redaction audit (or `evaluate: true` in the sweep)")
    t = table.filter(pl.col(cost).is_not_null() & pl.col(retention).is_not_null())
    if t.height == 0:
        return _message(f"no {retention} figures: run the redaction audit (or `evaluate: true` in the sweep)")
    fig = _figure(9, 5)
    ax = fig.add_subplot()
    xs, ys = t[cost].to_numpy(), t[retention].to_numpy()
    labels = [str(v) for v in t[label].to_list()]
    ok = t[feasible].fill_null(False).to_list() if feasible and feasible in t.columns else [True] * t.height
    blue = "#1f77b4"
    for good in (True, False):
        at = [i for i, g in enumerate(ok) if g is good]
        if at:
            ax.scatter(xs[at], ys[at], s=40, facecolors=blue if good else "none", edgecolors=blue, zorder=3,
                       label=("meets the constraints" if good else "fails a constraint, or not verified")
                       if feasible else None)
    if len(xs) and xs.min() > 0 and xs.max() / xs.min() > 20:
        ax.set_xscale("log")  # costs spanning orders of magnitude would crowd the cheap end
    nd = t.filter(pareto_front(t, among="all"))
    if nd.height:
        ax.scatter(nd[cost].to_numpy(), nd[retention].to_numpy(), s=150, marker="D", facecolors="none",
                   edgecolors="#d62728", linewidths=1.5, zorder=4,
                   label="non-dominated in cost, retention and leaks")
    if front and front in t.columns:
        f = t.filter(pl.col(front).fill_null(False))
        if f.height:
            ax.scatter(f[cost].to_numpy(), f[retention].to_numpy(), s=330, marker="o", facecolors="none",
                       edgecolors="#2e7d32", linewidths=1.5, zorder=4,
                       label="Pareto front of those meeting the constraints" if any(ok) else
                       "Pareto front (none meets the constraints: of all)")
    if cost == "cost_usd":
        _band_bars(ax, t, t[retention].to_numpy())
    ax.set_xlabel("cost ($)")
    ax.set_ylabel("fact retention")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.margins(x=0.06, y=0.1)  # room for the labels of points on the edges
    if ax.get_legend_handles_labels()[0]:
        fig.legend(fontsize=8, frameon=False, loc="outside lower center", ncols=2)
    label_points(ax, xs, ys, labels)
    return fig


# the provider cache-miss band of a sweep's cost (workbench.sweep.bands): p10, p90, expected
BAND = ("cost_p10_usd", "cost_p90_usd", "cost_expected_usd")
BAND_LABEL = "p10–p90 of the cost under the provider's cache misses"


def _has_band(t) -> bool:
    return all(c in t.columns for c in BAND) and t["cost_expected_usd"].drop_nulls().len() > 0


def _band_bars(ax, t, ys) -> None:
    """The cost band of each row that has one as a horizontal error bar (p10 to p90) through
    its expected cost, at the row's height ``ys`` (the cost axis is x)."""
    if not _has_band(t):
        return
    have = t["cost_expected_usd"].is_not_null().to_numpy()
    lo, hi, mid = (t[c].to_numpy()[have].astype(float) for c in BAND)
    ax.errorbar(mid, ys[have], xerr=[mid - lo, hi - mid], fmt="|", color="#ff7f0e", ms=10, capsize=3,
                lw=1.2, zorder=2, label=BAND_LABEL + " (tick: expected)")


def metric_by_parameter(table, parameter: str, *, metrics: Sequence[str] = ("cost_usd", "retention"),
                        feasible: str | None = "feasible", chosen: Any = None, label: str = "config"):
    """One panel per metric against a swept parameter (a sweep's configurations); feasible
    configurations filled, the chosen one ringed."""
    import polars as pl

    mets = [m for m in metrics if m in table.columns]
    if parameter not in table.columns or not mets:
        return _message(f"no {parameter!r} / {', '.join(metrics)} columns in the sweep")
    t = table.sort(parameter)
    fig = _figure(5 * len(mets), 3.8)
    axes = fig.subplots(1, len(mets), squeeze=False)[0]
    ok = t[feasible].fill_null(False).to_list() if feasible and feasible in t.columns else [True] * t.height
    for ax, m in zip(axes, mets, strict=True):
        x = t[parameter].to_list()
        y = t[m].cast(pl.Float64).to_list()
        ax.plot(range(len(x)) if isinstance(x[0], str) else x, y, color="#999", lw=1, zorder=1)
        if m == "cost_usd" and _has_band(t):
            xs = list(range(len(x))) if isinstance(x[0], str) else x
            lo, hi, mid = (t[c].cast(pl.Float64).fill_null(float("nan")).to_numpy() for c in BAND)
            ax.fill_between(xs, lo, hi, color="#ff7f0e", alpha=0.18, lw=0, zorder=0, label=BAND_LABEL)
            ax.plot(xs, mid, color="#ff7f0e", lw=1, ls="--", zorder=1, label="expected cost under cache misses")
            ax.legend(fontsize=7, frameon=False)
        for i, (xi, yi, good) in enumerate(zip(x, y, ok, strict=True)):
            xv = i if isinstance(xi, str) else xi
            ax.scatter([xv], [yi], s=36, facecolors="#1f77b4" if good else "none", edgecolors="#1f77b4", zorder=2)
            if chosen is not None and t[label][i] == chosen:
                ax.scatter([xv], [yi], s=160, facecolors="none", edgecolors="#2e7d32", linewidths=2, zorder=3)
        ax.set_xlabel(parameter)
        ax.set_ylabel(m)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Metrics against {parameter} (filled: meets the constraints; ringed: chosen)", fontsize=10)
    return fig


def leak_comparison(summary, *, channels: Sequence[str] = ("summary", "memory")):
    """Per policy: secrets leaked into derived text with our harness as SR-1, with
    detect-secrets as SR-1, and with no redaction (from the leakage summary frame)."""
    import numpy as np
    import polars as pl

    if summary is None or summary.height == 0:
        return _message("no leakage table: run `workbench audit redaction --run RUN_DIR`")
    rows = summary.filter(pl.col("channel").is_in(list(channels)))
    measured = rows["leaks_detect_secrets"].null_count() < rows.height  # only with --baseline
    s = (rows.group_by("policy", maintain_order=True)
         .agg(pl.col("leaks").sum(), pl.col("leaks_detect_secrets").sum(), pl.col("leaks_unredacted").sum()))
    names = s["policy"].to_list()
    x = np.arange(len(names))
    fig = _figure(max(7, 1.0 * len(names) + 3), 4)
    ax = fig.add_subplot()
    for i, (col, lab, c) in enumerate((("leaks_unredacted", "no redaction", "#bdbdbd"),
                                       ("leaks_detect_secrets", "detect-secrets" if measured else
                                        "detect-secrets: not measured (--baseline)", "#ff7f0e"),
                                       ("leaks", "workbench harness (as stored)", "#1f77b4"))):
        if col == "leaks_detect_secrets" and not measured:
            ax.bar([], [], color=c, label=lab)  # in the legend, saying why there is no bar
            continue
        ax.bar(x + (i - 1) * 0.27, s[col].fill_null(0).to_numpy(), width=0.27, color=c, label=lab)
    ax.set_xticks(x, names, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("leaked (secret, channel) pairs")
    ax.set_title(f"Leaks into {' + '.join(channels)}: redactor vs redactor")
    ax.legend(fontsize=8, frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return fig


def retention_by_distance(retention, *, highlight: Sequence[str] | None = None):
    """Share of fact probes retained per distance (requests since the fact was planted):
    the ``highlight`` policies in colour, named at their line's end, every other one grey
    (see :func:`policy_lines`)."""
    import polars as pl

    if retention is None or retention.height == 0:
        return _message("no fact probes (the dataset has no planted facts, or no redaction audit)")
    by = (retention.group_by("policy", "distance", maintain_order=True)
          .agg((pl.col("status") != "lost").mean().alias("retained")).sort("policy", "distance"))
    names = retention["policy"].unique(maintain_order=True).to_list()
    fig = _figure(10, 4.5)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.05)
    lines = {}
    for n in names:
        p = by.filter(pl.col("policy") == n)
        lines[n] = (p["distance"].to_numpy(), p["retained"].to_numpy())
    policy_lines(ax, lines, highlight)
    ax.set_xlabel("requests since the fact was planted")
    ax.set_ylabel("retained (raw, summary or memory)")
    ax.set_title("Fact retention by distance")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, frameon=False, loc="lower left")
    ax.grid(alpha=0.3)
    return fig


# ---- leakage, determinism, fidelity -----------------------------------------------------------
def leakage_heatmap(leakage, *, channels: Sequence[str] = ("summary", "memory"), column: str = "leaked",
                    title: str | None = None):
    """Leaked (policy, secret) pairs / pairs, by secret format × adversarial transform, over
    the given channels (a pair leaks when any channel leaks it)."""
    import numpy as np
    import polars as pl

    if leakage is None or leakage.height == 0:
        return _message("no planted secrets: leakage was not measurable")
    lk = leakage.filter(pl.col("channel").is_in(list(channels)))
    pairs = (lk.group_by("policy", "secret_id", "format", "transform")
             .agg(pl.col(column).fill_null(False).any().alias("leak")))
    cells = pairs.group_by("format", "transform").agg(pl.col("leak").sum().alias("k"), pl.len().alias("n"))
    formats = sorted(cells["format"].unique().to_list())
    transforms = sorted(cells["transform"].unique().to_list())
    k = np.zeros((len(formats), len(transforms)))
    n = np.zeros_like(k)
    for r in cells.iter_rows(named=True):
        i, j = formats.index(r["format"]), transforms.index(r["transform"])
        k[i, j], n[i, j] = r["k"], r["n"]
    rate = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    fig = _figure(max(7, 1.1 * len(transforms) + 3), max(3.5, 0.32 * len(formats) + 1.8))
    ax = fig.add_subplot()
    im = ax.imshow(rate, cmap="Reds", vmin=0, vmax=1, aspect="auto")
    for i in range(len(formats)):
        for j in range(len(transforms)):
            if n[i, j]:
                ax.text(j, i, f"{int(k[i, j])}/{int(n[i, j])}", ha="center", va="center", fontsize=7,
                        color="white" if rate[i, j] > 0.6 else "black")
    ax.set_xticks(range(len(transforms)), transforms, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(formats)), formats, fontsize=8)
    ax.set_xlabel("adversarial transform")
    ax.set_ylabel("secret format")
    ax.set_title(title or f"Leaks into {' + '.join(channels)} (leaked pairs / policy × secret pairs)")
    fig.colorbar(im, ax=ax, label="leak rate", shrink=0.8)
    return fig


def determinism_matrix(checks):
    """Policy × check: pass (green), fail (red), measured/other (grey). Policies are rows:
    a comparison has many, an audit few checks, and the labels stay legible."""
    import numpy as np
    from matplotlib.colors import ListedColormap

    if checks is None or checks.height == 0:
        return _message("no determinism audit: run `workbench audit determinism --out RUN_DIR`")
    rows = checks["policy"].unique(maintain_order=True).to_list()
    cols = checks["check"].unique(maintain_order=True).to_list()
    code = {"pass": 0, "fail": 1}
    m = np.full((len(rows), len(cols)), 2.0)
    for r in checks.iter_rows(named=True):
        m[rows.index(r["policy"]), cols.index(r["check"])] = code.get(r["status"], 2)
    fig = _figure(max(6.0, 1.7 * len(cols) + 3.0), 0.32 * len(rows) + 1.9)
    ax = fig.add_subplot()
    ax.imshow(m, cmap=ListedColormap(["#66bb6a", "#ef5350", "#bdbdbd"]), vmin=0, vmax=2, aspect="auto")
    label = {0: "pass", 1: "FAIL", 2: "—"}
    for i in range(len(rows)):
        for j in range(len(cols)):
            ax.text(j, i, label[int(m[i, j])], ha="center", va="center", fontsize=9,
                    fontweight="bold" if m[i, j] == 1 else "normal")
    ax.set_xticks(range(len(cols)), [c.replace("_", " ") for c in cols], rotation=20, ha="right", fontsize=9)
    ax.set_yticks(range(len(rows)), rows, fontsize=9)
    ax.set_title("Determinism: policy × check")
    return fig


def usage_scatter(frame, *, recorded: str = "recorded_prompt", simulated: Sequence[str] = ("simulated_prompt",),
                  group: str | None = "source_format", title: str = "Simulated vs recorded prompt tokens"):
    """Simulated (and calibrated) against recorded usage, one point per request, with y = x."""
    import numpy as np
    import polars as pl

    if frame is None or frame.height == 0 or recorded not in frame.columns:
        return _message("no recorded usage to compare (run `workbench audit fidelity --dataset DATASET --out RUN_DIR` on an imported dataset)")
    sims = [s for s in simulated if s in frame.columns]
    fig = _figure(7.5, 6)
    ax = fig.add_subplot()
    groups = (frame[group].unique(maintain_order=True).to_list() if group and group in frame.columns else [None])
    col = colors([str(g) for g in groups])
    markers = ("o", "^", "s", "D")
    lo, hi = np.inf, 0.0
    for g in groups:
        part = frame if g is None else frame.filter(pl.col(group) == g)
        for si, s in enumerate(sims):
            p = part.filter(pl.col(recorded).is_not_null() & pl.col(s).is_not_null() & (pl.col(recorded) > 0) & (pl.col(s) > 0))
            if p.height == 0:
                continue
            x, y = p[recorded].to_numpy().astype(float), p[s].to_numpy().astype(float)
            lo, hi = min(lo, x.min(), y.min()), max(hi, x.max(), y.max())
            ax.scatter(x, y, s=12, alpha=0.6, marker=markers[si % len(markers)], color=col[str(g)],
                       label=f"{g + ' · ' if g else ''}{s}")
    if hi > 0 and np.isfinite(lo):
        ax.plot([lo, hi], [lo, hi], color="#555", lw=1, ls="--", label="simulated = recorded")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(f"recorded ({recorded})")
    ax.set_ylabel("simulated")
    ax.set_title(title)
    ax.legend(fontsize=7, frameon=False)
    ax.grid(alpha=0.3, which="both")
    return fig


def _kfmt():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: f"{v / 1000:,.0f}k" if abs(v) >= 1000 else f"{v:,.0f}")


def __getattr__(name: str):
    if name in COMPACTION_FIGURES:
        import importlib

        return getattr(importlib.import_module("workbench.report.figures_compaction"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
