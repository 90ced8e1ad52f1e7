"""Record layouts both engines fill: one ledger row per call, one event row per frame.

Engines return plain int64 matrices with these columns so their outputs can be compared
exactly; the API layer turns them into tidy polars frames with names and ids.
"""

from __future__ import annotations

LEDGER_COLUMNS = (
    "request",  # index of the main request this call belongs to (0..R-1)
    "call_kind",  # CallKind
    "prompt_tokens",  # everything sent: uncached + cache read + cache write
    "cache_read_tokens",
    "cache_write_tokens",
    "uncached_tokens",
    "output_tokens",
    "context_before",  # compiled context before this request's policy actions
    "context_after",  # compiled context actually sent with the main request
    "flags",  # LedgerFlag bits (main rows)
    "cache_loss",  # CacheLoss
    "cache_key",  # 0: the session prefix, 1: a separate summarizer prefix
    "ts_ms",
)
EVENT_COLUMNS = (
    "type",  # EventType
    "request",
    "from_row",  # first covered row (inclusive), -1 if none
    "to_row",  # cut row (inclusive), -1 if none
    "artifact_no",  # ordinal of the produced summary/opaque item, -1 if none
    "tokens_before",  # compiled context before
    "tokens_after",  # compiled context after
    "item_tokens",  # summary/opaque item size, flush output, cleared tokens, ...
    "span_events",  # model-visible events covered
    "span_tokens",  # their tokens as they stood in the context
    "strategy",  # Strategy of the action (TRUNCATE for emergency truncations)
)
LEDGER_INDEX = {name: i for i, name in enumerate(LEDGER_COLUMNS)}
EVENT_INDEX = {name: i for i, name in enumerate(EVENT_COLUMNS)}
