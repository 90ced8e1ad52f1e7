"""The provider cache-miss model (workbench.engine.cache_miss): the compiled pass equals its
plain-Python twin, a hand-computed expected cost, the fit's counts on a hand-built log, and
draws seeded by position."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.cache_miss import (
    TOOL_LOOP,
    USER_TURN,
    MissProfile,
    fit_miss_profiles,
    miss_band,
    observations,
    request_classes,
    resolve,
)
from workbench.engine.cache_miss_nb import miss_pass_nb
from workbench.engine.cache_miss_reference import miss_pass_reference
from workbench.engine.policy import Policy

rows_st = st.lists(st.tuples(st.floats(0, 5), st.floats(0, 5), st.floats(0, 5), st.floats(0, 1),
                             st.floats(0, 1), st.integers(0, 10_000)), min_size=0, max_size=30)


@given(rows=rows_st, seed=st.integers(0, 2**40), n_draws=st.integers(0, 40))
@settings(max_examples=120, deadline=None, derandomize=True, database=None)
def test_the_compiled_pass_equals_its_twin(rows, seed, n_draws):
    cols = [np.array([r[k] for r in rows], np.float64) for k in range(5)]
    pos = np.array([r[5] for r in rows], np.int64)
    exp_nb, draws_nb = miss_pass_nb(*cols, pos, seed, n_draws)
    exp_py, draws_py = miss_pass_reference(*cols, pos, seed, n_draws)
    assert exp_nb == exp_py
    assert draws_nb.tolist() == draws_py


def _two_requests(recorded=None):
    """Two requests, 100 then 100 + 50 visible tokens behind a 1,000-token prefix; the second
    follows a user message (a user turn)."""
    from workbench.engine.prepare import prepare_continuity

    frame = pl.DataFrame({
        "seq": [0, 1, 2, 3], "kind": [1, 1, 1, 1], "role": [2, 3, 2, 3], "flags": [0, 2, 0, 2],
        "request": [0, 0, 1, 1], "ts_ms": [0, 1000, 2000, 3000], "pair_seq": [-1] * 4,
        "name": [None] * 4, "message_id": ["a", "b", "c", "d"], "tokens_cl100k": [100, 20, 30, 5],
    }, schema_overrides={"name": pl.String})
    inp = replace(prepare_continuity(frame, continuity=0, continuity_id="t", tokenizer="cl100k",
                                     model="claude-sonnet-4-5", provider="anthropic"), prefix_tokens=1_000)
    return inp if recorded is None else replace(inp, harness="claude_code", harness_version="2.0.76", **recorded)


@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_expected_cost_by_hand(engine):
    """claude-sonnet-4-5: read $0.30/M, write $3.75/M. Request 1 (prompt 1,150) reads 1,100 and
    writes 50; a miss keeping the 1,000-token prefix reads 1,000 and writes 150 (+100 x 3.45e-6
    $), a cold one writes all 1,150 (+1,100 x 3.45e-6 $). With p = 0.5 for a user turn and a
    kept prefix half the time: expected - hits = 0.25 x (3.45e-4 + 3.795e-3) = 1.035e-3 $."""
    from workbench.engine.provider import resolve_provider
    from workbench.engine.records import LEDGER
    from workbench.engine.run import replay

    inp = _two_requests()
    pol = Policy("raw")
    prov = resolve_provider(pol, continuity_model="claude-sonnet-4-5", continuity_window=200_000)
    led, _ = replay(inp, pol, prov, engine)
    main = led[led[:, LEDGER.call_kind] == 0]
    assert main[:, LEDGER.cache_read_tokens].tolist() == [0, 1_100]
    assert request_classes(inp).tolist() == [USER_TURN, USER_TURN]
    prof = MissProfile((0.0, 0.5), 0.5, "hand", 1, 1, 1)
    band = miss_band(main, inp, prov, prof, engine=engine)
    assert band.expected_usd - band.hits_usd == pytest.approx(1.035e-3, rel=1e-9)
    assert band.cache_read_tokens == pytest.approx(1_100 - 0.25 * 100 - 0.25 * 1_100)
    assert band.eligible == 1  # the first call read nothing: it cannot miss
    assert band.p10_usd <= band.expected_usd <= band.p90_usd
    none = miss_band(main, inp, prov, None, engine=engine)
    assert none.expected_usd == none.hits_usd == none.p10_usd == none.p90_usd


def test_draws_are_seeded_by_position_and_continuity():
    cols = [np.full(5, 1.0), np.full(5, 2.0), np.full(5, 3.0), np.full(5, 0.5), np.full(5, 0.5)]
    pos = np.arange(5, dtype=np.int64)
    a = miss_pass_nb(*cols, pos, 11, 50)[1]
    assert a.tolist() == miss_pass_nb(*cols, pos, 11, 50)[1].tolist()
    assert a.tolist() != miss_pass_nb(*cols, pos, 12, 50)[1].tolist()
    # a row's outcome depends on its position, not on where it sits in the array
    one = miss_pass_nb(*(c[3:4] for c in cols), pos[3:4], 11, 50)[1]
    other = miss_pass_nb(*(c[[1, 3]] for c in cols), pos[[1, 3]], 11, 50)[1] - \
        miss_pass_nb(*(c[1:2] for c in cols), pos[1:2], 11, 50)[1]
    assert one.tolist() == pytest.approx(other.tolist())


def test_misses_are_counted_from_the_recorded_reads():
    """Request 1 came 1 s after request 0 (within the TTL) and read 0 of a 1,120-token prompt:
    a miss of a user turn that kept nothing; the same read 300 s + later is not observed."""
    rec = {"recorded_prompt": np.array([1_120, 1_155]), "recorded_output": np.array([20, 5]),
           "recorded_cache": np.array([[0, 0], [1_120, 1_155]])}
    inp = _two_requests(rec)
    obs = observations(inp, 300.0)
    assert obs["observed"].tolist() == [False, True]
    assert obs["miss"].tolist() == [False, True]
    assert obs["kept_prefix"].tolist() == [False, False]
    assert observations(inp, 1.0)["observed"].tolist() == [False, False]  # 2 s later: past a 1-s TTL
    hit = replace(inp, recorded_cache=np.array([[0, 1_000], [1_120, 155]]))
    assert observations(hit, 300.0)["miss"].tolist() == [False, False]  # 1,000 of 1,120: read back
    doc = fit_miss_profiles([inp])
    assert doc["logs"]["t"] == {"harness": "claude_code", "release_line": "2.0", "provider": "anthropic",
                                "requests": [0, 1], "misses": [0, 1], "kept_prefix": 0}
    # leave-one-log-out: the only log left out, nothing to fit
    assert resolve(doc, "claude_code", "2.0.1", "anthropic", exclude="t") is None
    prof = resolve(doc, "claude_code", "2.0.1", "anthropic")
    # provider: 1 miss in 1 request, shrunk toward "no miss" with 10 (1 / 11), each class
    # toward that with 20; the harness and release line hold the same log: not counted again
    assert prof.p_miss[USER_TURN] == pytest.approx((1 + 20 / 11) / 21)
    assert prof.p_miss[TOOL_LOOP] == pytest.approx(1 / 11)  # never seen: the pooled rate
    assert prof.source == "claude_code@2.0/anthropic"
    # a second log of another release line: the provider pools both (1 in 10: 1 / 20; user
    # turns (1 + 20 x 0.05) / (10 + 20) = 1 / 15), the 2.0 line has its one log, shrunk toward
    # that with 20: (1 + 20 / 15) / (1 + 20)
    doc["logs"]["u"] = {**doc["logs"]["t"], "release_line": "2.1", "requests": [0, 9], "misses": [0, 0]}
    prof = resolve(doc, "claude_code", "2.0.1", "anthropic")
    assert prof.p_miss[USER_TURN] == pytest.approx((1 + 20 / 15) / 21)
    assert resolve(doc, "claude_code", "2.1.3", "anthropic").p_miss[USER_TURN] == pytest.approx((0 + 20 / 15) / 29)


def test_no_miss_prior_is_counted_once_not_per_class():
    """9eda1058's counts (Bedrock, the only other Bedrock log when 624a4a58 is measured):
    2 of 2 tool-loop and 1 of 2 user-turn requests missed. "No miss" weighs 10 requests over
    the provider's pooled rate (3 / 14), not 10 per class (which gave 2 / 12 and 1 / 12:
    less than the pooled rate on both classes); each class is shrunk toward 3 / 14 with 20."""
    doc = {"logs": {"b": {"harness": "claude_code", "release_line": "2.1", "provider": "anthropic-bedrock",
                          "requests": [2, 2], "misses": [2, 1], "kept_prefix": 0}}}
    prof = resolve(doc, "claude_code", "2.0.76", "anthropic-bedrock")
    pooled = 3 / 14
    assert prof.p_miss[TOOL_LOOP] == pytest.approx((2 + 20 * pooled) / 22)
    assert prof.p_miss[USER_TURN] == pytest.approx((1 + 20 * pooled) / 22)
    # the expected misses over the observed requests are at least the pooled rate's
    assert sum(n * p for n, p in zip((2, 2), prof.p_miss, strict=True)) >= 4 * pooled


def test_bedrock_is_its_own_provider():
    from workbench.engine.cache_miss import serving_provider

    inp = _two_requests()
    assert serving_provider(inp) == "anthropic"
    ids = pl.Series(["a", "msg_bdrk_01", "c", "msg_bdrk_02"])
    assert serving_provider(replace(inp, message_id=ids)) == "anthropic-bedrock"


def test_calibrate_refits_the_packaged_cache_miss_profiles(imported_bundle, tmp_path):
    """`workbench calibrate --cache-miss-out` writes the profile the package ships (fitted on
    the bundled logs), prints each log's leave-one-log-out chances, and never replaces a file
    it did not write."""
    import json

    from typer.testing import CliRunner

    from workbench.cli import app
    from workbench.engine.cache_miss import load_miss_profiles

    out = tmp_path / "misses.json"
    res = CliRunner().invoke(app, ["calibrate", str(imported_bundle.path), "--out", str(tmp_path / "p.json"),
                                   "--cache-miss-out", str(out), "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert "loo_p_tool_loop" in res.output and "claude_code@2.0/anthropic-bedrock" in res.output
    assert load_miss_profiles(out)["logs"] == load_miss_profiles()["logs"]
    auto = load_miss_profiles(out)["logs"]["624a4a58-b34c-462d-a70d-13421c8125a8"]
    assert (auto["requests"], auto["misses"], auto["kept_prefix"]) == ([40, 12], [8, 4], 4)  # hand count
    mine = tmp_path / "mine.json"
    mine.write_text('{"mine": true}')
    res = CliRunner().invoke(app, ["calibrate", str(imported_bundle.path), "--out", str(tmp_path / "p.json"),
                                   "--cache-miss-out", str(mine)])
    assert res.exit_code == 2 and "refusing to replace" in res.output
    assert json.loads(mine.read_text()) == {"mine": True}


def test_a_run_on_an_imported_log_carries_its_cost_band_and_a_generated_one_none(recorded_dir, tmp_path):
    """`simulate` prices an imported log's replay under its provider's misses (config.json
    ``cost_bands``; the packaged profile); a generated continuity has no harness traffic: none."""
    from workbench.engine.run import simulate
    from workbench.sources.importer import import_paths
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    ds = import_paths([recorded_dir / "claude-code" / "session-9eda1058.jsonl"], tmp_path / "ds")
    for engine in ("kernel", "reference"):
        res = simulate(ds, ["claude-code"], engine=engine)
        (cid, band), = res.config["policies"]["claude-code"]["cost_bands"].items()
        assert band["profile"]["source"] == "claude_code@2.1/anthropic-bedrock"
        assert band["hits_usd"] == pytest.approx(res.summary["cost_usd"].item())
        assert band["p10_usd"] <= band["expected_usd"] <= band["p90_usd"]
        if engine == "kernel":
            kernel = band
    assert band == kernel  # the same draws in both engines
    gen = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp_path / "gen")
    assert "cost_bands" not in simulate(gen, ["claude-code"]).config["policies"]["claude-code"]


@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_a_model_switch_reads_nothing(engine):
    """Anthropic's prompt cache is per model: request 1, served by another model than request
    0 (the import's ``model_runs``), reads nothing and writes its whole prompt, whatever the
    miss profile (none here); by hand at claude-sonnet-4-5 prices: the 1,100 tokens it read
    cost 1,100 x (3.75 - 0.30) $/M more. The fit does not count it as the provider's miss."""
    from workbench.engine.cache_miss import cold_requests
    from workbench.engine.provider import resolve_provider
    from workbench.engine.records import LEDGER
    from workbench.engine.run import replay

    inp = _two_requests()
    pol = Policy("raw")
    prov = resolve_provider(pol, continuity_model="claude-sonnet-4-5", continuity_window=200_000)
    led, _ = replay(inp, pol, prov, engine)
    main = led[led[:, LEDGER.call_kind] == 0]
    band = miss_band(main, inp, prov, None, engine=engine, cold={1})
    assert band.expected_usd - band.hits_usd == pytest.approx(1_100 * 3.45e-6, rel=1e-9)
    assert band.cache_read_tokens == 0 and band.p10_usd == band.p90_usd == band.expected_usd
    assert band.expected_misses == 1
    manifest = {"import": {"continuities": {"t": {"model_runs": [[0, "claude-opus-4-6"], [1, "claude-haiku-4-5"]]},
                                            "u": {"models": {"claude-opus-4-6": 3}}}}}
    assert cold_requests(manifest) == {"t": {1}}
    rec = {"recorded_prompt": np.array([1_120, 1_155]), "recorded_output": np.array([20, 5]),
           "recorded_cache": np.array([[0, 0], [1_120, 1_155]])}
    assert observations(_two_requests(rec), 300.0, {1})["observed"].tolist() == [False, False]
    assert fit_miss_profiles([_two_requests(rec)], cold={"t": {1}})["logs"] == {}
