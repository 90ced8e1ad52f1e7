"""ADR-0011 / RFC 0012 invariants: pass on real engine output, fail on corrupted frames."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

import polars as pl
import pytest

from workbench.conformance.invariants import CHECKS, check_invariants, check_result
from workbench.continuity.enums import EventKind

CP = "continuity_compaction_checkpoint_created"
MC = "memory.compacted"


@functools.cache
def simulated_run():
    """(dataset, SimulationResult): a small generated dataset replayed by the reference engine.

    Shared with test_conf_scenarios (same process, cached). The policies cover a folding
    summary, turn- and stride-triggered summaries, accumulating opaque items with merges,
    a flush, clearing tool uses, emergency truncation and a truncation policy that does
    not require message boundaries.
    """
    from workbench.engine.policy import Compaction, CutRule, Policy
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    # beside pytest's tmp_path directories (tests/conftest.py): the atexit removal comes
    # after the session's check for files left behind
    root = tempfile.mkdtemp(prefix="wb-conformance-", dir=os.environ.get("WORKBENCH_TEST_SCRATCH"))
    atexit.register(shutil.rmtree, root, True)
    ds = generate_dataset(GeneratorConfig(profile="coding", events=600, seed=3, tokenizers=("cl100k",)),
                          f"{root}/ds")
    policies = [
        get_policy("claude-code", {"trigger.tokens": 30_000}, rename="cc30k"),
        get_policy("llm-summary"),
        get_policy("rip-adr0011", {"trigger.every_messages": 40}, rename="rip40"),
        get_policy("openai-responses-compact", {"trigger.tokens": 20_000, "compaction.max_segments": 2,
                                                "compaction.accumulate": True},
                   rename="oai-merge"),
        get_policy("openclaw-flush", {"provider.context_window": 40_000}, rename="openclaw40k"),
        get_policy("no-compaction", {"provider.context_window": 30_000}, rename="nc30k"),
        get_policy("anthropic-clear-tool-uses", {"trigger.tokens": 20_000}, rename="ctu20k"),
        Policy("trunc-any", "truncation at 25k, cuts anywhere safe",
               trigger=CutRule(kind="tokens", tokens=25_000, keep_first=1, message_boundary=False),
               compaction=Compaction(kind="truncate")),
    ]
    return ds, simulate(ds, policies, engine="reference")


@pytest.fixture(scope="module")
def run():
    return simulated_run()


def dataset_events(ds):
    return ds.events(columns=["continuity", "seq", "kind", "flags", "pair_seq", "message_id"])


def edit(events: pl.DataFrame, where, **values) -> pl.DataFrame:
    """A copy of ``events`` with ``values`` set on the rows where ``where(row)`` is true."""
    rows = events.to_dicts()
    n = 0
    for r in rows:
        if where(r):
            r.update(values)
            n += 1
    assert n, "the edit matched no row"
    return pl.DataFrame(rows, schema=events.schema)


def nth(events, policy, event_type=CP, k=0) -> dict:
    return events.filter((pl.col("policy") == policy) & (pl.col("event_type") == event_type)).row(k, named=True)


def fails(report, check):
    f = report.findings
    return f.filter((pl.col("check") == check) & (pl.col("severity") == "fail"))


# ---- real engine output ------------------------------------------------------------------

def test_real_simulation_passes(run):
    ds, res = run
    report = check_result(res, ds)
    assert report.passed, report.failures()
    assert set(report.findings["severity"].unique()) <= {"warn"}
    assert set(report.findings["check"].unique()) <= {"cut_not_message_allowed", "source_ids_missing"}
    allowed = report.findings.filter(pl.col("check") == "cut_not_message_allowed")
    assert allowed.height > 0 and set(allowed["policy"]) == {"trunc-any"}
    assert report.findings.columns == ["check", "continuity_id", "policy", "severity", "detail"]
    # every kind of frame the run should exercise is present
    ev = res.events
    kinds = set(ev.filter(pl.col("event_type") == CP)["summary_kind"].unique())
    assert {"llm_summary_v1", "provider_opaque_v1", "truncation_v1"} <= kinds
    assert ev.filter(pl.col("event_type") == "summary.merged").height > 0
    assert ev.filter(pl.col("event_type") == "context.overflow").height > 0


def test_real_simulation_passes_without_the_dataset(run):
    _, res = run
    report = check_invariants(res.events, run_id=res.run_id, config=res.config)
    assert report.passed
    # without config the policy's boundary rule is read from its cut_rule_id
    assert check_invariants(res.events).passed


def test_dataset_events_with_continuity_index(run):
    ds, res = run
    assert check_invariants(res.events, dataset_events(ds), continuities=ds.continuities()).passed
    with pytest.raises(ValueError, match="continuities="):
        check_invariants(res.events, dataset_events(ds))


def test_empty_events():
    assert check_invariants(pl.DataFrame()).passed
    assert check_invariants(pl.DataFrame(schema={"event_type": pl.String})).findings.height == 0


# ---- corruptions ---------------------------------------------------------------------------

def _non_message_seq(ds, lo, hi):
    ev = ds.events(columns=["seq", "kind"]).filter(
        (pl.col("seq") > lo) & (pl.col("seq") < hi) & (pl.col("kind") != int(EventKind.MESSAGE)))
    return int(ev["seq"][0])


def test_cut_on_a_non_message_fails(run):
    ds, res = run
    cp = nth(res.events, "cc30k")
    bad = _non_message_seq(ds, cp["from_seq"], cp["to_seq"])
    ev = edit(res.events, lambda r: r["frame_seq"] == cp["frame_seq"] and r["policy"] == "cc30k",
              to_seq=bad, to_message_id=f"evt_{bad}", to_is_message=False)
    report = check_invariants(ev, ds, config=res.config)
    assert not report.passed
    assert fails(report, "cut_is_message").height == 1
    # without the dataset the engine's own to_is_message column is the evidence
    report = check_invariants(ev, config=res.config)
    assert fails(report, "cut_is_message").height == 1


def test_tool_pair_split_and_message_id_mismatch(run):
    ds, res = run
    cp = nth(res.events, "rip40", k=1)
    calls = ds.events(columns=["seq", "kind", "pair_seq"]).filter(
        (pl.col("kind") == int(EventKind.TOOL_CALL)) & (pl.col("pair_seq") > pl.col("seq"))
        & (pl.col("seq") > cp["from_seq"]))
    call = int(calls["seq"][0])
    ev = edit(res.events, lambda r: r["frame_seq"] == cp["frame_seq"] and r["policy"] == "rip40",
              to_seq=call, to_message_id=f"evt_{call}")
    report = check_invariants(ev, ds, config=res.config)
    assert fails(report, "tool_pair_split").height == 1
    assert fails(report, "cut_is_message").height == 1
    ev = edit(res.events, lambda r: r["frame_seq"] == cp["frame_seq"] and r["policy"] == "rip40",
              to_message_id="msg_somewhere_else")
    report = check_invariants(ev, ds, config=res.config)
    assert fails(report, "cut_exists").height == 1
    ev = edit(res.events, lambda r: r["frame_seq"] == cp["frame_seq"] and r["policy"] == "rip40",
              to_seq=10**9)
    assert fails(check_invariants(ev, ds, config=res.config), "cut_exists").height >= 1


def test_non_increasing_frame_seq_fails(run):
    ds, res = run
    first, second = nth(res.events, "llm-summary", k=0), nth(res.events, "llm-summary", k=1)
    ev = edit(res.events, lambda r: r["policy"] == "llm-summary" and r["frame_seq"] == second["frame_seq"],
              frame_seq=first["frame_seq"])
    report = check_invariants(ev, ds, config=res.config)
    assert not report.passed
    assert fails(report, "frame_append_only").height >= 1
    # a frame numbered inside the continuity's own events is not appended either
    ev = edit(res.events, lambda r: r["policy"] == "llm-summary" and r["frame_seq"] == first["frame_seq"],
              frame_seq=first["to_seq"] - 1)
    assert fails(check_invariants(ev, ds, config=res.config), "frame_append_only").height >= 2


def test_backwards_cut_fails_unless_emergency(run):
    ds, res = run
    first, second = nth(res.events, "cc30k", k=0), nth(res.events, "cc30k", k=1)
    ev = edit(res.events, lambda r: r["policy"] == "cc30k" and r["frame_seq"] == second["frame_seq"],
              to_seq=first["to_seq"] - 2, to_message_id=None, to_is_message=None)
    report = check_invariants(ev, config=res.config)
    assert fails(report, "cut_monotonic").height == 1
    # the same move on an emergency compaction (a frame appended at an overflowing request) is a warning
    at = res.events.with_row_index("__i").filter(
        (pl.col("policy") == "cc30k") & (pl.col("frame_seq") == second["frame_seq"]))["__i"][0]
    overflow = res.events.slice(at, 1).with_columns(
        event_type=pl.lit("context.overflow"), **{c: pl.lit(None, res.events.schema[c]) for c in (
            "frame_seq", "from_seq", "to_seq", "summary_artifact_id", "summary_kind", "cut_rule_id")})
    moved = edit(res.events, lambda r: r["policy"] == "cc30k" and r["frame_seq"] == second["frame_seq"],
                 from_seq=first["from_seq"], to_seq=first["to_seq"] - 2, to_is_message=None)
    ev = pl.concat([moved.slice(0, at), overflow, moved.slice(at)])
    report = check_invariants(ev, config=res.config)
    mono = report.findings.filter(pl.col("check") == "cut_monotonic")
    assert mono["severity"].to_list() == ["warn"] and report.passed, report.failures()
    # an equal cut is legal (several checkpoints may share a cut point)
    ev = edit(res.events, lambda r: r["policy"] == "cc30k" and r["frame_seq"] == second["frame_seq"],
              to_seq=first["to_seq"], to_message_id=first["to_message_id"])
    assert check_invariants(ev, ds, config=res.config).findings.filter(pl.col("check") == "cut_monotonic").height == 0


def test_an_overflow_truncation_is_no_checkpoint_frame(run):
    """Issue 15: the overflow's truncation is its own event, not a checkpoint frame; the
    invariants expect no memory.compacted for it and fail a truncation dressed as a frame."""
    ds, res = run
    ev = res.events.filter(pl.col("policy") == "nc30k")
    assert ev.filter(pl.col("event_type") == CP).height == 0  # no-compaction never compacts ...
    cuts = ev.filter(pl.col("event_type") == "context.truncated")
    assert cuts.height > 0  # ... it truncates at its overflows
    assert cuts["frame_seq"].null_count() == cuts.height and cuts["summary_artifact_id"].null_count() == cuts.height
    assert set(cuts["request"]) <= set(ev.filter(pl.col("event_type") == "context.overflow")["request"])
    first = cuts.row(0, named=True)
    dressed = edit(res.events, lambda r: r["event_type"] == "context.truncated" and r["policy"] == "nc30k"
                   and r["request"] == first["request"], frame_seq=10**9)
    assert fails(check_invariants(dressed, config=res.config), "truncation_not_compaction").height == 1
    orphan = res.events.filter(~((pl.col("event_type") == "context.overflow") & (pl.col("policy") == "nc30k")
                                 & (pl.col("request") == first["request"])))
    assert fails(check_invariants(orphan, config=res.config), "truncation_not_compaction").height == 1


def test_coverage_order_fails(run):
    _, res = run
    cp = nth(res.events, "oai-merge", k=2)
    ev = edit(res.events, lambda r: r["policy"] == "oai-merge" and r["frame_seq"] == cp["frame_seq"],
              from_seq=cp["to_seq"] + 1)
    report = check_invariants(ev, config=res.config)
    assert fails(report, "coverage_order").height == 1


def test_duplicate_artifact_id_with_different_coverage_fails(run):
    _, res = run
    first, second = nth(res.events, "llm-summary", k=0), nth(res.events, "llm-summary", k=1)
    ev = edit(res.events, lambda r: r["policy"] == "llm-summary" and r["event_type"] == CP
              and r["frame_seq"] == second["frame_seq"], summary_artifact_id=first["summary_artifact_id"])
    report = check_invariants(ev, config=res.config)
    assert fails(report, "artifact_immutable").height == 1
    # and the second frame's own memory.compacted event now names an output no frame produced
    assert fails(report, "event_per_artifact").height == 1
    # re-referencing an artifact with the *same* coverage is not a violation of immutability
    ev = pl.concat([res.events, res.events.filter((pl.col("policy") == "llm-summary") & (pl.col("event_type") == CP)).head(1)
                    .with_columns(frame_seq=pl.lit(10**6, pl.Int64))], how="vertical")
    assert fails(check_invariants(ev, config=res.config), "artifact_immutable").height == 0


def test_artifact_shared_across_policies_fails(run):
    _, res = run
    a = nth(res.events, "cc30k")
    b = nth(res.events, "rip40")
    ev = edit(res.events, lambda r: r["policy"] == "rip40" and r.get("summary_artifact_id") == b["summary_artifact_id"],
              summary_artifact_id=a["summary_artifact_id"])
    ev = edit(ev, lambda r: r["policy"] == "rip40" and r.get("outputId") == b["summary_artifact_id"],
              outputId=a["summary_artifact_id"])
    assert fails(check_invariants(ev, config=res.config), "artifact_scope").height == 1


def test_source_ids_with_150_sources_fails(run):
    _, res = run
    mc = nth(res.events, "llm-summary", MC)
    ids = [f"evt_{i}" for i in range(150)]
    ev = edit(res.events, lambda r: r["event_type"] == MC and r["outputId"] == mc["outputId"],
              sourceIds=ids, sourceCount=150)
    report = check_invariants(ev, config=res.config)
    assert fails(report, "source_ids_limit").height == 1
    ev = edit(res.events, lambda r: r["event_type"] == MC and r["outputId"] == mc["outputId"],
              sourceIds=["evt_1", "evt_1", "evt_2"], sourceCount=2)
    report = check_invariants(ev, config=res.config)
    assert fails(report, "source_ids_count").height == 2  # too many and duplicated


def test_missing_or_duplicate_memory_compacted_fails(run):
    _, res = run
    mc = nth(res.events, "rip40", MC)
    dropped = res.events.filter(~((pl.col("event_type") == MC) & (pl.col("outputId") == mc["outputId"])))
    assert fails(check_invariants(dropped, config=res.config), "event_per_artifact").height == 1
    doubled = pl.concat([res.events, res.events.filter((pl.col("event_type") == MC)
                                                       & (pl.col("outputId") == mc["outputId"]))])
    assert fails(check_invariants(doubled, config=res.config), "event_per_artifact").height == 1


def test_cut_rule_id_missing_or_unstable_fails(run):
    _, res = run
    cp = nth(res.events, "cc30k", k=1)
    ev = edit(res.events, lambda r: r["policy"] == "cc30k" and r["frame_seq"] == cp["frame_seq"],
              cut_rule_id="tokens_v1(tokens=31000)")
    assert fails(check_invariants(ev, config=res.config), "cut_rule_id").height == 1
    ev = edit(res.events, lambda r: r["policy"] == "cc30k" and r["frame_seq"] == cp["frame_seq"], cut_rule_id=None)
    report = check_invariants(ev, config=res.config)
    assert fails(report, "cut_rule_id").height == 1 and fails(report, "wire_shape").height == 1


@pytest.mark.parametrize(("tags", "severity"), [
    (["compacted-from:"], "fail"),
    (["compacted-from:run with spaces"], "fail"),
    (["compacted-from:run_someone_else"], "fail"),
    ([], "warn"),
    (None, "warn"),
    (["topic:billing"], "warn"),
])
def test_provenance_tag(run, tags, severity):
    _, res = run
    mc = nth(res.events, "openclaw40k", MC)
    ev = edit(res.events, lambda r: r["event_type"] == MC and r["outputId"] == mc["outputId"], tags=tags)
    report = check_invariants(ev, config=res.config)
    found = report.findings.filter(pl.col("check") == "provenance_tag")
    assert found["severity"].to_list() == [severity]
    assert report.passed == (severity == "warn")


def test_run_id_mismatch_is_caught_against_the_given_run_id(run):
    _, res = run
    report = check_invariants(res.events, run_id="run_000000000000", config=res.config)
    n = res.events.filter(pl.col("event_type") == MC).height
    assert fails(report, "provenance_tag").height == n


def test_checks_are_documented():
    import workbench.conformance.invariants as inv

    for name in CHECKS:
        assert f"``{name}``" in inv.__doc__, name


def test_folding_summaries_keep_source_ids_within_source_count(run):
    """A folded summary's sources are the newly covered events plus the previous summary."""
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate

    ds, _ = run
    res = simulate(ds, [get_policy("claude-code", {"trigger.tokens": 6_000}, rename="cc6k")], engine="reference")
    report = check_result(res, ds)
    assert fails(report, "source_ids_count").height == 0
    mc = res.events.filter(pl.col("event_type") == MC)
    assert mc.height >= 2
    later = mc.row(1, named=True)
    assert later["sourceIds"][0] == mc.row(0, named=True)["outputId"]  # the previous summary
    assert later["sourceCount"] == len(later["sourceIds"])


def test_wire_shape_findings_name_the_frame_or_output_and_where(run):
    """A checkpoint frame and a memory.compacted event off their schemas: each finding names
    the event kind, the frame seq or outputId, the schema's complaint, the continuity and the policy."""
    _, res = run
    cp = nth(res.events, "cc30k")
    mc = nth(res.events, "cc30k", MC)
    ev = edit(res.events, lambda r: r["policy"] == "cc30k" and r["frame_seq"] == cp["frame_seq"]
              and r["event_type"] == CP, cut_rule_id=None)
    ev = edit(ev, lambda r: r["policy"] == "cc30k" and r["event_type"] == MC and r["outputId"] == mc["outputId"],
              trigger="sometimes")
    found = fails(check_invariants(ev, config=res.config), "wire_shape").sort("detail")
    assert found.height == 2
    details = found["detail"].to_list()
    assert details[0].startswith(f"{CP} (frame seq {cp['frame_seq']}): ") and "cut_rule_id" in details[0]
    assert details[1].startswith(f"{MC} (outputId {mc['outputId']}): ") and "sometimes" in details[1]
    assert found["continuity_id"].to_list() == [cp["continuity_id"], mc["continuity_id"]]
    assert found["policy"].to_list() == ["cc30k", "cc30k"]


def test_report_counts_and_failures_by_check_and_severity():
    from workbench.conformance.invariants import InvariantReport

    findings = pl.DataFrame({"check": ["wire_shape", "provenance_tag", "wire_shape", "provenance_tag"],
                             "continuity_id": ["c"] * 4, "policy": ["p"] * 4,
                             "severity": ["fail", "warn", "fail", "fail"], "detail": ["a", "b", "c", "d"]})
    report = InvariantReport(findings, False)
    assert report.counts().rows() == [("provenance_tag", "fail", 1), ("provenance_tag", "warn", 1),
                                      ("wire_shape", "fail", 2)]
    assert report.failures()["detail"].to_list() == ["a", "c", "d"]
    empty = InvariantReport(findings.head(0), True).counts()
    assert empty.height == 0 and empty.schema == {"check": pl.String, "severity": pl.String, "n": pl.UInt32}
