"""Acceptance checks of the engine on the real recorded logs (``datasets/bundled``).

(a) ``as-recorded`` places each compaction at the request the log recorded it at. The
    numbers below were found by hand with a throwaway plain-``json`` script over the JSONL
    (requests = distinct ``message.id`` of non-``<synthetic>`` assistant records, numbered
    0, 1, 2... in order of first appearance):

    * ``ae4a77f8-….jsonl``: line 1481 is the ``compact_boundary`` (``trigger: manual``,
      ``preTokens: 142431``); 138 requests precede it (0..137, the last
      ``msg_01KgbUaKnQG26252ASHRHWMJ`` with input 2 + cache read 141,369 + cache write 416
      = 141,787 prompt tokens); the first request after it is **138**,
      ``msg_014XmdRT9b91t65oKLBwWYrv`` (line 1492).
    * ``session-624a4a58.jsonl``: line 158 is the boundary (``trigger: auto``,
      ``preTokens: 155979``); 37 requests precede it (the last,
      ``msg_bdrk_01MRqacrc8ArPVbbnHQggPMx``: 13 + 23,254 + 132,474 = 155,741); the first
      after it is **37**, ``msg_bdrk_01UQj6srqeEpnhPkptp6WVxC`` (line 160).
    * ``4d5611e5-….jsonl``: line 754 is the boundary (``trigger: auto``, ``preTokens:
      170251``); 61 requests precede it (the last, ``msg_01YDBjrSefBazorPPwZ73AgR``: 1 +
      163,346 + 1,484 = 164,831); the first after it is **61**, ``msg_01MCP4jmhxhddhtDDbhCqRq8``
      (line 760).
    * ``fa812bfe-….jsonl``: line 1584 is the boundary (``trigger: auto``, ``preTokens:
      167117``); 126 requests precede it (the last, ``msg_01FMCN4Jp1Ug32BMRJAgq8Z3``: 1 +
      166,610 + 263 = 166,874); the first after it is **126**, ``msg_01FeiYiJqMGMrRenE9aYYYJW``
      (line 1590).

(b) Every preset runs on every recorded log through the reference engine and the kernel
    engine gives identical ledgers and events (``np.array_equal`` on the record matrices).

(c) The summary frame's totals are consistent with the ledger, and every ledger row's
    prompt is input + cached + cache-write.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.continuity.dataset import load_dataset
from workbench.continuity.enums import EventFlag, EventKind
from workbench.engine import enums as E
from workbench.engine.presets import PRESETS, preset_names
from workbench.engine.provider import resolve_provider
from workbench.engine.records import LEDGER_INDEX
from workbench.engine.reference import replay_reference
from workbench.engine.run import prepare_dataset, simulate

AE = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
S624 = "624a4a58-b34c-462d-a70d-13421c8125a8"
# (continuity, trigger, preTokens, recorded request after the boundary, its message id,
#  prompt of the last request before the boundary), all from the JSONL by hand
RECORDED_COMPACTIONS = {
    AE: ("manual", 142_431, 138, "msg_014XmdRT9b91t65oKLBwWYrv", 141_787),
    S624: ("auto", 155_979, 37, "msg_bdrk_01UQj6srqeEpnhPkptp6WVxC", 155_741),
    "4d5611e5-241a-462a-8d15-5122611a9569": ("auto", 170_251, 61, "msg_01MCP4jmhxhddhtDDbhCqRq8", 164_831),
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46": ("auto", 167_117, 126, "msg_01FeiYiJqMGMrRenE9aYYYJW", 166_874),
}
CHECKPOINT = "continuity_compaction_checkpoint_created"
# continuities of the bundle, counted by hand: 19 in the logs of ../shared (Claude Code 5 +
# 2 sub-agents, Codex 2, Gemini 1, SWE-agent 3, mini-swe-agent 1, OpenHands 1, OpenHands SDK
# 3, aider complex-change 1), 92 '# aider chat started at' sessions in the four aider
# history excerpts (12 + 4 + 50 + 26), 4 Roo Code and 2 Cline task directories (one
# continuity per folder of roo-code/ and cline/), 7 of the two spotter sessions added for the
# retention fit (2 + 3 sub-agents, 2 summarizer calls); the replay leaves out the three
# summarizer calls agent-acompact (each its parent's compaction call, issue 28)
N_CONTINUITIES = 19 + 92 + 4 + 2 + 7 - 3
# the Roo Code condensation (roo-code/natural-already-condensed): history[1] is the summary
# (isSummary), history[3] the first assistant message after it, request 0 (no assistant
# message is left before the summary: Roo Code then deleted the condensed ones)
RECORDED_CONDENSATIONS = {"natural-already-condensed": 0}


@pytest.fixture(scope="module")
def recorded(recorded_dir, tmp_path_factory):
    from workbench.sources.importer import import_paths

    out = tmp_path_factory.mktemp("recorded") / "ds"
    import_paths([recorded_dir], out)
    return load_dataset(out)


@pytest.fixture(scope="module")
def inputs(recorded):
    return prepare_dataset(recorded, "cl100k")


@pytest.fixture(scope="module")
def as_recorded(recorded):
    return simulate(recorded, ["as-recorded"], engine="kernel", price_as="claude-sonnet-4-5")


# ---- (a) compaction position -------------------------------------------------------------

@pytest.mark.parametrize("cid", list(RECORDED_COMPACTIONS))
def test_importer_maps_boundary_to_the_following_request(recorded, cid):
    trigger, pre, req, msg_id, _ = RECORDED_COMPACTIONS[cid]
    conts = recorded.continuities()
    c = conts.filter(pl.col("continuity_id") == cid)["continuity"].item()
    ev = recorded.events(columns=["continuity", "seq", "kind", "flags", "request", "message_id",
                                  "compact_trigger", "compact_pre_tokens"]).filter(pl.col("continuity") == c)
    b = ev.filter(pl.col("kind") == EventKind.COMPACTION)
    assert b.height == 1
    assert b["request"].item() == req
    assert b["compact_pre_tokens"].item() == pre
    assert b["compact_trigger"].item() == {"manual": 2, "auto": 1}[trigger]
    first_out = ev.filter((pl.col("request") == req) & ((pl.col("flags") & EventFlag.OUTPUT) != 0)).sort("seq")
    assert first_out["message_id"][0] == msg_id
    assert first_out["seq"][0] > b["seq"].item()


@pytest.mark.parametrize("cid", list(RECORDED_COMPACTIONS))
def test_as_recorded_compacts_at_the_recorded_request(as_recorded, cid):
    _, _, req, _, _ = RECORDED_COMPACTIONS[cid]
    cps = as_recorded.events.filter((pl.col("continuity_id") == cid) & (pl.col("event_type") == CHECKPOINT))
    assert cps.height == 1
    assert cps["source_request"].item() == req
    assert cps["summary_kind"].item() == "recorded_summary_v1"
    led = as_recorded.ledger.filter(pl.col("continuity_id") == cid)
    compacted = led.filter(pl.col("compacted") & (pl.col("call_kind") == "main"))
    assert compacted["source_request"].to_list() == [req]
    # the compaction call belongs to the same request
    assert led.filter(pl.col("call_kind") == "compaction")["source_request"].to_list() == [req]


def test_as_recorded_compacts_nowhere_else(as_recorded):
    cps = as_recorded.events.filter(pl.col("event_type") == CHECKPOINT)
    got = sorted(zip(cps["continuity_id"].to_list(), cps["source_request"].to_list(), strict=True))
    assert got == sorted([(cid, v[2]) for cid, v in RECORDED_COMPACTIONS.items()]
                         + list(RECORDED_CONDENSATIONS.items()))
    assert as_recorded.summary["overflows"].sum() == 0


def test_recorded_prompt_before_the_boundary(recorded):
    """The recorded usage of the last request before each boundary (hand-verified)."""
    conts = recorded.continuities()
    ev = recorded.events(columns=["continuity", "request", "usage_input", "usage_cache_read",
                                  "usage_cache_write"])
    for cid, (_, _, req, _, prompt) in RECORDED_COMPACTIONS.items():
        c = conts.filter(pl.col("continuity_id") == cid)["continuity"].item()
        u = ev.filter((pl.col("continuity") == c) & (pl.col("request") == req - 1) & (pl.col("usage_input") >= 0))
        assert u.height == 1
        assert int(u["usage_input"].item() + u["usage_cache_read"].item() + u["usage_cache_write"].item()) == prompt


# ---- (b) every preset on every recorded log, reference vs kernel ----------------------------

@pytest.fixture(scope="module")
def lowered(inputs):
    jobs = []
    for name in preset_names():
        pol = PRESETS[name]
        for inp in inputs:
            prov = resolve_provider(pol, continuity_model=inp.model, continuity_window=inp.context_window,
                                    price_as="claude-sonnet-4-5")
            cfg, params = pol.lower(prov.window, prov.cache_mode, prov.ttl_ms, prov.granularity)
            jobs.append((name, inp, cfg, params, inp.excluded_mask(pol.compaction.exclude_tools)))
    return jobs


@pytest.fixture(scope="module")
def reference_runs(lowered):
    return {(name, inp.continuity_id): replay_reference(inp, cfg, params, excluded)
            for name, inp, cfg, params, excluded in lowered}


def test_every_preset_runs_on_every_recorded_log(inputs, reference_runs):
    assert len(inputs) == N_CONTINUITIES
    assert len(reference_runs) == len(PRESETS) * len(inputs)
    L = LEDGER_INDEX
    for (name, cid), (ledger, events) in reference_runs.items():
        inp = next(i for i in inputs if i.continuity_id == cid)
        main = ledger[ledger[:, L["call_kind"]] == E.CallKind.MAIN]
        assert main.shape[0] == inp.n_requests, (name, cid)
        assert np.array_equal(main[:, L["request"]], np.arange(inp.n_requests)), (name, cid)
        assert (ledger[:, L["prompt_tokens"]] >= 0).all()
        assert (ledger[:, L["cache_read_tokens"]] <= ledger[:, L["prompt_tokens"]]).all(), (name, cid)
        assert np.array_equal(ledger[:, L["prompt_tokens"]],
                              ledger[:, L["uncached_tokens"]] + ledger[:, L["cache_read_tokens"]]
                              + ledger[:, L["cache_write_tokens"]]), (name, cid)
        if events.shape[0]:
            assert ((events[:, 1] >= 0) & (events[:, 1] < max(inp.n_requests, 1))).all(), (name, cid)


def test_kernel_matches_reference_on_every_recorded_log(lowered, reference_runs):
    from workbench.engine.kernel import replay_kernel

    bad = []
    for name, inp, cfg, params, excluded in lowered:
        ref_l, ref_e = reference_runs[(name, inp.continuity_id)]
        ker_l, ker_e = replay_kernel(inp, cfg, params, excluded)
        if not (np.array_equal(ref_l, ker_l) and np.array_equal(ref_e, ker_e)):
            bad.append((name, inp.continuity_id, ref_l.shape, ker_l.shape, ref_e.shape, ker_e.shape))
    assert not bad, bad


# ---- (c) summary totals --------------------------------------------------------------------

@pytest.fixture(scope="module")
def all_presets(recorded):
    return simulate(recorded, preset_names(), engine="kernel", price_as="claude-sonnet-4-5")


def test_summary_totals_are_consistent(all_presets):
    led, summ = all_presets.ledger, all_presets.summary
    assert summ.height == len(PRESETS) * N_CONTINUITIES
    # every call: prompt = input + cached + cache write
    assert (led["prompt_tokens"] == led["input_tokens"] + led["cached_input_tokens"]
            + led["cache_write_tokens"]).all()
    # every summary row: its totals are the sums of its ledger's calls
    sums = (led.group_by("policy", "continuity_id")
            .agg(pl.len().alias("calls_l"), (pl.col("call_kind") == "main").sum().alias("requests_l"),
                 *(pl.col(c).sum().alias(c + "_l") for c in ("prompt_tokens", "input_tokens",
                                                            "cached_input_tokens", "cache_write_tokens",
                                                            "output_tokens", "cost_usd"))))
    j = summ.join(sums, on=["policy", "continuity_id"], how="left")
    assert j.height == summ.height
    empty = j.filter(pl.col("calls_l").is_null())
    assert (empty["calls"] == 0).all()
    j = j.filter(pl.col("calls_l").is_not_null())
    for c in ("prompt_tokens", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens"):
        assert (j[c] == j[c + "_l"]).all(), c
    assert (j["calls"] == j["calls_l"]).all() and (j["requests"] == j["requests_l"]).all()
    assert np.allclose(j["cost_usd"].to_numpy(), j["cost_usd_l"].to_numpy(), rtol=1e-9, atol=1e-12)
    assert (summ["prompt_tokens"] == summ["input_tokens"] + summ["cached_input_tokens"]
            + summ["cache_write_tokens"]).all()
    hit = summ.filter(pl.col("prompt_tokens") > 0)
    assert np.allclose(hit["cache_hit_rate"].to_numpy(),
                       (hit["cached_input_tokens"] / hit["prompt_tokens"]).to_numpy())
