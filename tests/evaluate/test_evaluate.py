"""Text-level evaluations on a generated continuity: context tracker, SR-1, leakage, retention."""

from __future__ import annotations

import dataclasses
import importlib.util

import polars as pl
import pytest
from scaled_presets import on_window

from workbench.audits import redaction_audit
from workbench.engine.presets import PRESETS, get_policy
from workbench.engine.run import simulate
from workbench.evaluate.context import ContextTracker
from workbench.evaluate.pipeline import evaluate_run
from workbench.rundir.read import load_run
from workbench.synth.generate import GeneratorConfig, generate_dataset

WINDOW = {"provider.context_window": 25_000}
ENGINE = "kernel" if importlib.util.find_spec("workbench.engine.kernel") else "reference"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return generate_dataset(GeneratorConfig(profile="coding", events=1500, seed=4, secrets=40, facts=12),
                            tmp_path_factory.mktemp("ev") / "ds")


@pytest.fixture(scope="module")
def all_presets_run(dataset):
    return simulate(dataset, [on_window(PRESETS[n], WINDOW["provider.context_window"]) for n in PRESETS],
                    engine=ENGINE)


def _tracked_as_the_ledger(res, name, policy):
    """Advance a tracker of ``policy`` request by request, asserting its context is the
    ledger's at each main call; yields the tracker at each."""
    inp = next(iter(res.inputs.values()))
    led = res.ledger.filter((pl.col("policy") == name) & (pl.col("call_kind") == "main"))
    tracker = ContextTracker(inp, policy, res.events, record=res.prompt_record(name, inp.continuity_id))
    for r, expected in zip(led["request"].to_list(), led["context_after"].to_list(), strict=True):
        tracker.advance(r)
        assert tracker.tokens(r) == expected, (name, r)
        yield tracker


def test_context_tracker_rebuilds_the_ledger_context_for_every_preset(all_presets_run):
    from workbench.evaluate.texts import policies_of

    for name, policy in policies_of(all_presets_run).items():
        for _ in _tracked_as_the_ledger(all_presets_run, name, policy):
            pass


def test_the_tracker_run_has_two_layer_rebuilds(all_presets_run):
    """The run above exercises the tracker on holon-openai's rebuilds from its local checkpoint."""
    ev = all_presets_run.events.filter(pl.col("policy") == "holon-openai")
    assert ev.filter(pl.col("event_type") == "provider_window.rebuilt").height > 0


def test_every_local_checkpoint_gets_a_readable_text_and_no_provider_item_does(all_presets_run, dataset):
    """holon-openai's readable memory is its local checkpoints: each gets a summary text (the
    leakage and retention evaluations read it), its provider items only an opaque row."""
    from workbench.evaluate.texts import materialize_texts

    res = all_presets_run
    one = dataclasses.replace(res, events=res.events.filter(pl.col("policy") == "holon-openai"),
                              config={**res.config, "policies": {"holon-openai": res.config["policies"]["holon-openai"]}})
    texts = materialize_texts(one, dataset)
    ev = one.events
    local = ev.filter(pl.col("event_type") == "local.checkpoint")["summary_artifact_id"].to_list()
    opaque = ev.filter(pl.col("event_type") == "provider.compacted")["compaction_id"].to_list()
    summaries = texts.filter(pl.col("kind") == "summary")
    assert local and sorted(summaries["artifact_id"].to_list()) == sorted(local)
    assert summaries["text"].str.len_chars().min() > 0
    assert sorted(texts.filter(pl.col("kind") == "opaque")["artifact_id"].to_list()) == sorted(opaque)


def test_context_tracker_follows_recent_messages_v1(dataset):
    """Under ``recent_messages_v1`` the tracker shows no summary item (folded, accumulated or
    opaque), and its context is the ledger's; the same compactions with summaries shown
    give larger contexts."""
    from workbench.evaluate.texts import policies_of

    names = ["llm-summary", "openai-responses-compact", "rip-adr0011"]
    variants = [on_window(get_policy(n, {"compile.strategy": s}, rename=f"{n}/{s}"), WINDOW["provider.context_window"])
                for n in names for s in ("recent_messages_v1", "summaries_recent_messages_v1")]
    res = simulate(dataset, variants, engine=ENGINE)

    def contexts(name):
        return res.ledger.filter((pl.col("policy") == name) & (pl.col("call_kind") == "main"))["context_after"]

    bigger = set()
    for name, policy in policies_of(res).items():
        for tracker in _tracked_as_the_ledger(res, name, policy):
            if name.endswith("/recent_messages_v1"):
                assert tracker.shown_segments == []
        summarized = name.replace("/recent", "/summaries_recent")
        if name.endswith("/recent_messages_v1") and (contexts(summarized) > contexts(name)).any():
            bigger.add(name.split("/")[0])
    assert bigger == set(names)  # every one of them compacted on this continuity


@pytest.mark.parametrize("which", ["presets", "bounded-window"])
def test_shows_is_membership_of_raw_rows(all_presets_run, dataset, which):
    """``shows(i, r)`` (binary searches) is ``i in raw_rows(r)`` (the list), every preset and
    a window of the last 12 messages (no preset bounds it below the tail's size)."""
    res = all_presets_run if which == "presets" else simulate(dataset, [get_policy(
        "rip-adr0011", {**WINDOW, "compile.recent_messages_limit": 12}, rename="last-12")], engine=ENGINE)
    inp = next(iter(res.inputs.values()))
    from workbench.evaluate.texts import policies_of

    for name, policy in policies_of(res).items():
        tracker = ContextTracker(inp, policy, res.events, record=res.prompt_record(name, inp.continuity_id))
        probes = sorted(set(range(0, inp.n_requests, 29)) | {r for r in tracker.action_requests if r < inp.n_requests})
        for r in probes:
            tracker.advance(r)
            shown = set(tracker.raw_rows(r))
            # every shown row, its neighbours (the edges of head, tail, window) and a sample
            rows = {j for i in shown for j in (i - 1, i, i + 1) if 0 <= j < inp.n} | set(range(0, inp.n, 11))
            assert {i for i in rows if tracker.shows(i, r)} == shown, (name, r)


@pytest.fixture(scope="module")
def sr1_pair(dataset, tmp_path_factory):
    leaky = {"p_copy_secret": 0.9, "p_partial_secret": 0.05, "p_retain_fact": 0.9}
    on = get_policy("llm-summary", rename="summary-sr1-on")
    off = get_policy("llm-summary", {"redaction.sr1_carry_forward": False}, rename="summary-sr1-off")
    res = simulate(dataset, [on, off], engine=ENGINE)
    out = tmp_path_factory.mktemp("run")
    res.write(out)
    result, ds = load_run(out)
    audit = redaction_audit(result, ds, summarizer_options=leaky, baseline=True)
    audit.write(out)
    return audit.details["evaluation"], out


def test_sr1_off_leaks_what_sr1_on_does_not(sr1_pair):
    ev, _ = sr1_pair
    h = ev["report"]["policies"]
    assert h["summary-sr1-off"]["leaks"] > 0
    # SR-1 on removes most leaks; what survives are prefix-less fragments of partial copies
    # (see the harness's documented limits), reported rather than hidden
    assert h["summary-sr1-on"]["leaks"] < h["summary-sr1-off"]["leaks"] / 2
    leaks = ev["leakage"]
    summ = leaks.filter(pl.col("channel") == "summary")
    # the same summarizer output leaked before redaction under both policies
    assert summ.filter(pl.col("policy") == "summary-sr1-on")["leaked_unredacted"].sum() > 0


def test_harness_beats_detect_secrets_on_the_same_summaries(sr1_pair):
    ev, _ = sr1_pair
    summ = ev["leakage"].filter((pl.col("channel") == "summary") & (pl.col("policy") == "summary-sr1-on"))
    assert summ["leaked_baseline"].sum() > summ["leaked"].sum()


def test_evaluation_files_are_written_without_raw_text(sr1_pair):
    _, out = sr1_pair
    for f in ("texts.parquet", "leakage.parquet", "over_redaction.parquet", "retention.parquet", "evaluation.json"):
        assert (out / f).is_file()
    assert "text_raw" not in pl.read_parquet(out / "texts.parquet").columns


def test_retention_statuses_and_distances(sr1_pair):
    ev, _ = sr1_pair
    rt = ev["retention"]
    assert set(rt["status"].unique().to_list()) <= {"raw", "summary", "memory", "lost"}
    assert rt.height > 0 and (rt["distance"] > 0).all()
    # right after planting a fact is still raw in the context
    first = rt.filter(pl.col("distance") == 1)
    assert (first["status"] == "raw").mean() > 0.9
    # summaries carry some facts past the cut
    assert (rt["status"] == "summary").any()


def test_flush_writes_memory_that_keeps_facts(flush_run):
    ev = flush_run
    assert (ev["texts"]["kind"] == "memory").any()
    assert (ev["retention"]["status"] == "memory").any() or (ev["retention"]["status"] == "summary").any()


@pytest.fixture(scope="module")
def flush_run(dataset):
    res = simulate(dataset, [get_policy("openclaw-flush", {"provider.context_window": 30_000})], engine=ENGINE)
    return evaluate_run(res, dataset)


def test_without_the_baseline_its_columns_are_not_measured(flush_run, sr1_pair):
    ev = flush_run  # baseline off by default
    assert ev["leakage"]["leaked_baseline"].null_count() == ev["leakage"].height > 0
    assert ev["leakage_summary"]["leaks_detect_secrets"].null_count() == ev["leakage_summary"].height
    assert ev["over_redaction"]["redacted_by_detect_secrets"].null_count() == ev["over_redaction"].height
    assert ev["report"]["over_redaction"]["detect_secrets"] is None
    on, _ = sr1_pair  # asked for: measured on the derived texts
    derived = on["leakage"].filter(pl.col("channel") != "context")
    assert derived["leaked_baseline"].null_count() == 0
    assert on["leakage_summary"].filter(pl.col("channel") != "context")["leaks_detect_secrets"].null_count() == 0
