"""Compiled replay kernels: the reference semantics (``reference.py``) over plain arrays.

Arrays and scalars in, arrays out; ``cache=True``; no jitclass, no callbacks; nothing
from the API layer. ``kernel.py`` is the thin wrapper that feeds a ``ReplayInput`` in.
Codes and record columns are the ``NamedTuple`` constants of ``enums.py`` and
``records.py`` (compile-time constants here), never bare numbers.

One simulator, two paths: :func:`simulate_nb` replays one configuration and either keeps
every ledger/event row (``simulate``) or reduces them chunk by chunk to the summary totals
(:mod:`workbench.engine.metrics_nb`); :func:`simulate_many_nb` runs it under ``prange``
for many configurations of one continuity (sweeps). Buffer sizes come from one plan
(``kernel.buffer_plan``, slots :data:`PLAN`).

How the kernel stays incremental (per-request cost independent of history, ADR-0011):

* It works in *visible positions* (``v``: the v-th model-visible row), so the pinned
  head is ``[0, K)`` and the raw tail is the contiguous range ``[tb, nvp)``.
* Token sums over any tail range are O(1) from prefix sums: raw tokens, plus correction
  prefix sums for masked placeholders and cleared placeholders. Both edits are monotone
  in row order: ``prepare`` gives each row the request of its position (``c`` = requests
  started at or before it) or, for model outputs, the one before (``c - 1``), so the
  masked tool results of each of the two classes form a prefix (bounds ``b0``/``b1``);
  clearing is a prefix of clearable rows (``clr``).
* Retained items and summary segments live in append-only buffers; the current list is
  a window ``[head, tail)`` into its buffer, so comparing two prompts' lists is O(1).
* The longest common prefix with the previous prompt of a cache key compares the two
  prompt *descriptors* (head length, retained window, segment window, shown tail range,
  and the masking/clearing bounds at that time) and looks for the first tail position
  whose placeholder state changed since then, scanning only rows edited in between
  (amortized O(1) per row over the whole replay).
* clear_tool_uses keeps the last ``keep + 1`` tool calls in a ring and the gain of
  clearing in sliding sums over ``[max(tail start, cleared + 1), keep-th last call)``:
  both window ends only move forward.
* Policy-independent per-position arrays (``positions_nb``; rows and positions int32,
  token sums int64) are computed once per continuity; the per-policy work before the
  loop is limited to the placeholder prefix sums of masking/clearing policies.
* Speed: the per-request path is plain integer code on one state vector (``st``: the
  configuration slots ``Cfg`` then the state slots ``State``), the real-valued slots
  ``params`` (``Param``) and two bundles of arrays (:data:`CONT`, :data:`BUFS`); helpers
  run without NRT reference counting; helpers called with constants have explicit
  signatures so numba compiles one version each (cold compile ~20 s CPU, warm load well under a second).

>>> from workbench.engine.kernel_nb import clamp_summary_nb
>>> int(clamp_summary_nb(12_345, 0.1, 1_000.0, 0.0))
1000
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench._numba import njit, prange
from workbench.engine.enums import (
    KEY_BASE,
    KEY_SIZE,
    N_AFTER,
    N_CFG,
    N_SHOWN,
    N_STATE,
    SHARE_SCALE,
    After,
    CacheLoss,
    CacheMode,
    CallKind,
    Cfg,
    Emergency,
    EventType,
    LedgerFlag,
    Param,
    Prev,
    PruneState,
    Retain,
    Shown,
    State,
    Strategy,
    Trigger,
)
from workbench.engine.metrics_nb import add_totals_nb
from workbench.engine.records import EVENT, LEDGER, N_COSTS, N_EVENT, N_LEDGER, N_TOTALS

# flush, compaction + probe + merge, forced compaction + probe + merge, local checkpoint, main
MAX_LEDGER_PER_REQUEST = 9
# flush, checkpoint/edit + merge (or rebuild), overflow, checkpoint + merge (or rebuild), 2
# truncations, local checkpoint
MAX_EVENTS_PER_REQUEST = 9
MAX_SEGMENTS_PER_REQUEST = 4  # compaction + merge, forced compaction + merge

# ---- per-position flag bits (uint8); all but F_CLEAR are policy-independent ---------------
F_MSG = 1  # a visible message event
F_USER = 2  # a user message
F_CALL = 4  # a tool call
F_RESULT = 8  # a tool result
F_OPEN0 = 16  # no tool call waits for its result after this row
F_OUT = 32  # belongs to the request before its position's request (a model output)
F_CLEAR = 64  # clearable by clear_tool_uses (set per replay, clearing policies only)
MASK_CLASS = F_RESULT | F_OUT  # class 0: == F_RESULT (bound b0); class 1: == MASK_CLASS (b1)

# ---- rows of the per-request table Q and the boundary table B ------------------------------
Q_FIRST, Q_NVP, Q_TS, Q_OUT = range(4)  # first output row, visible rows before it, ts, output
# filled by the wrapper (-1: none): the recorded prompt, cache read and cache write of a request
# (ReplayInput.billed_usage); a main call sending exactly that prompt reads and writes what
# the provider recorded (its own misses included) instead of what the cache model predicts
Q_BILLED_PROMPT, Q_BILLED_READ, Q_BILLED_WRITE = range(4, 7)
Q_ROWS = 7
B_ROW, B_VPOS, B_SUM = range(3)  # boundary row, visible rows before it, recorded summary size

# ---- the state vector ``st``: configuration slots ``Cfg``, replay state ``State``, then one
# previous-prompt descriptor (fields ``Prev``) per cache key at KEY_BASE + key * KEY_SIZE; all
# declared once, with their meanings, in ``enums.py``

NOFIRE = -(1 << 62)  # the cut-point rule did not fire

# Helpers that never allocate are compiled without NRT reference counting: calling a
# refcounted function with a dozen arrays costs hundreds of ns (an atomic incref/decref per
# array), the same call without NRT a few ns. Only the entry points (which allocate) use NRT.
leaf = njit(_nrt=False)
# The two helpers the request loop calls every time are inlined into it (LLVM would not).
hot = njit(_nrt=False, inline="always")

# Helpers called with constants get explicit signatures: numba would otherwise compile one
# version per combination of literal arguments (most of a cold start's compile time).
_A1, _A2, _F1, _U1 = "int64[::1]", "int64[:, ::1]", "float64[::1]", "uint8[::1]"
_P1 = "int32[::1]"  # row and position lists (vrow, vmsg, prev_safe): half the memory of int64
_I = "int64"
# The helpers of the request loop take the replay's arrays as two bundles (numba tuples, unpacked
# at the top of each helper) instead of a dozen positional arrays each:
# ``cont``: the continuity as this policy sees it, read-only during the replay
CONT = ("ptok", "vrow", "vflag", "prev_safe", "vmsg", "msg_ordinal", "PRE")
_CONT = f"Tuple(({_A1}, {_P1}, {_U1}, {_P1}, {_P1}, {_A1}, {_A2}))"
# ``bufs``: the per-request tables Q and B, then the work buffers the replay writes (retained
# items, summary segments, pruned entries, the tool-call ring, the event and ledger rows)
BUFS = ("Q", "B", "RET", "SEG", "PRN", "RING", "events", "ledger")
_BUFS = f"Tuple(({_A2}, {_A2}, {_A2}, {_A2}, {_A2}, {_A1}, {_A2}, {_A2}))"


def _sig(ret: str, *args: str) -> str:
    return f"{ret}({', '.join(args)})"


def leaf_sig(*sig: str):
    return njit(_sig(*sig), _nrt=False)


@njit
def clamp_summary_nb(source, ratio, cap, floor):
    """``reference.clamp_summary``: int(min(cap, max(floor, floor(ratio x source))))."""
    x = np.floor(ratio * source)
    m = x if x > floor else floor
    v = m if m < cap else cap
    return np.int64(v)


# ================================== setup ==================================
@njit
def count_visible_nb(visible, is_summary, summaries_visible, is_message):
    """(visible positions, visible messages): the sizes of ``positions_nb``'s outputs."""
    nv = 0
    nmsg = 0
    for i in range(visible.size):
        if visible[i] or (summaries_visible and is_summary[i]):
            nv += 1
            if is_message[i]:
                nmsg += 1
    return nv, nmsg


@njit
def positions_nb(visible, is_summary, summaries_visible, tokens, is_message, is_user_message,
                 is_tool_call, is_tool_result, open_after, row_request, req_first_row,
                 req_ts, req_output, boundary_rows, boundary_tokens, vrow, ptok, vflag, vmsg, Q, B):
    """Fill the policy-independent arrays of one continuity, in visible positions (O(n),
    once per continuity): ``vrow`` (row of each position), ``ptok`` (token prefix sums),
    ``vflag`` (F_* bits but F_CLEAR), ``vmsg`` (position of each message), ``Q`` (per
    request: first output row, visible rows before it, timestamp, output tokens) and ``B``
    (per recorded boundary: row, visible rows before it, recorded summary tokens).

    Returns ``counts``: user messages, messages, tool calls, whether a tool result is a
    model output (mask class 1), whether all tokens are >= 0, and two shape checks of
    ``row_request`` (tool results, all visible rows; 0 when it has the c / c-1 shape the
    kernel relies on).
    """
    n = tokens.size
    nr = req_first_row.size
    nb = boundary_rows.size
    counts = np.zeros(7, np.int64)
    n_user = 0
    n_calls = 0
    has1 = 0
    nonneg = 1
    bad_results = 0
    bad_rows = 0
    ptok[0] = 0
    v = 0
    q = 0  # requests whose first row is <= i: c(i)
    bq = 0
    j = 0
    acc = 0
    for i in range(n):
        while q < nr and req_first_row[q] <= i:
            Q[Q_NVP, q] = v
            q += 1
        while bq < nb and boundary_rows[bq] <= i:
            B[B_VPOS, bq] = v
            bq += 1
        if not (visible[i] or (summaries_visible and is_summary[i])):
            continue
        t = tokens[i]
        if t < 0:
            nonneg = 0
        acc += t
        vrow[v] = i
        ptok[v + 1] = acc
        f = 0
        if is_message[i]:
            f |= F_MSG
            vmsg[j] = v
            j += 1
            if is_user_message[i]:
                f |= F_USER
                n_user += 1
        if is_tool_call[i]:
            f |= F_CALL
            n_calls += 1
        res = is_tool_result[i]
        if res:
            f |= F_RESULT
        if open_after[i] == 0:
            f |= F_OPEN0
        rr = row_request[i]
        if rr == q - 1:
            f |= F_OUT
            if res:
                has1 = 1
        elif not (rr == q or (rr == -1 and q == nr)):
            bad_rows = 1
            if res:
                bad_results = 1
        vflag[v] = f
        v += 1
    while q < nr:
        Q[Q_NVP, q] = v
        q += 1
    while bq < nb:
        B[B_VPOS, bq] = v
        bq += 1
    for q in range(nr):
        Q[Q_FIRST, q] = req_first_row[q]
        Q[Q_TS, q] = req_ts[q]
        Q[Q_OUT, q] = req_output[q]
    for bq in range(nb):
        B[B_ROW, bq] = boundary_rows[bq]
        B[B_SUM, bq] = boundary_tokens[bq]
    counts[0] = n_user
    counts[1] = vmsg.size
    counts[2] = n_calls
    counts[3] = has1
    counts[4] = nonneg
    counts[5] = bad_results
    counts[6] = bad_rows
    return counts


@njit
def prev_safe_nb(vflag, need_message, out):
    """Fill ``out``: for each position, the latest safe cut position at or before it (-1)."""
    nv = vflag.size
    last = -1
    for v in range(nv):
        f = vflag[v]
        if (f & F_OPEN0) != 0 and (not need_message or (f & F_MSG) != 0):
            last = v
        out[v] = last


@njit
def policy_arrays_nb(ptok, vflag, excluded_v, cfg, PRE, vf):
    """Fill the per-policy arrays: the placeholder prefix-sum table ``PRE`` (zeros, rows
    chosen in ``cfg``) and, for clearing policies, ``vf``: ``vflag`` with F_CLEAR set.

    dm_c: sum of (mp - tok) over tool results of mask class c; dc: (cp - tok) over
    clearable rows; dcm_c: the same over clearable rows of class c (masking wins over
    clearing, so these are taken back where both apply).
    """
    nv = vflag.size
    mask_on = cfg[Cfg.MASKING] != 0
    clear_on = cfg[Cfg.CLEARING] != 0
    has1 = cfg[Cfg.HAS_OUTPUT_RESULTS] != 0
    mp = cfg[Cfg.MASK_PLACEHOLDER]
    cp = cfg[Cfg.CLEAR_PLACEHOLDER]
    clear_inputs = cfg[Cfg.CLEAR_INPUTS] != 0
    has_excl = excluded_v.size == nv
    r_dm0, r_dm1, r_dc = cfg[Cfg.PRE_MASKED0], cfg[Cfg.PRE_MASKED1], cfg[Cfg.PRE_CLEARED]
    r_dcm0, r_dcm1 = cfg[Cfg.PRE_CLEARED_MASKED0], cfg[Cfg.PRE_CLEARED_MASKED1]
    r_rtok = cfg[Cfg.PRE_OUTPUT_TOKENS]
    rtok = 0
    dm0 = 0
    dm1 = 0
    dc = 0
    dcm0 = 0
    dcm1 = 0
    for v in range(nv):
        f = vflag[v]
        t = ptok[v + 1] - ptok[v]
        cls = f & MASK_CLASS
        if r_rtok >= 0:
            if (f & F_RESULT) != 0:
                rtok += t
            PRE[r_rtok, v + 1] = rtok
        if mask_on:
            if cls == F_RESULT:
                dm0 += mp - t
            elif cls == MASK_CLASS:
                dm1 += mp - t
            PRE[r_dm0, v + 1] = dm0
            if has1:
                PRE[r_dm1, v + 1] = dm1
        if clear_on:
            clearable = ((f & F_RESULT) != 0 or (clear_inputs and (f & F_CALL) != 0)) and not (
                has_excl and excluded_v[v] != 0)
            vf[v] = f | F_CLEAR if clearable else f
            if clearable:
                dc += cp - t
                if cls == F_RESULT:
                    dcm0 += cp - t
                elif cls == MASK_CLASS:
                    dcm1 += cp - t
            PRE[r_dc, v + 1] = dc
            if mask_on:
                PRE[r_dcm0, v + 1] = dcm0
                if has1:
                    PRE[r_dcm1, v + 1] = dcm1


# ================================== compiled-context queries ==================================
@leaf
def _tail_start_nb(nvp, K, cut):
    """First tail position; ``nvp`` (empty tail) while fewer than K visible rows exist."""
    if nvp < K:
        return nvp
    tb = cut + 1
    return tb if tb > K else K


@leaf
def _shown_start_nb(tb, nvp, L, vrow, msg_ordinal, vmsg):
    """First tail position shown under a recent-messages limit L (tb when unlimited)."""
    if L <= 0 or tb >= nvp:
        return tb
    hi = msg_ordinal[vrow[nvp - 1]]
    lo = msg_ordinal[vrow[tb - 1]] if tb > 0 else 0
    if hi - lo <= L:
        return tb
    return vmsg[hi - L]


@leaf
def _range_nb(PRE, row, a, x):
    return PRE[row, x] - PRE[row, a]


@leaf
def _effsum_nb(a, b, ptok, PRE, st):
    """Tokens of tail positions [a, b) as they stand in the context now."""
    if b <= a:
        return 0
    s = ptok[b] - ptok[a]
    mask_on = st[Cfg.MASKING] != 0
    has1 = st[Cfg.HAS_OUTPUT_RESULTS] != 0
    b0 = st[State.MASKED0]
    b1 = st[State.MASKED1]
    if mask_on:
        x = b if b < b0 else b0
        if x > a:
            s += _range_nb(PRE, st[Cfg.PRE_MASKED0], a, x)
        if has1:
            x = b if b < b1 else b1
            if x > a:
                s += _range_nb(PRE, st[Cfg.PRE_MASKED1], a, x)
    if st[Cfg.CLEARING] != 0:
        y = st[State.CLEARED] + 1
        if b < y:
            y = b
        if y > a:
            s += _range_nb(PRE, st[Cfg.PRE_CLEARED], a, y)
            if mask_on:
                x = y if y < b0 else b0
                if x > a:
                    s -= _range_nb(PRE, st[Cfg.PRE_CLEARED_MASKED0], a, x)
                if has1:
                    x = y if y < b1 else b1
                    if x > a:
                        s -= _range_nb(PRE, st[Cfg.PRE_CLEARED_MASKED1], a, x)
    return s


@leaf
def _masked_now_nb(v, f, st):
    c = f & MASK_CLASS
    return (c == F_RESULT and v < st[State.MASKED0]) or (c == MASK_CLASS and v < st[State.MASKED1])


@leaf
def _shown_stok_nb(st):
    """Tokens of the summary items compiled into the context."""
    return 0 if st[Cfg.HIDE_SUMMARIES] != 0 else st[State.SEGMENT_TOKENS]


@leaf
def _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg):
    K = st[Cfg.KEEP_FIRST]
    if nvp < K:
        return st[Cfg.PREFIX_TOKENS] + ptok[nvp]
    tb = _tail_start_nb(nvp, K, st[State.CUT])
    ss = _shown_start_nb(tb, nvp, st[Cfg.RECENT_MESSAGES_LIMIT], vrow, msg_ordinal, vmsg)
    return (st[Cfg.PREFIX_TOKENS] + ptok[K] + st[State.RETAINED_TOKENS] + _shown_stok_nb(st)
            + _effsum_nb(ss, nvp, ptok, PRE, st))



@leaf
def _n_items_nb(nvp, st, vrow, msg_ordinal, vmsg):
    K = st[Cfg.KEEP_FIRST]
    if nvp < K:
        return nvp
    tb = _tail_start_nb(nvp, K, st[State.CUT])
    ss = _shown_start_nb(tb, nvp, st[Cfg.RECENT_MESSAGES_LIMIT], vrow, msg_ordinal, vmsg)
    shown_segments = 0 if st[Cfg.HIDE_SUMMARIES] != 0 else st[State.SEGMENTS_TAIL] - st[State.SEGMENTS_HEAD]
    return K + (st[State.RETAINED_TAIL] - st[State.RETAINED_HEAD]) + shown_segments + (nvp - ss)


@leaf_sig("void", _A1, "boolean", "boolean")
def _mark_nb(st, compacted, edited):
    for key in range(2):
        b = KEY_BASE + key * KEY_SIZE
        if compacted:
            st[b + Prev.COMPACTED] = 1
        if edited:
            st[b + Prev.EDITED] = 1


@leaf_sig("void", _A1)
def _mark_truncated_nb(st):
    for key in range(2):
        st[KEY_BASE + key * KEY_SIZE + Prev.TRUNCATED] = 1


@leaf_sig("void", _A2, _A1, *[_I] * 11)
def _event_nb(events, st, etype, r, from_row, to_row, artifact, before, after, item, span_events,
              span_tokens, strategy):
    k = st[State.EVENT_ROWS]
    events[k, EVENT.type] = etype
    events[k, EVENT.request] = r
    events[k, EVENT.from_row] = from_row
    events[k, EVENT.to_row] = to_row
    events[k, EVENT.artifact_no] = artifact
    events[k, EVENT.tokens_before] = before
    events[k, EVENT.tokens_after] = after
    events[k, EVENT.item_tokens] = item
    events[k, EVENT.span_events] = span_events
    events[k, EVENT.span_tokens] = span_tokens
    events[k, EVENT.strategy] = strategy
    if events.shape[1] >= N_EVENT + N_AFTER:  # a recorded replay: the state the event left
        events[k, N_EVENT + After.CUT] = st[State.CUT]
        events[k, N_EVENT + After.RETAINED_HEAD] = st[State.RETAINED_HEAD]
        events[k, N_EVENT + After.RETAINED_TAIL] = st[State.RETAINED_TAIL]
        events[k, N_EVENT + After.SEGMENTS_HEAD] = st[State.SEGMENTS_HEAD]
        events[k, N_EVENT + After.SEGMENTS_TAIL] = st[State.SEGMENTS_TAIL]
        events[k, N_EVENT + After.CLEARED] = st[State.CLEARED]
    st[State.EVENT_ROWS] = k + 1


# ================================== accounting ==================================
@leaf
def _first_diff_nb(b, ss, lim, st, ptok, vflag):
    """First tail position in [ss, lim) whose placeholder state differs from the one the
    previous prompt of this key (descriptor at ``b``) saw; ``lim`` if none."""
    d = lim
    mp = st[Cfg.MASK_PLACEHOLDER]
    cp = st[Cfg.CLEAR_PLACEHOLDER]
    pclr = st[b + Prev.CLEARED]
    if st[Cfg.MASKING] != 0:
        # tool results masked since then: class 0 positions in [old b0, b0), class 1 in [old b1, b1)
        for cls in (F_RESULT, MASK_CLASS):
            if cls == MASK_CLASS and st[Cfg.HAS_OUTPUT_RESULTS] == 0:
                break
            lo = st[b + Prev.MASKED0] if cls == F_RESULT else st[b + Prev.MASKED1]
            hi = st[State.MASKED0] if cls == F_RESULT else st[State.MASKED1]
            if lo < ss:
                lo = ss
            if hi > d:
                hi = d
            for v in range(lo, hi):
                f = vflag[v]
                if (f & MASK_CLASS) == cls:
                    prev = cp if ((f & F_CLEAR) != 0 and v <= pclr) else ptok[v + 1] - ptok[v]
                    if prev != mp:
                        d = v
                        break
    if st[Cfg.CLEARING] != 0:
        # rows cleared since then (and not masked now)
        lo = pclr + 1
        if lo < ss:
            lo = ss
        hi = st[State.CLEARED] + 1
        if hi > d:
            hi = d
        for v in range(lo, hi):
            f = vflag[v]
            if (f & F_CLEAR) != 0 and not _masked_now_nb(v, f, st) and ptok[v + 1] - ptok[v] != cp:
                d = v
                break
    return d


@leaf
def _prev_eff_nb(b, v, st, ptok, vflag):
    """Tokens of tail position ``v`` in the previous prompt of the key at ``b`` (before any
    prune of it): its masking and clearing bounds of that time."""
    f = vflag[v]
    c = f & MASK_CLASS
    if st[Cfg.MASKING] != 0 and ((c == F_RESULT and v < st[b + Prev.MASKED0])
                                 or (c == MASK_CLASS and v < st[b + Prev.MASKED1])):
        return st[Cfg.MASK_PLACEHOLDER]
    if st[Cfg.CLEARING] != 0 and (f & F_CLEAR) != 0 and v <= st[b + Prev.CLEARED]:
        return st[Cfg.CLEAR_PLACEHOLDER]
    return ptok[v + 1] - ptok[v]


@leaf
def _lcp_pruned_nb(b, ss, lim, st, params, ptok, PRE, vflag, PRN):
    """Common tail tokens in [ss, lim) of two prompts of which one or both were pruned (the
    previous one's entries in PRN rows 0-1, the current one's in rows 2-3): before the first
    pruned position the persistent placeholders decide; from there on (the current prompt
    pruned) a position matches when both pruned it alike, or neither did and its tokens agree."""
    pn = st[b + Prev.PRUNED]
    cn = st[State.PRUNED_ENTRIES]
    fp = lim
    if pn > 0 and st[b + Prev.PRUNED_FIRST] < fp:
        fp = st[b + Prev.PRUNED_FIRST]
    if cn > 0 and PRN[2, 0] < fp:
        fp = PRN[2, 0]
    d = fp
    if st[Cfg.MASKING] != 0 or st[Cfg.CLEARING] != 0:
        d = _first_diff_nb(b, ss, fp, st, ptok, vflag)
    s = _effsum_nb(ss, d, ptok, PRE, st)
    if d < fp or cn == 0:
        return s
    i = 0
    j = 0
    for v in range(fp, lim):
        while i < pn and PRN[0, i] < v:
            i += 1
        while j < cn and PRN[2, j] < v:
            j += 1
        ps = PRN[1, i] if i < pn and PRN[0, i] == v else PruneState.NONE
        cs = PRN[3, j] if j < cn and PRN[2, j] == v else PruneState.NONE
        if ps != cs:
            break
        if cs == PruneState.NONE:
            e = _effsum_nb(v, v + 1, ptok, PRE, st)
            if _prev_eff_nb(b, v, st, ptok, vflag) != e:
                break
            s += e
        elif cs == PruneState.TRIMMED:
            s += np.int64(params[Param.PRUNE_SOFT_KEEP])
        else:
            s += np.int64(params[Param.PRUNE_PLACEHOLDER])
    return s


@hot
def _lcp_nb(b, h, rh, rt, sh, sq, ss, te, st, params, cont, bufs):
    """Longest common prefix (tokens) of the previous prompt of the key at ``b`` and the
    prompt described by (h, retained [rh, rt), segments [sh, sq), tail [ss, te))."""
    ptok, _, vflag, _, _, _, PRE = cont
    _, _, RET, SEG, PRN, _, _, _ = bufs
    ph = st[b + Prev.HEAD]
    if ph != h:
        return ptok[ph if ph < h else h]
    lcp = ptok[h]
    prh = st[b + Prev.RETAINED_HEAD]
    lp = st[b + Prev.RETAINED_TAIL] - prh
    lc = rt - rh
    if lp > 0 or lc > 0:
        c = 0
        if prh == rh:
            c = lp if lp < lc else lc
        lcp += RET[1, prh + c] - RET[1, prh]
        if c != lp or c != lc:
            return lcp
    psh = st[b + Prev.SEGMENTS_HEAD]
    lp = st[b + Prev.SEGMENTS_TAIL] - psh
    lc = sq - sh
    if lp > 0 or lc > 0:
        c = 0
        if psh == sh:
            c = lp if lp < lc else lc
        lcp += SEG[2, psh + c] - SEG[2, psh]
        if c != lp or c != lc:
            return lcp
    pss = st[b + Prev.TAIL_START]
    pte = st[b + Prev.TAIL_END]
    if pss >= pte or ss >= te or pss != ss:
        return lcp
    lim = pte if pte < te else te
    if st[b + Prev.PRUNED] != 0 or st[State.PRUNED_ENTRIES] != 0:
        return lcp + _lcp_pruned_nb(b, ss, lim, st, params, ptok, PRE, vflag, PRN)
    if st[Cfg.MASKING] == 0 and st[Cfg.CLEARING] == 0:  # no placeholders: rows never change
        return lcp + ptok[lim] - ptok[ss]
    d = _first_diff_nb(b, ss, lim, st, ptok, vflag)
    return lcp + _effsum_nb(ss, d, ptok, PRE, st)


@leaf
def _record_shown_nb(ledger, k, st, h, rh, rt, sh, sq, ss, te):
    """Ledger row ``k``'s prompt-record columns (``enums.Shown``, after the ledger's): what the
    prompt held. Written only into a ledger buffer wide enough (``kernel.replay_kernel_recorded``)."""
    if ledger.shape[1] < N_LEDGER + N_SHOWN:
        return
    c = N_LEDGER
    if ss >= te:  # no raw tail shown: one spelling of the empty window
        ss = 0
        te = 0
    ledger[k, c + Shown.CUT] = st[State.CUT]
    ledger[k, c + Shown.HEAD] = h
    ledger[k, c + Shown.RETAINED_HEAD] = rh
    ledger[k, c + Shown.RETAINED_TAIL] = rt
    ledger[k, c + Shown.SEGMENTS_HEAD] = sh
    ledger[k, c + Shown.SEGMENTS_TAIL] = sq
    ledger[k, c + Shown.TAIL_START] = ss
    ledger[k, c + Shown.TAIL_END] = te
    ledger[k, c + Shown.MASKED0] = st[State.MASKED0]
    ledger[k, c + Shown.MASKED1] = st[State.MASKED1]
    ledger[k, c + Shown.CLEARED] = st[State.CLEARED]
    ledger[k, c + Shown.PRUNED] = st[State.PRUNED_ENTRIES]


def _account_impl(key, full, items, trailer, r, call, output, before, after, flags, nvp, st, params, cont, bufs):
    """One ledger row; the prompt is the compiled context (``full``, ``items`` tokens, the
    prefix included) or the prefix and the segments only (``items``: their tokens); a main
    prompt pruned by ``_prune_nb`` has ``State.PRUNED_ENTRIES`` entries in PRN rows 2-3."""
    ptok, vrow, vflag, _, vmsg, msg_ordinal, PRE = cont
    Q, _, RET, SEG, PRN, _, _, ledger = bufs
    K = st[Cfg.KEEP_FIRST]
    sh = st[State.SEGMENTS_HEAD]
    sq = st[State.SEGMENTS_TAIL]
    if full:
        if nvp < K:
            h = nvp
            ss = nvp
        else:
            h = K
            tb = _tail_start_nb(nvp, K, st[State.CUT])
            ss = _shown_start_nb(tb, nvp, st[Cfg.RECENT_MESSAGES_LIMIT], vrow, msg_ordinal, vmsg)
        te = nvp
        rh = st[State.RETAINED_HEAD]
        rt = st[State.RETAINED_TAIL]
        if st[Cfg.HIDE_SUMMARIES] != 0:  # the prompt's segment window is empty
            sh = 0
            sq = 0
    else:
        h = 0
        ss = 0
        te = 0
        rh = 0
        rt = 0
    total = items + trailer
    ts = Q[Q_TS, r]
    k = st[State.LEDGER_ROWS]
    _record_shown_nb(ledger, k, st, h, rh, rt, sh, sq, ss, te)
    if (flags & LedgerFlag.FAILED) != 0:  # rejected by the provider: nothing billed, cached or answered
        st[State.PRUNED_ENTRIES] = 0
        for col in range(N_LEDGER):
            ledger[k, col] = 0
        ledger[k, LEDGER.request] = r
        ledger[k, LEDGER.call_kind] = call
        ledger[k, LEDGER.context_before] = before
        ledger[k, LEDGER.context_after] = after
        ledger[k, LEDGER.flags] = flags
        ledger[k, LEDGER.cache_loss] = CacheLoss.NONE
        ledger[k, LEDGER.cache_key] = key
        ledger[k, LEDGER.ts_ms] = ts
        st[State.LEDGER_ROWS] = k + 1
        return
    # a policy call never goes over the window: the newest part that fits is sent, reading
    # back at most the fixed prefix (reference.py, step 4)
    window = np.int64(params[Param.WINDOW])
    clipped = call != CallKind.MAIN and total > window
    if clipped:
        total = window
    b = KEY_BASE + key * KEY_SIZE
    mode = st[Cfg.CACHE_MODE]
    read = 0
    write = 0
    loss = CacheLoss.NONE
    if mode != CacheMode.NONE:
        min_cache = st[Cfg.MIN_CACHEABLE]
        if st[b + Prev.EXISTS] == 0:
            loss = CacheLoss.COLD
            lcp = 0
        elif key == 0 and st[State.RESET_PENDING] != 0:
            loss = CacheLoss.RESET
            lcp = 0
        elif ts - st[b + Prev.TS] > params[Param.TTL_MS]:
            loss = CacheLoss.TTL
            lcp = 0
        else:
            lcp = st[Cfg.PREFIX_TOKENS] + _lcp_nb(b, h, rh, rt, sh, sq, ss, te, st, params, cont, bufs)
            if lcp < st[b + Prev.TOTAL]:
                if st[b + Prev.COMPACTED] != 0:
                    loss = CacheLoss.COMPACTION
                elif st[b + Prev.TRUNCATED] != 0:
                    loss = CacheLoss.TRUNCATION
                elif st[b + Prev.EDITED] != 0:
                    loss = CacheLoss.EDIT
                else:
                    loss = CacheLoss.DRIFT
            fits = st[Cfg.PREFIX_TOKENS] if st[Cfg.PREFIX_TOKENS] < total else total
            if clipped and lcp > fits:
                lcp = fits
                if loss == CacheLoss.NONE:
                    loss = CacheLoss.TRUNCATION
            if lcp < min_cache:
                if loss == CacheLoss.NONE:
                    loss = CacheLoss.BELOW_MINIMUM
                lcp = 0
        gran = st[Cfg.CACHE_GRANULARITY]
        read = lcp if gran == 1 else (lcp // gran) * gran
        writes = mode == CacheMode.EXPLICIT or mode == CacheMode.AUTOMATIC_WRITES
        if writes and total >= min_cache:
            write = total - read
        if call == CallKind.MAIN and Q[Q_BILLED_READ, r] >= 0 and Q[Q_BILLED_PROMPT, r] == total:
            billed = Q[Q_BILLED_READ, r] if Q[Q_BILLED_READ, r] < total else total
            if billed < read and loss == CacheLoss.NONE:
                loss = CacheLoss.RECORDED_MISS
            read = billed
            if not writes:
                write = 0
            elif Q[Q_BILLED_WRITE, r] >= 0:
                write = Q[Q_BILLED_WRITE, r] if Q[Q_BILLED_WRITE, r] < total - read else total - read
            else:
                write = total - read if total >= min_cache else 0
    st[b + Prev.EXISTS] = 1
    st[b + Prev.TOTAL] = items
    st[b + Prev.HEAD] = h
    st[b + Prev.RETAINED_HEAD] = rh
    st[b + Prev.RETAINED_TAIL] = rt
    st[b + Prev.SEGMENTS_HEAD] = sh
    st[b + Prev.SEGMENTS_TAIL] = sq
    st[b + Prev.TAIL_START] = ss
    st[b + Prev.TAIL_END] = te
    st[b + Prev.MASKED0] = st[State.MASKED0]
    st[b + Prev.MASKED1] = st[State.MASKED1]
    st[b + Prev.CLEARED] = st[State.CLEARED]
    st[b + Prev.TS] = ts
    st[b + Prev.COMPACTED] = 0
    st[b + Prev.EDITED] = 0
    st[b + Prev.TRUNCATED] = 0
    cn = st[State.PRUNED_ENTRIES]
    st[b + Prev.PRUNED] = cn
    if cn > 0:  # the entries of this prompt become the previous prompt's
        st[b + Prev.PRUNED_FIRST] = PRN[2, 0]
        for j in range(cn):
            PRN[0, j] = PRN[2, j]
            PRN[1, j] = PRN[3, j]
        st[State.PRUNED_ENTRIES] = 0
    if key == 0:
        st[State.RESET_PENDING] = 0
    ledger[k, LEDGER.request] = r
    ledger[k, LEDGER.call_kind] = call
    ledger[k, LEDGER.prompt_tokens] = total
    ledger[k, LEDGER.cache_read_tokens] = read
    ledger[k, LEDGER.cache_write_tokens] = write
    ledger[k, LEDGER.uncached_tokens] = total - read - write
    ledger[k, LEDGER.output_tokens] = output
    ledger[k, LEDGER.context_before] = before
    ledger[k, LEDGER.context_after] = after
    ledger[k, LEDGER.flags] = flags
    ledger[k, LEDGER.cache_loss] = loss
    ledger[k, LEDGER.cache_key] = key
    ledger[k, LEDGER.ts_ms] = ts
    st[State.LEDGER_ROWS] = k + 1


# flush, compaction and merge calls
_account_nb = leaf_sig("void", _I, "boolean", *[_I] * 9, _A1, _F1, _CONT, _BUFS)(_account_impl)
_account_main_nb = hot(_account_impl)  # the main request's call, inlined into the request loop


# ================================== the cut-point rule ==================================
@hot
def _session_cache_expired_nb(r, st, params, Q):
    """The ttl-aware rule's condition (``reference._Replay.rule``): the provider caches, the
    session's key sent a prompt before, and the gap since exceeds the TTL (the prefix is
    written afresh)."""
    b = KEY_BASE
    return (st[Cfg.CACHE_MODE] != CacheMode.NONE and st[b + Prev.EXISTS] != 0
            and Q[Q_TS, r] - st[b + Prev.TS] > params[Param.TTL_MS])


@hot
def _rule_nb(r, nvp, context, n_items, st, params, cont, bufs):
    """The latest tail position the rule allows to be cut (may be < the tail start), or
    NOFIRE when the rule does not fire."""
    _, _, vflag, _, vmsg, msg_ordinal, _ = cont
    Q, B, _, _, _, _, _, _ = bufs
    t = st[Cfg.TRIGGER]
    value = params[Param.TRIGGER_VALUE]
    K = st[Cfg.KEEP_FIRST]
    if t == Trigger.TOKENS:
        if context >= value:
            return nvp - 1
        early = params[Param.TTL_EARLY_TOKENS]
        if early > 0 and context >= early and _session_cache_expired_nb(r, st, params, Q):
            return nvp - 1
        return NOFIRE
    if t == Trigger.STRIDE:
        p = Q[Q_FIRST, r]
        if p == 0:
            return NOFIRE
        iv = np.int64(value)
        k = msg_ordinal[p - 1] // iv
        if k < st[State.NEXT_STRIDE]:
            return NOFIRE
        st[State.NEXT_STRIDE] = k + 1
        anchor = vmsg[k * iv - 1]  # the (k x N)-th message
        return anchor if anchor > st[State.CUT] else NOFIRE
    if t == Trigger.TIME:
        return nvp - 1 if Q[Q_TS, r] - st[State.LAST_COMPACTION_TS] >= value else NOFIRE
    if t == Trigger.EVENTS:
        if n_items <= value:
            return NOFIRE
        keep = np.int64(value) // 2 - K - 1
        if keep < 0:
            keep = 0
        tb = _tail_start_nb(nvp, K, st[State.CUT])
        return nvp - keep - 1 if nvp - tb > keep else NOFIRE
    if t == Trigger.TURNS:
        m = st[Cfg.TRIGGER_KEEP_TURNS]
        if r - st[State.LAST_COMPACTION_REQUEST] < value + m:
            return NOFIRE
        # the last tail row first seen (or produced) at request <= q = r - m: every row
        # before request q's first row; of the rows of request q+1's position, the outputs
        tb = _tail_start_nb(nvp, K, st[State.CUT])
        if tb >= nvp:
            return NOFIRE
        q = r - m
        if q >= r:
            return nvp - 1
        if q < 0:
            return NOFIRE
        lo = Q[Q_NVP, q]
        hi = Q[Q_NVP, q + 1]
        v = hi - 1
        while v >= lo and v >= tb:
            if vflag[v] & F_OUT:
                return v
            v -= 1
        x = lo - 1
        return x if x >= tb else NOFIRE
    if t == Trigger.RECORDED:
        p = Q[Q_FIRST, r]
        j = st[State.NEXT_BOUNDARY]
        s = 0
        while j < B.shape[1] and B[B_ROW, j] < p:
            s += B[B_SUM, j]
            j += 1
        if j == st[State.NEXT_BOUNDARY]:
            return NOFIRE
        st[State.NEXT_BOUNDARY] = j
        st[State.RECORDED_SUMMARY_TOKENS] = s
        return B[B_VPOS, j - 1] - 1  # the last position before the latest pending boundary
    return NOFIRE


@leaf
def _kept_tokens_nb(tb, nvp, keep_tokens, st, ptok, PRE):
    """How many trailing tail items fit in ``keep_tokens`` (stopping at the first misfit)."""
    if st[Cfg.MONOTONE_SUMS] != 0:
        lo = tb
        hi = nvp
        while lo < hi:
            mid = (lo + hi) // 2
            if _effsum_nb(mid, nvp, ptok, PRE, st) <= keep_tokens:
                hi = mid
            else:
                lo = mid + 1
        return nvp - lo
    acc = 0
    kept = 0
    for v in range(nvp - 1, tb - 1, -1):
        e = _effsum_nb(v, v + 1, ptok, PRE, st)
        if acc + e > keep_tokens:
            break
        acc += e
        kept += 1
    return kept


@leaf_sig(_I, _I, _I, _I, "boolean", _A1, _A1, _A2, _P1)
def _choose_cut_nb(latest, tb, nvp, respect_keep, st, ptok, PRE, prev_safe):
    if respect_keep:
        ke = st[Cfg.KEEP_LAST_EVENTS]
        if ke > 0:
            if nvp - tb <= ke:
                return -1
            if nvp - ke - 1 < latest:
                latest = nvp - ke - 1
        kt = st[Cfg.KEEP_LAST_TOKENS]
        if st[Cfg.KEEP_LAST_SHARE_PPM] > 0:
            share = st[Cfg.KEEP_LAST_SHARE_PPM] * _effsum_nb(tb, nvp, ptok, PRE, st) // SHARE_SCALE
            if share > kt:
                kt = share
        if kt > 0:
            kept = _kept_tokens_nb(tb, nvp, kt, st, ptok, PRE)
            if kept >= nvp - tb:
                return -1
            if nvp - kept - 1 < latest:
                latest = nvp - kept - 1
    x = latest if latest < nvp - 1 else nvp - 1
    if x < tb:
        return -1
    s = prev_safe[x]
    return s if s >= tb else -1


# ================================== actions ==================================
@leaf
def _retain_nb(tb, cutp, st, ptok, vflag, RET):
    """Carry raw (user) messages of the span and of the retained block across the cut:
    the most recent ones whose tokens fit the budget (stopping at the first misfit)."""
    kind = st[Cfg.RETAIN_KIND]
    if kind == Retain.NONE:
        return
    budget = st[Cfg.RETAIN_TOKENS]
    pick = F_USER if kind == Retain.USER_MESSAGES else F_MSG
    acc = 0
    low = tb  # lowest span position whose pick is kept
    stopped = False
    for v in range(cutp, tb - 1, -1):
        if vflag[v] & pick:
            t = ptok[v + 1] - ptok[v]
            if acc + t > budget:
                stopped = True
                low = v + 1
                break
            acc += t
    rh = st[State.RETAINED_HEAD]
    rt = st[State.RETAINED_TAIL]
    if stopped:
        new_rh = rt
    elif st[Cfg.TOKENS_NONNEG] != 0:
        # smallest j with acc + tokens(ret[j:rt]) <= budget (suffix sums are monotone)
        lo = rh
        hi = rt
        while lo < hi:
            mid = (lo + hi) // 2
            if acc + RET[1, rt] - RET[1, mid] <= budget:
                hi = mid
            else:
                lo = mid + 1
        new_rh = lo
    else:
        new_rh = rt
        a2 = acc
        for j in range(rt - 1, rh - 1, -1):
            t = RET[1, j + 1] - RET[1, j]
            if a2 + t > budget:
                break
            a2 += t
            new_rh = j
    k = rt
    for v in range(low, cutp + 1):
        if vflag[v] & pick:
            RET[0, k] = v
            RET[1, k + 1] = RET[1, k] + ptok[v + 1] - ptok[v]
            k += 1
    st[State.RETAINED_HEAD] = new_rh
    st[State.RETAINED_TAIL] = k
    st[State.RETAINED_TOKENS] = RET[1, k] - RET[1, new_rh]


@leaf_sig("void", _A1, _A2, _I, _I, "boolean")
def _seg_push_nb(st, SEG, no, tok, replace):
    k = st[State.SEGMENTS_TAIL]
    if replace:
        st[State.SEGMENTS_HEAD] = k
    SEG[0, k] = no
    SEG[1, k] = tok
    SEG[2, k + 1] = SEG[2, k] + tok
    st[State.SEGMENTS_TAIL] = k + 1
    st[State.SEGMENT_TOKENS] = SEG[2, k + 1] - SEG[2, st[State.SEGMENTS_HEAD]]


@leaf
def _rebuild_nb(r, nvp, nseg, st, cont, bufs):
    """reference.py's ``provider_window.rebuild``: the provider window becomes the local
    checkpoint and the raw events after the local cut; the session's continuation is reset."""
    ptok, vrow, _, _, vmsg, msg_ordinal, PRE = cont
    _, _, _, SEG, _, _, events, _ = bufs
    if st[State.LOCAL_ARTIFACT] < 0:
        return
    before = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    dropped = st[State.SEGMENT_TOKENS]
    _seg_push_nb(st, SEG, st[State.LOCAL_ARTIFACT], st[State.LOCAL_TOKENS], True)
    st[State.CUT] = st[State.LOCAL_CUT]
    _mark_nb(st, True, False)
    st[State.RESET_PENDING] = 1
    after = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    _event_nb(events, st, EventType.REBUILD, r, -1, vrow[st[State.LOCAL_CUT]], st[State.LOCAL_ARTIFACT], before, after,
              st[State.LOCAL_TOKENS], nseg, dropped, Strategy.SUMMARY)


@leaf
def _local_checkpoint_nb(r, nvp, st, params, cont, bufs):
    """reference.py's ``provider_window.local_checkpoint``: a readable checkpoint of the
    raw events after the local cut, folded into the previous one; the window is unchanged."""
    ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal, PRE = cont
    Q, _, RET, SEG, PRN, _, events, ledger = bufs
    lcut = st[State.LOCAL_CUT]
    if nvp <= 0 or ptok[nvp] - ptok[lcut + 1] < st[Cfg.LOCAL_TOKENS]:
        return
    cutp = prev_safe[nvp - 1]
    if cutp <= lcut:
        return
    span_tokens = ptok[cutp + 1] - ptok[lcut + 1]
    out = clamp_summary_nb(st[State.LOCAL_TOKENS] + span_tokens, params[Param.SUMMARY_RATIO], params[Param.SUMMARY_CAP],
                           params[Param.SUMMARY_FLOOR])
    context = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    _account_nb(1, True, context, st[Cfg.LOCAL_PROMPT], r, CallKind.COMPACTION, out, context, context, 0,
                nvp, st, params, cont, bufs)
    artifact = st[State.NEXT_ARTIFACT]
    st[State.NEXT_ARTIFACT] = artifact + 1
    _event_nb(events, st, EventType.LOCAL_CHECKPOINT, r, vrow[lcut + 1], vrow[cutp], artifact, context, context,
              out, cutp - lcut, span_tokens, Strategy.SUMMARY)
    st[State.LOCAL_CUT] = cutp
    st[State.LOCAL_TOKENS] = out
    st[State.LOCAL_ARTIFACT] = artifact


@leaf
def _merge_if_needed_nb(r, nvp, st, params, cont, bufs):
    ptok, vrow, vflag, _, vmsg, msg_ordinal, PRE = cont
    Q, _, RET, SEG, PRN, _, events, ledger = bufs
    limit = st[Cfg.MAX_SEGMENTS]
    nseg = st[State.SEGMENTS_TAIL] - st[State.SEGMENTS_HEAD]
    if not (st[Cfg.ACCUMULATE] != 0 and limit > 0 and nseg > limit):
        return
    if st[Cfg.LOCAL_TOKENS] > 0:  # opaque items are not merged: rebuilt from the local checkpoint
        _rebuild_nb(r, nvp, nseg, st, cont, bufs)
        return
    total = st[State.SEGMENT_TOKENS]
    merged = clamp_summary_nb(total, params[Param.SUMMARY_RATIO], params[Param.SUMMARY_CAP],
                              params[Param.SUMMARY_FLOOR]) + np.int64(params[Param.TASK_STATE_TOKENS])
    before = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    _account_nb(1, False, st[Cfg.PREFIX_TOKENS] + total, st[Cfg.SUMMARY_PROMPT], r, CallKind.MERGE, merged, before,
                before, 0,
                nvp, st, params,
             cont, bufs)
    artifact = st[State.NEXT_ARTIFACT]
    st[State.NEXT_ARTIFACT] = artifact + 1
    _seg_push_nb(st, SEG, artifact, merged, True)
    _mark_nb(st, True, False)
    after = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    _event_nb(events, st, EventType.MERGE, r, -1, -1, artifact, before, after, merged, nseg, total, Strategy.SUMMARY)


@leaf_sig(_I, _I, _I, _I, "boolean", _A1, _F1, _CONT, _BUFS)
def _compact_nb(r, nvp, latest, forced, st, params, cont, bufs):
    """Try to compact; returns LedgerFlag bits describing what happened."""
    ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal, PRE = cont
    Q, _, RET, SEG, PRN, _, events, ledger = bufs
    K = st[Cfg.KEEP_FIRST]
    before = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    tb = _tail_start_nb(nvp, K, st[State.CUT])
    cutp = _choose_cut_nb(latest, tb, nvp, True, st, ptok, PRE, prev_safe)
    if cutp < 0 and forced:
        cutp = _choose_cut_nb(latest, tb, nvp, False, st, ptok, PRE, prev_safe)
    if cutp < 0:
        return LedgerFlag.SKIPPED_NO_SAFE_CUT
    span_n = cutp - tb + 1
    if not forced:
        n_items = _n_items_nb(nvp, st, vrow, msg_ordinal, vmsg)
        if span_n < params[Param.MIN_PROGRESS] * n_items:
            return LedgerFlag.SKIPPED_NO_PROGRESS
    span_tokens = _effsum_nb(tb, cutp + 1, ptok, PRE, st)
    s = st[Cfg.STRATEGY]
    accumulate = st[Cfg.ACCUMULATE] != 0
    artifact = -1
    item_tokens = 0
    if s in (Strategy.SUMMARY, Strategy.OPAQUE, Strategy.RECORDED):
        if s == Strategy.RECORDED:
            item_tokens = st[State.RECORDED_SUMMARY_TOKENS] if st[Cfg.TRIGGER] == Trigger.RECORDED else 0
        elif accumulate:
            item_tokens = clamp_summary_nb(span_tokens, params[Param.SUMMARY_RATIO],
                                           params[Param.SUMMARY_CAP], params[Param.SUMMARY_FLOOR])
        else:
            item_tokens = clamp_summary_nb(st[State.SEGMENT_TOKENS] + span_tokens, params[Param.SUMMARY_RATIO],
                                           params[Param.SUMMARY_CAP], params[Param.SUMMARY_FLOOR])
        if s == Strategy.SUMMARY:  # reference.summary_size: a task-state checkpoint's block on top
            item_tokens += np.int64(params[Param.TASK_STATE_TOKENS])
        artifact = st[State.NEXT_ARTIFACT]
        st[State.NEXT_ARTIFACT] = artifact + 1
        key = 0 if st[Cfg.SUMMARY_SHARES_CACHE] != 0 else 1
        _account_nb(key, True, before, st[Cfg.SUMMARY_PROMPT], r, CallKind.COMPACTION, item_tokens, before, before, 0,
                 nvp, st, params, cont, bufs)
        if s != Strategy.RECORDED:
            _seg_push_nb(st, SEG, artifact, item_tokens, not accumulate)
        if st[Cfg.PROBE_PROMPT] > 0 and s == Strategy.SUMMARY:
            # the probe: the summary (with the segments it sits in) checked in a call of its own,
            # a prompt of its own shape (the summarizer's cache key)
            _account_nb(1, False, st[Cfg.PREFIX_TOKENS] + st[State.SEGMENT_TOKENS], st[Cfg.PROBE_PROMPT], r,
                        CallKind.COMPACTION, item_tokens,
                        before, before, 0, nvp, st, params, cont, bufs)
    _retain_nb(tb, cutp, st, ptok, vflag, RET)
    if st[State.COVERED_FROM] < 0 or accumulate or s == Strategy.TRUNCATE:
        st[State.COVERED_FROM] = vrow[tb]
    st[State.CUT] = cutp
    st[State.COMPACTIONS] += 1
    st[State.LAST_COMPACTION_REQUEST] = r
    st[State.LAST_COMPACTION_TS] = Q[Q_TS, r]
    _mark_nb(st, True, False)
    after = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    _event_nb(events, st, EventType.CHECKPOINT, r, st[State.COVERED_FROM], vrow[cutp], artifact, before, after,
           item_tokens, span_n, span_tokens, s)
    _merge_if_needed_nb(r, nvp, st, params, cont, bufs)
    return LedgerFlag.COMPACTED


@leaf
def _clear_window_nb(a, b, st, ptok, vflag):
    """Move the sliding sums over clearable rows to [a, b) (both ends only move forward):
    returns (rows, tokens freed by clearing them as they stand now)."""
    cp = st[Cfg.CLEAR_PLACEHOLDER]
    mask_on = st[Cfg.MASKING] != 0
    wb = st[State.GAIN_TO]
    while wb < b:
        if vflag[wb] & F_CLEAR:
            g = ptok[wb + 1] - ptok[wb] - cp
            st[State.GAIN_COUNT] += 1
            st[State.GAIN_TOKENS] += g if g > 0 else 0
        wb += 1
    st[State.GAIN_TO] = wb
    if mask_on:  # the masked part of the window: class-c rows before the class bound
        for cls, sb, sn, sg, bound in (
                (F_RESULT, State.GAIN_TO0, State.GAIN_COUNT0, State.GAIN_TOKENS0, State.MASKED0),
                (MASK_CLASS, State.GAIN_TO1, State.GAIN_COUNT1, State.GAIN_TOKENS1, State.MASKED1)):
            x = b if b < st[bound] else st[bound]
            v = st[sb]
            while v < x:
                f = vflag[v]
                if (f & F_CLEAR) != 0 and (f & MASK_CLASS) == cls:
                    g = ptok[v + 1] - ptok[v] - cp
                    st[sn] += 1
                    st[sg] += g if g > 0 else 0
                v += 1
            st[sb] = v
    wa = st[State.GAIN_FROM]
    while wa < a:
        f = vflag[wa]
        if f & F_CLEAR:
            g = ptok[wa + 1] - ptok[wa] - cp
            g = g if g > 0 else 0
            st[State.GAIN_COUNT] -= 1
            st[State.GAIN_TOKENS] -= g
            c = f & MASK_CLASS
            if c == F_RESULT and wa < st[State.GAIN_TO0]:
                st[State.GAIN_COUNT0] -= 1
                st[State.GAIN_TOKENS0] -= g
            elif c == MASK_CLASS and wa < st[State.GAIN_TO1]:
                st[State.GAIN_COUNT1] -= 1
                st[State.GAIN_TOKENS1] -= g
        wa += 1
    st[State.GAIN_FROM] = wa
    if st[State.GAIN_TO0] < wa:
        st[State.GAIN_TO0] = wa
    if st[State.GAIN_TO1] < wa:
        st[State.GAIN_TO1] = wa
    gain = st[State.GAIN_TOKENS]
    if mask_on:  # masked rows stand as mask placeholders
        mp_gain = st[Cfg.MASK_PLACEHOLDER] - cp
        if mp_gain < 0:
            mp_gain = 0
        gain += (mp_gain * (st[State.GAIN_COUNT0] + st[State.GAIN_COUNT1]) - st[State.GAIN_TOKENS0]
                 - st[State.GAIN_TOKENS1])
    return st[State.GAIN_COUNT], gain


@leaf
def _clear_tool_uses_nb(r, nvp, st, params, cont, bufs):
    ptok, vrow, vflag, _, vmsg, msg_ordinal, PRE = cont
    Q, _, _, _, _, RING, events, _ = bufs
    K = st[Cfg.KEEP_FIRST]
    tb = _tail_start_nb(nvp, K, st[State.CUT])
    if tb >= nvp:
        return 0
    # tool calls before the request's first row; the last keep + 1 of them in RING
    size = RING.size
    seen = st[State.CALLS_SEEN]
    for v in range(st[State.CALL_SCAN], nvp):
        if vflag[v] & F_CALL:
            RING[seen % size] = v
            seen += 1
    st[State.CALLS_SEEN] = seen
    st[State.CALL_SCAN] = nvp
    keep = st[Cfg.CLEAR_KEEP]
    if keep >= 0 and (seen < keep + 1 or RING[(seen - keep - 1) % size] < tb):
        return 0  # at most `keep` tool calls in the tail
    if keep > 0:
        bpos = RING[(seen - keep) % size]  # the keep-th most recent call: kept with what follows
        brow = vrow[bpos]
    else:
        bpos = nvp
        brow = Q[Q_FIRST, r]
    a = st[State.CLEARED] + 1
    if a < tb:
        a = tb
    if a >= bpos:
        return 0
    cnt, gain = _clear_window_nb(a, bpos, st, ptok, vflag)
    if cnt == 0 or gain <= 0 or gain < params[Param.CLEAR_AT_LEAST]:
        return 0
    ptr = st[State.CLEAR_SCAN]
    if ptr < a:
        ptr = a
    while (vflag[ptr] & F_CLEAR) == 0:
        ptr += 1
    st[State.CLEAR_SCAN] = ptr
    before = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    st[State.CLEARED] = bpos - 1
    st[State.CLEARED_ROW] = brow - 1
    _mark_nb(st, False, True)
    after = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    _event_nb(events, st, EventType.CONTEXT_EDIT, r, vrow[ptr], brow - 1, -1, before, after, gain, cnt, gain,
           Strategy.CLEAR_TOOL_USES)
    return LedgerFlag.EDITED


@leaf
def _truncate_to_fit_nb(r, nvp, st, params, cont, bufs):
    """Emergency: cut at the earliest safe row that makes the context fit the window (a
    truncation, not a compaction). Returns ``LedgerFlag.TRUNCATED`` when it cut, else 0."""
    ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal, PRE = cont
    _, _, _, _, _, _, events, _ = bufs
    K = st[Cfg.KEEP_FIRST]
    window = params[Param.WINDOW]
    before = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    tb = _tail_start_nb(nvp, K, st[State.CUT])
    if tb >= nvp:
        return 0
    chosen = prev_safe[nvp - 1]
    if chosen < tb:
        return 0
    base = st[Cfg.PREFIX_TOKENS] + ptok[K] + st[State.RETAINED_TOKENS] + _shown_stok_nb(st)
    L = st[Cfg.RECENT_MESSAGES_LIMIT]
    need_message = st[Cfg.CUT_AT_MESSAGE] != 0
    for i in range(tb, nvp):
        f = vflag[i]
        if (f & F_OPEN0) != 0 and (not need_message or (f & F_MSG) != 0):
            ss = _shown_start_nb(i + 1, nvp, L, vrow, msg_ordinal, vmsg)
            if base + _effsum_nb(ss, nvp, ptok, PRE, st) <= window:
                chosen = i
                break
    return _cut_nb(r, nvp, tb, chosen, before, st, cont, bufs)


@leaf
def _cut_nb(r, nvp, tb, chosen, before, st, cont, bufs):
    """Truncate the tail positions [tb, chosen] (an overflow's last resort: nothing retained,
    no checkpoint frame) and record it; returns ``LedgerFlag.TRUNCATED``."""
    ptok, vrow, _, _, vmsg, msg_ordinal, PRE = cont
    _, _, _, _, _, _, events, _ = bufs
    span_n = chosen - tb + 1
    span_tokens = _effsum_nb(tb, chosen + 1, ptok, PRE, st)
    st[State.CUT] = chosen
    _mark_truncated_nb(st)
    after = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    _event_nb(events, st, EventType.TRUNCATION, r, vrow[tb], vrow[chosen], -1, before, after, 0, span_n,
              span_tokens, Strategy.TRUNCATE)
    return LedgerFlag.TRUNCATED


@leaf
def _mask_by_bound_nb(r, nvp, st, PRE, vflag, Q):
    """Masking by tokens or count: every tool output of the tail but the newest
    ``Cfg.MASK_KEEP_TOKENS`` tokens (or ``Cfg.MASK_KEEP_RESULTS`` outputs) of them becomes a placeholder,
    once that frees at least ``Cfg.MASK_AT_LEAST`` (the bound only moves forward); with
    ``Cfg.MASK_IDLE_MS`` only when request ``r`` follows ``r - 1`` by that many ms. Returns True
    when outputs were masked now."""
    if st[Cfg.MASK_IDLE_MS] > 0 and not (r > 0 and Q[Q_TS, r] - Q[Q_TS, r - 1] >= st[Cfg.MASK_IDLE_MS]):
        return False
    tb = _tail_start_nb(nvp, st[Cfg.KEEP_FIRST], st[State.CUT])
    R = st[Cfg.PRE_OUTPUT_TOKENS]
    keep_results = st[Cfg.MASK_KEEP_RESULTS]
    if keep_results > 0:
        c = tb  # the position of the keep_results-th newest tool output (none: keep all)
        seen = 0
        for v in range(nvp - 1, tb - 1, -1):
            if (vflag[v] & F_RESULT) != 0:
                seen += 1
                if seen == keep_results:
                    c = v
                    break
    else:
        total = PRE[R, nvp]
        keep = st[Cfg.MASK_KEEP_TOKENS]
        lo = tb
        hi = nvp
        while lo < hi:  # the first position whose outputs up to nvp fit the budget
            mid = (lo + hi) // 2
            if total - PRE[R, mid] <= keep:
                hi = mid
            else:
                lo = mid + 1
        c = lo
    a = st[State.MASKED0] if st[State.MASKED0] > tb else tb
    if c <= a or PRE[R, c] - PRE[R, a] <= 0:
        return False
    gain = -_range_nb(PRE, st[Cfg.PRE_MASKED0], a, c)
    if st[Cfg.HAS_OUTPUT_RESULTS] != 0:
        gain -= _range_nb(PRE, st[Cfg.PRE_MASKED1], a, c)
    if gain < st[Cfg.MASK_AT_LEAST]:
        return False
    st[State.MASKED0] = c
    st[State.MASKED1] = c
    return True


@leaf
def _truncate_half_nb(r, nvp, st, params, cont, bufs):
    """Emergency (Roo Code's fallback): drop the older half of the raw tail, cut at the last
    safe row of that half (a truncation). Returns ``LedgerFlag.TRUNCATED`` when it cut."""
    ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal, PRE = cont
    _, _, _, _, _, _, events, _ = bufs
    tb = _tail_start_nb(nvp, st[Cfg.KEEP_FIRST], st[State.CUT])
    half = (nvp - tb) // 2
    if half <= 0:
        return 0
    chosen = prev_safe[tb + half - 1]
    if chosen < tb:
        return 0
    before = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
    return _cut_nb(r, nvp, tb, chosen, before, st, cont, bufs)


# ================================== the loop ==================================
@leaf
def _prune_nb(r, nvp, context, st, params, cont, bufs):
    """Session pruning of request ``r``'s prompt (``pruning.prune_step``): returns the tokens
    it sends; its entries (position, PruneState) in PRN rows 2-3, their count in State.PRUNED_ENTRIES
    (0: sent unpruned). The context itself is not changed. Costs O(tail) when it runs, which
    is only after an idle gap of the ttl."""
    ptok, vrow, vflag, _, vmsg, msg_ordinal, PRE = cont
    Q, _, _, _, PRN, _, _, _ = bufs
    st[State.PRUNED_ENTRIES] = 0
    if r == 0 or Q[Q_TS, r] - Q[Q_TS, r - 1] < params[Param.PRUNE_TTL_MS]:
        return context
    keep = st[Cfg.PRUNE_KEEP]
    if keep > 0 and r < keep:
        return context
    window = params[Param.WINDOW]
    total = context - st[Cfg.PREFIX_TOKENS]
    if total / window < params[Param.PRUNE_SOFT_RATIO]:
        return context
    K = st[Cfg.KEEP_FIRST]
    fu = st[Cfg.FIRST_USER]
    if fu < 0 or nvp < K:
        return context
    tb = _tail_start_nb(nvp, K, st[State.CUT])
    lo = _shown_start_nb(tb, nvp, st[Cfg.RECENT_MESSAGES_LIMIT], vrow, msg_ordinal, vmsg)
    if lo < fu + 1:
        lo = fu + 1
    hi = nvp
    if keep > 0 and Q[Q_NVP, r - keep] < hi:
        hi = Q[Q_NVP, r - keep]
    over = params[Param.PRUNE_SOFT_OVER]
    kept = np.int64(params[Param.PRUNE_SOFT_KEEP])
    placeholder = np.int64(params[Param.PRUNE_PLACEHOLDER])
    hard = params[Param.PRUNE_HARD_RATIO]
    prunable = 0
    for v in range(lo, hi):  # the soft trim
        if (vflag[v] & F_RESULT) != 0:
            e = _effsum_nb(v, v + 1, ptok, PRE, st)
            if e > over:
                total += kept - e
                prunable += kept
            else:
                prunable += e
    clearing = params[Param.PRUNE_HARD_ON] != 0 and total / window >= hard and prunable >= params[Param.PRUNE_MIN]
    n = 0
    for v in range(lo, hi):  # the hard clear, oldest first, while the ratio stays >= hard
        if (vflag[v] & F_RESULT) == 0:
            continue
        e = _effsum_nb(v, v + 1, ptok, PRE, st)
        if clearing and total / window < hard:
            clearing = False
        if clearing:
            PRN[2, n] = v
            PRN[3, n] = PruneState.CLEARED
            total += placeholder - (kept if e > over else e)
            n += 1
        elif e > over:
            PRN[2, n] = v
            PRN[3, n] = PruneState.TRIMMED
            n += 1
    st[State.PRUNED_ENTRIES] = n
    return total + st[Cfg.PREFIX_TOKENS]


@leaf
def _requests_nb(r0, st, params, cont, bufs):
    """Replay requests from ``r0`` on; returns the first request not replayed (the number of
    requests, or earlier when an output buffer might not hold one more request)."""
    ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal, PRE = cont
    Q, B, RET, SEG, PRN, RING, events, ledger = bufs
    nr = Q.shape[1]
    nv = vrow.size
    K = st[Cfg.KEEP_FIRST]
    L = st[Cfg.RECENT_MESSAGES_LIMIT]
    m = st[Cfg.MASK_AFTER_TURNS]
    mask_on = st[Cfg.MASKING] != 0
    trigger = st[Cfg.TRIGGER]
    strategy = st[Cfg.STRATEGY]
    window = params[Param.WINDOW]
    for r in range(r0, nr):
        # room for everything one request can write
        if (st[State.LEDGER_ROWS] + MAX_LEDGER_PER_REQUEST > ledger.shape[0]
                or st[State.EVENT_ROWS] + MAX_EVENTS_PER_REQUEST > events.shape[0]
                or st[State.SEGMENTS_TAIL] + MAX_SEGMENTS_PER_REQUEST >= SEG.shape[1]):
            return r
        p = Q[Q_FIRST, r]
        nvp = Q[Q_NVP, r]
        flags = 0
        if mask_on and (st[Cfg.MASK_KEEP_TOKENS] > 0 or st[Cfg.MASK_KEEP_RESULTS] > 0):
            if _mask_by_bound_nb(r, nvp, st, PRE, vflag, Q):
                _mark_nb(st, False, True)
                flags |= LedgerFlag.EDITED
        elif mask_on and r >= m:
            old0 = st[State.MASKED0]
            old1 = st[State.MASKED1]
            q = r - m
            st[State.MASKED0] = Q[Q_NVP, q]
            st[State.MASKED1] = Q[Q_NVP, q + 1] if q + 1 < nr else nv
            # tool results that became placeholders with this request, in the shown tail
            tb = _tail_start_nb(nvp, K, st[State.CUT])
            ss = _shown_start_nb(tb, nvp, L, vrow, msg_ordinal, vmsg)
            newly = False
            hi = st[State.MASKED0] if st[State.MASKED0] < nvp else nvp
            for v in range(old0 if old0 > ss else ss, hi):
                if (vflag[v] & MASK_CLASS) == F_RESULT:
                    newly = True
                    break
            if not newly and st[Cfg.HAS_OUTPUT_RESULTS] != 0:
                hi = st[State.MASKED1] if st[State.MASKED1] < nvp else nvp
                for v in range(old1 if old1 > ss else ss, hi):
                    if (vflag[v] & MASK_CLASS) == MASK_CLASS:
                        newly = True
                        break
            if newly:
                _mark_nb(st, False, True)
                flags |= LedgerFlag.EDITED
        if L > 0:
            tb = _tail_start_nb(nvp, K, st[State.CUT])
            ss = _shown_start_nb(tb, nvp, L, vrow, msg_ordinal, vmsg)
            start = ss if ss < nvp else -1
            if start != st[State.SHOWN_START] and nvp - ss < nvp - tb:
                # the bounded window slid: older raw messages left the prompt
                _mark_nb(st, False, True)
                flags |= LedgerFlag.EDITED
            st[State.SHOWN_START] = start
        before = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
        if (st[Cfg.FLUSH] != 0 and before >= params[Param.FLUSH_THRESHOLD]
                and st[State.FLUSHED_AT] != st[State.COMPACTIONS]):
            output = st[Cfg.FLUSH_OUTPUT]
            _account_nb(0, True, before, st[Cfg.FLUSH_PROMPT], r, CallKind.FLUSH, output, before, before, 0, nvp, st,
                     params, cont, bufs)
            st[State.FLUSHED_AT] = st[State.COMPACTIONS]
            flags |= LedgerFlag.FLUSHED
            _event_nb(events, st, EventType.FLUSH, r, -1, p - 1, -1, before, before, output, 0, 0, 0)
        context = before
        if trigger != Trigger.NONE and strategy != Strategy.NONE:
            n_items = _n_items_nb(nvp, st, vrow, msg_ordinal, vmsg) if trigger == Trigger.EVENTS else 0
            measured = before
            if st[Cfg.TRIGGER_SCOPE] != 0:  # the body: less the fixed prefix and the pinned head
                measured -= st[Cfg.PREFIX_TOKENS] + ptok[nvp if nvp < K else K]
            latest = _rule_nb(r, nvp, measured, n_items, st, params, cont, bufs)
            if latest != NOFIRE:
                if strategy == Strategy.CLEAR_TOOL_USES:
                    done = _clear_tool_uses_nb(r, nvp, st, params, cont, bufs)
                else:
                    done = _compact_nb(r, nvp, latest, False, st, params, cont, bufs)
                flags |= done
                if done & (LedgerFlag.COMPACTED | LedgerFlag.EDITED):
                    context = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
        if context > window:
            flags |= LedgerFlag.OVERFLOW | LedgerFlag.EMERGENCY
            _event_nb(events, st, EventType.OVERFLOW, r, -1, -1, -1, context, context, 0, 0, 0, 0)
            if st[Cfg.EMERGENCY] == Emergency.COMPACT and strategy in (Strategy.SUMMARY, Strategy.OPAQUE):
                flags |= _compact_nb(r, nvp, nvp - 1, True, st, params, cont, bufs) & LedgerFlag.COMPACTED
                context = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
            if context > window and st[Cfg.EMERGENCY] == Emergency.TRUNCATE_HALF:
                flags |= _truncate_half_nb(r, nvp, st, params, cont, bufs)
                context = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
            if context > window:
                flags |= _truncate_to_fit_nb(r, nvp, st, params, cont, bufs)
                context = _context_nb(nvp, st, ptok, PRE, vrow, msg_ordinal, vmsg)
        if st[Cfg.LOCAL_TOKENS] > 0 and (flags & LedgerFlag.COMPACTED) == 0:
            _local_checkpoint_nb(r, nvp, st, params, cont, bufs)
        sent = context
        if st[Cfg.PRUNING] != 0:
            sent = _prune_nb(r, nvp, context, st, params, cont, bufs)
            if st[State.PRUNED_ENTRIES] > 0:
                flags |= LedgerFlag.PRUNED
                st[KEY_BASE + Prev.EDITED] = 1
        if sent > window:  # never sent over the window: the provider's error
            flags |= LedgerFlag.FAILED
        _account_main_nb(0, True, sent, 0, r, CallKind.MAIN, Q[Q_OUT, r], before, sent, flags, nvp, st, params,
                         cont, bufs)
        if flags & LedgerFlag.PRUNED:  # the next prompt sends the pruned results in full again
            st[KEY_BASE + Prev.EDITED] = 1
    return nr


# ================================== the simulator ==================================
class BufferPlan(NamedTuple):
    """Slots of a replay's buffer plan (int64 vector, ``kernel.buffer_plan`` fills it)."""

    records: int = 0  # 1: keep every ledger/event row; 0: reduce them to totals chunk by chunk
    ledger_rows: int = 1  # rows of the ledger buffer (records: enough for the whole replay)
    event_rows: int = 2
    segments: int = 3  # initial summary-segment slots (grown when needed)
    ring: int = 4  # recent tool calls kept by clear_tool_uses
    retained: int = 5  # raw items a compaction can retain
    placeholder_rows: int = 6  # rows of the placeholder prefix-sum table PRE
    pruned: int = 7  # entries of a pruned prompt (session pruning: the tool results; else 1)


PLAN = BufferPlan()
N_PLAN = len(PLAN)


@njit
def init_state_nb(cfg, Q):
    """The state vector a replay starts from: the configuration plus the initial state."""
    st = np.zeros(N_STATE, np.int64)
    for i in range(N_CFG):  # loops, not slice assignments: those cost seconds of compile time
        st[i] = cfg[i]
    st[State.CUT] = -1
    st[State.CLEARED] = -1
    st[State.CLEARED_ROW] = -1
    st[State.FLUSHED_AT] = -1
    st[State.LAST_COMPACTION_TS] = Q[Q_TS, 0] if Q.shape[1] > 0 else 0
    st[State.NEXT_STRIDE] = 1
    st[State.COVERED_FROM] = -1
    st[State.SHOWN_START] = -1
    st[State.LOCAL_CUT] = -1
    st[State.LOCAL_ARTIFACT] = -1
    return st


@njit
def grown_rows_nb(a, rows):
    """``a`` (2-D) with room for at least ``rows`` rows, its rows kept."""
    out = np.empty((max(rows, 2 * a.shape[0]), a.shape[1]), a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j]
    return out


@njit
def simulate_nb(cfg, params, prices, plan, ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal, Q, B,
                excluded_v, ledger, events, totals, costs):
    """Replay one configuration of one continuity: the one simulator both paths run.

    ``cfg`` (int64 [N_CFG], ``kernel.with_continuity``) and ``params`` (float64 [N_PARAMS]) are
    the lowered policy, ``plan`` (int64 [N_PLAN]) its buffer plan; the continuity is given by
    its positions (``kernel.positions``), the safe cuts for the policy's boundary rule and the
    clearable-tool exclusion mask (empty: none excluded).

    With ``plan[PLAN.records]`` every ledger/event row is kept: returns ``(ledger, events,
    ledger rows, event rows, retained positions, segments)`` (the buffers, grown if they were
    too small; the last two are the buffers a prompt record's windows index, see
    ``_record_shown_nb``). Otherwise ``ledger``/``events`` are a chunk that is added to ``totals``/``costs``
    (:func:`metrics_nb.add_totals_nb`, calls priced by ``prices``) and emptied whenever the
    request loop stops for room, so a replay needs O(1) memory beyond its policy arrays.
    """
    nv = vrow.size
    vf = vflag
    PRE = np.zeros((1, 1), np.int64)
    if cfg[Cfg.MASKING] != 0 or cfg[Cfg.CLEARING] != 0:
        # every row of PRE is written by policy_arrays_nb except the zero column
        PRE = np.empty((plan[PLAN.placeholder_rows], nv + 1), np.int64)
        for row in range(PRE.shape[0]):
            PRE[row, 0] = 0
        if cfg[Cfg.CLEARING] != 0:
            vf = np.empty_like(vflag)
        policy_arrays_nb(ptok, vflag, excluded_v, cfg, PRE, vf)
    st = init_state_nb(cfg, Q)
    RET = np.zeros((2, plan[PLAN.retained] + 1), np.int64)  # retained positions, cumulative tokens
    SEG = np.zeros((3, plan[PLAN.segments]), np.int64)  # artifact number, tokens, cumulative tokens
    RING = np.zeros(plan[PLAN.ring], np.int64)
    PRN = np.zeros((4, plan[PLAN.pruned]), np.int64)  # pruned entries: previous prompt's, this one's
    records = plan[PLAN.records] != 0
    nr = Q.shape[1]
    r = np.int64(0)  # not a literal 0: numba would compile _requests_nb once more for Literal[int](0)
    cont = (ptok, vrow, vf, prev_safe, vmsg, msg_ordinal, PRE)
    while r < nr:
        bufs = (Q, B, RET, SEG, PRN, RING, events, ledger)  # anew each pass: a buffer may have grown
        r = _requests_nb(r, st, params, cont, bufs)
        if not records:
            add_totals_nb(ledger, st[State.LEDGER_ROWS], events, st[State.EVENT_ROWS], prices, totals, costs)
            st[State.LEDGER_ROWS] = 0
            st[State.EVENT_ROWS] = 0
        if r >= nr:
            break
        # a buffer might not hold one more request: grow it (records never need to with the
        # plan's bounds; a chunk was just emptied)
        if st[State.LEDGER_ROWS] + MAX_LEDGER_PER_REQUEST > ledger.shape[0]:
            ledger = grown_rows_nb(ledger, st[State.LEDGER_ROWS] + MAX_LEDGER_PER_REQUEST)
        if st[State.EVENT_ROWS] + MAX_EVENTS_PER_REQUEST > events.shape[0]:
            events = grown_rows_nb(events, st[State.EVENT_ROWS] + MAX_EVENTS_PER_REQUEST)
        if st[State.SEGMENTS_TAIL] + MAX_SEGMENTS_PER_REQUEST >= SEG.shape[1]:
            grown = np.zeros((3, 2 * SEG.shape[1]), np.int64)
            for i in range(3):
                for j in range(SEG.shape[1]):
                    grown[i, j] = SEG[i, j]
            SEG = grown
    return ledger, events, st[State.LEDGER_ROWS], st[State.EVENT_ROWS], RET[0], SEG


@njit(parallel=True)
def simulate_many_nb(cfgs, params, prices, plans, ptok, vrow, vflag, safe_message, safe_any, vmsg,
                     msg_ordinal, Q, B, excluded_v):
    """Totals of ``cfgs.shape[0]`` configurations of one continuity, ``prange`` over them:
    :func:`simulate_nb` per configuration with a chunk-sized ledger/event buffer.

    Rows of ``cfgs``, ``params``, ``prices`` (float64 [n, 4, TABLE_WIDTH]) and ``plans`` are
    the configurations; the positions, the two safe-cut arrays (cut at a message or at any
    event) and the exclusion mask are shared. Returns ``(int64 [n, N_TOTALS], float64 [n,
    N_COSTS])``.
    """
    n = cfgs.shape[0]
    totals = np.zeros((n, N_TOTALS), np.int64)
    costs = np.zeros((n, N_COSTS), np.float64)
    for c in prange(n):
        cfg = cfgs[c]
        plan = plans[c]
        safe = safe_message if cfg[Cfg.CUT_AT_MESSAGE] != 0 else safe_any
        ledger = np.empty((plan[PLAN.ledger_rows], N_LEDGER), np.int64)
        events = np.empty((plan[PLAN.event_rows], N_EVENT), np.int64)
        simulate_nb(cfg, params[c], prices[c], plan, ptok, vrow, vflag, safe, vmsg, msg_ordinal, Q, B,
                    excluded_v, ledger, events, totals[c], costs[c])
    return totals, costs
