"""What a compaction produced: artifact identity and scope, one memory.compacted per artifact,
sourceIds, the provenance tag, cut_rule_id, overflow truncations; each broken rule with its
exact finding on hand-built rows."""

from __future__ import annotations

import polars as pl
import pytest
from invariant_rows import RUN, cp, events, findings, marker, mc

from workbench.conformance.invariants import (
    check_invariants,
    provenance_tag_problems,
)

EXPECT_ONE = "memory.compacted events (expected exactly 1)"


# ---- artifacts ---------------------------------------------------------------------------------

def test_one_artifact_id_one_coverage():
    ev = events(cp(100, 0, 4, art="a1"), cp(101, 0, 8, art="a1"), cp(102, 0, 8, art="a1"))
    assert findings(ev) == [
        ("artifact_immutable", "c1", "p", "fail", "artifact a1 referenced with 2 coverages: 0..4; 0..8")]
    # re-referencing an artifact with its own coverage is no violation
    assert findings(events(cp(100, 0, 4, art="a1"), cp(101, 0, 4, art="a1"))) == []


@pytest.mark.parametrize("field", ["from_seq", "to_seq", "from_message_id", "to_message_id"])
def test_coverage_is_every_field_of_the_cut(field):
    second = cp(101, 0, 4, art="a1")
    second[field] = {"from_seq": 1, "to_seq": 5, "from_message_id": "m0b", "to_message_id": "m4b"}[field]
    rows = [r for r in findings(events(cp(100, 0, 4, art="a1"), second)) if r[0] == "artifact_immutable"]
    assert len(rows) == 1 and rows[0][4].startswith("artifact a1 referenced with 2 coverages: "), rows


def test_coverage_includes_the_continuity():
    ev = events(cp(100, 0, 4, art="a1"), cp(100, 0, 4, art="a1", cid="c2"))
    assert findings(ev) == [
        ("artifact_immutable", "c1", "p", "fail", "artifact a1 referenced with 2 coverages: 0..4; 0..4"),
        ("artifact_scope", None, None, "fail", "artifact a1 appears in several continuity x policy scopes: c1/p, c2/p"),
        ("event_per_artifact", "c2", "p", "fail", f"artifact a1: 0 {EXPECT_ONE}"),
    ]


def test_an_artifact_belongs_to_one_continuity_and_policy():
    ev = events(cp(100, 0, 4, art="a1", pol="q"), cp(100, 0, 4, art="a1"), mc("a1"), mc("a1", pol="q"))
    assert findings(ev) == [
        ("artifact_scope", None, None, "fail", "artifact a1 appears in several continuity x policy scopes: c1/p, c1/q")]


def test_rows_without_a_policy_or_message_ids_are_reported_not_crashed_on():
    """Null policy and message ids sort beside strings (by their text) in the findings."""
    ev = events(cp(100, 0, 4, art="a1", pol=None, from_message_id=None), cp(101, 0, 4, art="a1"), mc("a1"))
    rows = [r for r in findings(ev) if r[0] != "wire_shape"]
    assert rows == [
        ("artifact_immutable", "c1", "p", "fail", "artifact a1 referenced with 2 coverages: 0..4; 0..4"),
        ("artifact_scope", None, None, "fail",
         "artifact a1 appears in several continuity x policy scopes: c1/p, c1/None"),
        ("event_per_artifact", "c1", None, "fail", f"artifact a1: 0 {EXPECT_ONE}"),
    ]


def test_every_produced_artifact_has_exactly_one_memory_compacted_event():
    ev = events(cp(100, 0, 4), cp(101, 0, 6), mc("a101"), mc("a101"), compacted=False)
    assert findings(ev) == [
        ("event_per_artifact", "c1", "p", "fail", f"artifact a100: 0 {EXPECT_ONE}"),
        ("event_per_artifact", "c1", "p", "fail", f"artifact a101: 2 {EXPECT_ONE}"),
    ]


def test_a_memory_compacted_event_names_an_output_someone_produced():
    ev = events(cp(100, 0, 4), mc("a100"), mc("zz"), mc("zz"), mc("a100", pol="q"), compacted=False)
    assert findings(ev) == [
        ("event_per_artifact", "c1", "p", "fail",
         "memory.compacted outputId 'zz' (2 event(s)) was produced by no checkpoint or merge"),
        ("event_per_artifact", "c1", "q", "fail",
         "memory.compacted outputId 'a100' (1 event(s)) was produced by no checkpoint or merge"),
    ]


def test_merges_produce_artifacts_too_and_truncation_frames_none():
    merged = marker("summary.merged", 3, summary_artifact_id="s1")
    ev = events(cp(100, 0, 2, art=None, kind="truncation_v1"), cp(101, 0, 4), merged, merged,
                marker("summary.merged", 4), mc("a101"), compacted=False)
    assert findings(ev) == [("event_per_artifact", "c1", "p", "fail", f"artifact s1: 0 {EXPECT_ONE}")]
    # a merge naming a checkpoint's artifact is the same artifact: one event serves both
    ev = events(cp(101, 0, 4), marker("summary.merged", 3, summary_artifact_id="a101"), mc("a101"), compacted=False)
    assert findings(ev) == []


def test_event_per_artifact_findings_in_continuity_and_policy_order():
    ev = events(cp(100, 0, 4, cid="c2"), cp(100, 0, 4, cid="c1", art="b1", pol="q"), cp(100, 0, 4, cid="c1",
                art="b2"), compacted=False)
    assert [r[1:3] for r in findings(ev)] == [("c1", "p"), ("c1", "q"), ("c2", "p")]


# ---- cut_rule_id ---------------------------------------------------------------------------------

def test_cut_rule_id_present_on_every_frame():
    report = check_invariants(events(cp(100, 0, 4, rule=None)))
    rows = report.findings.rows()
    assert rows[1:] == [("cut_rule_id", "c1", "p", "fail", "frame seq 100: cut_rule_id missing")]
    assert rows[0][:4] == ("wire_shape", "c1", "p", "fail")


def test_one_cut_rule_id_per_policy():
    ev = events(cp(100, 0, 4, rule="r2"), cp(100, 0, 4, cid="c2", art="b1", rule="r1"),
                cp(101, 0, 6, cid="c2", art="b2", rule="r2"), cp(100, 0, 4, pol="q", art="b3", rule="r3"))
    assert findings(ev) == [("cut_rule_id", None, "p", "fail", "2 cut_rule_ids within one policy: ['r1', 'r2']")]


# ---- sourceIds -------------------------------------------------------------------------------------

def _ids(n):
    return [f"e{i}" for i in range(n)]


def _source_findings(**kwargs):
    return findings(events(cp(100, 0, 4), mc("a100", **kwargs)))


def test_source_ids_are_omitted_above_the_limit():
    assert _source_findings(ids=_ids(150)) == [
        ("source_ids_limit", "c1", "p", "fail", "outputId a100: sourceIds present (150) with sourceCount 150 > 100")]
    assert _source_findings(ids=_ids(101))[0][4] == (
        "outputId a100: sourceIds present (101) with sourceCount 101 > 100")
    assert _source_findings(ids=_ids(100)) == []
    assert _source_findings(ids=None, count=101) == []


def test_source_ids_omitted_at_or_below_the_limit_is_a_warning():
    assert _source_findings(ids=None, count=100) == [
        ("source_ids_missing", "c1", "p", "warn", "outputId a100: sourceIds omitted with sourceCount 100 <= 100")]
    assert _source_findings(ids=None, count=1)[0][4] == "outputId a100: sourceIds omitted with sourceCount 1 <= 100"
    assert _source_findings(ids=None, count=0) == []  # nothing to list


def test_source_ids_never_outnumber_the_count_and_are_distinct():
    assert _source_findings(ids=["e1", "e2", "e3"], count=2) == [
        ("source_ids_count", "c1", "p", "fail", "outputId a100: 3 sourceIds > sourceCount 2")]
    assert [r for r in _source_findings(ids=["e1", "e1"], count=2) if r[0] != "wire_shape"] == [
        ("source_ids_count", "c1", "p", "fail", "outputId a100: duplicate sourceIds")]
    report = check_invariants(events(cp(100, 0, 4), mc("a100", ids=["e1"], count=3)))
    assert report.findings.rows() == [
        ("source_ids_exhaustive", "c1", "p", "warn", "outputId a100: 1 sourceIds listed of sourceCount 3")]
    assert report.passed


def test_an_event_without_a_source_count_is_left_to_wire_shape():
    ev = events(cp(100, 0, 4), cp(101, 0, 6), mc("a100", count=None, sourceCount=None),
                mc("a101", ids=["e1", "e1"], count=2))
    rows = findings(ev)
    assert [r[0] for r in rows] == ["wire_shape", "wire_shape", "source_ids_count"]
    assert rows[2] == ("source_ids_count", "c1", "p", "fail", "outputId a101: duplicate sourceIds")


# ---- provenance tag -------------------------------------------------------------------------------

@pytest.mark.parametrize(("tags", "status", "problems"), [
    ([f"compacted-from:{RUN}", "topic:x"], "ok", []),
    (None, "absent", ["no compacted-from:<runId> tag"]),
    (["topic:x", 7], "absent", ["no compacted-from:<runId> tag"]),
    ([f"compacted-from:{RUN}"] * 2, "duplicate", ["2 compacted-from: tags on one output"]),
    (["compacted-from:"], "malformed", ["malformed tag 'compacted-from:': the run id must be a non-empty opaque "
                                        "string without whitespace or control characters"]),
    (["compacted-from:a b"], "malformed", ["malformed tag 'compacted-from:a b': the run id must be a non-empty "
                                           "opaque string without whitespace or control characters"]),
    (["compacted-from:run_x"], "malformed", [f"tag 'compacted-from:run_x' names run 'run_x', not this run ({RUN!r})"]),
])
def test_provenance_tag_problems(tags, status, problems):
    assert provenance_tag_problems(tags, RUN) == (status, problems)


def test_provenance_tag_without_a_run_id_checks_the_form_only():
    assert provenance_tag_problems(["compacted-from:run_x"], None) == ("ok", [])
    assert provenance_tag_problems(["compacted-from:a\tb"], None)[0] == "malformed"


def test_provenance_tag_findings():
    ev = events(cp(100, 0, 4), cp(101, 0, 6), cp(102, 0, 8),
                mc("a100", tags=["compacted-from:", "compacted-from:run_x"]), mc("a101", tags=[]),
                mc("a102", tags=[f"compacted-from:{RUN}"] * 2))
    assert findings(ev) == [
        ("provenance_tag", "c1", "p", "fail", "outputId a100: malformed tag 'compacted-from:': the run id must be a "
         "non-empty opaque string without whitespace or control characters; tag 'compacted-from:run_x' names run "
         f"'run_x', not this run ({RUN!r})"),
        ("provenance_tag", "c1", "p", "warn", "outputId a101: no compacted-from:<runId> tag"),
        ("provenance_tag", "c1", "p", "warn", "outputId a102: 2 compacted-from: tags on one output"),
    ]


def test_the_run_id_is_the_given_one_else_each_rows_own():
    ev = events(cp(100, 0, 4), mc("a100", tags=["compacted-from:run_x"], run_id="run_x"))
    assert findings(ev) == []
    assert findings(ev, run_id="run_x") == []
    assert findings(ev, run_id=RUN) == [("provenance_tag", "c1", "p", "fail",
                                         f"outputId a100: tag 'compacted-from:run_x' names run 'run_x', not this run "
                                         f"({RUN!r})")]


def test_outputs_without_a_tags_column_are_counted_per_continuity_and_policy():
    ev = events(cp(100, 0, 4, cid="c2", pol="q"), cp(100, 0, 4, art="b1"), cp(101, 0, 6, art="b2"), drop=("tags",))
    assert findings(ev) == [
        ("provenance_tag", "c2", "q", "warn", "1 outputs carry no tags at all"),
        ("provenance_tag", "c1", "p", "warn", "2 outputs carry no tags at all"),
    ]
    assert findings(events(cp(100, 0, 4), drop=("tags",))) == [
        ("provenance_tag", "c1", "p", "warn", "1 outputs carry no tags at all")]


# ---- overflow truncations ----------------------------------------------------------------------

def truncation(request, from_seq=0, to_seq=4, **extra):
    return marker("context.truncated", request, from_seq=from_seq, to_seq=to_seq, **extra)


def test_a_truncation_follows_an_overflow_of_its_request():
    ok = [marker("context.overflow", 3), truncation(3), truncation(3, 4, 4)]
    assert findings(events(*ok)) == []
    orphan = "truncation at request 3 follows no context.overflow of that request"
    for other in (marker("context.overflow", 3, cid="c2"), marker("context.overflow", 3, pol="q"),
                  marker("context.overflow", 2)):
        assert findings(events(other, truncation(3))) == [("truncation_not_compaction", "c1", "p", "fail", orphan)]
    # the overflow comes first
    assert findings(events(truncation(3), marker("context.overflow", 3))) == [
        ("truncation_not_compaction", "c1", "p", "fail", orphan)]


def test_a_single_orphan_truncation_is_checked():
    report = check_invariants(events(truncation(3, cid="c2", pol="q")))
    assert report.findings.rows() == [("truncation_not_compaction", "c2", "q", "fail",
                                       "truncation at request 3 follows no context.overflow of that request")]
    assert not report.passed


def test_a_truncation_is_not_a_compaction():
    dressed = "truncation at request 3 carries a checkpoint frame seq or an artifact id: a truncation is not a compaction"
    for extra in ({"frame_seq": 100}, {"summary_artifact_id": "a1"}):
        ev = events(marker("context.overflow", 3), truncation(3, **extra), compacted=False)
        assert findings(ev) == [("truncation_not_compaction", "c1", "p", "fail", dressed)], extra


@pytest.mark.parametrize(("span", "shown"), [((5, 4), "5..4"), ((None, 4), "None..4"), ((0, None), "0..None")])
def test_a_truncation_drops_a_range(span, shown):
    ev = events(marker("context.overflow", 3), truncation(3, *span))
    assert findings(ev) == [
        ("truncation_not_compaction", "c1", "p", "fail", f"truncation at request 3: dropped span {shown} is not a range")]


# ---- the report ------------------------------------------------------------------------------------

def test_report_counts_a_single_finding():
    report = check_invariants(events(cp(100, 5, 4)))
    assert report.counts().rows() == [("coverage_order", "fail", 1)]
    assert report.failures().rows() == report.findings.rows()
    warn_only = check_invariants(events(cp(100, 0, 4), mc("a100", ids=None, count=3), compacted=False))
    assert warn_only.failures().height == 0 and warn_only.passed


def test_report_counts_sort_by_check_then_severity():
    ev = events(cp(100, 0, 4), cp(101, 0, 6), cp(102, 0, 8), mc("a100", tags=[]), mc("a101", tags=["compacted-from:"]),
                mc("a102", tags=[]), compacted=False)
    counts = check_invariants(ev).counts()
    assert counts.rows() == [("provenance_tag", "fail", 1), ("provenance_tag", "warn", 2)]
    assert counts.columns == ["check", "severity", "n"]


def test_findings_frame_columns():
    f = check_invariants(events(cp(100, 5, 4))).findings
    assert f.schema == pl.Schema({"check": pl.String, "continuity_id": pl.String, "policy": pl.String,
                                  "severity": pl.String, "detail": pl.String})


def test_a_provider_item_is_metadata_and_needs_no_memory_compacted_event():
    """An opaque provider-window item's frame produces no memory (Holon §4.2): no
    memory.compacted is expected of it, and one naming it was produced by nothing."""
    ev = events(cp(100, 0, 4, kind="provider_opaque_v1"), cp(101, 0, 6), mc("a101"), compacted=False)
    assert findings(ev) == []
    ev = events(cp(100, 0, 4, kind="provider_opaque_v1"), cp(101, 0, 6), mc("a101"), mc("a100"), compacted=False)
    assert findings(ev) == [
        ("event_per_artifact", "c1", "p", "fail",
         "memory.compacted outputId 'a100' (1 event(s)) was produced by no checkpoint or merge"),
    ]
