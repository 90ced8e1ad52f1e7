"""The directories the workbench writes: their kinds and markers, the one rule for output
paths, atomic replacement, one writer at a time, completeness, stale temporaries, the names
of the files inside and reading them back (:mod:`workbench.rundir.read`).

>>> from workbench.rundir import Kind, check_output
>>> check_output("/nonexistent/new-run", Kind.RUN) is None
True
"""

from workbench.rundir.lock import LockedError, exclusive
from workbench.rundir.markers import MARKER, Kind, Marker, read_marker
from workbench.rundir.output import (
    OutputError,
    adding,
    check_output,
    claim,
    replace_dir,
    require,
    rerunning,
    update_dir,
    write_file,
    write_parquet,
)
from workbench.rundir.temp import clean, remove_stale

__all__ = ["MARKER", "Kind", "LockedError", "Marker", "OutputError", "adding", "check_output", "claim",
           "clean", "exclusive", "read_marker", "remove_stale", "replace_dir", "require", "rerunning",
           "update_dir", "write_file", "write_parquet"]
