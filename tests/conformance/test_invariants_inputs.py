"""What the invariant checker accepts: dataset events as a frame (by continuity_id, or by the
continuity index plus the continuities table), a Dataset or its directory, a SimulationResult
(check_result: its run id and config are the defaults); and the wire-shape finding's text."""

from __future__ import annotations

from types import SimpleNamespace

import orjson
import polars as pl
import pytest
from invariant_rows import C1, MC, RUN, cp, dataset_events, events, findings, mc

from workbench.conformance.invariants import InvariantReport, check_invariants, check_result
from workbench.continuity import schema as S
from workbench.continuity.dataset import CONTINUITIES_FILE, EVENTS_FILE, MANIFEST_FILE, load_dataset

# a frame whose to_message_id names event 4 wrongly: only a check against the dataset sees it
WRONG_ID = events(cp(100, 0, 4, to_message_id="m5"))
WRONG_ID_FINDING = ("cut_exists", "c1", "p", "fail", "frame seq 100: to_message_id 'm5' does not name event 4 ('m4')")
MISSING_C1 = ("cut_exists", "c1", "p", "fail", "continuity 'c1' is not in the dataset")


def indexed(ds: pl.DataFrame, index: int = 0) -> pl.DataFrame:
    """Dataset events with the continuity index instead of the id, as a dataset stores them."""
    return ds.drop("continuity_id").with_columns(continuity=pl.lit(index, pl.Int32))


def continuities(*pairs) -> pl.DataFrame:
    return pl.DataFrame({"continuity": [p[0] for p in pairs], "continuity_id": [p[1] for p in pairs]},
                        schema={"continuity": pl.Int32, "continuity_id": pl.String})


def write_dataset(path, index: int = 0):
    """A one-continuity dataset directory (c1 at ``index``), loadable by load_dataset."""
    path.mkdir(parents=True, exist_ok=True)
    indexed(dataset_events(), index).write_parquet(path / EVENTS_FILE)
    continuities((index, "c1")).write_parquet(path / CONTINUITIES_FILE)
    (path / MANIFEST_FILE).write_bytes(orjson.dumps({"schema_version": S.SCHEMA_VERSION, "name": "tiny"}))
    return path


# ---- dataset events as a frame ---------------------------------------------------------------------

def test_dataset_events_by_continuity_id_need_no_continuities_table():
    assert "continuity" not in dataset_events().columns
    assert findings(WRONG_ID, dataset_events()) == [WRONG_ID_FINDING]


def test_dataset_events_by_continuity_index_are_mapped_through_the_continuities_table():
    ds = pl.concat([indexed(dataset_events(), 3), indexed(dataset_events([(s[0] + 200, *s[1:]) for s in C1]), 4)])
    assert findings(WRONG_ID, ds, continuities=continuities((3, "c1"), (4, "c2"))) == [WRONG_ID_FINDING]
    # the events of index 3 are another continuity's: c1 has none
    assert findings(WRONG_ID, ds, continuities=continuities((3, "c0"), (4, "c1"))) == [
        ("cut_exists", "c1", "p", "fail", "frame seq 100: to_seq 4 is not an event of the continuity"),
        ("cut_exists", "c1", "p", "fail", "frame seq 100: from_seq 0 is not an event of the continuity"),
    ]
    # events of a continuity the table does not list belong to none
    assert findings(WRONG_ID, ds, continuities=continuities((4, "c2"))) == [MISSING_C1]


def test_dataset_events_by_continuity_index_without_the_table_is_an_error():
    with pytest.raises(ValueError) as err:
        check_invariants(WRONG_ID, indexed(dataset_events()))
    assert str(err.value) == ("dataset events carry a continuity index only: pass continuities= (the dataset's "
                              "continuities frame) to map it to continuity_id")


# ---- a Dataset -------------------------------------------------------------------------------------

def test_a_dataset_supplies_its_events_and_continuities(tmp_path):
    ds = load_dataset(write_dataset(tmp_path / "d", index=2))
    assert findings(WRONG_ID, ds) == [WRONG_ID_FINDING]
    # continuities= given with a Dataset is the table used
    assert findings(WRONG_ID, ds, continuities=continuities((2, "c9"))) == [MISSING_C1]


def test_check_result_reads_a_dataset_directory_and_defaults_to_the_results_run_and_config(tmp_path):
    path = write_dataset(tmp_path / "d")
    ev = events(cp(100, 0, 4, to_message_id="m5"), cp(101, 0, 9))
    loose = {"policies": {"p": {"policy": {"trigger": {"message_boundary": False}}}}}
    result = SimpleNamespace(events=ev, run_id="run_other", config=loose)
    mismatch = [("provenance_tag", "c1", "p", "fail", f"outputId a{fs}: tag 'compacted-from:{RUN}' names run "
                 f"{RUN!r}, not this run ('run_other')") for fs in (100, 101)]
    allowed = ("cut_not_message_allowed", "c1", "p", "warn", "frame seq 101 (llm_summary_v1): to_seq 9 is not a "
               "message event; the policy does not require message boundaries")
    for dataset in (str(path), path, load_dataset(path)):
        report = check_result(result, dataset)
        assert report.findings.rows() == [WRONG_ID_FINDING, allowed, *mismatch], dataset
    # keywords override the result's own run id and config
    report = check_result(result, path, run_id=RUN, config=None)
    assert report.findings.rows() == [
        WRONG_ID_FINDING, ("cut_is_message", "c1", "p", "fail", "frame seq 101: to_seq 9 is not a message event")]
    # without a dataset (and no to_is_message column) only the run's own events are checked
    assert check_result(result).findings.rows() == mismatch


# ---- the wire-shape finding --------------------------------------------------------------------------

def test_wire_shape_names_the_output_and_every_schema_complaint():
    ev = events(cp(100, 0, 4), mc("a100", trigger="sometimes", byteSize=-1), compacted=False)
    rows = findings(ev)
    assert len(rows) == 1 and rows[0][:4] == ("wire_shape", "c1", "p", "fail")
    head, _, errors = rows[0][4].partition(": ")
    assert head == f"{MC} (outputId a100)"
    complaints = errors.split("; ")
    assert len(complaints) == 2 and any("sometimes" in c for c in complaints) and any("-1" in c for c in complaints)
    assert all(c.startswith("$") for c in complaints), complaints  # each a JSON-path complaint, "; "-separated


# ---- the report --------------------------------------------------------------------------------------

def test_counts_of_no_findings_keep_their_columns():
    counts = check_invariants(events(cp(100, 0, 4))).counts()
    assert counts.height == 0
    assert counts.schema == pl.Schema({"check": pl.String, "severity": pl.String, "n": pl.UInt32})


def test_counts_sort_by_check_before_severity():
    findings_frame = pl.DataFrame({"check": ["wire_shape", "provenance_tag", "cut_exists", "provenance_tag"],
                                   "continuity_id": ["c"] * 4, "policy": ["p"] * 4,
                                   "severity": ["fail", "warn", "warn", "fail"], "detail": ["a", "b", "c", "d"]})
    counts = InvariantReport(findings_frame, False).counts()
    assert counts.rows() == [("cut_exists", "warn", 1), ("provenance_tag", "fail", 1), ("provenance_tag", "warn", 1),
                             ("wire_shape", "fail", 1)]


def test_untagged_outputs_are_reported_in_stream_order():
    groups = [(f"c{i}", pol) for i in (7, 3, 11, 1, 9, 5, 2, 10, 4, 8, 6, 12) for pol in ("z", "a")]
    ev = events(*[cp(100, 0, 4, cid=c, pol=p, art=f"a-{c}-{p}") for c, p in groups], drop=("tags",))
    assert [(r[1], r[2]) for r in findings(ev)] == groups


def test_a_well_tagged_output_does_not_end_the_tag_checks():
    ev = events(cp(100, 0, 4), cp(101, 0, 6), mc("a100"), mc("a101", tags=[]), compacted=False)
    assert findings(ev) == [("provenance_tag", "c1", "p", "warn", "outputId a101: no compacted-from:<runId> tag")]
