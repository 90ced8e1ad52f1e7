"""RFC 0012 conformance scenarios against simulated policies."""

from __future__ import annotations

import re

import polars as pl
import pytest
from test_conf_invariants import simulated_run

from workbench.conformance import scenarios as SC
from workbench.conformance import sr1 as SR1
from workbench.conformance.capability import host_caps_for_policy

MC = "memory.compacted"
COMPACTING = ("cc30k", "llm-summary", "rip40", "oai-merge", "openclaw40k")
NOT_COMPACTING = ("nc30k", "ctu20k", "trunc-any")


@pytest.fixture(scope="module")
def run():
    return simulated_run()


def policy_events(res, name):
    return res.events.filter(pl.col("policy") == name)


# ---- a stub redactor (the harness may not be importable) ------------------------------------

_RULES = [
    (re.compile(r"\[BYOK:(?!<REDACTED:[a-z_]+>\])[^\]\n]*\]?"), "<REDACTED:marker_leak>"),
    (re.compile(r"(<REDACTED:[a-z_]+>)[A-Za-z0-9+/=_-]{4,}"), r"\1"),
    (re.compile(r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), "<REDACTED:github_classic>"),
    (re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])"), "<REDACTED:aws_access_key_id>"),
    (re.compile(r"sk-(?:proj|svcacct|admin)-[\w-]+T3BlbkFJ[\w-]+"), "<REDACTED:openai_project>"),
    (re.compile(r"sk-ant-(?:api03|admin01)-[\w-]{93}AA"), "<REDACTED:anthropic_api>"),
    (re.compile(r"(?<![A-Za-z0-9/+])(?=[A-Za-z0-9/+]*[A-Z])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[0-9])"
                r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"), "<REDACTED:aws_secret_key>"),
]


def stub_redact(text: str) -> str:
    for rx, repl in _RULES:
        text = rx.sub(repl, text)
    return text


# ---- (a) event emitted + outputId readable ----------------------------------------------

@pytest.mark.parametrize("policy", COMPACTING)
def test_event_emitted_passes_on_real_output(run, policy):
    _, res = run
    r = SC.scenario_event_emitted(res.events, policy, config=res.config)
    assert r.status == SC.PASS, r.details
    assert r.details["artifacts"] == r.details["readable"] > 0
    assert r.policy == policy and r.warnings == []


@pytest.mark.parametrize("policy", NOT_COMPACTING)
def test_scenarios_skip_when_compaction_is_not_advertised(run, policy):
    _, res = run
    for r in (SC.scenario_event_emitted(res.events, policy, config=res.config),
              SC.scenario_sr1_carry_forward(policy, config=res.config, redact=stub_redact),
              SC.scenario_provenance_tag(res.events, policy, config=res.config)):
        assert r.status == SC.SKIP and r.details["reason"] == "capability", r


def test_vacuous_run_skips(run):
    _, res = run
    r = SC.scenario_event_emitted(res.events.clear(), "claude-code")
    assert r.status == SC.SKIP and r.details["reason"] == "vacuous"
    assert SC.scenario_provenance_tag(res.events.clear(), "claude-code").details["reason"] == "vacuous"


def test_unreadable_output_fails(run):
    _, res = run
    ev = policy_events(res, "llm-summary")
    store = SC.modelled_artifact_store(ev)
    missing = next(iter(store))
    partial = {k: v for k, v in store.items() if k != missing}
    r = SC.scenario_event_emitted(ev, "llm-summary", artifacts=partial, config=res.config)
    assert r.status == SC.FAIL and r.details["n_problems"] == 1
    assert "not readable" in r.details["problems"][0] and missing in r.details["problems"][0]

    def read_artifact(aid):
        if aid == missing:
            raise KeyError(aid)
        return store[aid]

    assert SC.scenario_event_emitted(ev, "llm-summary", artifacts=read_artifact, config=res.config).status == SC.FAIL
    assert SC.scenario_event_emitted(ev, "llm-summary", artifacts=store.get, config=res.config).status == SC.PASS


def test_bad_event_or_artifact_fails(run):
    _, res = run
    ev = policy_events(res, "cc30k")
    first = ev.filter(pl.col("event_type") == MC).row(0, named=True)["outputId"]
    # the event is emitted twice
    doubled = pl.concat([ev, ev.filter((pl.col("event_type") == MC) & (pl.col("outputId") == first))])
    r = SC.scenario_event_emitted(doubled, "cc30k", config=res.config)
    assert r.status == SC.FAIL and any("2 memory.compacted events" in p for p in r.details["problems"])
    # an invalid shape (byteSize missing)
    broken = ev.with_columns(byteSize=pl.when(pl.col("outputId") == first).then(None).otherwise(pl.col("byteSize")))
    r = SC.scenario_event_emitted(broken, "cc30k", config=res.config)
    assert r.status == SC.FAIL and any("$.byteSize: None" in p for p in r.details["problems"])
    # an event nobody produced
    orphan = pl.concat([ev, ev.filter(pl.col("event_type") == MC).head(1).with_columns(outputId=pl.lit("art_ghost"))])
    r = SC.scenario_event_emitted(orphan, "cc30k", config=res.config)
    assert r.status == SC.FAIL and any("art_ghost" in p for p in r.details["problems"])
    # the stored artifact covers something else than its frame says
    store = SC.modelled_artifact_store(ev)
    store[first] = {**store[first], "coverage": {**store[first]["coverage"], "to_seq": 1}}
    r = SC.scenario_event_emitted(ev, "cc30k", artifacts=store, config=res.config)
    assert r.status == SC.FAIL and any("coverage differs" in p for p in r.details["problems"])
    # an artifact that is not a rip.compaction_summary.v1 document
    store = SC.modelled_artifact_store(ev)
    store[first] = {"text": "a summary"}
    assert SC.scenario_event_emitted(ev, "cc30k", artifacts=store, config=res.config).status == SC.FAIL


def test_trigger_must_match_the_advertised_capability(run):
    _, res = run
    caps = host_caps_for_policy("claude-code")
    caps["memory"]["compaction"]["trigger"] = "client-requested"
    r = SC.scenario_event_emitted(policy_events(res, "cc30k"), "cc30k", host_caps=caps)
    assert r.status == SC.FAIL and "does not match" in r.details["problems"][0]
    caps["memory"]["compaction"]["trigger"] = "both"
    assert SC.scenario_event_emitted(policy_events(res, "cc30k"), "cc30k", host_caps=caps).status == SC.PASS


def test_modelled_store_documents_validate(run):
    from workbench.conformance.schemas import validate
    from workbench.rundir.artifacts import artifact_id

    _, res = run
    store = SC.modelled_artifact_store(res.events)
    produced = res.events.filter(pl.col("summary_artifact_id").is_not_null()
                                 & pl.col("summary_kind").ne_missing("provider_opaque_v1")
                                 & pl.col("event_type").is_in(["continuity_compaction_checkpoint_created",
                                                               "summary.merged", "local.checkpoint"]))
    assert set(store) == set(produced["summary_artifact_id"])
    for art, doc in store.items():
        assert validate("rip.compaction_summary.v1", doc) == []
        assert artifact_id(doc) == art  # an artifact's id is the hash of its document
        assert "tags" not in doc  # the run's tag is on memory.compacted: a document names no run
    merged = res.events.filter(pl.col("event_type") == "summary.merged")["summary_artifact_id"].to_list()
    for art in merged:  # a merge covers every segment before it
        assert store[art]["coverage"]["from_seq"] <= store[art]["coverage"]["to_seq"]


# ---- (c) provenance tag ------------------------------------------------------------------

def test_provenance_tag_pass_warn_fail(run):
    _, res = run
    ev = policy_events(res, "rip40")
    r = SC.scenario_provenance_tag(ev, "rip40", run_id=res.run_id, config=res.config)
    assert r.status == SC.PASS and r.details["ok"] == r.details["outputs"] > 0 and not r.warnings
    untagged = ev.with_columns(tags=pl.lit(None, pl.List(pl.String)))
    r = SC.scenario_provenance_tag(untagged, "rip40", config=res.config)
    assert r.status == SC.PASS and r.details["absent"] == r.details["outputs"] and r.warnings
    bad = ev.with_columns(tags=pl.when(pl.col("event_type") == MC).then(pl.lit(["compacted-from:"]))
                          .otherwise(pl.col("tags")))
    r = SC.scenario_provenance_tag(bad, "rip40", config=res.config)
    assert r.status == SC.FAIL and r.details["malformed"] == r.details["outputs"]
    assert SC.scenario_provenance_tag(ev, "rip40", run_id="run_other", config=res.config).status == SC.FAIL
    # the stored entry's tags win over the event row's
    store = SC.modelled_artifact_store(ev)
    for doc in store.values():
        doc["tags"] = ["compacted-from:\t"]
    assert SC.scenario_provenance_tag(ev, "rip40", artifacts=store, config=res.config).status == SC.FAIL


# ---- (b) SR-1 carry-forward ------------------------------------------------------------------

def test_planted_sources_are_sr1_clean_and_adversarial():
    src = SR1.planted_sources(0)
    assert all(stub_redact(t) == t for t in src.texts)
    assert src.markers and src.near_secrets
    assert SR1.planted_sources(0) == src and SR1.planted_sources(1) != src
    summarize = SR1.AdversarialSummarizer(0)
    out = summarize(src.texts)
    assert summarize(src.texts) == out  # deterministic
    assert summarize.injected and summarize.completed and "[BYOK:sk-ant-" in out


def test_sr1_on_passes_and_sr1_off_leaks():
    r = SC.scenario_sr1_carry_forward("claude-code", redact=stub_redact)
    assert r.status == SC.PASS, r.details
    on, off = r.details["sr1_on"], r.details["sr1_off"]
    assert not on["leaks"] and on["leaked_secrets"] == on["byok_form_leaks"] == on["redactor_findings"] == 0
    assert r.details["sr1_off_leaks"] and off["leaked_secrets"] >= 5 and off["byok_form_leaks"] == 1
    assert off["redactor_findings"] > 0 and r.warnings == []


def test_policy_without_sr1_carry_forward_fails():
    from workbench.engine.presets import get_policy

    pol = get_policy("claude-code", {"redaction.sr1_carry_forward": False}, rename="cc-no-sr1")
    r = SC.scenario_sr1_carry_forward(pol, redact=stub_redact)
    assert r.status == SC.FAIL and r.details["policy_sr1_carry_forward"] is False
    assert not r.details["sr1_on"]["leaks"]  # the harness would have caught it


def test_an_inadequate_redactor_fails_even_with_sr1_on():
    r = SC.scenario_sr1_carry_forward("claude-code", redact=lambda t: t)
    assert r.status == SC.FAIL and r.details["sr1_on"]["leaks"]
    # a redactor that knows neither the BYOK form nor Anthropic keys lets the form-leak through
    weak = [(rx, repl) for rx, repl in _RULES if "BYOK" not in rx.pattern and "sk-ant" not in rx.pattern]

    def weak_redact(text):
        for rx, repl in weak:
            text = rx.sub(repl, text)
        return text

    r = SC.scenario_sr1_carry_forward("claude-code", redact=weak_redact)
    assert r.status == SC.FAIL and r.details["sr1_on"]["byok_form_leaks"] == 1
    # ... while a BYOK wrapper around a redacted key is no leak
    assert SR1.byok_form_leaks(stub_redact("[BYOK:sk-ant-api03-" + "a" * 93 + "AA]")) == []


def test_a_benign_summarizer_is_a_vacuous_measurement():
    r = SC.scenario_sr1_carry_forward(None, redact=stub_redact, summarize=lambda texts: "## Summary\n- ok\n")
    assert r.status == SC.PASS and not r.details["sr1_off_leaks"]
    assert any("vacuous" in w for w in r.warnings)
    # caller-supplied secrets are looked for as well
    r = SC.scenario_sr1_carry_forward(None, redact=stub_redact, secrets=["hunter2-correct-horse-battery"],
                                      summarize=lambda texts: "the password is hunter2-correct-horse-battery")
    assert r.status == SC.FAIL and r.details["sr1_on"]["leaked_secrets"] == 1


def test_sr1_with_the_real_harness():
    redact = SR1.harness_redactor()
    src = SR1.planted_sources(0)
    # post-redaction markers are never re-flagged (near-secrets may or may not be: the
    # scenario only requires that nothing secret survives)
    marked = [t for t in src.texts if "<REDACTED:" in t]
    assert marked and all(redact(t) == t for t in marked)
    for seed in range(3):
        r = SC.scenario_sr1_carry_forward("openclaw-flush", seed=seed)
        assert r.status == SC.PASS, r.details
        assert r.details["sr1_off_leaks"]


def test_compaction_output_accepts_result_objects():
    class Result:
        def __init__(self, text):
            self.text = text

    out = SR1.compaction_output(["a"], lambda t: "x [BYOK:sk-proj-1]", lambda t: Result(stub_redact(t)))
    assert out == "x <REDACTED:marker_leak>"
    assert SR1.byok_form_leaks("[BYOK:<REDACTED:openai_project>] and [BYOK:raw]") == ["[BYOK:raw]"]


# ---- all scenarios over the run ---------------------------------------------------------------

def test_run_scenarios_report(run):
    _, res = run
    results = SC.run_scenarios(res, redact=stub_redact)
    frame = SC.scenarios_frame(results)
    assert frame.columns == ["policy", "scenario", "status", "n_warnings", "detail"]
    assert frame.height == 3 * len(res.config["policies"])
    assert (frame["status"] != SC.FAIL).all(), frame.filter(pl.col("status") == SC.FAIL)
    status = {(r.policy, r.name): r.status for r in results}
    for p in COMPACTING:
        assert all(status[(p, s)] == SC.PASS for s in SC.SCENARIOS), p
    for p in NOT_COMPACTING:
        assert all(status[(p, s)] == SC.SKIP for s in SC.SCENARIOS), p
    # one capability document for every policy overrides the derived ones
    caps = {"memory": {"supported": True, "compaction": {"supported": False}}}
    assert {r.status for r in SC.run_scenarios(res, ["cc30k"], host_caps=caps, redact=stub_redact)} == {SC.SKIP}
