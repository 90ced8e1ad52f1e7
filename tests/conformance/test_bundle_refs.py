"""ADR-0011 §3, no hidden reads (workbench.conformance.bundle_refs) on hand-built bundles:
exact counts and problems, one read per artifact, the listing bound. Quick enough for
``make mutate``."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.conformance.bundle_refs import MAX_LISTED, check_summary_refs
from workbench.errors import WorkbenchError


def _bundles(refs: list[list[str] | None]) -> pl.DataFrame:
    n = len(refs)
    return pl.DataFrame({"policy": ["p"] * n, "continuity_id": ["c"] * n, "request": list(range(n)),
                         "summary_refs": refs, "extra": [0] * n}, schema_overrides={"summary_refs": pl.List(pl.String)})


class Store:
    """An artifact store that counts its reads: ``docs`` maps an id to its document, or to an
    exception its blob raises."""

    def __init__(self, docs):
        self.docs, self.reads = docs, []

    def __call__(self, art):
        self.reads.append(art)
        doc = self.docs.get(art)
        if isinstance(doc, Exception):
            raise doc
        return doc


def test_every_ref_resolves():
    store = Store({"a1": {"schema": "x"}, "a2": {}})  # an empty document is still a document
    report = check_summary_refs(_bundles([[], ["a1"], ["a1", "a2"], None]), store)
    assert report == {"bundles": 4, "summary_refs": 3, "unresolved": 0, "problems": []}
    assert store.reads == ["a1", "a2"]  # each artifact is read once


def test_missing_and_unreadable_artifacts_are_named_with_their_request():
    store = Store({"a1": {"schema": "x"}, "bad": WorkbenchError("blob sha mismatch")})
    report = check_summary_refs(_bundles([["a1", "gone"], ["bad"], ["gone", "a1"]]), store)
    assert report == {"bundles": 3, "summary_refs": 5, "unresolved": 3, "problems": [
        "p / c request 0: summary_ref gone is not in the artifact store",
        "p / c request 1: summary_ref bad does not resolve (blob sha mismatch)",
        "p / c request 2: summary_ref gone is not in the artifact store"]}
    assert store.reads == ["a1", "gone", "bad"]


def test_other_errors_are_not_findings():
    with pytest.raises(ValueError):
        check_summary_refs(_bundles([["a1"]]), Store({"a1": ValueError("a bug, not a finding")}))


def test_problems_are_listed_up_to_the_bound_and_counted_exactly():
    refs = [[f"x{i}"] for i in range(MAX_LISTED + 5)]
    report = check_summary_refs(_bundles(refs), Store({}))
    assert MAX_LISTED == 20
    assert report["unresolved"] == MAX_LISTED + 5 and report["summary_refs"] == MAX_LISTED + 5
    assert report["problems"] == [f"p / c request {i}: summary_ref x{i} is not in the artifact store"
                                  for i in range(MAX_LISTED)]


def test_no_bundles():
    assert check_summary_refs(_bundles([]), Store({})) == {"bundles": 0, "summary_refs": 0, "unresolved": 0,
                                                          "problems": []}
