"""The summary columns: the NumPy reducer, its compiled twin, summary rows and policy totals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import metrics
from workbench.engine.enums import CacheLoss, CallKind, EventType, LedgerFlag
from workbench.engine.metrics_nb import add_totals_nb
from workbench.engine.pricing import price_table
from workbench.engine.records import (
    COST_COLUMNS,
    EVENT,
    LEDGER,
    N_COSTS,
    N_EVENT,
    N_LEDGER,
    N_TOTALS,
    TOTAL_COLUMNS,
)

PRICES = price_table("claude-sonnet-4-5")  # tiered at 200k prompt tokens


def random_records(seed: int, n_ledger: int, n_events: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    led = np.zeros((n_ledger, N_LEDGER), np.int64)
    led[:, LEDGER.call_kind] = rng.integers(0, 4, n_ledger)
    # cache reads are zero often enough to count full requests
    led[:, LEDGER.cache_read_tokens] = rng.integers(0, 150_000, n_ledger) * rng.integers(0, 2, n_ledger)
    led[:, LEDGER.cache_write_tokens] = rng.integers(0, 60_000, n_ledger)
    led[:, LEDGER.uncached_tokens] = rng.integers(0, 60_000, n_ledger)
    led[:, LEDGER.prompt_tokens] = led[:, [LEDGER.cache_read_tokens, LEDGER.cache_write_tokens,
                                           LEDGER.uncached_tokens]].sum(axis=1)
    led[:, LEDGER.output_tokens] = rng.integers(0, 8_000, n_ledger)
    led[:, LEDGER.context_after] = rng.integers(0, 300_000, n_ledger)
    led[:, LEDGER.cache_loss] = rng.integers(0, len(CacheLoss), n_ledger)
    ev = np.zeros((n_events, N_EVENT), np.int64)
    ev[:, EVENT.type] = rng.integers(1, len(EventType) + 1, n_events)
    led[:, LEDGER.flags] = rng.integers(0, 2 * LedgerFlag.FAILED, n_ledger)  # failed requests among them
    return led, ev


def compiled_totals(led, ev, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """The twin as the simulator runs it: rows added chunk by chunk."""
    totals, costs = np.zeros(N_TOTALS, np.int64), np.zeros(N_COSTS)
    for a in range(0, max(len(led), len(ev)) or 1, chunk):
        lc, ec = np.ascontiguousarray(led[a:a + chunk]), np.ascontiguousarray(ev[a:a + chunk])
        add_totals_nb(lc, lc.shape[0], ec, ec.shape[0], PRICES.array, totals, costs)
    return totals, costs


@given(seed=st.integers(0, 2**32 - 1), n_ledger=st.integers(0, 300), n_events=st.integers(0, 120),
       chunk=st.sampled_from([1, 7, 64, 1000]))
@settings(max_examples=120, deadline=None, derandomize=True, database=None)
def test_compiled_twin_equals_the_numpy_reducer(seed, n_ledger, n_events, chunk):
    led, ev = random_records(seed, n_ledger, n_events)
    want_totals, want_costs = metrics.replay_totals(led, ev, PRICES)
    totals, costs = compiled_totals(led, ev, chunk)
    assert totals.tolist() == want_totals.tolist()
    assert costs == pytest.approx(want_costs, rel=1e-12, abs=1e-12)


def test_totals_of_a_hand_built_ledger():
    """Three calls and five events; every figure worked out by hand below. The overflow's
    truncation is counted as a truncation, never as a compaction."""
    led = np.zeros((3, N_LEDGER), np.int64)
    for k, (call, read, write, uncached, out, after) in enumerate([
            (CallKind.MAIN, 0, 1_000, 200, 50, 1_200),  # a full request
            (CallKind.COMPACTION, 1_000, 0, 300, 100, 0),
            (CallKind.MAIN, 1_000, 100, 10, 20, 1_110)]):
        led[k, [LEDGER.call_kind, LEDGER.cache_read_tokens, LEDGER.cache_write_tokens, LEDGER.uncached_tokens,
                LEDGER.output_tokens, LEDGER.context_after]] = (call, read, write, uncached, out, after)
        led[k, LEDGER.prompt_tokens] = read + write + uncached
    # a cold start, a loss the rebuild's reset caused (intentional), a request-shape drift
    led[:, LEDGER.cache_loss] = [CacheLoss.COLD, CacheLoss.RESET, CacheLoss.DRIFT]
    ev = np.zeros((5, N_EVENT), np.int64)
    ev[:, EVENT.type] = [EventType.CHECKPOINT, EventType.OVERFLOW, EventType.TRUNCATION, EventType.CHECKPOINT,
                         EventType.MERGE]
    totals, costs = metrics.replay_totals(led, ev, PRICES)
    got = dict(zip(TOTAL_COLUMNS, totals.tolist(), strict=True))
    assert got == {"requests": 2, "calls": 3, "prompt_tokens": 1_200 + 1_300 + 1_110, "input_tokens": 510,
                   "cached_input_tokens": 2_000, "cache_write_tokens": 1_100, "output_tokens": 170,
                   "compactions": 2, "flushes": 0, "overflows": 1, "edits": 0, "peak_context_tokens": 1_200,
                   "full_requests": 1, "truncations": 1, "cache_loss_intentional": 1, "cache_loss_drift": 1,
                   "failed_requests": 0}
    # $3 / $0.30 / $3.75 / $15 per million input / read / write / output tokens (no call over 200k)
    main = (210 * 3 + 1_000 * 0.3 + 1_100 * 3.75 + 70 * 15) / 1e6
    compaction = (300 * 3 + 1_000 * 0.3 + 100 * 15) / 1e6
    assert dict(zip(COST_COLUMNS, costs.tolist(), strict=True)) == pytest.approx(
        {"cost_usd": main + compaction, "compaction_cost_usd": compaction, "flush_cost_usd": 0.0}, rel=1e-12)
    assert compiled_totals(led, ev, 2)[0].tolist() == totals.tolist()


def test_a_failed_request_is_counted_apart_billed_nothing_and_out_of_the_peak():
    """Issue 26: a main request still over the window is the provider's error: both reducers
    count it in failed_requests and leave its attempted context out of the peak and of the full
    (uncached) requests; its zero tokens cost nothing."""
    led = np.zeros((2, N_LEDGER), np.int64)
    led[0, [LEDGER.prompt_tokens, LEDGER.uncached_tokens, LEDGER.context_after]] = (900, 900, 900)
    led[1, [LEDGER.context_after, LEDGER.flags]] = (250_000, LedgerFlag.FAILED | LedgerFlag.OVERFLOW)
    ev = np.zeros((0, N_EVENT), np.int64)
    totals, costs = metrics.replay_totals(led, ev, PRICES)
    got = dict(zip(TOTAL_COLUMNS, totals.tolist(), strict=True))
    assert (got["requests"], got["failed_requests"], got["peak_context_tokens"], got["full_requests"]) == (
        2, 1, 900, 1)
    assert costs[0] == pytest.approx(900 * 3 / 1e6)
    assert compiled_totals(led, ev, 1)[0].tolist() == totals.tolist()


def test_summary_frame_columns_and_hit_rate():
    totals = np.zeros((2, N_TOTALS), np.int64)
    totals[:, TOTAL_COLUMNS.index("prompt_tokens")] = [400, 0]
    totals[:, TOTAL_COLUMNS.index("cached_input_tokens")] = [100, 0]
    keys = {"run_id": ["r", "r"], "policy": ["p", "p"], "continuity_id": ["a", "b"], "model": ["m", "m"],
            "context_window": [200_000, 200_000]}
    frame = metrics.summary_frame(keys, totals, np.zeros((2, N_COSTS)))
    assert tuple(frame.columns) == metrics.SUMMARY_COLUMNS
    assert frame["cache_hit_rate"].to_list() == [0.25, 0.0]
    assert frame.schema["context_window"] == pl.Int64 and frame.schema["cost_usd"] == pl.Float64


def test_policy_totals_take_the_hit_rate_from_the_sums_not_a_mean_of_rates():
    summary = pl.DataFrame({
        "policy": ["a", "b", "a"], "continuity_id": ["x", "x", "y"], "requests": [3, 5, 4],
        "prompt_tokens": [100, 50, 300], "cached_input_tokens": [0, 25, 300], "cost_usd": [0.5, 1.0, 0.25],
        "overflows": [1, 0, 2], "peak_context_tokens": [90, 40, 250]})
    rows = {r["policy"]: r for r in metrics.policy_totals(summary).iter_rows(named=True)}
    assert list(rows) == ["a", "b"]
    assert rows["a"] == {"policy": "a", "continuities": 2, "requests": 7, "prompt_tokens": 400,
                         "cached_input_tokens": 300, "cost_usd": 0.75, "overflows": 3, "peak_context_tokens": 250,
                         "cache_hit_rate": 0.75}  # (0 + 300) / (100 + 300); the mean of rates is 0.5
    assert rows["b"]["cache_hit_rate"] == 0.5
