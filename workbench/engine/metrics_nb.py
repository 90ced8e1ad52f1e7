"""Summary totals of a replay, compiled: the twin of :func:`workbench.engine.metrics.replay_totals`
that the many-configuration simulator (:func:`workbench.engine.kernel_nb.simulate_many_nb`)
runs on each chunk of ledger/event rows, so no per-call table ever reaches Python.

Arrays and scalars in; adds to the totals vectors (layouts in :mod:`workbench.engine.records`).
``tests/engine/test_metrics.py`` checks it against the NumPy reducer.
"""

from __future__ import annotations

from workbench._numba import njit
from workbench.engine.enums import INTENTIONAL_LOSSES, CacheLoss, CallKind, EventType, LedgerFlag
from workbench.engine.pricing_nb import call_cost_nb
from workbench.engine.records import COSTS, EVENT, LEDGER, TOTALS


@njit
def add_totals_nb(ledger, n_ledger, events, n_events, prices, totals, costs):
    """Add the first ``n_ledger`` ledger rows and ``n_events`` event rows to ``totals``
    (int64 [N_TOTALS]) and ``costs`` (float64 [N_COSTS]), calls priced by ``prices``."""
    for k in range(n_ledger):
        call = ledger[k, LEDGER.call_kind]
        prompt = ledger[k, LEDGER.prompt_tokens]
        read = ledger[k, LEDGER.cache_read_tokens]
        write = ledger[k, LEDGER.cache_write_tokens]
        uncached = ledger[k, LEDGER.uncached_tokens]
        output = ledger[k, LEDGER.output_tokens]
        totals[TOTALS.calls] += 1
        totals[TOTALS.prompt_tokens] += prompt
        totals[TOTALS.input_tokens] += uncached
        totals[TOTALS.cached_input_tokens] += read
        totals[TOTALS.cache_write_tokens] += write
        totals[TOTALS.output_tokens] += output
        cost = call_cost_nb(prices, prompt, read, write, uncached, output)
        loss = ledger[k, LEDGER.cache_loss]
        if loss == CacheLoss.DRIFT:
            totals[TOTALS.cache_loss_drift] += 1
        for cause in INTENTIONAL_LOSSES:
            if loss == cause:
                totals[TOTALS.cache_loss_intentional] += 1
        costs[COSTS.cost_usd] += cost
        if call == CallKind.MAIN:
            totals[TOTALS.requests] += 1
            if (ledger[k, LEDGER.flags] & LedgerFlag.FAILED) != 0:  # reached no model
                totals[TOTALS.failed_requests] += 1
                continue
            after = ledger[k, LEDGER.context_after]
            if after > totals[TOTALS.peak_context_tokens]:
                totals[TOTALS.peak_context_tokens] = after
            if read == 0:
                totals[TOTALS.full_requests] += 1
        elif call == CallKind.COMPACTION or call == CallKind.MERGE:
            costs[COSTS.compaction_cost_usd] += cost
        elif call == CallKind.FLUSH:
            costs[COSTS.flush_cost_usd] += cost
    for k in range(n_events):
        t = events[k, EVENT.type]
        if t == EventType.CHECKPOINT:
            totals[TOTALS.compactions] += 1
        elif t == EventType.FLUSH:
            totals[TOTALS.flushes] += 1
        elif t == EventType.OVERFLOW:
            totals[TOTALS.overflows] += 1
        elif t == EventType.CONTEXT_EDIT:
            totals[TOTALS.edits] += 1
        elif t == EventType.TRUNCATION:
            totals[TOTALS.truncations] += 1
