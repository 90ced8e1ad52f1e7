"""Structural metrics of many policies on one continuity in one compiled call: a thin
name for :func:`workbench.engine.run.summarize_inputs` with ``engine="batch"`` (the engine's
many-configuration simulator, ``prange`` over the policies).

One row per policy with the summary columns of ``simulate`` but ``run_id``: equal to the
single-run kernel's, without building a ledger per configuration. Summaries are modelled
by size; nothing text-level runs here.

>>> from workbench.sweep.batch import batch_structural          # doctest: +SKIP
>>> from workbench.engine.presets import get_policy             # doctest: +SKIP
>>> pols = [get_policy("claude-code", {"trigger.reserve_tokens": r}) for r in range(13_000, 80_000, 1_000)]  # doctest: +SKIP
>>> batch_structural(inp, pols).select("cost_usd", "compactions")   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence


def batch_structural(inp, policies: Sequence, *, model_override: str | None = None):
    """One row per policy on the prepared continuity ``inp`` (polars)."""
    from workbench.engine.run import summarize_inputs

    return summarize_inputs([inp], policies, engine="batch", model=model_override).drop("run_id")
