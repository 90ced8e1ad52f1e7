"""Structural metrics of many policies on one continuity in one compiled call.

``batch_structural(inp, policies)`` lowers every policy against the continuity (provider,
window, cache rules, prices), groups them by the arrays they share, and runs
:func:`workbench.sweep.batch_nb.batch_structural_nb` (``prange`` over the configurations)
once per group. The result has one row per policy with the structural columns of
``workbench.engine.run.summary_row`` (requests, calls, prompt/uncached/cached/write/output
tokens, cost and its compaction/flush shares, compactions, flushes, overflows, edits, peak
context, full requests, cache-hit rate): equal to the single-run kernel's, without building
a ledger per configuration. Summaries are modelled by size; nothing text-level runs here.

>>> from workbench.sweep.batch import batch_structural          # doctest: +SKIP
>>> from workbench.engine.presets import get_policy             # doctest: +SKIP
>>> pols = [get_policy("claude-code", {"trigger.reserve_tokens": r}) for r in range(13_000, 80_000, 1_000)]  # doctest: +SKIP
>>> batch_structural(inp, pols).select("cost_usd", "compactions")   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.engine import enums as E

STRUCTURAL = ("requests", "calls", "prompt_tokens", "input_tokens", "cached_input_tokens",
              "cache_write_tokens", "output_tokens", "cost_usd", "compaction_cost_usd", "flush_cost_usd",
              "compactions", "flushes", "overflows", "edits", "peak_context_tokens", "full_requests",
              "cache_hit_rate")


def price_arrays(table) -> tuple[np.ndarray, np.ndarray]:
    """A :class:`PriceTable` as the kernel's ``(prices [4, 1 + 2 MAX_TIERS], ntiers [4])``."""
    from workbench.errors import WorkbenchError
    from workbench.sweep import batch_nb as bnb

    prices = np.zeros((4, 1 + 2 * bnb.MAX_TIERS), np.float64)
    ntiers = np.zeros(4, np.int64)
    for i, comp in enumerate((table.input, table.cache_read, table.cache_write, table.output)):
        if len(comp.tiers) > bnb.MAX_TIERS:
            raise WorkbenchError(f"{table.model}: more than {bnb.MAX_TIERS} price tiers")
        prices[i, 0] = comp.base
        for t, (start, price) in enumerate(comp.tiers):
            prices[i, 1 + 2 * t] = start
            prices[i, 2 + 2 * t] = price
        ntiers[i] = len(comp.tiers)
    return prices, ntiers


def _lower(inp, policy, model_override: str | None):
    from workbench.engine import kernel as kern
    from workbench.engine import kernel_nb as nb
    from workbench.engine.provider import resolve_provider

    prov = resolve_provider(policy, continuity_model=inp.model, continuity_window=inp.context_window,
                            model_override=model_override)
    kinds, params = policy.lower(prov.window, prov.cache_mode, prov.ttl_ms, prov.granularity)
    kinds = np.ascontiguousarray(kinds, np.int64)
    params = np.ascontiguousarray(params, np.float64)
    strategy = int(kinds[E.K_STRATEGY])
    visible = strategy == E.Strategy.RECORDED
    pos = kern.positions(inp, visible)
    mask_on = int(kinds[E.K_MASK_AFTER_TURNS]) > 0
    clear_on = strategy == E.Strategy.CLEAR_TOOL_USES
    if (mask_on and pos.bad_result_requests) or (int(kinds[E.K_TRIGGER]) == E.Trigger.TURNS
                                                 and pos.bad_row_requests):
        raise ValueError("batch_structural: row_request is not shaped as prepare_continuity builds it")
    cfg = kern.lowered_config(kinds, params, pos)
    retain = int(kinds[E.K_RETAIN_KIND])
    n_retain = 0 if retain == E.RETAIN_NONE else (pos.n_user if retain == E.RETAIN_USER_MESSAGES else pos.n_msg)
    # rows of the placeholder table this policy reads, as replay_kernel sizes it
    pre_rows = int(sum(cfg[s] >= 0 for s in _pre_slots(nb))) if (mask_on or clear_on) else 1
    keep = int(params[E.P_CLEAR_KEEP])
    n_ring = min(keep, pos.n_calls) + 1 if clear_on and keep >= 0 else 1  # recent tool calls
    prices, ntiers = price_arrays(prov.prices)
    group = (visible, tuple(policy.compaction.exclude_tools) if clear_on else ())
    return {"cfg": cfg, "params": params, "prices": prices, "ntiers": ntiers, "n_retain": n_retain,
            "n_ring": n_ring, "pre_rows": pre_rows, "group": group, "provider": prov}


def _pre_slots(nb) -> list[int]:
    """The configuration slots naming rows of the placeholder table (``kernel_nb.C_R_*``)."""
    return sorted(getattr(nb, name) for name in dir(nb) if name.startswith("C_R_"))


def batch_arrays(inp, policies: Sequence, *, model_override: str | None = None) -> tuple[np.ndarray, np.ndarray, list]:
    """``(int64 [n, N_METRICS], float64 [n, N_COSTS], providers)`` for ``policies`` on ``inp``."""
    from workbench.engine import kernel as kern
    from workbench.sweep import batch_nb as bnb

    n = len(policies)
    mi = np.zeros((n, bnb.N_METRICS), np.int64)
    mf = np.zeros((n, bnb.N_COSTS), np.float64)
    lowered = [_lower(inp, p, model_override) for p in policies]
    providers = [x["provider"] for x in lowered]
    if inp.n_requests == 0 or n == 0:
        return mi, mf, providers
    groups: dict[Any, list[int]] = {}
    for i, x in enumerate(lowered):
        groups.setdefault(x["group"], []).append(i)
    msg_ordinal = np.ascontiguousarray(inp.msg_ordinal, dtype=np.int64)
    for (visible, exclude), idx in groups.items():
        pos = kern.positions(inp, visible)
        first = lowered[idx[0]]
        from workbench.engine.kernel_nb import init_state

        if not np.array_equal(init_state(first["cfg"], pos.Q), bnb.init_state_nb(first["cfg"], pos.Q)):
            raise RuntimeError("batch_nb.init_state_nb no longer matches kernel_nb.init_state")
        excl = np.zeros(0, np.uint8)
        if exclude:
            mask = np.asarray(inp.excluded_mask(exclude), bool)
            if mask.any():
                excl = np.ascontiguousarray(mask[pos.vrow], dtype=np.uint8)
        gi, gf = bnb.batch_structural_nb(
            np.ascontiguousarray(np.stack([lowered[i]["cfg"] for i in idx])),
            np.ascontiguousarray(np.stack([lowered[i]["params"] for i in idx])),
            np.ascontiguousarray(np.stack([lowered[i]["prices"] for i in idx])),
            np.ascontiguousarray(np.stack([lowered[i]["ntiers"] for i in idx])),
            np.array([lowered[i]["n_retain"] for i in idx], np.int64),
            np.array([lowered[i]["n_ring"] for i in idx], np.int64),
            np.array([lowered[i]["pre_rows"] for i in idx], np.int64),
            pos.ptok, pos.vrow, pos.vflag, kern.prev_safe(inp, visible, True),
            kern.prev_safe(inp, visible, False), pos.vmsg, msg_ordinal, pos.Q, pos.B, excl)
        mi[idx] = gi
        mf[idx] = gf
    return mi, mf, providers


def batch_structural(inp, policies: Sequence, *, model_override: str | None = None):
    """One row per policy: ``policy``, ``model``, ``context_window`` and the structural
    columns of ``summary_row`` (polars)."""
    import polars as pl

    from workbench.sweep import batch_nb as bnb

    mi, mf, providers = batch_arrays(inp, policies, model_override=model_override)
    prompt = mi[:, bnb.M_PROMPT]
    cached = mi[:, bnb.M_CACHE_READ]
    hit = np.divide(cached, prompt, out=np.zeros(len(policies)), where=prompt > 0)
    return pl.DataFrame({
        "policy": [p.name for p in policies],
        "continuity_id": [inp.continuity_id] * len(policies),
        "model": [p.model for p in providers],
        "context_window": np.array([p.window for p in providers], np.int64),
        "requests": mi[:, bnb.M_REQUESTS], "calls": mi[:, bnb.M_CALLS],
        "prompt_tokens": prompt, "input_tokens": mi[:, bnb.M_UNCACHED],
        "cached_input_tokens": cached, "cache_write_tokens": mi[:, bnb.M_CACHE_WRITE],
        "output_tokens": mi[:, bnb.M_OUTPUT],
        "cost_usd": mf[:, bnb.F_COST], "compaction_cost_usd": mf[:, bnb.F_COMPACTION_COST],
        "flush_cost_usd": mf[:, bnb.F_FLUSH_COST],
        "compactions": mi[:, bnb.M_COMPACTIONS], "flushes": mi[:, bnb.M_FLUSHES],
        "overflows": mi[:, bnb.M_OVERFLOWS], "edits": mi[:, bnb.M_EDITS],
        "peak_context_tokens": mi[:, bnb.M_PEAK], "full_requests": mi[:, bnb.M_FULL],
        "cache_hit_rate": hit,
    })
