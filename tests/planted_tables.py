"""Plant a table in a written run, as if the workbench had written it (tests of audits and
reports that must catch figures a run should never hold). Import it from any test module
(pytest puts ``tests/`` on the path for ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def plant(run: Path, name: str, frame: pl.DataFrame) -> None:
    """Replace a run's table with a planted one, recording its new size in the run's marker
    (as if the workbench had written it), so only the planted figures differ."""
    from workbench.rundir.markers import file_record, read_marker, update_marker

    path = Path(run) / name
    frame.write_parquet(path)
    marker = read_marker(Path(run))
    update_marker(Path(run), marker, files={**marker.files, name: file_record(path)})
