"""The one compiled simulator (``kernel_nb.simulate_nb``) on its two paths: many
configurations reduced to totals (``replay_kernel_totals``, ``prange``) give exactly the
totals of the records path (``replay_kernel`` + ``metrics.replay_totals``), and buffers the
plan sizes too small grow without changing a row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_parity import CACHE, PROFILES, _settings, accounting, generated, policies

from workbench.engine import metrics
from workbench.engine.enums import Cfg, EventType
from workbench.engine.kernel import replay_kernel, replay_kernel_totals
from workbench.engine.pricing import price_table
from workbench.engine.records import EVENT, N_COSTS, N_EVENT, N_LEDGER, N_TOTALS

PRICES = price_table("claude-sonnet-4-5")  # tiered: prompts over 200k cost more


def lowered(inp, policy, window, cache="explicit", ttl_s=300.0, granularity=1):
    cfg, params = policy.lower(window, int(CACHE[cache]), ttl_s * 1000.0, granularity)
    return cfg, params, inp.excluded_mask(policy.compaction.exclude_tools)


def assert_totals_match(inp, configs):
    """``configs``: (cfg, params, excluded) sharing one exclusion mask."""
    cfg = np.stack([k for k, _, _ in configs])
    params = np.stack([p for _, p, _ in configs])
    got_t, got_c = replay_kernel_totals(inp, cfg, params, np.stack([PRICES.array] * len(configs)),
                                        configs[0][2])
    for i, (k, p, excluded) in enumerate(configs):
        want_t, want_c = metrics.replay_totals(*replay_kernel(inp, k, p, excluded), PRICES)
        assert got_t[i].tolist() == want_t.tolist(), i
        assert got_c[i] == pytest.approx(want_c, rel=1e-12, abs=1e-12), i


@given(profile=st.sampled_from(PROFILES), events=st.sampled_from([200, 500, 1000]), seed=st.integers(0, 3),
       window=st.sampled_from([8000, 30_000, 120_000]), data=st.data())
@_settings(20)
def test_totals_path_equals_records_path_for_random_policies(profile, events, seed, window, data):
    inp = generated(profile, events, seed)
    configs = [lowered(inp, data.draw(policies(window), label="policy"), window,
                       **data.draw(accounting, label="accounting")) for _ in range(3)]
    for config in configs:  # each alone (its own exclusion mask) ...
        assert_totals_match(inp, [config])
    no_exclusions = [c for c in configs if not c[2].any()]
    if no_exclusions:  # ... and together in one prange call
        assert_totals_match(inp, no_exclusions)


@pytest.mark.parametrize("profile,events,seed", [("coding", 600, 1), ("long-running", 2000, 2), ("chat", 400, 3)])
@pytest.mark.parametrize("window", [200_000, 20_000])
def test_batch_summary_equals_kernel_summary_for_every_preset(profile, events, seed, window):
    from scaled_presets import on_window

    from workbench.engine.policy import Provider
    from workbench.engine.presets import PRESETS
    from workbench.engine.run import summarize_inputs

    inp = generated(profile, events, seed)
    pols = [on_window(p, window) for p in PRESETS.values()]
    assert all(isinstance(p.provider, Provider) for p in pols)
    kernel = summarize_inputs([inp], pols, engine="kernel", run_id="r")
    batch = summarize_inputs([inp], pols, engine="batch", run_id="r")
    floats = [c for c, t in kernel.schema.items() if t.is_float()]
    assert kernel.drop(floats).equals(batch.drop(floats))
    for c in floats:
        assert np.allclose(kernel[c].to_numpy(), batch[c].to_numpy(), rtol=1e-12, atol=0), c


def test_buffers_too_small_for_the_replay_grow():
    """The plan's bounds make growth unnecessary; a plan far too small must still give the
    same rows (records) and totals (chunks of one request)."""
    from workbench.engine import kernel as kern
    from workbench.engine import kernel_nb as nb
    from workbench.engine.presets import get_policy

    inp = generated("long-running", 2000, 2)
    # accumulating summary segments (merged rarely) and a flush every compaction
    pol = get_policy("openai-responses-compact", {"trigger.fraction": 0.05, "compaction.max_segments": 40,
                                                 "compaction.accumulate": True})
    cfg, params, excluded = lowered(inp, pol, 20_000)
    want_led, want_ev = replay_kernel(inp, cfg, params, excluded)
    assert (want_ev[:, EVENT.type] == EventType.CHECKPOINT).sum() > 8  # more segments than the 2 slots
    visible, pos, cfg = kern._configure(inp, cfg)
    safe = kern.prev_safe(inp, visible, bool(cfg[Cfg.CUT_AT_MESSAGE]))
    args = (pos.ptok, pos.vrow, pos.vflag, safe, pos.vmsg, kern._msg_ordinal(inp), pos.Q, pos.B,
            np.zeros(0, np.uint8))
    for records, rows, events in ((True, 1, 1), (False, nb.MAX_LEDGER_PER_REQUEST, nb.MAX_EVENTS_PER_REQUEST)):
        plan = kern.buffer_plan(cfg, pos, inp.n_requests, records=records)
        plan[[nb.PLAN.ledger_rows, nb.PLAN.event_rows, nb.PLAN.segments]] = rows, events, 2
        totals, costs = np.zeros(N_TOTALS, np.int64), np.zeros(N_COSTS)
        led, ev, n_led, n_ev, _, _ = nb.simulate_nb(
            cfg, params, PRICES.array, plan, *args, np.empty((rows, N_LEDGER), np.int64),
            np.empty((events, N_EVENT), np.int64), totals, costs)
        if records:
            assert np.array_equal(led[:n_led], want_led) and np.array_equal(ev[:n_ev], want_ev)
        else:
            assert totals.tolist() == metrics.replay_totals(want_led, want_ev, PRICES)[0].tolist()


def test_run_totals_are_the_summary_rows_of_simulate(tmp_path):
    """``run_totals`` (a run's totals without per-call frames) gives the rows of
    :func:`simulate`'s summary: same columns and integers, costs up to summation order."""
    from workbench.engine.run import run_totals, simulate
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    ds = generate_dataset(GeneratorConfig(profile="coding", events=400, seed=4), tmp_path / "d")
    full = simulate(ds, ["claude-code", "observation-masking"], engine="kernel").summary
    totals = run_totals(ds, ["claude-code", "observation-masking"], engine="batch")
    floats = [c for c, t in full.schema.items() if t.is_float()]
    assert totals.columns == full.columns and totals.height == 2
    assert totals.drop(floats).equals(full.drop(floats))
    for c in floats:
        assert np.allclose(totals[c].to_numpy(), full[c].to_numpy(), rtol=1e-12, atol=0), c
