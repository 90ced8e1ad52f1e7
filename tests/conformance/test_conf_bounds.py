"""Physical bounds (issue 26, item 1): no call's prompt over its context window, no cache read
over its prompt, no negative token count. One owner (workbench.conformance.bounds); the
conformance audit fails a run that breaks one; both engines keep them for any policy."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.conformance.bounds import (
    BOUNDS,
    ledger_violations,
    policy_violations,
    summary_violations,
)
from workbench.engine.records import LEDGER

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from planted_tables import plant  # noqa: E402  (tests/ is on the path)
from test_parity import (  # noqa: E402  (the parity tests' random policies and continuities)
    _settings,
    accounting,
    chunk_st,
    expand,
    policies,
    tiny_input,
    with_prefix,
)

from workbench.engine.kernel import replay_kernel  # noqa: E402
from workbench.engine.reference import replay_reference  # noqa: E402

CACHE = {"explicit": 1, "automatic": 2, "none": 0, "automatic_writes": 3}


def ledger_of(led: np.ndarray, policy: str = "p", continuity: str = "c") -> pl.DataFrame:
    """An engine's ledger matrix as the columns of ledger.parquet the bounds read."""
    n = led.shape[0]
    return pl.DataFrame({
        "policy": [policy] * n, "continuity_id": [continuity] * n, "call": np.arange(n),
        "request": led[:, LEDGER.request], "call_kind": led[:, LEDGER.call_kind].astype(str),
        "prompt_tokens": led[:, LEDGER.prompt_tokens], "input_tokens": led[:, LEDGER.uncached_tokens],
        "cached_input_tokens": led[:, LEDGER.cache_read_tokens],
        "cache_write_tokens": led[:, LEDGER.cache_write_tokens], "output_tokens": led[:, LEDGER.output_tokens],
        "context_before": led[:, LEDGER.context_before], "context_after": led[:, LEDGER.context_after]})


def windows(window: int, policy: str = "p", continuity: str = "c") -> pl.DataFrame:
    return pl.DataFrame({"policy": [policy], "continuity_id": [continuity], "context_window": [window]})


def _row(**over) -> pl.DataFrame:
    base = {"policy": "p", "continuity_id": "c", "call": 0, "request": 0, "call_kind": "main",
            "prompt_tokens": 90, "input_tokens": 80, "cached_input_tokens": 10, "cache_write_tokens": 0,
            "output_tokens": 5, "context_before": 90, "context_after": 90}
    return pl.DataFrame([{**base, **over}])


@pytest.mark.parametrize("over,bound", [({"prompt_tokens": 101}, "prompt_over_window"),
                                        ({"cached_input_tokens": 91}, "cache_read_over_prompt"),
                                        ({"output_tokens": -1}, "negative_tokens"),
                                        ({"input_tokens": -3}, "negative_tokens")])
def test_each_bound_is_found_on_a_planted_call(over, bound):
    assert ledger_violations(_row(), windows(100)).height == 0
    found = ledger_violations(_row(**over), windows(100))
    assert found["bound"].to_list() == [bound] and found["count"].to_list() == [1]
    assert policy_violations(ledger=_row(**over), summary=windows(100)) == {"p": [bound]}


def test_summary_figures_break_the_bounds_a_reader_sees():
    summary = pl.DataFrame({"policy": ["ok", "over", "cache", "neg"], "continuity_id": ["c"] * 4,
                            "context_window": [200_000] * 4, "prompt_tokens": [10, 10, 10, 10],
                            "cached_input_tokens": [5, 5, 11, 5], "peak_context_tokens": [200_000, 459_198, 9, 9],
                            "cost_usd": [1.0, 1.0, 1.0, -0.5]})
    assert {r["policy"]: r["bound"] for r in summary_violations(summary).iter_rows(named=True)} == {
        "over": "prompt_over_window", "cache": "cache_read_over_prompt", "neg": "negative_tokens"}
    assert set(policy_violations(summary=summary)) == {"over", "cache", "neg"}
    assert set(BOUNDS) == {"prompt_over_window", "cache_read_over_prompt", "negative_tokens"}


def test_a_ledger_row_without_a_window_is_an_error_not_a_pass():
    with pytest.raises(ValueError, match="no context_window"):
        ledger_violations(_row(policy="other"), windows(100))


def test_the_conformance_audit_fails_a_run_with_a_call_over_its_window(tmp_path):
    """A planted run: one call's prompt raised over the window. The audit (which passed such
    runs before issue 26) fails, naming the bound, the policy and the call."""
    from workbench.audits import conformance_audit
    from workbench.engine.run import simulate
    from workbench.rundir import names as N
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    dataset = generate_dataset(GeneratorConfig(profile="coding", events=600, seed=1), tmp_path / "d")
    run = simulate(dataset, ["claude-code"], engine="reference").write(tmp_path / "run")
    assert conformance_audit(run).details["invariants_passed"]
    window = int(pl.read_parquet(Path(run) / N.SUMMARY)["context_window"][0])
    ledger = pl.read_parquet(Path(run) / N.LEDGER)
    plant(run, N.LEDGER, ledger.with_columns(pl.when(pl.col("call") == 3).then(window + 1)
                                             .otherwise(pl.col("prompt_tokens")).alias("prompt_tokens")))
    audit = conformance_audit(run)
    assert not audit.passed and not audit.details["invariants_passed"]
    findings = audit.tables[N.CONFORMANCE].filter(pl.col("check") == "prompt_over_window")
    assert findings.height == 1 and findings["policy"].to_list() == ["claude-code"]
    assert "call 3" in findings["detail"][0] and f"{window + 1:,}" in findings["detail"][0]


@given(first=st.integers(0, 3000), chunks=st.lists(chunk_st, min_size=20, max_size=80),
       window=st.sampled_from([1000, 4000, 15_000, 60_000]), data=st.data())
@_settings(120)
def test_no_policy_breaks_a_physical_bound_on_either_engine(first, chunks, window, data):
    """Random policies (every field, every emergency action) x random continuities (with fixed
    prefixes up to over the window): neither engine sends a call over the window, reads more
    than it sends, or counts a negative token."""
    inp = with_prefix(tiny_input(first, expand(chunks)), data, window)
    policy = data.draw(policies(window), label="policy")
    acc = data.draw(accounting, label="accounting")
    cfg, params = policy.lower(window, CACHE[acc["cache"]], acc["ttl_s"] * 1000.0, acc["granularity"])
    excluded = inp.excluded_mask(policy.compaction.exclude_tools)
    for engine in (replay_reference, replay_kernel):
        led, _ = engine(inp, cfg, params, excluded)
        found = ledger_violations(ledger_of(led), windows(window))
        assert found.height == 0, (engine.__name__, policy.to_dict(), found.to_dicts())
