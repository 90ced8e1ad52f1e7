"""Turn one continuity's events into the plain arrays both engines replay.

Nothing here depends on a policy except ``excluded_tools``; everything is numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.continuity.enums import EventFlag, EventKind, Role


@dataclass(frozen=True)
class ReplayInput:
    continuity: int
    continuity_id: str
    seq: np.ndarray  # int64 [n]
    message_id: Sequence  # str | None per row, indexable (a polars Series; for checkpoint frames)
    kind: np.ndarray  # int64 [n]
    tokens: np.ndarray  # int64 [n]
    visible: np.ndarray  # bool: model-visible in every replay
    is_summary: np.ndarray  # bool: a recorded summary (visible only in as-recorded replay)
    is_boundary: np.ndarray  # bool: a recorded compaction boundary
    is_message: np.ndarray  # bool: a visible message event (ADR-0011 cut anchor)
    is_user_message: np.ndarray  # bool
    is_tool_call: np.ndarray
    is_tool_result: np.ndarray
    open_after: np.ndarray  # int64: tool calls still waiting for their result after row
    msg_ordinal: np.ndarray  # int64: visible messages up to and including row
    row_request: np.ndarray  # int64: the request that first sees (or produced) the row, -1
    tool_code: np.ndarray  # int64 [n]: index into tool_names per tool row (results inherit their call's), else -1
    tool_names: tuple  # str: the tool names the codes index
    recorded_summary_tokens: np.ndarray  # int64 [n]: at boundary rows, the summary's size
    req_first_row: np.ndarray  # int64 [R]: first output row of each request
    req_output_tokens: np.ndarray  # int64 [R]
    req_ts: np.ndarray  # int64 [R]: ms
    req_source: np.ndarray  # int64 [R]: the request index in the continuity
    model: str | None
    provider: str | None
    context_window: int
    # provider-token accounting (workbench.engine.accounting): tokens the harness sends
    # before any event of the log (system prompt, tool schemas), in every call's prompt
    prefix_tokens: int = 0
    harness: str | None = None  # the log's format / harness (None: generated)
    harness_version: str | None = None  # as the log records it (Claude Code ``version``)
    recorded_prompt: np.ndarray | None = None  # int64 [R]: the log's prompt per request, -1 none
    recorded_output: np.ndarray | None = None  # int64 [R]: the log's output tokens, -1 none
    recorded_cache: np.ndarray | None = None  # int64 [2, R]: the log's cache read, cache write; -1 none
    # set by a provider view anchored to the recorded usage: per request the recorded prompt,
    # cache read and cache write (-1 none); where the replay sends exactly that prompt, the
    # provider's recorded split of it is what the call reads and writes (kernel_nb Q_BILLED)
    billed_usage: np.ndarray | None = None  # int64 [3, R]
    own_line: tuple[float, float] | None = None  # (a, b) of the import's calibration, if fitted

    @property
    def n(self) -> int:
        return int(self.seq.size)

    @property
    def n_requests(self) -> int:
        return int(self.req_first_row.size)

    def excluded_mask(self, tools: tuple[str, ...]) -> np.ndarray:
        wanted = [i for i, name in enumerate(self.tool_names) if name in set(tools)]
        if not wanted:
            return np.zeros(self.n, bool)
        return np.isin(self.tool_code, wanted)

    def tool_name(self, row: int) -> str | None:
        code = int(self.tool_code[row])
        return self.tool_names[code] if code >= 0 else None


VISIBLE_KINDS = (EventKind.MESSAGE, EventKind.TOOL_CALL, EventKind.TOOL_RESULT, EventKind.REASONING)


def prepare_continuity(events, *, continuity: int, continuity_id: str, tokenizer: str,
                       model: str | None = None, provider: str | None = None,
                       context_window: int = -1) -> ReplayInput:
    """``events``: a polars frame of one continuity, sorted by seq."""
    from workbench.continuity.schema import token_column

    # what the engines keep is int64; what is only read here stays in its stored width
    # (a 10 M-event continuity: 80 MB per int64 column)
    kind = events["kind"].to_numpy().astype(np.int64)
    role = events["role"].to_numpy()
    flags = events["flags"].to_numpy()
    seq = events["seq"].to_numpy().astype(np.int64, copy=False)  # to_numpy of chunks: a copy already
    n = seq.size
    tokens = events[token_column(tokenizer)].to_numpy().astype(np.int64)
    request = events["request"].to_numpy()
    pair_seq = events["pair_seq"].to_numpy()

    side = (flags & EventFlag.SIDECHAIN) != 0
    base_visible = np.isin(kind, VISIBLE_KINDS)
    if side[base_visible].all():
        side[:] = False  # a sub-agent's own continuity: its side chain is its main line
    # instructions recorded as session metadata (Codex base instructions) are sent as the
    # system prompt of every request
    instructions = (kind == EventKind.META) & np.isin(role, (Role.SYSTEM, Role.DEVELOPER))
    visible = (base_visible | instructions) & ~side
    # a recorded summary is one that replaced history: it follows a recorded compaction
    # boundary (Claude Code's legacy /resume titles, also SUMMARY records, do not)
    is_boundary = kind == EventKind.COMPACTION
    after_boundary = np.zeros(n, bool)
    for b in np.flatnonzero(is_boundary):
        j = b + 1
        while j < n and not visible[j]:
            after_boundary[j] = True
            j += 1
    is_summary = (kind == EventKind.SUMMARY) & ~side & after_boundary
    is_message = visible & (kind == EventKind.MESSAGE)
    is_user_message = is_message & (role == Role.USER)
    is_call = visible & (kind == EventKind.TOOL_CALL)
    is_result = visible & (kind == EventKind.TOOL_RESULT)

    # rows of pairs (seq -> row; seq is strictly increasing); a call is open from its row
    # until its result's row
    # (in place where it can be: each int64 temporary is 80 MB at 10 M events)
    pair_row = np.searchsorted(seq, pair_seq).astype(np.int64, copy=False)
    found = (pair_seq >= 0) & (pair_row < n)
    found[found] = seq[pair_row[found]] == pair_seq[found]
    pair_row[~found] = -1
    del found
    delta = np.zeros(n + 1, np.int64)
    call_rows = np.flatnonzero(is_call)
    opening = call_rows[pair_row[call_rows] > call_rows]
    del call_rows
    delta[opening] += 1
    delta[pair_row[opening]] -= 1
    open_after = np.cumsum(delta, out=delta)[:n]

    msg_ordinal = np.cumsum(is_message, dtype=np.int64)

    # requests: first output row per request index. Importers flag model output; a source
    # without OUTPUT flags falls back to the assistant role
    flagged = (flags & EventFlag.OUTPUT) != 0
    produced = flagged if flagged.any() else (role == Role.ASSISTANT)
    is_out = produced & (request >= 0) & (visible | is_summary)
    out_rows = np.flatnonzero(is_out)
    req_ids, first_idx, which = np.unique(request[out_rows], return_index=True, return_inverse=True)
    req_first_row = out_rows[first_idx]
    order = np.argsort(req_first_row, kind="stable")
    req_first_row = req_first_row[order]
    req_ids = req_ids[order]
    position = np.empty(order.size, np.int64)
    position[order] = np.arange(order.size)
    shown = visible[out_rows]
    out_tok = np.bincount(position[which.ravel()][shown], weights=tokens[out_rows][shown],
                          minlength=req_ids.size).astype(np.int64)
    req_ts = (events["ts_ms"].gather(req_first_row).to_numpy().astype(np.int64) if req_first_row.size
              else np.zeros(0, np.int64))
    # a request's timestamp must not go backwards (missing stamps inherit the previous)
    if req_ts.size:
        req_ts = np.maximum.accumulate(np.where(req_ts < 0, 0, req_ts))

    # the request that first sees each row: the first request starting after it
    # (an output row belongs to the request it starts or continues)
    # (requests started at or before each row, counted by a cumulative sum, in place)
    row_request = np.zeros(n, np.int64)
    row_request[req_first_row] = 1
    np.cumsum(row_request, out=row_request)
    row_request -= is_out
    row_request[row_request >= req_first_row.size] = -1

    tool_code, tool_names = _tool_codes(events["name"], is_call, pair_row)

    rec_sum = recorded_summary_sizes(tokens, visible, is_summary, is_boundary)
    return ReplayInput(
        continuity=continuity, continuity_id=continuity_id, seq=seq,
        message_id=events["message_id"], kind=kind, tokens=tokens, visible=visible,
        is_summary=is_summary, is_boundary=is_boundary, is_message=is_message,
        is_user_message=is_user_message, is_tool_call=is_call, is_tool_result=is_result,
        open_after=open_after, msg_ordinal=msg_ordinal, row_request=row_request,
        tool_code=tool_code, tool_names=tool_names, recorded_summary_tokens=rec_sum, req_first_row=req_first_row.astype(np.int64),
        req_output_tokens=out_tok, req_ts=req_ts.astype(np.int64), req_source=req_ids.astype(np.int64),
        model=model, provider=provider, context_window=int(context_window),
    )


def recorded_summary_sizes(tokens, visible, is_summary, is_boundary) -> np.ndarray:
    """At each recorded compaction boundary row, the tokens of the log's summary that follows
    it (the summary rows before the next model-visible row); 0 elsewhere."""
    n = tokens.size
    out = np.zeros(n, np.int64)
    for b in np.flatnonzero(is_boundary):
        j = b + 1
        while j < n and not visible[j]:
            if is_summary[j]:
                out[b] += tokens[j]
            j += 1
    return out


def _tool_codes(names, is_call: np.ndarray, pair_row: np.ndarray) -> tuple[np.ndarray, tuple]:
    """Tool name codes per row: a call's name on the call and on its result, -1 elsewhere
    (dictionary-encoded: a Python string per row costs gigabytes at 10 M events)."""
    import polars as pl

    calls = np.flatnonzero(is_call)
    # only the calls' names are read (all 10 M rows through Arrow cost ~300 MB), coded in
    # order of first appearance
    call_names = names.gather(calls)
    dictionary = call_names.drop_nulls().unique(maintain_order=True)
    codes = call_names.replace_strict(dictionary, np.arange(dictionary.len(), dtype=np.int64), default=-1,
                                      return_dtype=pl.Int64).to_numpy()
    del call_names
    tool_code = np.full(is_call.size, -1, np.int64)
    tool_code[calls] = codes
    paired = pair_row[calls] >= 0
    tool_code[pair_row[calls[paired]]] = codes[paired]
    return tool_code, tuple(dictionary.to_list())
