"""Reports a reviewer can read and sign: papermill notebooks rendered to HTML.

The runner computes; the notebooks in ``notebooks/`` only read a run's Parquet and draw.
Three modules do the work the notebooks call:

* :mod:`workbench.report.verdict`  the verdict table (policies, the cheapest one meeting
  the constraints, leaks, determinism, provenance) read from a run's files, and
  :class:`~workbench.report.verdict.TextGuard`, through which every text shown passes;
* :mod:`workbench.report.figures`  matplotlib figures (sawtooth, cumulative cost, cache
  hits, Pareto front, leakage heatmap, determinism matrix, usage scatter; and, in
  :mod:`workbench.report.figures_compaction`, the fate of dropped facts, facts surviving
  over generations of summaries, the spread over summary samples; in
  :mod:`workbench.report.figures_labels`, which few policies are drawn in colour and named
  when there are many, and point labels that never overprint);
* :mod:`workbench.report.inspector` one compaction side by side: the span it dropped and
  the summary that replaced it, facts and secrets marked;
* :mod:`workbench.report.harness`  the policy tables grouped by the harness each preset
  mirrors (``-`` for a policy renamed in a spec);
* :mod:`workbench.report.render`   papermill + nbconvert (HTML without code) + PNG export.

>>> from workbench.report import KINDS
>>> sorted(KINDS)[:3]
['compaction-inspector', 'determinism-audit', 'fidelity']
>>> from workbench.report.render import render_report                  # doctest: +SKIP
>>> render_report("policy-comparison", "runs/demo-synthetic", "reports/demo").html  # doctest: +SKIP
"""

from __future__ import annotations

# report kind -> notebook file in notebooks/
KINDS = {
    "policy-comparison": "policy-comparison.ipynb",
    "threshold-sweep": "threshold-sweep.ipynb",
    "redaction-audit": "redaction-audit.ipynb",
    "determinism-audit": "determinism-audit.ipynb",
    "fidelity": "fidelity.ipynb",
    "compaction-inspector": "compaction-inspector.ipynb",
    "replication": "replication.ipynb",
}

__all__ = ["KINDS"]
