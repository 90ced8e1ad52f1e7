"""ADR-0011 frame invariants, one broken rule per test: the exact finding (check, continuity,
policy, severity, detail) on hand-built frames, with and without the dataset's events."""

from __future__ import annotations

import polars as pl
import pytest
from invariant_rows import CALL, RESULT, RULE, M, cp, dataset_events, events, findings, marker

from workbench.conformance.invariants import check_invariants

NO_BOUNDARY = "tokens_v1(message_boundary=False)"


def without_wire(rows):
    return [r for r in rows if r[0] != "wire_shape"]


def test_a_well_formed_run_has_no_findings_with_or_without_the_dataset():
    # evt_<seq> names an event without a message id (2) or with an empty one (10); a cut
    # inside a side chain's tool pair (11 -> 13, cut at 12) is allowed
    ev = events(cp(100, 0, 1), cp(101, 2, 4, from_message_id="evt_2"), cp(102, 5, 10, to_message_id="evt_10"),
                cp(103, 11, 12), cp(104, 11, 12, to_is_message=True))
    assert findings(ev, dataset_events()) == []
    assert findings(ev) == []


def test_nothing_to_check():
    assert check_invariants(None).passed and check_invariants(None).findings.height == 0
    assert check_invariants(pl.DataFrame()).findings.height == 0
    assert check_invariants(pl.DataFrame({"x": [1]})).findings.height == 0  # rows, but no event_type


# ---- coverage, append-only, monotonic ----------------------------------------------------------

def test_a_single_frame_covering_backwards():
    report = check_invariants(events(cp(100, 5, 4)))
    assert report.findings.rows() == [("coverage_order", "c1", "p", "fail", "frame seq 100: from_seq 5 > to_seq 4")]
    assert not report.passed
    assert findings(events(cp(100, 4, 4))) == []  # one event covered: from == to


def test_frame_seqs_strictly_increase_against_the_greatest_earlier_seq():
    ev = events(cp(110, 0, 1), cp(105, 0, 1), cp(107, 0, 1), cp(110, 0, 1, art="a110b"))
    assert findings(ev) == [
        ("frame_append_only", "c1", "p", "fail", "frame seq 105 does not follow the previous frame (seq 110)"),
        ("frame_append_only", "c1", "p", "fail", "frame seq 107 does not follow the previous frame (seq 110)"),
        ("frame_append_only", "c1", "p", "fail", "frame seq 110 does not follow the previous frame (seq 110)"),
    ]


def test_a_frame_comes_after_its_cut_and_never_reuses_an_event_seq():
    ev = events(cp(8, 0, 8), cp(9, 0, 12))
    assert findings(ev) == [
        ("frame_append_only", "c1", "p", "fail", "frame seq 8 precedes or equals its cut (to_seq 8)"),
        ("frame_append_only", "c1", "p", "fail", "frame seq 9 precedes or equals its cut (to_seq 12)"),
    ]
    # with the dataset, a frame numbered like an event of the continuity is no appended frame
    assert findings(events(cp(12, 0, 1)), dataset_events()) == [
        ("frame_append_only", "c1", "p", "fail", "frame seq 12 reuses the seq of a continuity event")]
    assert findings(events(cp(15, 0, 1)), dataset_events()) == []


def test_the_cut_never_moves_below_the_greatest_earlier_cut():
    ev = events(cp(100, 0, 8), cp(101, 0, 4), cp(102, 0, 6), cp(103, 0, 8))
    assert findings(ev) == [
        ("cut_monotonic", "c1", "p", "fail", "frame seq 101: to_seq 4 < earlier to_seq 8"),
        ("cut_monotonic", "c1", "p", "fail", "frame seq 102: to_seq 6 < earlier to_seq 8"),
    ]


def test_a_frame_without_a_cut_does_not_stop_the_checks_of_the_next_frames():
    ev = events(cp(100, 0, 8), cp(101, None, None), cp(102, 0, 4))
    report = check_invariants(ev)
    assert without_wire(report.findings.rows()) == [
        ("cut_monotonic", "c1", "p", "fail", "frame seq 102: to_seq 4 < earlier to_seq 8")]
    wire = report.findings.filter(pl.col("check") == "wire_shape")["detail"].to_list()
    assert len(wire) == 1 and wire[0].startswith("continuity_compaction_checkpoint_created (frame seq 101): ")


def test_a_backwards_cut_is_a_warning_only_for_an_emergency_frame():
    """Emergency: a frame after a context.overflow of the same continuity, policy and request."""
    before = [cp(100, 0, 8, request=1)]
    backwards = cp(101, 0, 4, request=2)
    others = [marker("context.overflow", 2, cid="c2"), marker("context.overflow", 2, pol="q"),
              marker("context.overflow", 1)]
    fail = ("cut_monotonic", "c1", "p", "fail", "frame seq 101: to_seq 4 < earlier to_seq 8")
    assert findings(events(*before, *others, backwards)) == [fail]
    # an overflow of that request, but after the frame, does not make it an emergency
    assert findings(events(*before, backwards, marker("context.overflow", 2))) == [fail]
    report = check_invariants(events(*before, *others, marker("context.overflow", 2), backwards))
    assert report.findings.rows() == [
        ("cut_monotonic", "c1", "p", "warn", "frame seq 101 (emergency): to_seq 4 < earlier to_seq 8")]
    assert report.passed


def test_findings_follow_the_stream_order_of_continuities_and_policies():
    groups = [(f"c{i}", pol) for i in (7, 3, 11, 1, 9, 5, 2, 10, 4, 8, 6, 12) for pol in ("z", "a")]
    ev = events(*[cp(100, 5, 4, cid=c, pol=p, art=f"a-{c}-{p}") for c, p in groups])
    assert [(r[1], r[2]) for r in findings(ev)] == groups


# ---- against the dataset ----------------------------------------------------------------------

def test_a_continuity_missing_from_the_dataset_is_reported_once_per_policy():
    ev = events(cp(100, 0, 1, cid="c2"), cp(101, 2, 4, cid="c2"), cp(100, 0, 1, cid="c2", pol="q", art="b1"))
    assert findings(ev, dataset_events()) == [
        ("cut_exists", "c2", "p", "fail", "continuity 'c2' is not in the dataset"),
        ("cut_exists", "c2", "q", "fail", "continuity 'c2' is not in the dataset"),
    ]


def test_cut_ends_are_events_of_the_continuity():
    ev = events(cp(100, 0, 4), cp(120, 50, 99), cp(121, 0, 110, from_message_id=None))
    assert without_wire(findings(ev, dataset_events())) == [
        ("cut_exists", "c1", "p", "fail", "frame seq 120: to_seq 99 is not an event of the continuity"),
        ("cut_exists", "c1", "p", "fail", "frame seq 120: from_seq 50 is not an event of the continuity"),
        ("cut_exists", "c1", "p", "fail", "frame seq 121: to_seq 110 is not an event of the continuity"),
    ]


def test_message_ids_name_the_cut_events():
    ev = events(cp(100, 0, 4, from_message_id="m1", to_message_id="evt_4"), cp(101, 2, 8, from_message_id="m2"),
                cp(102, 10, 12, from_message_id="m10"))
    assert findings(ev, dataset_events()) == [
        ("cut_exists", "c1", "p", "fail", "frame seq 100: to_message_id 'evt_4' does not name event 4 ('m4')"),
        ("cut_exists", "c1", "p", "fail", "frame seq 100: from_message_id 'm1' does not name event 0 ('m0')"),
        ("cut_exists", "c1", "p", "fail", "frame seq 101: from_message_id 'm2' does not name event 2 ('evt_2')"),
        ("cut_exists", "c1", "p", "fail", "frame seq 102: from_message_id 'm10' does not name event 10 ('evt_10')"),
    ]
    # a frame without message ids is checked on its seqs only (wire_shape reports the ids)
    ev = events(cp(100, 0, 4, from_message_id=None, to_message_id=None))
    assert without_wire(findings(ev, dataset_events())) == []


def test_without_message_ids_in_the_dataset_every_event_is_evt_seq():
    ds = dataset_events(message_ids=False)
    assert findings(events(cp(100, 0, 1, from_message_id="evt_0", to_message_id="evt_1")), ds) == []
    assert findings(events(cp(100, 0, 1)), ds) == [
        ("cut_exists", "c1", "p", "fail", "frame seq 100: to_message_id 'm1' does not name event 1 ('evt_1')"),
        ("cut_exists", "c1", "p", "fail", "frame seq 100: from_message_id 'm0' does not name event 0 ('evt_0')"),
    ]


def test_a_cut_between_a_tool_call_and_its_result():
    ds = dataset_events()
    split = "frame seq 100: cut at to_seq {t} leaves 1 tool call(s) before it whose result comes after it"
    assert findings(events(cp(100, 0, 2, to_message_id="evt_2")), ds) == [
        ("tool_pair_split", "c1", "p", "fail", split.format(t=2)),
        ("cut_is_message", "c1", "p", "fail", "frame seq 100: to_seq 2 is not a message event"),
    ]
    # the side-chain message 6 lies inside the open call 5 -> 7 and is no model-visible message
    assert findings(events(cp(100, 0, 6)), ds) == [
        ("tool_pair_split", "c1", "p", "fail", split.format(t=6)),
        ("cut_is_message", "c1", "p", "fail", "frame seq 100: to_seq 6 is not a message event"),
    ]
    # at the result the pair is closed; a result is still not a message
    assert findings(events(cp(100, 0, 7)), ds) == [
        ("cut_is_message", "c1", "p", "fail", "frame seq 100: to_seq 7 is not a message event")]


def test_a_cut_inside_two_open_tool_calls_counts_both():
    spec = [(0, M, 0, None, "m0"), (1, CALL, 0, 4, "m1"), (2, CALL, 0, 5, "m2"), (3, M, 0, None, "m3"),
            (4, RESULT, 0, 1, "m4"), (5, RESULT, 0, 2, "m5"), (6, M, 0, None, "m6")]
    assert findings(events(cp(100, 0, 3), cp(101, 0, 6)), dataset_events(spec)) == [
        ("tool_pair_split", "c1", "p", "fail",
         "frame seq 100: cut at to_seq 3 leaves 2 tool call(s) before it whose result comes after it")]


def test_cut_is_message_reads_the_dataset_first_then_the_engine_column():
    ds = dataset_events()
    msg = ("cut_is_message", "c1", "p", "fail", "frame seq 100: to_seq 9 is not a message event")
    assert findings(events(cp(100, 0, 9)), ds) == [msg]
    # the dataset outranks the engine's to_is_message
    assert findings(events(cp(100, 0, 9, to_is_message=True)), ds) == [msg]
    assert findings(events(cp(100, 0, 9, to_is_message=False))) == [msg]
    assert findings(events(cp(100, 0, 9, to_is_message=True))) == []
    assert findings(events(cp(100, 0, 9))) == []  # no evidence either way
    assert findings(events(cp(100, 0, 9, to_is_message=False), drop=("to_is_message",))) == []


def test_a_policy_that_does_not_require_message_boundaries_gets_a_warning():
    ev = events(cp(100, 0, 9, kind="truncation_v1", art=None, rule=NO_BOUNDARY))
    report = check_invariants(ev, dataset_events())
    assert report.findings.rows() == [
        ("cut_not_message_allowed", "c1", "p", "warn", "frame seq 100 (truncation_v1): to_seq 9 is not a message "
         "event; the policy does not require message boundaries")]
    assert report.passed


# ---- where the message-boundary rule comes from ----------------------------------------------

def _boundary(ev, **kwargs) -> list[str]:
    return [r[0] for r in findings(ev, dataset_events(), **kwargs) if r[0].startswith("cut_")]


def test_message_boundary_argument_outranks_config_and_cut_rule_id():
    strict, loose = events(cp(100, 0, 9)), events(cp(100, 0, 9, rule=NO_BOUNDARY))
    assert _boundary(strict) == ["cut_is_message"]
    assert _boundary(loose) == ["cut_not_message_allowed"]
    assert _boundary(strict, message_boundary={"p": False}) == ["cut_not_message_allowed"]
    assert _boundary(loose, message_boundary={"p": True}) == ["cut_is_message"]
    assert _boundary(strict, message_boundary={"q": False}) == ["cut_is_message"]  # another policy's
    config = {"policies": {"p": {"policy": {"trigger": {"message_boundary": True}}}}}
    assert _boundary(strict, message_boundary={"p": False}, config=config) == ["cut_not_message_allowed"]


def test_message_boundary_from_the_run_config():
    strict, loose = events(cp(100, 0, 9)), events(cp(100, 0, 9, rule=NO_BOUNDARY))
    no = {"policies": {"p": {"policy": {"trigger": {"message_boundary": False}}}}}
    yes = {"policies": {"p": {"policy": {"trigger": {"message_boundary": True}}}}}
    assert _boundary(strict, config=no) == ["cut_not_message_allowed"]
    assert _boundary(loose, config=yes) == ["cut_is_message"]
    # a config that does not say falls back to the cut_rule_id
    for config in ({"policies": {}}, {"policies": {"p": None}}, {"policies": {"p": {"policy": {}}}}):
        assert _boundary(loose, config=config) == ["cut_not_message_allowed"], config
        assert _boundary(strict, config=config) == ["cut_is_message"], config


def test_message_boundary_from_the_first_cut_rule_id_of_the_policy():
    ev = events(cp(100, 0, 9, rule=None), cp(101, 0, 9, rule=NO_BOUNDARY))
    report = check_invariants(ev, dataset_events())
    assert [r[0] for r in report.findings.rows()] == [
        "wire_shape", "cut_not_message_allowed", "cut_not_message_allowed", "cut_rule_id"]
    # no cut_rule_id at all: message boundaries required
    ev = events(cp(100, 0, 9, rule=None))
    assert [r[0] for r in findings(ev, dataset_events())] == ["wire_shape", "cut_is_message", "cut_rule_id"]
    ev = events(cp(100, 0, 9), drop=("cut_rule_id",))
    assert [r[0] for r in findings(ev, dataset_events())] == ["wire_shape", "cut_is_message", "cut_rule_id"]


@pytest.mark.parametrize("rule", [RULE, "messages_v1(every=3)"])
def test_a_cut_rule_id_without_the_flag_requires_message_boundaries(rule):
    assert _boundary(events(cp(100, 0, 9, rule=rule))) == ["cut_is_message"]
