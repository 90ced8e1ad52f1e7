"""Figure helpers that carry logic of their own: label placement on scatter plots and
the determinism matrix's orientation."""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench.report import figures as F


def _label_boxes(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    # Text's own extent: an Annotation's would include its leader line
    return [(t.get_text(), Text.get_window_extent(t, renderer)) for t in ax.texts], ax.get_window_extent(renderer)


def test_pareto_labels_do_not_overprint():
    rng = np.random.default_rng(0)
    # a crowd near the cheap, high-retention corner (as presets are), a few outliers far off
    cost = np.r_[24 + rng.random(9) * 8, 11, 300, 330]
    retention = np.r_[0.95 + rng.random(9) * 0.05, 0.74, 0.91, 0.915]
    names = [f"policy-{i:02d}" for i in range(cost.size)]
    table = pl.DataFrame({"policy": names, "cost_usd": cost, "retention": retention})
    boxes, frame = _label_boxes(F.pareto(table))
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for _, b in boxes)
    shown = ", ".join(t for t, _ in boxes).replace("\n", ", ")
    assert sorted(shown.split(", ")) == names, "every point is named exactly once"
    for i, (_, a) in enumerate(boxes):
        for _, b in boxes[i + 1:]:
            inter_w = min(a.x1, b.x1) - max(a.x0, b.x0)
            inter_h = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert inter_w <= 1 or inter_h <= 1, "two labels overprint"
    assert F.pareto(table).axes[0].get_xscale() == "log"  # costs span 30x


def test_points_at_one_spot_share_a_label():
    table = pl.DataFrame({"policy": ["a", "b", "c"], "cost_usd": [10.0, 10.0, 20.0],
                          "retention": [0.9, 0.9, 0.5]})
    boxes, _ = _label_boxes(F.pareto(table))
    assert sorted(t for t, _ in boxes) == ["a, b", "c"]


def test_determinism_matrix_has_a_row_per_policy():
    checks = pl.DataFrame([{"check": c, "policy": p, "status": "fail" if (c, p) == ("repeat", "y") else "pass"}
                           for c in ("repeat", "worker_count") for p in ("x", "y", "z")])
    ax = F.determinism_matrix(checks).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y", "z"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["repeat", "worker count"]
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    assert cells[(1, 0)] == "FAIL" and list(cells.values()).count("pass") == 5


# ---- readable with many policies (issue 26, finding 11) ---------------------------------------
def _scatter_points(ax, label: str) -> set[tuple[float, float]]:
    found = [c for c in ax.collections if c.get_label() == label]
    return {tuple(np.round(p, 6)) for c in found for p in c.get_offsets()}


def test_pareto_marks_every_non_dominated_policy_and_apart_the_feasible_ones():
    # the cheapest policy fails a constraint yet nothing beats it on cost: it is non-dominated
    table = pl.DataFrame({"policy": ["aider", "hermes", "claude-code", "letta", "no-compaction"],
                          "cost_usd": [9.8, 22.0, 30.0, 36.0, 299.0],
                          "retention": [0.63, 0.97, 1.0, 1.0, 0.97], "leaks": [0, 0, 0, 0, 0],
                          "meets": [False, True, True, True, False]})
    from workbench.selection import pareto_front

    table = table.with_columns(pareto_front(table))  # the selection rule's front: feasible rows only
    assert table["pareto"].to_list() == [False, True, True, False, False]
    ax = F.pareto(table, front="pareto", feasible="meets").axes[0]
    diamonds = _scatter_points(ax, "non-dominated in cost, retention and leaks")
    assert diamonds == {(9.8, 0.63), (22.0, 0.97), (30.0, 1.0)}, "every non-dominated policy, aider included"
    assert _scatter_points(ax, "Pareto front of those meeting the constraints") == {(22.0, 0.97), (30.0, 1.0)}
    filled = [c for c in ax.collections if c.get_label() == "meets the constraints"][0]
    assert {tuple(p) for p in np.round(filled.get_offsets(), 6)} == {(22.0, 0.97), (30.0, 1.0), (36.0, 1.0)}
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert "non-dominated in cost, retention and leaks" in legend and "meets the constraints" in legend


def _coloured(ax):
    from workbench.report.figures import MUTED

    lines = [ln for ln in ax.get_lines() if len(ln.get_xdata())]
    return [ln for ln in lines if ln.get_color() != MUTED], [ln for ln in lines if ln.get_color() == MUTED]


def _retention_frame(n: int) -> pl.DataFrame:
    rows = []
    for i in range(n):
        for d in (1, 5, 20, 100, 400):
            for k in range(4):  # policy i loses the fact after distance 20 * (i % 5 + 1)
                rows.append({"policy": f"policy-{i:02d}", "distance": d,
                             "status": "lost" if d > 20 * (i % 5 + 1) and k < i % 4 + 1 else "raw"})
    return pl.DataFrame(rows)


def test_line_figures_colour_only_the_compared_policies_in_distinct_colours():
    retention = _retention_frame(27)
    picked = ["policy-03", "policy-11", "policy-20", "policy-26"]
    ax = F.retention_by_distance(retention, highlight=picked).axes[0]
    coloured, grey = _coloured(ax)
    assert len(coloured) == len(picked) and len(grey) == 27 - len(picked)
    assert len({ln.get_color() for ln in coloured}) == len(picked), "each compared policy has its own colour"
    # named directly at the line ends, and the names never overprint
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    fig = ax.figure
    FigureCanvasAgg(fig).draw()
    r = fig.canvas.get_renderer()
    names = {t.get_text(): Text.get_window_extent(t, r) for t in ax.texts}
    assert set(names) == set(picked)
    boxes = list(names.values())
    assert all(not a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    # without a choice, 27 policies are never drawn in a palette that repeats
    coloured, grey = _coloured(F.retention_by_distance(retention).axes[0])
    assert len({ln.get_color() for ln in coloured}) == len(coloured) <= F.HIGHLIGHT_MAX
    # a few policies: each its own colour, whatever is highlighted
    coloured, grey = _coloured(F.retention_by_distance(_retention_frame(5), highlight=["policy-01"]).axes[0])
    assert len({ln.get_color() for ln in coloured}) == len(coloured) == 5 and not grey


def test_cumulative_cost_names_the_compared_policies_with_their_totals():
    rows = [{"continuity_id": "c", "policy": f"p{i:02d}", "call": k, "cost_usd": 0.1 * (i + 1)}
            for i in range(12) for k in range(30)]
    ax = F.cumulative_cost(pl.DataFrame(rows), highlight=["p00", "p11"]).axes[0]
    coloured, grey = _coloured(ax)
    assert len(coloured) == 2 and len(grey) == 10
    assert sorted(t.get_text() for t in ax.texts) == ["p00 ($3.00)", "p11 ($36.00)"]


def test_compared_is_the_chosen_the_front_and_the_non_dominated():
    table = pl.DataFrame({"policy": ["a", "b", "c", "d"], "cost_usd": [1.0, 2.0, 3.0, 4.0],
                          "retention": [0.5, 0.9, 0.95, 0.9], "leaks": [0, 0, 0, 0],
                          "pareto": [False, True, True, False]})
    assert F.compared(table, "d") == ["d", "b", "c", "a"]


def _ledger(names, requests=40):
    from workbench.engine.enums import LedgerFlag

    rows = []
    for p in names:
        for q in range(requests):
            over = q > requests // 2
            rows.append({"continuity_id": "c", "policy": p, "call_kind": "main", "call": q, "request": q,
                         "context_before": 1000 * q, "context_after": 500 * q, "overflow": over,
                         "flags": (LedgerFlag.OVERFLOW | LedgerFlag.TRUNCATED) if over else 0})
    return pl.DataFrame(rows)


def test_sawtooth_panel_titles_do_not_run_together():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    names = ["no-compaction", "as-recorded", "openclaw-pruning-flush", "claude-code-microcompact",
             "openai-responses-compact", "anthropic-clear-tool-uses"]
    summary = pl.DataFrame([{"policy": p, "continuity_id": "c", "compactions": 1234, "truncations": 366,
                             "overflows": 366} for p in names])
    fig = F.sawtooth(_ledger(names), summary=summary, window=30_000)
    FigureCanvasAgg(fig).draw()
    r = fig.canvas.get_renderer()
    titles = [ax.title.get_window_extent(r) for ax in fig.axes if ax.get_title()]
    assert len(titles) == len(names)
    assert all(not a.overlaps(b) for i, a in enumerate(titles) for b in titles[i + 1:]), "titles overprint"
    for ax in fig.axes:  # and each stays over its own panel
        if ax.get_title():
            box, frame = ax.title.get_window_extent(r), ax.get_window_extent(r)
            assert box.x0 >= frame.x0 - 20 and box.x1 <= frame.x1 + 20
