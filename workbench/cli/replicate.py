"""``replicate``: run a shipped study and set measured figures beside published ones."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli._app import Force, Format, command, say


def _ratio(value) -> str:
    return "-" if value is None else f"{value:.3f}"


@command()
def replicate(
    name: Annotated[str, typer.Argument(help="a study in simulations/replications/ (e.g. complexity-trap)")],
    out: Annotated[Path | None, typer.Option(help="output directory (default reports/replications/NAME)")] = None,
    force: Force = False,
    fmt: Format = "table",
) -> None:
    """Reproduce a published study: measured against published figures, in the paper's
    setting and under each provider's prompt caching.

    Writes replication.parquet (study, setting, model, strategy, measured_ratio,
    published_ratio, published_low, published_high, within) and replication.json (sources,
    costs, the reason beside every figure, rankings)."""
    from workbench.replicate import COLUMNS
    from workbench.replicate import replicate as run

    rows, ranks, where = run(name, out, force=force, progress=lambda m: say(m, err=True))
    from workbench.util.tables import emit

    emit(rows, [*COLUMNS, "note"], fmt=fmt, title=f"{name}: measured vs published",
         display={"measured_ratio": _ratio, "published_ratio": _ratio, "published_low": _ratio,
                  "published_high": _ratio})
    for r in ranks:
        verdict = "same order" if r["same"] else "order differs"
        say(f"{r['setting']:>6} {r['model']}: measured {' < '.join(r['measured_order'])}; "
            f"published {' < '.join(r['published_order'])} ({verdict}"
            + (f", measured margin {r['margin']:.3f})" if r["margin"] is not None else ")"), err=True)
        if r["change"]:
            say(f"       why the cached order differs: {r['change']}", err=True)
    say(f"wrote {where / 'replication.parquet'} and {where / 'replication.json'}", err=True)
