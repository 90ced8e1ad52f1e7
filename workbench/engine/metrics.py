"""The summary columns: what one replay of one continuity under one policy totals to, and
what a policy totals to over continuities. The one module that computes them.

* :func:`replay_totals` reduces an engine's ledger/event matrices with NumPy (``simulate``,
  ``run_totals`` and the sweeps' per-run engines use it); :func:`workbench.engine.metrics_nb.add_totals_nb`
  is its compiled twin inside the many-configuration simulator. Both price calls with the
  one price rule (:mod:`workbench.engine.pricing_nb`).
* :func:`summary_frame` turns totals into the ``summary.parquet`` rows (one per
  continuity x policy, columns :data:`SUMMARY_COLUMNS`; ``cache_hit_rate`` derived here).
  ``compactions`` counts the policy's compactions (checkpoint frames) only; the overflow's
  last resort, dropping the oldest raw events, is counted apart as ``truncations``; a main
  request still over the window after it is a ``failed_requests`` (the provider rejects it),
  left out of ``peak_context_tokens`` and ``full_requests``.
  Cache loss is split in two columns (Holon §5.5): ``cache_loss_intentional``, calls that
  read back less because the policy rewrote the context (:data:`~workbench.engine.enums.INTENTIONAL_LOSSES`), and
  ``cache_loss_drift``, calls that did because the request shape changed without a rewrite.
* :func:`policy_totals` sums a summary frame over continuities (one row per policy, or per
  any grouping): additive columns summed, ``peak_context_tokens`` the largest, and
  ``cache_hit_rate`` recomputed from the summed tokens (never a mean of rates).

>>> import polars as pl
>>> summary = pl.DataFrame({"policy": ["a", "a"], "prompt_tokens": [100, 300],
...                         "cached_input_tokens": [0, 300], "peak_context_tokens": [90, 250]})
>>> policy_totals(summary).row(0, named=True)
{'policy': 'a', 'continuities': 2, 'prompt_tokens': 400, 'cached_input_tokens': 300, 'peak_context_tokens': 250, 'cache_hit_rate': 0.75}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.engine.enums import INTENTIONAL_LOSSES, CacheLoss, CallKind, EventType, LedgerFlag
from workbench.engine.records import (
    COST_COLUMNS,
    COSTS,
    EVENT,
    LEDGER,
    N_COSTS,
    N_TOTALS,
    TOTAL_COLUMNS,
    TOTALS,
)

# identify a row: which replay of which continuity under which policy and provider
SUMMARY_KEYS = ("run_id", "policy", "continuity_id", "model", "context_window")
# the measured columns, in the order summary.parquet stores them
MEASURES = ("requests", "calls", "prompt_tokens", "input_tokens", "cached_input_tokens",
            "cache_write_tokens", "output_tokens", "cost_usd", "compaction_cost_usd",
            "flush_cost_usd", "compactions", "flushes", "overflows", "truncations", "failed_requests", "edits",
            "peak_context_tokens", "full_requests", "cache_loss_intentional", "cache_loss_drift",
            "cache_hit_rate")
SUMMARY_COLUMNS = (*SUMMARY_KEYS, *MEASURES)
# summed over continuities (and over anything else rows are grouped by)
ADDITIVE = tuple(c for c in MEASURES if c in TOTAL_COLUMNS + COST_COLUMNS and c != "peak_context_tokens")
LARGEST = ("peak_context_tokens",)


def replay_totals(ledger: np.ndarray, events: np.ndarray, prices) -> tuple[np.ndarray, np.ndarray]:
    """``(totals int64 [N_TOTALS], costs float64 [N_COSTS])`` of one replay's ledger and
    events (``records`` layouts), calls priced by ``prices`` (a :class:`PriceTable`)."""
    totals = np.zeros(N_TOTALS, np.int64)
    costs = np.zeros(N_COSTS, np.float64)
    call = ledger[:, LEDGER.call_kind]
    main = call == CallKind.MAIN
    read = ledger[:, LEDGER.cache_read_tokens]
    cost = prices.cost(ledger[:, LEDGER.prompt_tokens], read, ledger[:, LEDGER.cache_write_tokens],
                       ledger[:, LEDGER.uncached_tokens], ledger[:, LEDGER.output_tokens])
    sums = ledger.sum(axis=0)  # one pass over the rows, not one per column
    totals[TOTALS.requests] = np.count_nonzero(main)
    totals[TOTALS.calls] = ledger.shape[0]
    totals[TOTALS.prompt_tokens] = sums[LEDGER.prompt_tokens]
    totals[TOTALS.input_tokens] = sums[LEDGER.uncached_tokens]
    totals[TOTALS.cached_input_tokens] = sums[LEDGER.cache_read_tokens]
    totals[TOTALS.cache_write_tokens] = sums[LEDGER.cache_write_tokens]
    totals[TOTALS.output_tokens] = sums[LEDGER.output_tokens]
    etype = events[:, EVENT.type]
    totals[TOTALS.compactions] = np.count_nonzero(etype == EventType.CHECKPOINT)
    totals[TOTALS.flushes] = np.count_nonzero(etype == EventType.FLUSH)
    totals[TOTALS.overflows] = np.count_nonzero(etype == EventType.OVERFLOW)
    totals[TOTALS.edits] = np.count_nonzero(etype == EventType.CONTEXT_EDIT)
    totals[TOTALS.truncations] = np.count_nonzero(etype == EventType.TRUNCATION)
    failed = main & ((ledger[:, LEDGER.flags] & LedgerFlag.FAILED) != 0)
    sent = main & ~failed  # a failed request reached no model: no context, nothing read
    totals[TOTALS.peak_context_tokens] = ledger[sent, LEDGER.context_after].max() if sent.any() else 0
    totals[TOTALS.full_requests] = np.count_nonzero(read[sent] == 0)
    totals[TOTALS.failed_requests] = np.count_nonzero(failed)
    loss = ledger[:, LEDGER.cache_loss]
    totals[TOTALS.cache_loss_intentional] = np.count_nonzero(np.isin(loss, INTENTIONAL_LOSSES))
    totals[TOTALS.cache_loss_drift] = np.count_nonzero(loss == CacheLoss.DRIFT)
    costs[COSTS.cost_usd] = cost.sum()
    costs[COSTS.compaction_cost_usd] = cost[(call == CallKind.COMPACTION) | (call == CallKind.MERGE)].sum()
    costs[COSTS.flush_cost_usd] = cost[call == CallKind.FLUSH].sum()
    return totals, costs


def _schema() -> dict[str, Any]:
    import polars as pl

    types = {"context_window": pl.Int64, "cache_hit_rate": pl.Float64}
    types.update({c: pl.Int64 for c in TOTAL_COLUMNS})
    types.update({c: pl.Float64 for c in COST_COLUMNS})
    return {c: types.get(c, pl.String) for c in SUMMARY_COLUMNS}


def summary_frame(keys: dict[str, Sequence], totals: np.ndarray, costs: np.ndarray):
    """The summary rows (polars, :data:`SUMMARY_COLUMNS`) of ``n`` replays: ``keys`` maps each
    of :data:`SUMMARY_KEYS` to ``n`` values; ``totals`` (int64 [n, N_TOTALS]) and ``costs``
    (float64 [n, N_COSTS]) are their totals."""
    import polars as pl

    totals = np.asarray(totals, np.int64).reshape(-1, N_TOTALS)
    costs = np.asarray(costs, np.float64).reshape(-1, N_COSTS)
    data: dict[str, Any] = {k: list(keys[k]) for k in SUMMARY_KEYS}
    data.update({c: totals[:, i] for i, c in enumerate(TOTAL_COLUMNS)})
    data.update({c: costs[:, i] for i, c in enumerate(COST_COLUMNS)})
    data["cache_hit_rate"] = np.zeros(totals.shape[0])
    frame = pl.DataFrame(data, schema=_schema())
    return with_cache_hit_rate(frame)


def with_cache_hit_rate(frame):
    """``frame`` with ``cache_hit_rate`` = cached input tokens / prompt tokens of each row
    (0 without prompt tokens), replacing any rate it had."""
    import polars as pl

    rate = (pl.when(pl.col("prompt_tokens") > 0)
            .then(pl.col("cached_input_tokens") / pl.col("prompt_tokens"))
            .otherwise(0.0).alias("cache_hit_rate"))
    return frame.with_columns(rate)


def total_aggs(columns: Sequence[str]) -> list:
    """polars aggregations that total the summary columns among ``columns`` over a group
    (additive columns summed, peak context the largest); follow with :func:`with_cache_hit_rate`."""
    import polars as pl

    present = set(columns)
    return ([pl.col(c).sum() for c in ADDITIVE if c in present]
            + [pl.col(c).max() for c in LARGEST if c in present])


def policy_totals(summary, by: str | Sequence[str] = "policy"):
    """One row per ``by`` group (default: per policy, in first-seen order) of a summary
    frame: ``continuities`` (rows in the group), the summed columns, ``peak_context_tokens``
    and ``cache_hit_rate`` from the sums. Columns the frame lacks are left out."""
    import polars as pl

    by = [by] if isinstance(by, str) else list(by)
    agg = summary.group_by(by, maintain_order=True).agg(pl.len().alias("continuities"),
                                                        *total_aggs(summary.columns))
    if {"prompt_tokens", "cached_input_tokens"} <= set(agg.columns):
        agg = with_cache_hit_rate(agg)
    return agg
