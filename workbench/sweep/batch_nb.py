"""Batched structural replay: many lowered configurations of one continuity in one compiled
call, ``prange`` over the configurations.

Each configuration runs the single-run kernel's own request loop
(:func:`workbench.engine.kernel_nb.run_requests_nb`) with small ledger/event buffers that are
reduced to structural totals and emptied whenever the loop stops for room, so a
configuration costs O(1) memory beyond its policy arrays, however long the continuity, and
no per-request table ever reaches Python. Totals equal what ``summary_row`` computes from the
single-run kernel's ledger and events (``tests/sweep/test_sweep_batch.py``).

Arrays in, arrays out; nothing from the API layer (``batch.py`` is the wrapper).

>>> import numpy as np
>>> prices = np.zeros((4, 1 + 2 * MAX_TIERS)); prices[0, 0] = 1.0; prices[0, 1:3] = (100, 2.0)
>>> ntiers = np.array([1, 0, 0, 0], np.int64)
>>> float(price_nb(prices, ntiers, 0, 50)), float(price_nb(prices, ntiers, 0, 150))
(1.0, 2.0)
"""

from __future__ import annotations

import numpy as np

from workbench._numba import njit, prange
from workbench.engine import kernel_nb as K

# ---- outputs: integer totals per configuration ----------------------------------------------
(M_REQUESTS, M_CALLS, M_PROMPT, M_UNCACHED, M_CACHE_READ, M_CACHE_WRITE, M_OUTPUT, M_COMPACTIONS,
 M_FLUSHES, M_OVERFLOWS, M_EDITS, M_PEAK, M_FULL) = range(13)
N_METRICS = 13
# ... and costs ($)
F_COST, F_COMPACTION_COST, F_FLUSH_COST = range(3)
N_COSTS = 3

# ---- prices: [component, base | (start, price) x MAX_TIERS], $ per token -----------------------
P_UNCACHED, P_CACHE_READ, P_CACHE_WRITE, P_OUTPUT = range(4)
MAX_TIERS = 4

# ledger columns (records.LEDGER_COLUMNS) and event columns read here
L_CALL, L_PROMPT, L_READ, L_WRITE, L_UNCACHED, L_OUTPUT, L_AFTER = 1, 2, 3, 4, 5, 6, 8
E_TYPE = 0

CHUNK_LEDGER = 2048  # rows buffered before they are reduced (>> MAX_LEDGER_PER_REQUEST)
CHUNK_EVENTS = 512


@njit
def init_state_nb(cfg, Q):
    """``kernel_nb.init_state`` (a Python function there), compiled; the wrapper checks the
    two agree."""
    st = np.zeros(K.N_STATE, np.int64)
    st[: K.N_CFG] = cfg[: K.N_CFG]
    st[K.S_CUT] = -1
    st[K.S_CLR] = -1
    st[K.S_CLR_ROW] = -1
    st[K.S_FLUSHED_AT] = -1
    st[K.S_LAST_CTS] = Q[K.Q_TS, 0] if Q.shape[1] > 0 else 0
    st[K.S_NEXT_STRIDE] = 1
    st[K.S_COV_FROM] = -1
    st[K.S_WIN_START] = -1
    return st


@njit
def price_nb(prices, ntiers, comp, prompt):
    """$ per token of one component for a call of ``prompt`` tokens (genai-prices tiers: the
    last tier whose start the prompt exceeds applies to every token of the call)."""
    p = prices[comp, 0]
    for t in range(ntiers[comp]):
        if prompt > prices[comp, 1 + 2 * t]:
            p = prices[comp, 2 + 2 * t]
    return p


@njit
def reduce_nb(ledger, nl, events, ne, prices, ntiers, mi, mf):
    """Add ``nl`` ledger rows and ``ne`` event rows to the totals ``mi``/``mf``."""
    for k in range(nl):
        call = ledger[k, L_CALL]
        prompt = ledger[k, L_PROMPT]
        read = ledger[k, L_READ]
        write = ledger[k, L_WRITE]
        uncached = ledger[k, L_UNCACHED]
        output = ledger[k, L_OUTPUT]
        mi[M_CALLS] += 1
        mi[M_PROMPT] += prompt
        mi[M_UNCACHED] += uncached
        mi[M_CACHE_READ] += read
        mi[M_CACHE_WRITE] += write
        mi[M_OUTPUT] += output
        cost = (uncached * price_nb(prices, ntiers, P_UNCACHED, prompt)
                + read * price_nb(prices, ntiers, P_CACHE_READ, prompt)
                + write * price_nb(prices, ntiers, P_CACHE_WRITE, prompt)
                + output * price_nb(prices, ntiers, P_OUTPUT, prompt))
        mf[F_COST] += cost
        if call == K.CALL_MAIN:
            mi[M_REQUESTS] += 1
            if ledger[k, L_AFTER] > mi[M_PEAK]:
                mi[M_PEAK] = ledger[k, L_AFTER]
            if read == 0:
                mi[M_FULL] += 1
        elif call == K.CALL_COMPACTION or call == K.CALL_MERGE:
            mf[F_COMPACTION_COST] += cost
        elif call == K.CALL_FLUSH:
            mf[F_FLUSH_COST] += cost
    for k in range(ne):
        t = events[k, E_TYPE]
        if t == K.EV_CHECKPOINT:
            mi[M_COMPACTIONS] += 1
        elif t == K.EV_FLUSH:
            mi[M_FLUSHES] += 1
        elif t == K.EV_OVERFLOW:
            mi[M_OVERFLOWS] += 1
        elif t == K.EV_CONTEXT_EDIT:
            mi[M_EDITS] += 1


@njit
def replay_structural_nb(cfg, params, prices, ntiers, ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal,
                         Q, B, PRE, n_retain, n_ring, mi, mf):
    """One configuration: the single-run request loop, its output reduced chunk by chunk."""
    nr = Q.shape[1]
    if nr == 0:
        return
    st = init_state_nb(cfg, Q)
    ledger = np.empty((CHUNK_LEDGER, K.N_LEDGER), np.int64)
    events = np.empty((CHUNK_EVENTS, K.N_EVENT), np.int64)
    RET = np.zeros((2, n_retain + 1), np.int64)
    SEG = np.zeros((3, 17), np.int64)
    RING = np.zeros(n_ring, np.int64)
    r = 0
    while True:
        r = K.run_requests_nb(r, st, params, ptok, vrow, vflag, prev_safe, vmsg, msg_ordinal, Q, B, PRE,
                              RET, SEG, RING, ledger, events)
        reduce_nb(ledger, st[K.S_NL], events, st[K.S_NE], prices, ntiers, mi, mf)
        st[K.S_NL] = 0
        st[K.S_NE] = 0
        if r >= nr:
            break
        if st[K.S_ST] + K.MAX_SEGMENTS_PER_REQUEST >= SEG.shape[1]:
            grown = np.zeros((3, 2 * SEG.shape[1]), np.int64)
            grown[:, : SEG.shape[1]] = SEG
            SEG = grown


@njit(parallel=True)
def batch_structural_nb(cfgs, params, prices, ntiers, n_retain, n_ring, pre_rows, ptok, vrow, vflag,
                        safe_message, safe_any, vmsg, msg_ordinal, Q, B, excluded_v):
    """Structural totals of ``cfgs.shape[0]`` configurations of one continuity.

    ``cfgs`` (int64 [n, N_CFG]) and ``params`` (float64 [n, N_PARAMS]) are the lowered
    configurations; ``prices`` (float64 [n, 4, 1 + 2 MAX_TIERS]) and ``ntiers`` (int64 [n, 4])
    their price tables; ``n_retain``, ``n_ring`` and ``pre_rows`` (int64 [n]) the sizes of their
    retained buffer, recent-tool-call ring and placeholder table; the rest is the continuity's positions (``kernel.positions``)
    with the two safe-cut arrays (cut at a message or at any event) and the clearable-tool
    exclusion mask shared by the batch. Returns ``(int64 [n, N_METRICS], float64 [n, N_COSTS])``.
    """
    n = cfgs.shape[0]
    nv = vrow.size
    mi = np.zeros((n, N_METRICS), np.int64)
    mf = np.zeros((n, N_COSTS), np.float64)
    for c in prange(n):
        cfg = cfgs[c]
        vf = vflag
        PRE = np.zeros((1, 1), np.int64)
        if cfg[K.C_MASK_ON] != 0 or cfg[K.C_CLEAR_ON] != 0:
            PRE = np.zeros((pre_rows[c], nv + 1), np.int64)
            if cfg[K.C_CLEAR_ON] != 0:
                vf = np.empty_like(vflag)
            K.policy_arrays_nb(ptok, vflag, excluded_v, cfg, PRE, vf)
        safe = safe_message if cfg[K.C_NEED_MESSAGE] != 0 else safe_any
        replay_structural_nb(cfg, params[c], prices[c], ntiers[c], ptok, vrow, vf, safe, vmsg, msg_ordinal,
                             Q, B, PRE, n_retain[c], n_ring[c], mi[c], mf[c])
    return mi, mf
