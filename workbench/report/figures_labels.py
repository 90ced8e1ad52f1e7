"""Naming what a figure draws when there is a lot of it: which few policies a reviewer
compares (:func:`compared`), drawing those in colours told apart and every other one grey,
each named at its line's end (:func:`policy_lines`), and naming scattered points without
overprinting (:func:`label_points`). :mod:`workbench.report.figures` re-exports them.

>>> highlighted([f"p{i}" for i in range(3)], None)
['p0', 'p1', 'p2']
>>> highlighted([f"p{i}" for i in range(20)], ["p7", "x"])
['p7']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# lines a reviewer compares: few, in colours told apart at a glance (Okabe-Ito, no yellow);
# every other policy is drawn grey behind them
HIGHLIGHT_MAX = 8
HIGHLIGHT = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255")
MUTED = "#c4c4c4"


def highlighted(names: Sequence[str], highlight: Sequence[str] | None) -> list[str]:
    """The policies drawn in colour: every one when there are at most :data:`HIGHLIGHT_MAX`
    (then each has a colour of its own), else ``highlight`` (those of ``names``, at most
    that many; none when nothing is named)."""
    if len(names) <= HIGHLIGHT_MAX:
        return list(names)
    return [n for n in dict.fromkeys(highlight or ()) if n in set(names)][:HIGHLIGHT_MAX]


def compared(table, chosen: Any = None, *, label: str = "policy", front: str = "pareto") -> list[Any]:
    """The few rows of a verdict table a reviewer compares, drawn in colour by the line
    figures: the chosen one, the selection rule's front (column ``front``), then the other
    non-dominated rows (:func:`workbench.selection.pareto_front` over every row); at most
    :data:`HIGHLIGHT_MAX`."""
    from workbench.selection import pareto_front

    names = table[label].to_list()
    on_front = table[front].fill_null(False).to_list() if front in table.columns else [False] * len(names)
    measured = [c for c in ("cost_usd", "retention", "leaks") if c in table.columns]
    nd = pareto_front(table, among="all").to_list() if measured else [False] * len(names)
    picked = [chosen] if chosen in names else []
    picked += [n for n, f in zip(names, on_front, strict=True) if f]
    picked += [n for n, d in zip(names, nd, strict=True) if d]
    return list(dict.fromkeys(picked))[:HIGHLIGHT_MAX]


def policy_lines(ax, lines: dict[str, tuple[Any, Any]], highlight: Sequence[str] | None, *,
                 label=None, styles: dict[str, dict] | None = None, fontsize: float = 8) -> dict[str, str]:
    """Draw one line per policy (``name -> (x, y)``): the :func:`highlighted` ones in
    distinct colours and named at their last point (in the right margin, spread so no two
    names overprint), the others thin and grey behind them, named once in the legend.
    ``label(name)`` is the text of a name; ``styles`` extra plot keywords per policy.
    Returns the highlighted names and their colours."""
    import numpy as np

    shown = highlighted(list(lines), highlight)
    col = dict(zip(shown, HIGHLIGHT, strict=False))
    styles = styles or {}
    others = [n for n in lines if n not in col]
    for n in others:
        x, y = lines[n]
        ax.plot(x, y, color=MUTED, lw=0.8, zorder=1, gid=n, **styles.get(n, {}))  # gid: the policy, for readers
    if others:
        ax.plot([], [], color=MUTED, lw=0.8,
                label=f"{len(others)} other polic{'y' if len(others) == 1 else 'ies'}"
                      + ("" if highlight is not None else f" (more than {HIGHLIGHT_MAX}: none named)"))
    ends = []
    for n in shown:
        x, y = (np.asarray(v, dtype=float) for v in lines[n])
        ax.plot(x, y, color=col[n], lw=1.6, zorder=3, gid=n, **{"marker": "o", "ms": 3, **styles.get(n, {})})
        if x.size:
            ends.append((n, x[-1], y[-1]))
    if not ends:
        return col
    # where each last point sits in axes fraction (independent of the layout still to come)
    ax.autoscale_view()  # the caller set scales and limits first: fix them before reading them
    to_axes = ax.transScale + ax.transLimits
    frac = [(n, to_axes.transform((x, y))[1]) for n, x, y in ends]
    height_px = ax.figure.get_figheight() * ax.figure.dpi * 0.72  # the axes' share of the figure
    gap = fontsize * 1.35 * ax.figure.dpi / 72.0 / height_px
    order = sorted(range(len(frac)), key=lambda i: frac[i][1])
    ys = [frac[i][1] for i in order]
    for k in range(1, len(ys)):  # push up what would overprint the name below it
        ys[k] = max(ys[k], ys[k - 1] + gap)
    overshoot = ys[-1] - 1.02
    if overshoot > 0:  # then down again, as a block, to stay beside the axes
        ys = [y - overshoot for y in ys]
        for k in range(len(ys) - 2, -1, -1):
            ys[k] = min(ys[k], ys[k + 1] - gap)
    for k, i in enumerate(order):
        n, x, y = ends[i]
        ax.annotate(label(n) if label else n, (x, y), xytext=(1.02, ys[k]), textcoords="axes fraction",
                    xycoords="data", fontsize=fontsize, color=col[n], va="center", ha="left", annotation_clip=False,
                    arrowprops={"arrowstyle": "-", "color": col[n], "lw": 0.5, "alpha": 0.6})
    return col


def label_points(ax, xs, ys, labels: Sequence[str], *, fontsize: float = 8, near_px: float = 7.0) -> None:
    """Name scattered points without labels overprinting each other: points closer than
    ``near_px`` share one label; each label takes the first nearby spot (growing rings
    around its point) that overlaps no label already placed, with a leader line when it
    had to move away."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = ax.figure
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()  # settle the layout, then freeze it: labels must not move the axes
    fig.set_layout_engine("none")
    renderer = fig.canvas.get_renderer()
    pts = ax.transData.transform(np.column_stack([xs, ys]).astype(float))
    groups: list[list[int]] = []
    for i in np.lexsort((pts[:, 0], -pts[:, 1])):
        for g in groups:
            if np.hypot(*(pts[g[0]] - pts[i])) < near_px:
                g.append(int(i))
                break
        else:
            groups.append([int(i)])
    px_per_pt = fig.dpi / 72.0
    frame = ax.get_window_extent(renderer)
    placed: list[tuple[float, float, float, float]] = []
    for g in groups:
        names = [labels[i] for i in g]
        text = "\n".join(", ".join(names[k:k + 3]) for k in range(0, len(names), 3))
        x0, y0 = pts[g[0]]
        probe = ax.text(0, 0, text, fontsize=fontsize)  # measured, then dropped
        size = probe.get_window_extent(renderer)
        probe.remove()
        w, h = size.width + 2, size.height + 2
        best = None
        for ring in range(1, 9):
            d = 5 * px_per_pt * ring
            for dx, dy in ((d, d * 0.4), (d, -h - d * 0.4), (-w - d, d * 0.4), (-w - d, -h - d * 0.4),
                           (-w / 2, d), (-w / 2, -h - d)):
                box = (x0 + dx, y0 + dy, x0 + dx + w, y0 + dy + h)
                inside = (box[0] >= frame.x0 and box[2] <= frame.x1 and box[1] >= frame.y0 and box[3] <= frame.y1)
                free = all(box[2] <= b[0] or box[0] >= b[2] or box[3] <= b[1] or box[1] >= b[3] for b in placed)
                if inside and free:
                    best = (dx, dy, ring)
                    break
            if best:
                break
        dx, dy, ring = best or (5 * px_per_pt, 2 * px_per_pt, 1)
        placed.append((x0 + dx, y0 + dy, x0 + dx + w, y0 + dy + h))
        # moved away from its point: a leader line says whose label it is
        ax.annotate(text, (xs[g[0]], ys[g[0]]), xytext=(dx / px_per_pt, dy / px_per_pt), textcoords="offset points",
                    fontsize=fontsize, ha="left", va="bottom", zorder=5,
                    arrowprops=({"arrowstyle": "-", "color": "#888", "lw": 0.6} if ring > 1 else None))
