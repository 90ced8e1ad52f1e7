"""``report``: papermill runs a notebook on a run directory; nbconvert writes HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli._app import Force, command, say


@command()
def report(
    kind: Annotated[str, typer.Argument(help="policy-comparison | threshold-sweep | redaction-audit | "
                                             "determinism-audit | fidelity | compaction-inspector")],
    run: Annotated[Path, typer.Option(help="run directory (for threshold-sweep: the sweep directory)")],
    out: Annotated[Path, typer.Option(help="report directory, e.g. reports/NAME")],
    determinism: Annotated[Path | None, typer.Option(help="where `workbench audit determinism --out` wrote "
                                                          "(default: the run directory)")] = None,
    fidelity: Annotated[Path | None, typer.Option(help="where the fidelity audit wrote its Parquet "
                                                       "(default: the run directory)")] = None,
    continuity: Annotated[str | None, typer.Option(help="continuity id drawn in the sawtooth")] = None,
    ab_sweep: Annotated[Path | None, typer.Option(help="compaction-inspector: a sweep over summarizer.prompt "
                                                       "/ summarizer.model to compare")] = None,
    against: Annotated[Path | None, typer.Option(help="compaction-inspector: the same replay evaluated with "
                                                      "another summarizer, side by side")] = None,
    max_overflows: Annotated[int, typer.Option(min=0, help="constraint: overflows at most")] = 0,
    max_leaks: Annotated[int, typer.Option(min=0, help="constraint: leaked secrets at most")] = 0,
    min_retention: Annotated[float, typer.Option(min=0.0, max=1.0, help="constraint: fact retention at least")] = 0.95,
    force: Force = False,
) -> None:
    """Render a report (HTML without code, figures as PNG) from a run.

    papermill runs notebooks/KIND.ipynb on the run, nbconvert writes the HTML."""
    from workbench.report.render import render_report
    from workbench.selection import Constraints

    res = render_report(kind, run, out, determinism=determinism, fidelity=fidelity, continuity=continuity,
                        constraints=Constraints(max_overflows, max_leaks, min_retention), force=force,
                        ab_sweep=ab_sweep, against=against)
    say(f"{len(res.figures)} figures (PNG) and the executed notebook in {out}")
    say(f"wrote {res.html}")
