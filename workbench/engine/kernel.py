"""The kernel engine: ``replay_kernel`` has the signature and the output of
``reference.replay_reference``; the work happens in the compiled kernels of
:mod:`workbench.engine.kernel_nb`.

The policy-independent per-position arrays of a continuity are built once per
``ReplayInput`` (and kept while it lives), so a sweep of many policies over one
continuity pays that O(n) pass once; ``ReplayInput`` arrays are treated as immutable.

>>> import polars as pl
>>> from workbench.engine.kernel import replay_kernel
>>> from workbench.engine.policy import Policy
>>> from workbench.engine.prepare import prepare_continuity
>>> from workbench.synth.generate import GeneratorConfig, build_continuity
>>> c = build_continuity(GeneratorConfig(events=400, seed=1, facts=0, secrets=0, hard_negatives=0))
>>> inp = prepare_continuity(pl.from_arrow(c.events), continuity=0, continuity_id="x", tokenizer="cl100k")
>>> kinds, params = Policy("raw").lower(200_000, 1, 300_000.0, 1)
>>> ledger, events = replay_kernel(inp, kinds, params)
>>> ledger.shape[0] == inp.n_requests
True
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from workbench.engine import enums as E
from workbench.engine.prepare import ReplayInput


@dataclass(frozen=True)
class Positions:
    """Policy-independent arrays of one continuity in visible positions (see kernel_nb);
    rows and positions are int32, token sums int64."""

    vrow: np.ndarray
    ptok: np.ndarray
    vflag: np.ndarray
    vmsg: np.ndarray
    Q: np.ndarray
    B: np.ndarray
    n_user: int
    n_msg: int
    n_calls: int
    has_output_results: bool
    tokens_nonneg: bool
    bad_result_requests: bool
    bad_row_requests: bool


_CACHE: dict[int, dict] = {}


def _entry(inp: ReplayInput) -> dict:
    key = id(inp)
    entry = _CACHE.get(key)
    if entry is None or entry["ref"]() is not inp:
        entry = {"ref": weakref.ref(inp, lambda _ref, key=key: _CACHE.pop(key, None))}
        _CACHE[key] = entry
    return entry


def positions(inp: ReplayInput, summaries_visible: bool) -> Positions:
    """The continuity's positions (recorded summaries visible or not), built once."""
    from workbench.engine import kernel_nb as nb

    entry = _entry(inp)
    key = ("positions", bool(summaries_visible))
    if key not in entry:
        if inp.n >= 2**31:
            raise ValueError("replay_kernel: rows are int32 positions; split continuities of 2**31 events")
        i64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)  # noqa: E731
        b = lambda a: np.ascontiguousarray(a, dtype=bool)  # noqa: E731
        visible, is_summary, is_message = b(inp.visible), b(inp.is_summary), b(inp.is_message)
        nv, nmsg = nb.count_visible_nb(visible, is_summary, bool(summaries_visible), is_message)
        brow = np.flatnonzero(inp.is_boundary).astype(np.int64)
        btok = np.ascontiguousarray(inp.recorded_summary_tokens[brow], dtype=np.int64)
        # numpy allocations (huge-page advised) fault in faster than numba's for big arrays
        vrow, ptok = np.empty(nv, np.int32), np.empty(nv + 1, np.int64)
        vflag, vmsg = np.empty(nv, np.uint8), np.empty(nmsg, np.int32)
        Q, B = np.empty((4, inp.n_requests), np.int64), np.empty((3, brow.size), np.int64)
        counts = nb.positions_nb(
            visible, is_summary, bool(summaries_visible), i64(inp.tokens), is_message,
            b(inp.is_user_message), b(inp.is_tool_call), b(inp.is_tool_result), i64(inp.open_after),
            i64(inp.row_request), i64(inp.req_first_row), i64(inp.req_ts), i64(inp.req_output_tokens),
            brow, btok, vrow, ptok, vflag, vmsg, Q, B)
        entry[key] = Positions(vrow, ptok, vflag, vmsg, Q, B, *(int(x) for x in counts[:3]),
                               *(bool(x) for x in counts[3:]))
    return entry[key]


def prev_safe(inp: ReplayInput, summaries_visible: bool, need_message: bool) -> np.ndarray:
    from workbench.engine import kernel_nb as nb

    entry = _entry(inp)
    key = ("prev_safe", bool(summaries_visible), bool(need_message))
    if key not in entry:
        vflag = positions(inp, summaries_visible).vflag
        entry[key] = np.empty(vflag.size, np.int32)
        nb.prev_safe_nb(vflag, bool(need_message), entry[key])
    return entry[key]


def lowered_config(kinds: np.ndarray, params: np.ndarray, pos: Positions) -> np.ndarray:
    """The kernel's integer configuration (``kernel_nb.C_*`` slots of its state vector)."""
    from workbench.engine import kernel_nb as nb

    k = kinds
    cfg = np.full(nb.N_CFG, 0, np.int64)
    strategy = int(k[E.K_STRATEGY])
    mp = int(params[E.P_MASK_PLACEHOLDER])
    cp = int(params[E.P_CLEAR_PLACEHOLDER])
    mask_on = int(k[E.K_MASK_AFTER_TURNS]) > 0
    clear_on = strategy == E.Strategy.CLEAR_TOOL_USES
    has1 = pos.has_output_results
    cfg[nb.C_K] = int(params[E.P_KEEP_FIRST])
    cfg[nb.C_L] = int(k[E.K_COMPILE_LIMIT_MESSAGES])
    cfg[nb.C_M] = int(k[E.K_MASK_AFTER_TURNS])
    cfg[nb.C_MP] = mp
    cfg[nb.C_CP] = cp
    cfg[nb.C_MASK_ON] = int(mask_on)
    cfg[nb.C_CLEAR_ON] = int(clear_on)
    cfg[nb.C_CLEAR_INPUTS] = int(bool(k[E.K_CLEAR_INPUTS]))
    cfg[nb.C_HAS1] = int(has1)
    cfg[nb.C_TOKENS_NONNEG] = int(pos.tokens_nonneg)
    cfg[nb.C_NONNEG] = int(pos.tokens_nonneg and (not mask_on or mp >= 0) and (not clear_on or cp >= 0))
    cfg[nb.C_TRIGGER] = int(k[E.K_TRIGGER])
    cfg[nb.C_STRATEGY] = strategy
    cfg[nb.C_MODE] = int(k[E.K_CACHE_MODE])
    cfg[nb.C_MIN_CACHE] = int(params[E.P_MIN_CACHEABLE])
    cfg[nb.C_GRAN] = max(1, int(params[E.P_CACHE_GRANULARITY]))
    cfg[nb.C_ACCUM] = int(bool(k[E.K_ACCUMULATE]))
    cfg[nb.C_RETAIN_KIND] = int(k[E.K_RETAIN_KIND])
    cfg[nb.C_RETAIN_BUDGET] = int(params[E.P_RETAIN_TOKENS])
    cfg[nb.C_SHARES] = int(bool(k[E.K_SUMMARY_SHARES_CACHE]))
    cfg[nb.C_MAXSEG] = int(k[E.K_MAX_SEGMENTS])
    cfg[nb.C_EMERGENCY] = int(k[E.K_EMERGENCY])
    cfg[nb.C_FLUSH] = int(bool(k[E.K_FLUSH]))
    cfg[nb.C_KEEP_EVENTS] = int(params[E.P_KEEP_LAST_EVENTS])
    cfg[nb.C_KEEP_TOKENS] = int(params[E.P_KEEP_LAST_TOKENS])
    cfg[nb.C_SUM_PROMPT] = int(params[E.P_SUMMARY_PROMPT])
    cfg[nb.C_FLUSH_PROMPT] = int(params[E.P_FLUSH_PROMPT])
    cfg[nb.C_FLUSH_OUTPUT] = int(params[E.P_FLUSH_OUTPUT])
    cfg[nb.C_CLEAR_KEEP] = int(params[E.P_CLEAR_KEEP])
    cfg[nb.C_TURN_KEEP] = int(params[E.P_TRIGGER_KEEP_TURNS])
    cfg[nb.C_NEED_MESSAGE] = int(bool(k[E.K_MESSAGE_BOUNDARY]))
    # rows of the placeholder prefix-sum table, only those this policy reads
    rows = []
    if mask_on:
        rows += [nb.C_R_DM0] + ([nb.C_R_DM1] if has1 else [])
    if clear_on:
        rows += [nb.C_R_DC] + ([nb.C_R_DCM0] if mask_on else []) + ([nb.C_R_DCM1] if mask_on and has1 else [])
    cfg[nb.C_R_DM0: nb.C_R_DCM1 + 1] = -1
    for i, slot in enumerate(rows):
        cfg[slot] = i
    return cfg


def replay_kernel(inp: ReplayInput, kinds: np.ndarray, params: np.ndarray,
                  excluded: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Replay one continuity; returns (ledger, events) int64 matrices (see records.py),
    equal to ``replay_reference(inp, kinds, params, excluded)``."""
    from workbench.engine import kernel_nb as nb
    from workbench.engine.records import EVENT_COLUMNS, LEDGER_COLUMNS

    kinds = np.ascontiguousarray(kinds, dtype=np.int64)
    params = np.ascontiguousarray(params, dtype=np.float64)
    if inp.n_requests == 0:
        return np.zeros((0, len(LEDGER_COLUMNS)), np.int64), np.zeros((0, len(EVENT_COLUMNS)), np.int64)
    strategy = int(kinds[E.K_STRATEGY])
    summaries_visible = strategy == E.Strategy.RECORDED
    pos = positions(inp, summaries_visible)
    mask_on = int(kinds[E.K_MASK_AFTER_TURNS]) > 0
    clear_on = strategy == E.Strategy.CLEAR_TOOL_USES
    if (mask_on and pos.bad_result_requests) or (int(kinds[E.K_TRIGGER]) == E.Trigger.TURNS
                                                 and pos.bad_row_requests):
        raise ValueError("replay_kernel: row_request is not shaped as prepare_continuity builds it "
                         "(a row's request is its position's request, or the one before for outputs)")
    cfg = lowered_config(kinds, params, pos)
    vflag = pos.vflag
    pre = np.zeros((1, 1), np.int64)
    if mask_on or clear_on:
        n_rows = int((cfg[nb.C_R_DM0: nb.C_R_DCM1 + 1] >= 0).sum())
        pre = np.zeros((n_rows, pos.vrow.size + 1), np.int64)
        if clear_on:
            vflag = np.empty_like(pos.vflag)
        excl = np.zeros(0, np.uint8)
        if clear_on and excluded is not None and np.any(excluded):
            excl = np.ascontiguousarray(np.asarray(excluded, bool)[pos.vrow], dtype=np.uint8)
        nb.policy_arrays_nb(pos.ptok, pos.vflag, excl, cfg, pre, vflag)
    retain = int(kinds[E.K_RETAIN_KIND])
    n_retain = 0 if retain == E.RETAIN_NONE else (pos.n_user if retain == E.RETAIN_USER_MESSAGES else pos.n_msg)
    safe = prev_safe(inp, summaries_visible, bool(kinds[E.K_MESSAGE_BOUNDARY]))
    msg_ordinal = np.ascontiguousarray(inp.msg_ordinal, dtype=np.int64)
    nr = inp.n_requests
    st = nb.init_state(cfg, pos.Q)
    # Room for the most one request can write: an upper bound, so the buffers never grow.
    # np.empty only reserves address space; pages become resident when rows are written.
    ledger = np.empty((nr * nb.MAX_LEDGER_PER_REQUEST + 16, len(LEDGER_COLUMNS)), np.int64)
    events = np.empty((nr * nb.MAX_EVENTS_PER_REQUEST + 16, len(EVENT_COLUMNS)), np.int64)
    ret = np.zeros((2, n_retain + 1), np.int64)  # retained positions, cumulative tokens
    seg = np.zeros((3, 17), np.int64)  # artifact number, tokens, cumulative tokens
    keep = int(params[E.P_CLEAR_KEEP])
    ring = np.zeros(min(keep, pos.n_calls) + 1 if clear_on and keep >= 0 else 1, np.int64)  # recent calls
    r = 0
    while True:
        r = nb.run_requests_nb(r, st, params, pos.ptok, pos.vrow, vflag, safe, pos.vmsg, msg_ordinal,
                               pos.Q, pos.B, pre, ret, seg, ring, ledger, events)
        if r >= nr:
            break
        # a buffer might not hold one more request (never with the bounds above): grow it
        if st[nb.S_NL] + nb.MAX_LEDGER_PER_REQUEST > ledger.shape[0]:
            ledger = _grow_rows(ledger, nb.MAX_LEDGER_PER_REQUEST)
        if st[nb.S_NE] + nb.MAX_EVENTS_PER_REQUEST > events.shape[0]:
            events = _grow_rows(events, nb.MAX_EVENTS_PER_REQUEST)
        if st[nb.S_ST] + nb.MAX_SEGMENTS_PER_REQUEST >= seg.shape[1]:
            grown = np.zeros((3, 2 * seg.shape[1]), np.int64)
            grown[:, : seg.shape[1]] = seg
            seg = grown
    return ledger[: st[nb.S_NL]], events[: st[nb.S_NE]]


def _grow_rows(a: np.ndarray, at_least: int) -> np.ndarray:
    out = np.empty((2 * a.shape[0] + at_least, a.shape[1]), a.dtype)
    out[: a.shape[0]] = a
    return out
