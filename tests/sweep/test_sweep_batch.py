"""The batch kernel's structural totals equal the single-run kernel's, policy by policy."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.engine.presets import PRESETS, get_policy
from workbench.sweep.spec import SpecError, SweepSpec

INTS = ("requests", "calls", "prompt_tokens", "input_tokens", "cached_input_tokens", "cache_write_tokens",
        "output_tokens", "compactions", "flushes", "overflows", "edits", "peak_context_tokens",
        "full_requests", "context_window")
FLOATS = ("cost_usd", "compaction_cost_usd", "flush_cost_usd", "cache_hit_rate")


def policies():
    pols = [p for name, p in PRESETS.items()]
    variants = [
        ("claude-code", {"trigger.reserve_tokens": 60_000, "trigger.keep_last_events": 12}),
        ("openclaw-flush", {"flush.soft_threshold_tokens": 16_000, "trigger.reserve_tokens": 40_000}),
        ("anthropic-clear-tool-uses", {"trigger.tokens": 40_000, "compaction.clear_keep": 1,
                                       "compaction.clear_at_least": 5_000, "compaction.clear_inputs": True}),
        ("hybrid", {"masking.after_turns": 3, "trigger.every_turns": 12}),
        ("codex-remote", {"provider.model": "gpt-5", "trigger.fraction": 0.5}),
        ("openai-responses-compact", {"compaction.max_segments": 2, "trigger.fraction": 0.3,
                                      "compaction.accumulate": True}),
        ("rip-adr0011", {"trigger.every_messages": 300, "compile.recent_messages_limit": 40}),
        ("no-compaction", {"provider.context_window": 400_000}),  # prompts above the 200k price tier
        ("letta", {"flush.fraction": 0.5}),
        ("codex-local", {"provider.cache": "none"}),
    ]
    for i, (name, over) in enumerate(variants):
        pols.append(get_policy(name, over, rename=f"{name}-v{i}"))
    return pols


@pytest.fixture(scope="module")
def prepared(small_dataset):
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import prepare_dataset

    ds = load_dataset(small_dataset)
    return ds, prepare_dataset(ds, "cl100k")


def test_batch_equals_the_single_run_kernel(prepared):
    from workbench.engine.run import simulate
    from workbench.sweep.batch import batch_structural

    ds, inputs = prepared
    pols = policies()
    (inp,) = inputs
    batch = batch_structural(inp, pols)
    single = simulate(ds, pols, engine="kernel").summary
    assert batch.height == single.height == len(pols)
    for i, pol in enumerate(pols):
        b, s = batch.row(i, named=True), single.row(i, named=True)
        assert b["policy"] == s["policy"] == pol.name and b["model"] == s["model"]
        for k in INTS:
            assert b[k] == s[k], (pol.name, k)
        for k in FLOATS:
            assert b[k] == pytest.approx(s[k], rel=1e-12, abs=1e-12), (pol.name, k)
    # the batch is not trivially uniform: policies really differ
    assert batch["compactions"].n_unique() > 5 and batch["flushes"].max() > 0 and batch["edits"].max() > 0
    assert batch.filter(pl.col("policy") == "no-compaction-v7")["peak_context_tokens"][0] > 200_000


def test_batch_order_and_grouping_do_not_change_results(prepared):
    from workbench.sweep.batch import batch_structural

    _, (inp,) = prepared
    pols = policies()
    a = batch_structural(inp, pols)
    rev = batch_structural(inp, pols[::-1])[::-1]
    assert a.equals(rev)
    one = pl.concat([batch_structural(inp, [p]) for p in pols[:6]])
    assert a.head(6).equals(one)


def test_batch_engine_sweep_equals_kernel_engine_sweep(small_dataset, tmp_path):
    from workbench.sweep.runner import collect, run_sweep

    d = {"name": "b", "dataset": str(small_dataset), "base": "openclaw-flush", "seeds": [0, 1],
         "parameters": {"trigger.reserve_tokens,flush.reserve_tokens": [13_000, 20_000, 33_000],
                        "flush.soft_threshold_tokens": [2_000, 8_000], "compaction.floor": [1_500, 50_000]}}
    k = run_sweep(SweepSpec.from_dict({**d, "engine": "kernel"}), tmp_path / "k", executor="serial")
    b = run_sweep(SweepSpec.from_dict({**d, "engine": "batch"}), tmp_path / "b", executor="serial", batch_size=5)
    assert (k.completed, k.failed) == (b.completed, b.failed) == (12, 12)
    volatile = ["run_id", "config_id", "engine", "elapsed_s"]
    fk, fb = collect(tmp_path / "k").drop(volatile), collect(tmp_path / "b").drop(volatile)
    assert fk.columns == fb.columns
    for c in fk.columns:
        if c in FLOATS:
            assert np.allclose(fk[c].fill_null(0).to_numpy(), fb[c].fill_null(0).to_numpy(), rtol=1e-12, atol=0)
        else:
            assert fk[c].equals(fb[c]), c
    again = run_sweep(SweepSpec.from_dict({**d, "engine": "batch"}), tmp_path / "b", executor="serial")
    assert again.skipped == 24


def test_batch_engine_does_not_evaluate():
    with pytest.raises(SpecError, match="structural"):
        SweepSpec.from_dict({"dataset": "d", "base": "claude-code", "engine": "batch", "evaluate": True})
