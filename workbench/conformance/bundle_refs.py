"""ADR-0011 §3, no hidden reads: every ``summary_ref`` of a run's context bundles
(``bundles.parquet``, :mod:`workbench.evaluate.bundles`) resolves to a readable document in
the run's artifact store (:mod:`workbench.rundir.artifacts`): a reference to an artifact the
store does not hold, or whose blob was removed or rewritten, is a failure.

>>> import polars as pl
>>> b = pl.DataFrame({"policy": ["p", "p"], "continuity_id": ["c", "c"], "request": [0, 1],
...                   "summary_refs": [[], ["a1"]]})
>>> check_summary_refs(b, {"a1": {"schema": "rip.compaction_summary.v1"}}.get)
{'bundles': 2, 'summary_refs': 1, 'unresolved': 0, 'problems': []}
>>> check_summary_refs(b, {}.get)["problems"]
['p / c request 1: summary_ref a1 is not in the artifact store']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workbench.errors import WorkbenchError

MAX_LISTED = 20  # problems listed in full; the count is always exact


def check_summary_refs(bundles, read: Callable[[str], Mapping[str, Any] | None]) -> dict[str, Any]:
    """Counts of bundles and ``summary_ref`` items, the unresolved ones, and (up to
    :data:`MAX_LISTED`) what is wrong with each: ``read(artifact_id)`` gives its document,
    None when the store has no such artifact, or raises when its blob cannot be read."""
    n_refs, problems, unresolved = 0, [], 0
    seen: dict[str, str | None] = {}
    for r in bundles.select("policy", "continuity_id", "request", "summary_refs").iter_rows(named=True):
        for art in r["summary_refs"] or ():
            n_refs += 1
            if art not in seen:
                try:
                    seen[art] = None if read(art) is not None else "is not in the artifact store"
                except WorkbenchError as e:
                    seen[art] = f"does not resolve ({e})"
            if seen[art] is not None:
                unresolved += 1
                if len(problems) < MAX_LISTED:
                    problems.append(f"{r['policy']} / {r['continuity_id']} request {r['request']}: "
                                    f"summary_ref {art} {seen[art]}")
    return {"bundles": bundles.height, "summary_refs": n_refs, "unresolved": unresolved, "problems": problems}
