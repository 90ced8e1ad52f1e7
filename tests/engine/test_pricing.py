"""The vectorised cost of a ledger (``PriceTable.cost``: the compiled price rule the
in-kernel totals use too) equals ``genai_prices.calc_price`` call by call, tiers included."""

from __future__ import annotations

import numpy as np
import pytest
from genai_prices import Usage, calc_price
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.pricing import infer_provider, price_table

# flat and tiered (200k-token tier) prices of the three providers the presets use
MODELS = ("claude-sonnet-4-5", "claude-opus-4-1", "gpt-5", "gpt-4o", "gemini-2.5-pro", "gemini-2.5-flash")


def genai_cost(model: str, uncached: int, read: int, write: int, output: int) -> float:
    usage = Usage(input_tokens=uncached + read + write, cache_read_tokens=read, cache_write_tokens=write,
                  output_tokens=output)
    return float(calc_price(usage, model_ref=model, provider_id=infer_provider(model)).total_price)


def table_cost(model: str, uncached, read, write, output) -> np.ndarray:
    uncached, read, write, output = (np.asarray(a, np.int64) for a in (uncached, read, write, output))
    return price_table(model).cost(uncached + read + write, read, write, uncached, output)


calls = st.tuples(st.integers(0, 260_000), st.integers(0, 260_000), st.integers(0, 60_000),
                  st.integers(0, 64_000))


@given(model=st.sampled_from(MODELS), batch=st.lists(calls, min_size=1, max_size=8))
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
def test_cost_equals_genai_prices_call_by_call(model, batch):
    uncached, read, write, output = (list(c) for c in zip(*batch, strict=True))
    got = table_cost(model, uncached, read, write, output)
    want = [genai_cost(model, *c) for c in batch]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("prompt", [0, 1, 199_999, 200_000, 200_001, 1_000_000])
def test_the_tier_is_chosen_by_the_whole_prompt(model, prompt):
    """A prompt over the tier start prices every token of the call at the tier (cache reads,
    writes and output included), exactly at the start still at the base price."""
    read, write = prompt // 2, prompt // 4
    uncached = prompt - read - write
    got = table_cost(model, [uncached], [read], [write], [1_000])[0]
    assert got == pytest.approx(genai_cost(model, uncached, read, write, 1_000), rel=1e-12, abs=1e-15)


def test_tiered_model_really_changes_price_at_the_tier():
    below, above = table_cost("claude-sonnet-4-5", [200_000, 200_001], [0, 0], [0, 0], [0, 0])
    assert above / 200_001 == pytest.approx(2 * below / 200_000)


# One request priced by hand from each provider's list price (USD per million tokens, as
# genai-prices holds them): 10,000 prompt tokens of which 6,000 read from the cache and 3,000
# written to it, 500 output tokens (1,000 uncached).
HAND = {
    # claude-sonnet-4-5: input 3, cache read 0.3, cache write 3.75, output 15
    "claude-sonnet-4-5": (1_000 * 3 + 6_000 * 0.3 + 3_000 * 3.75 + 500 * 15) / 1e6,
    # gpt-4o: input 2.5, cache read 1.25, writes not billed (charged as input), output 10
    "gpt-4o": (1_000 * 2.5 + 6_000 * 1.25 + 3_000 * 2.5 + 500 * 10) / 1e6,
    # gpt-5.6-cyber: input 12.5, cache read 1.25, cache write 15.625 (1.25x input), output 75
    "gpt-5.6-cyber": (1_000 * 12.5 + 6_000 * 1.25 + 3_000 * 15.625 + 500 * 75) / 1e6,
    # gemini-2.5-flash: input 0.3, cache read 0.03, no cache-write price (input), output 2.5
    "gemini-2.5-flash": (1_000 * 0.3 + 6_000 * 0.03 + 3_000 * 0.3 + 500 * 2.5) / 1e6,
}


@pytest.mark.parametrize("model", sorted(HAND))
def test_one_request_priced_by_hand(model):
    got = float(price_table(model).cost([10_000], [6_000], [3_000], [1_000], [500])[0])
    assert got == pytest.approx(HAND[model], rel=1e-12)


def test_openai_models_that_bill_cache_writes_write_their_uncached_tail():
    """GPT-5.6 bills cache writes (1.25x input): its replay writes what it did not read, as
    an explicit cache does; GPT-4o's automatic cache writes nothing billable."""
    from workbench.engine import enums as E
    from workbench.engine.presets import get_policy
    from workbench.engine.provider import resolve_provider

    pol = get_policy("codex-local")
    new = resolve_provider(pol, continuity_model="gpt-5.6-cyber", continuity_window=272_000)
    old = resolve_provider(pol, continuity_model="gpt-4o", continuity_window=128_000)
    assert new.prices.bills_cache_writes and new.cache_mode == E.CacheMode.AUTOMATIC_WRITES
    assert not old.prices.bills_cache_writes and old.cache_mode == E.CacheMode.AUTOMATIC
    assert new.granularity == old.granularity == 128
