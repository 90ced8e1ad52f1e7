"""Hand-built tiny continuities for semantic tests: one letter per event.

S system, U user, A assistant text (output), T reasoning (output), C tool call (output),
R tool result, X side effect, B recorded compaction boundary, Y recorded summary.
Each event is (code, tokens, seconds) or (code, tokens, seconds, call_id).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench.continuity.enums import EventFlag, EventKind, Role
from workbench.engine.prepare import prepare_continuity

CODES = {
    "S": (EventKind.MESSAGE, Role.SYSTEM, False),
    "U": (EventKind.MESSAGE, Role.USER, False),
    "A": (EventKind.MESSAGE, Role.ASSISTANT, True),
    "T": (EventKind.REASONING, Role.ASSISTANT, True),
    "C": (EventKind.TOOL_CALL, Role.ASSISTANT, True),
    "R": (EventKind.TOOL_RESULT, Role.TOOL, False),
    "X": (EventKind.SIDE_EFFECT, Role.NONE, False),
    "B": (EventKind.COMPACTION, Role.SYSTEM, False),
    "Y": (EventKind.SUMMARY, Role.USER, False),
}


def frame(events: list[tuple]) -> pl.DataFrame:
    n = len(events)
    kind = np.array([CODES[e[0]][0] for e in events], np.int8)
    role = np.array([CODES[e[0]][1] for e in events], np.int8)
    out = np.array([CODES[e[0]][2] for e in events], bool)
    tokens = np.array([e[1] for e in events], np.int32)
    ts = np.array([int(e[2] * 1000) for e in events], np.int64)
    call_id = [e[3] if len(e) > 3 else None for e in events]
    # requests: a run of outputs is one request; inputs feed the next one
    visible = np.isin(kind, [EventKind.MESSAGE, EventKind.TOOL_CALL, EventKind.TOOL_RESULT, EventKind.REASONING])
    request = np.full(n, -1, np.int32)
    started, prev_out = 0, False
    for i in range(n):
        if not visible[i]:
            continue
        if out[i] and not prev_out:
            started += 1
        request[i] = started - 1 if out[i] else started
        prev_out = out[i]
    request[(request >= started) & ~out] = -1
    pair = np.full(n, -1, np.int64)
    open_calls: dict[str, int] = {}
    for i, cid in enumerate(call_id):
        if cid is None:
            continue
        if kind[i] == EventKind.TOOL_CALL:
            open_calls[cid] = i
        elif cid in open_calls:
            j = open_calls.pop(cid)
            pair[i], pair[j] = j, i
    flags = np.where(out, EventFlag.OUTPUT, 0).astype(np.int32)
    flags[((kind == EventKind.TOOL_CALL) | (kind == EventKind.TOOL_RESULT)) & (pair < 0)] |= EventFlag.UNPAIRED
    return pl.DataFrame({
        "continuity": np.zeros(n, np.int32), "seq": np.arange(n, dtype=np.int64), "kind": kind,
        "role": role, "flags": flags, "request": request, "ts_ms": ts, "pair_seq": pair,
        "name": ["bash" if c is not None else None for c in call_id],
        "message_id": [f"m{i}" for i in range(n)], "tokens_cl100k": tokens,
    })


def replay_input(events: list[tuple], window: int = 200_000):
    return prepare_continuity(frame(events), continuity=0, continuity_id="tiny",
                              tokenizer="cl100k", model="claude-sonnet-4-5",
                              provider="anthropic", context_window=window)
