"""Run-level usage: the totals a log records for a whole run rather than per request.

SWE-agent writes ``info.model_stats`` (tokens sent and received, API calls, cost) and no
per-request usage; aider prints each message's cost and a running session cost; Cline,
Roo Code and opencode record a cost per request. Every importer that finds such totals
puts them in ``ParsedContinuity.meta["run_usage"]`` in one shape (:func:`run_usage`), so
that ``workbench inspect`` and the fidelity audit read them without knowing the format:

* ``source``: where the figures come from (``"info.model_stats"``, ...);
* ``tokens_sent``: prompt tokens over the run, cached ones included (the sum of every
  call's whole prompt); ``tokens_received``: output tokens;
* ``api_calls``: model calls; ``cost_usd``: what the harness reported the run cost;
* format-specific extras (aider's ``session_cost_usd``, ``approximate`` for ``4.2k`` counts).

A figure the log does not give is ``None``. The import driver writes them, with their
sums (:func:`summarize`), to ``manifest["import"]["run_usage"]``, which ``inspect`` and
the fidelity audit read.

>>> run_usage("info.model_stats", tokens_sent=122_612, tokens_received=1_369, api_calls=12, cost_usd=1.26719)
{'source': 'info.model_stats', 'tokens_sent': 122612, 'tokens_received': 1369, 'api_calls': 12, 'cost_usd': 1.26719}
"""

from __future__ import annotations

from typing import Any

RUN_USAGE = "run_usage"  # the ParsedContinuity.meta key
FIGURES = ("tokens_sent", "tokens_received", "api_calls", "cost_usd")


def run_usage(source: str, *, tokens_sent: int | None, tokens_received: int | None,
              api_calls: int | None, cost_usd: float | None, **extra: Any) -> dict[str, Any]:
    """The run-level usage record (see the module docstring)."""
    return {"source": source, "tokens_sent": tokens_sent, "tokens_received": tokens_received,
            "api_calls": api_calls, "cost_usd": None if cost_usd is None else round(float(cost_usd), 10),
            **extra}


def _count(v: Any) -> int | None:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 else None


def from_model_stats(stats: Any) -> dict[str, Any] | None:
    """SWE-agent / mini-swe-agent ``info.model_stats`` (``tokens_sent``, ``tokens_received``,
    ``api_calls``, ``instance_cost``: this run; ``total_cost`` is the process's running total).
    None when absent, or zeroed (demonstration trajectories keep the keys with zero tokens
    and cost: nothing was recorded)."""
    if not isinstance(stats, dict):
        return None
    sent, received = _count(stats.get("tokens_sent")), _count(stats.get("tokens_received"))
    cost = stats.get("instance_cost")
    cost = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    if not sent and not received and not cost:
        return None
    return run_usage("info.model_stats", tokens_sent=sent, tokens_received=received,
                     api_calls=_count(stats.get("api_calls")), cost_usd=cost)


def summarize(per_continuity: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The manifest's ``import.run_usage``: how many continuities have run-level usage, the
    sums of each figure over them (null when none gives it) and every continuity's record.

    >>> summarize({"a": run_usage("x", tokens_sent=5, tokens_received=None, api_calls=1, cost_usd=0.5)})["tokens_sent"]
    5
    """
    totals: dict[str, Any] = {}
    for key in FIGURES:
        vals = [u[key] for u in per_continuity.values() if u.get(key) is not None]
        totals[key] = (round(sum(vals), 10) if key == "cost_usd" else int(sum(vals))) if vals else None
    return {"continuities": len(per_continuity), **totals,
            "by_continuity": [{"continuity_id": cid, **u} for cid, u in per_continuity.items()]}
