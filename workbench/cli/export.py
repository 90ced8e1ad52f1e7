"""``export``: a dataset written in another agent-log format (ATIF, Harbor's trajectory format)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli._app import Force, command, fail, say

EXPORT_FORMATS = ("atif",)


@command()
def export(
    dataset: Annotated[Path, typer.Argument(help="dataset directory (workbench import or generate)")],
    out: Annotated[Path, typer.Option(help="directory to write (new, empty, or an export the workbench "
                                           "wrote)")],
    format: Annotated[str, typer.Option("--format", help="atif (one ATIF v1.8 trajectory JSON per "
                                                         "continuity)")] = "atif",
    force: Force = False,
) -> None:
    """Export a dataset's continuities (events, per-request usage and cost) to another format;
    `workbench import DIR` reads it back."""
    if format not in EXPORT_FORMATS:
        raise fail(f"--format {format!r}: unknown; choose one of {', '.join(EXPORT_FORMATS)}")
    from workbench.sources.atif_export import export_dataset

    written = export_dataset(dataset, out, force=force)
    say(f"wrote {out} ({len(written)} ATIF trajectories)")
