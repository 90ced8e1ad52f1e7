"""Record layouts: one ledger row per call, one event row per frame, and the totals of one
replay (the summed summary columns). The one place that numbers their columns.

Engines return plain int64 matrices with the ledger/event columns so their outputs can be
compared exactly; the API layer turns them into tidy polars frames with names and ids.
Each layout is a ``NamedTuple`` class whose defaults are the column indices, with one
module-level instance: ``LEDGER.prompt_tokens`` is 2 in Python and a constant inside
``@njit`` kernels. Append new columns at the end; never renumber.

>>> LEDGER.prompt_tokens, EVENT_COLUMNS[EVENT.strategy], TOTAL_COLUMNS[TOTALS.full_requests]
(2, 'strategy', 'full_requests')
"""

from __future__ import annotations

from typing import NamedTuple


class LedgerColumns(NamedTuple):
    request: int = 0  # index of the main request this call belongs to (0..R-1)
    call_kind: int = 1  # CallKind
    prompt_tokens: int = 2  # everything billed: uncached + cache read + cache write (0: a failed request)
    cache_read_tokens: int = 3
    cache_write_tokens: int = 4
    uncached_tokens: int = 5
    output_tokens: int = 6
    context_before: int = 7  # compiled context before this request's policy actions
    context_after: int = 8  # compiled context actually sent with the main request (or attempted: FAILED)
    flags: int = 9  # LedgerFlag bits (main rows)
    cache_loss: int = 10  # CacheLoss
    cache_key: int = 11  # 0: the session prefix, 1: a separate summarizer prefix
    ts_ms: int = 12


class EventColumns(NamedTuple):
    type: int = 0  # EventType
    request: int = 1
    from_row: int = 2  # first covered row (inclusive), -1 if none
    to_row: int = 3  # cut row (inclusive), -1 if none
    artifact_no: int = 4  # ordinal of the produced summary/opaque item, -1 if none
    tokens_before: int = 5  # compiled context before
    tokens_after: int = 6  # compiled context after
    item_tokens: int = 7  # summary/opaque item size, flush output, cleared tokens, ...
    span_events: int = 8  # model-visible events covered
    span_tokens: int = 9  # their tokens as they stood in the context
    strategy: int = 10  # Strategy of the action (TRUNCATE for truncations, emergency or not)


class TotalColumns(NamedTuple):
    """Integer totals of one replay (int64 vector), named as the summary columns
    (``workbench.engine.metrics`` computes them)."""

    requests: int = 0  # main calls
    calls: int = 1  # all calls
    prompt_tokens: int = 2
    input_tokens: int = 3  # uncached
    cached_input_tokens: int = 4
    cache_write_tokens: int = 5
    output_tokens: int = 6
    compactions: int = 7  # policy compactions: checkpoint events (never overflow truncations)
    flushes: int = 8
    overflows: int = 9
    edits: int = 10  # context edits (clear_tool_uses)
    peak_context_tokens: int = 11  # largest context sent with a main call
    full_requests: int = 12  # main calls that read nothing from the cache
    truncations: int = 13  # overflow truncations: the oldest raw events dropped to fit the window
    # calls that read back less than the previous prompt of their key, by cause (Holon §5.5):
    # the policy's own rewrite (compaction, edit, rebuild reset) ...
    cache_loss_intentional: int = 14
    # ... or a request shape that changed without one
    cache_loss_drift: int = 15
    # main calls the provider rejected: still over the window after the emergency action
    # (LedgerFlag.FAILED); never silently sent over it
    failed_requests: int = 16


class CostColumns(NamedTuple):
    """Dollar totals of one replay (float64 vector)."""

    cost_usd: int = 0
    compaction_cost_usd: int = 1  # compaction and merge calls
    flush_cost_usd: int = 2


LEDGER = LedgerColumns()
EVENT = EventColumns()
TOTALS = TotalColumns()
COSTS = CostColumns()
LEDGER_COLUMNS = LedgerColumns._fields
EVENT_COLUMNS = EventColumns._fields
TOTAL_COLUMNS = TotalColumns._fields
COST_COLUMNS = CostColumns._fields
N_LEDGER = len(LEDGER_COLUMNS)
N_EVENT = len(EVENT_COLUMNS)
N_TOTALS = len(TOTAL_COLUMNS)
N_COSTS = len(COST_COLUMNS)
LEDGER_INDEX = LEDGER._asdict()
EVENT_INDEX = EVENT._asdict()


def _row(columns: tuple[str, ...], values: dict[str, int]) -> tuple[int, ...]:
    if len(values) != len(columns):
        raise ValueError(f"a row has the columns {columns}; got {sorted(values)}")
    return tuple(values[c] for c in columns)


def ledger_row(**values: int) -> tuple[int, ...]:
    """One ledger row in column order, every column given by name."""
    return _row(LEDGER_COLUMNS, values)


def event_row(**values: int) -> tuple[int, ...]:
    """One event row in column order, every column given by name."""
    return _row(EVENT_COLUMNS, values)
