"""The kernel engine: the Python side of the one compiled simulator
(:func:`workbench.engine.kernel_nb.simulate_nb`).

* ``replay_kernel`` has the signature and the output of ``reference.replay_reference``:
  one configuration, every ledger/event row kept (records).
* ``replay_kernel_totals`` replays many configurations of one continuity in one compiled
  call (``prange`` over them, :func:`~workbench.engine.kernel_nb.simulate_many_nb`) and
  keeps only their summary totals (:mod:`workbench.engine.metrics`), never a per-call table.

Both take a policy's one lowering (``Policy.lower``), add the continuity's facts the same way
(:func:`with_continuity`) and size the buffers with the same plan (:func:`buffer_plan`). The
policy-independent per-position arrays of a continuity are built once per ``ReplayInput``
(and kept while it lives), so a sweep of many policies over one continuity pays that O(n)
pass once; ``ReplayInput`` arrays are treated as immutable.

>>> import polars as pl
>>> from workbench.engine.kernel import replay_kernel
>>> from workbench.engine.policy import Policy
>>> from workbench.engine.prepare import prepare_continuity
>>> from workbench.synth.generate import GeneratorConfig, build_continuity
>>> c = build_continuity(GeneratorConfig(events=400, seed=1, facts=0, secrets=0, hard_negatives=0))
>>> inp = prepare_continuity(pl.from_arrow(c.events), continuity=0, continuity_id="x", tokenizer="cl100k")
>>> cfg, params = Policy("raw").lower(200_000, 1, 300_000.0, 1)
>>> ledger, events = replay_kernel(inp, cfg, params)
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
        Q, B = np.empty((nb.Q_ROWS, inp.n_requests), np.int64), np.empty((3, brow.size), np.int64)
        counts = nb.positions_nb(
            visible, is_summary, bool(summaries_visible), i64(inp.tokens), is_message,
            b(inp.is_user_message), b(inp.is_tool_call), b(inp.is_tool_result), i64(inp.open_after),
            i64(inp.row_request), i64(inp.req_first_row), i64(inp.req_ts), i64(inp.req_output_tokens),
            brow, btok, vrow, ptok, vflag, vmsg, Q, B)
        Q[nb.Q_BILLED_PROMPT:] = -1 if inp.billed_usage is None else inp.billed_usage
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


# the configuration slots that name a row of the placeholder prefix-sum table PRE (-1: unbuilt)
PRE_ROW_SLOTS = (E.Cfg.PRE_MASKED0, E.Cfg.PRE_MASKED1, E.Cfg.PRE_CLEARED, E.Cfg.PRE_CLEARED_MASKED0,
                 E.Cfg.PRE_CLEARED_MASKED1, E.Cfg.PRE_OUTPUT_TOKENS)


# the configuration slots the continuity fills (:func:`with_continuity`); the policy's
# lowering (``Policy.lower``) fills every other slot and leaves these 0
CONTINUITY_SLOTS = (E.Cfg.HAS_OUTPUT_RESULTS, E.Cfg.TOKENS_NONNEG, E.Cfg.MONOTONE_SUMS, E.Cfg.FIRST_USER,
                    E.Cfg.PREFIX_TOKENS) + PRE_ROW_SLOTS


def with_continuity(cfg: np.ndarray, pos: Positions, prefix_tokens: int) -> np.ndarray:
    """A copy of the lowered configuration ``cfg`` (``Policy.lower``) with the continuity's
    facts (:data:`CONTINUITY_SLOTS`): whether some tool result is a model output, whether
    tokens are non-negative, the first user position (pruning policies), the fixed prefix,
    and which rows of the placeholder prefix-sum table this policy reads."""
    from workbench.engine import kernel_nb as nb

    C = E.Cfg
    cfg = np.array(cfg, dtype=np.int64)
    mask_on, clear_on, has1 = bool(cfg[C.MASKING]), bool(cfg[C.CLEARING]), pos.has_output_results
    cfg[C.HAS_OUTPUT_RESULTS] = int(has1)
    cfg[C.TOKENS_NONNEG] = int(pos.tokens_nonneg)
    cfg[C.MONOTONE_SUMS] = int(pos.tokens_nonneg and (not mask_on or cfg[C.MASK_PLACEHOLDER] >= 0)
                               and (not clear_on or cfg[C.CLEAR_PLACEHOLDER] >= 0))
    users = np.flatnonzero(pos.vflag & nb.F_USER) if cfg[C.PRUNING] else ()
    cfg[C.FIRST_USER] = int(users[0]) if len(users) else -1
    cfg[C.PREFIX_TOKENS] = int(prefix_tokens)
    # rows of the placeholder prefix-sum table, only those this policy reads
    rows = []
    if mask_on:
        rows += [C.PRE_MASKED0] + ([C.PRE_MASKED1] if has1 else [])
    if clear_on:
        rows += ([C.PRE_CLEARED] + ([C.PRE_CLEARED_MASKED0] if mask_on else [])
                 + ([C.PRE_CLEARED_MASKED1] if mask_on and has1 else []))
    if cfg[C.MASK_KEEP_TOKENS] > 0 or cfg[C.MASK_KEEP_RESULTS] > 0:
        rows.append(C.PRE_OUTPUT_TOKENS)  # tool-output token sums: where the masking bound falls
    cfg[list(PRE_ROW_SLOTS)] = -1
    for i, slot in enumerate(rows):
        cfg[slot] = i
    return cfg


# Rows of the ledger/event chunk a totals-only replay reduces at a time (much more than one
# request writes, so the request loop rarely stops; small enough to stay in cache).
CHUNK_LEDGER = 2048
CHUNK_EVENTS = 512
SEGMENTS = 17  # initial summary-segment slots; the simulator doubles them when needed


def buffer_plan(cfg: np.ndarray, pos: Positions, n_requests: int, *, records: bool) -> np.ndarray:
    """How big the buffers of one replay are (``kernel_nb.PLAN`` slots, int64): with
    ``records`` the ledger/event buffers hold every row a replay can write (an upper bound,
    so they never grow; untouched pages of ``np.empty`` cost nothing), else they are a
    chunk; placeholder rows, retained items and the tool-call ring follow the policy."""
    from workbench.engine import kernel_nb as nb

    plan = np.zeros(nb.N_PLAN, np.int64)
    plan[nb.PLAN.records] = int(records)
    if records:
        plan[nb.PLAN.ledger_rows] = n_requests * nb.MAX_LEDGER_PER_REQUEST + 16
        plan[nb.PLAN.event_rows] = n_requests * nb.MAX_EVENTS_PER_REQUEST + 16
    else:
        plan[nb.PLAN.ledger_rows] = CHUNK_LEDGER
        plan[nb.PLAN.event_rows] = CHUNK_EVENTS
    plan[nb.PLAN.segments] = SEGMENTS
    keep = int(cfg[E.Cfg.CLEAR_KEEP])
    plan[nb.PLAN.ring] = min(keep, pos.n_calls) + 1 if cfg[E.Cfg.CLEARING] and keep >= 0 else 1
    retain = int(cfg[E.Cfg.RETAIN_KIND])
    plan[nb.PLAN.retained] = (0 if retain == E.Retain.NONE
                              else pos.n_user if retain == E.Retain.USER_MESSAGES else pos.n_msg)
    plan[nb.PLAN.pruned] = int(np.count_nonzero(pos.vflag & nb.F_RESULT)) + 1 if cfg[E.Cfg.PRUNING] else 1
    plan[nb.PLAN.placeholder_rows] = int((cfg[list(PRE_ROW_SLOTS)] >= 0).sum())
    return plan


def _configure(inp: ReplayInput, cfg: np.ndarray) -> tuple[bool, Positions, np.ndarray]:
    """(recorded summaries visible, the positions they give, the lowered configuration ``cfg``
    with the continuity's facts)."""

    C = E.Cfg
    summaries_visible = bool(E.summaries_visible_in(cfg))
    pos = positions(inp, summaries_visible)
    if (cfg[C.MASK_AFTER_TURNS] > 0 and pos.bad_result_requests) or (  # masking by turns reads row_request
            cfg[C.TRIGGER] == E.Trigger.TURNS and pos.bad_row_requests):
        raise ValueError("replay_kernel: row_request is not shaped as prepare_continuity builds it "
                         "(a row's request is its position's request, or the one before for outputs)")
    return summaries_visible, pos, with_continuity(cfg, pos, inp.prefix_tokens)


def _excluded_positions(pos: Positions, excluded: np.ndarray | None) -> np.ndarray:
    """The clearable-tool exclusion mask in positions (uint8; empty when nothing is excluded)."""
    if excluded is None or not np.any(excluded):
        return np.zeros(0, np.uint8)
    return np.ascontiguousarray(np.asarray(excluded, bool)[pos.vrow], dtype=np.uint8)


def replay_kernel(inp: ReplayInput, cfg: np.ndarray, params: np.ndarray, excluded: np.ndarray | None = None,
                  *, record: bool = False) -> tuple:
    """Replay one continuity; returns (ledger, events) int64 matrices (see records.py),
    equal to ``replay_reference(inp, cfg, params, excluded)``; ``cfg, params`` is a policy's
    lowering (``Policy.lower``). With ``record`` its prompt record
    (:mod:`workbench.engine.prompt_record`) as a third, equal to the reference's."""
    from workbench.engine import kernel_nb as nb
    from workbench.engine.enums import N_AFTER, N_SHOWN
    from workbench.engine.pricing_nb import TABLE_WIDTH
    from workbench.engine.prompt_record import EMPTY_AFTER, EMPTY_SHOWN, PromptRecord, kernel_record
    from workbench.engine.records import N_COSTS, N_EVENT, N_LEDGER, N_TOTALS

    params = np.ascontiguousarray(params, dtype=np.float64)
    if inp.n_requests == 0:
        empty = np.zeros((0, N_LEDGER), np.int64), np.zeros((0, N_EVENT), np.int64)
        none = np.zeros(0, np.int64)
        nothing = PromptRecord(EMPTY_SHOWN, none, none, none, none, EMPTY_AFTER, none, none, none)
        return (*empty, nothing) if record else empty
    summaries_visible, pos, cfg = _configure(inp, cfg)
    plan = buffer_plan(cfg, pos, inp.n_requests, records=True)
    excl = _excluded_positions(pos, excluded) if cfg[E.Cfg.CLEARING] else np.zeros(0, np.uint8)
    safe = prev_safe(inp, summaries_visible, bool(cfg[E.Cfg.CUT_AT_MESSAGE]))
    # np.empty only reserves address space; pages become resident when rows are written; a
    # recorded replay's ledger rows carry the prompt-record columns after the ledger's
    ledger = np.empty((plan[nb.PLAN.ledger_rows], N_LEDGER + (N_SHOWN if record else 0)), np.int64)
    events = np.empty((plan[nb.PLAN.event_rows], N_EVENT + (N_AFTER if record else 0)), np.int64)
    ledger, events, n_ledger, n_events, retained, segments = nb.simulate_nb(
        cfg, params, np.zeros((4, TABLE_WIDTH)), plan, pos.ptok, pos.vrow, pos.vflag, safe, pos.vmsg,
        _msg_ordinal(inp), pos.Q, pos.B, excl, ledger, events, np.zeros(N_TOTALS, np.int64),
        np.zeros(N_COSTS))
    if not record:
        return ledger[:n_ledger], events[:n_events]
    prompts = kernel_record(ledger[:n_ledger], events[:n_events], pos.vrow, retained, segments)
    return (np.ascontiguousarray(ledger[:n_ledger, :N_LEDGER]), np.ascontiguousarray(events[:n_events, :N_EVENT]),
            prompts)


def replay_kernel_totals(inp: ReplayInput, cfgs: np.ndarray, params: np.ndarray, prices: np.ndarray,
                         excluded: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Summary totals of many configurations of one continuity: row ``i`` of ``cfgs``
    (int64 [n, N_CFG]) and ``params`` (float64 [n, N_PARAMS]), a policy's lowering
    (``Policy.lower``), and ``prices`` (price tables, float64 [n, 4, TABLE_WIDTH]) is one
    configuration; ``excluded`` (rows whose tool
    results clearing policies keep) applies to all. Returns ``(int64 [n, N_TOTALS], float64
    [n, N_COSTS])``, equal to ``metrics.replay_totals`` of each configuration's
    ``replay_kernel`` output; one compiled call per set of positions, ``prange`` over the
    configurations."""
    from workbench.engine import kernel_nb as nb
    from workbench.engine.records import N_COSTS, N_TOTALS

    cfgs = np.ascontiguousarray(cfgs, dtype=np.int64).reshape(-1, E.N_CFG)
    params = np.ascontiguousarray(params, dtype=np.float64).reshape(-1, E.N_PARAMS)
    prices = np.ascontiguousarray(prices, dtype=np.float64)
    n = cfgs.shape[0]
    totals, costs = np.zeros((n, N_TOTALS), np.int64), np.zeros((n, N_COSTS), np.float64)
    if inp.n_requests == 0 or n == 0:
        return totals, costs
    groups: dict[bool, list[int]] = {}
    configured = []
    for i in range(n):
        visible, pos, cfg = _configure(inp, cfgs[i])
        configured.append((cfg, buffer_plan(cfg, pos, inp.n_requests, records=False)))
        groups.setdefault(visible, []).append(i)
    for visible, idx in groups.items():
        pos = positions(inp, visible)
        group_totals, group_costs = nb.simulate_many_nb(
            np.stack([configured[i][0] for i in idx]), params[idx],
            np.ascontiguousarray(prices[idx]), np.stack([configured[i][1] for i in idx]),
            pos.ptok, pos.vrow, pos.vflag, prev_safe(inp, visible, True), prev_safe(inp, visible, False),
            pos.vmsg, _msg_ordinal(inp), pos.Q, pos.B, _excluded_positions(pos, excluded))
        totals[idx] = group_totals
        costs[idx] = group_costs
    return totals, costs


def _msg_ordinal(inp: ReplayInput) -> np.ndarray:
    return np.ascontiguousarray(inp.msg_ordinal, dtype=np.int64)
