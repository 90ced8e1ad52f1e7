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
