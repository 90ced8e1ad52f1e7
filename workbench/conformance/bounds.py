"""Physical bounds: what no provider can bill, whatever the policy. The one module that decides
whether a run's figures are physically possible; the conformance audit fails a run that breaks
one, and the reports flag the policy above every table (:mod:`workbench.report.verdict`).

* ``prompt_over_window`` — a call's prompt exceeds its context window. A provider rejects such
  a request; the engines never send one (a main request that cannot be made to fit is a
  *failed* request, counted apart with 0 prompt tokens: ``docs/adr0011.md`` and the engines'
  step 4). In a summary: ``peak_context_tokens`` above ``context_window``.
* ``cache_read_over_prompt`` — a call reads more tokens from the cache than it sends; in a
  summary, ``cached_input_tokens`` above ``prompt_tokens``.
* ``negative_tokens`` — a token count (or cost) below zero.

:func:`ledger_violations` checks every call of a ledger against its replay's window (from the
summary); :func:`summary_violations` checks the totals alone (what a report shows);
:func:`policy_violations` gives, per policy, the bounds either breaks.

>>> import polars as pl
>>> summary = pl.DataFrame({"policy": ["a", "b"], "continuity_id": ["c", "c"], "context_window": [100, 100],
...                         "prompt_tokens": [90, 50], "cached_input_tokens": [10, 60],
...                         "peak_context_tokens": [120, 50]})
>>> policy_violations(summary=summary)
{'a': ['prompt_over_window'], 'b': ['cache_read_over_prompt']}
"""

from __future__ import annotations

from typing import Any

BOUNDS: dict[str, str] = {
    "prompt_over_window": "a request's prompt exceeds its context window",
    "cache_read_over_prompt": "a call reads more from the cache than its prompt",
    "negative_tokens": "a token count is negative",
}
# the ledger's and the summary's token columns (and the summary's costs): none may be negative
LEDGER_TOKENS = ("prompt_tokens", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens",
                 "context_before", "context_after")
SUMMARY_TOKENS = ("prompt_tokens", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens",
                  "peak_context_tokens", "cost_usd", "compaction_cost_usd", "flush_cost_usd")
VIOLATION_SCHEMA = {"policy": "String", "continuity_id": "String", "bound": "String", "count": "Int64",
                    "detail": "String"}
_KEYS = ("run_id", "policy", "continuity_id")


def _empty():
    import polars as pl

    return pl.DataFrame(schema={k: getattr(pl, v) for k, v in VIOLATION_SCHEMA.items()})


def _collect(frame, checks: list[tuple[str, Any, str]]):
    """One row per (policy, continuity, bound) with the rows of ``frame`` that break it:
    ``checks`` lists ``(bound, polars condition, detail template over the worst row)``."""
    import polars as pl

    rows: list[dict[str, Any]] = []
    for bound, cond, detail in checks:
        bad = frame.filter(cond)
        if bad.height == 0:
            continue
        for (policy, continuity), group in bad.group_by("policy", "continuity_id", maintain_order=True):
            first = group.row(0, named=True)
            rows.append({"policy": policy, "continuity_id": continuity, "bound": bound, "count": group.height,
                         "detail": detail.format(**first)})
    return pl.DataFrame(rows, schema=_empty().schema) if rows else _empty()


def ledger_violations(ledger, summary):
    """Every call of ``ledger`` (``ledger.parquet``: policy, continuity_id, the token columns)
    against the bounds; the window of each replay comes from ``summary`` (``context_window``
    per policy x continuity). A failed request (``failed``: rejected, nothing sent) is no
    violation: its 0 prompt tokens are what was billed."""
    import polars as pl

    if ledger is None or ledger.height == 0:
        return _empty()
    keys = [k for k in _KEYS if k in ledger.columns and k in summary.columns]
    windows = summary.select(*keys, "context_window").unique(keys, keep="first")
    led = ledger.join(windows, on=keys, how="left")
    missing = led.filter(pl.col("context_window").is_null())
    if missing.height:
        first = missing.row(0, named=True)
        raise ValueError(f"ledger rows of policy {first['policy']!r}, continuity {first['continuity_id']!r} "
                         "have no context_window in the summary")
    negative = pl.any_horizontal([pl.col(c) < 0 for c in LEDGER_TOKENS if c in led.columns])
    where = "first: call {call} ({call_kind}, request {request}): "
    return _collect(led, [
        ("prompt_over_window", pl.col("prompt_tokens") > pl.col("context_window"),
         where + "prompt {prompt_tokens:,} tokens in a {context_window:,}-token window"),
        ("cache_read_over_prompt", pl.col("cached_input_tokens") > pl.col("prompt_tokens"),
         where + "{cached_input_tokens:,} cached of a {prompt_tokens:,}-token prompt"),
        ("negative_tokens", negative, where + "a negative token count")])


def summary_violations(summary):
    """The bounds the totals of ``summary`` (``summary.parquet`` rows, or per-policy totals with
    ``context_window``) break: what a reader of a report's table would see."""
    import polars as pl

    if summary is None or summary.height == 0:
        return _empty()
    frame = summary
    if "continuity_id" not in frame.columns:
        frame = frame.with_columns(continuity_id=pl.lit(None, dtype=pl.String))
    checks = []
    if {"peak_context_tokens", "context_window"} <= set(frame.columns):
        checks.append(("prompt_over_window", pl.col("peak_context_tokens") > pl.col("context_window"),
                       "peak context {peak_context_tokens:,} tokens in a {context_window:,}-token window"))
    if {"cached_input_tokens", "prompt_tokens"} <= set(frame.columns):
        checks.append(("cache_read_over_prompt", pl.col("cached_input_tokens") > pl.col("prompt_tokens"),
                       "{cached_input_tokens:,} cached input tokens of {prompt_tokens:,} prompt tokens"))
    present = [c for c in SUMMARY_TOKENS if c in frame.columns]
    if present:
        checks.append(("negative_tokens", pl.any_horizontal([pl.col(c) < 0 for c in present]),
                       "a negative total"))
    return _collect(frame, checks)


def policy_violations(ledger=None, summary=None) -> dict[str, list[str]]:
    """``{policy: [bound, ...]}`` for every policy whose ledger (checked when given, with
    ``summary`` for the windows) or summary figures break a physical bound; policies that
    break none are left out. Bounds in :data:`BOUNDS` order."""
    import polars as pl

    parts = [summary_violations(summary)] if summary is not None else []
    if ledger is not None and summary is not None:
        parts.append(ledger_violations(ledger, summary))
    found = pl.concat(parts, how="vertical") if parts else _empty()
    out: dict[str, list[str]] = {}
    for policy, bound in found.select("policy", "bound").iter_rows():
        out.setdefault(policy, [])
        if bound not in out[policy]:
            out[policy].append(bound)
    order = list(BOUNDS)
    return {p: sorted(b, key=order.index) for p, b in out.items()}


def bound_findings(ledger, summary):
    """The conformance audit's findings (``check``, ``continuity_id``, ``policy``, ``severity``,
    ``detail``; severity ``fail``) for every physical bound the run's ledger breaks."""
    import polars as pl

    found = ledger_violations(ledger, summary)
    return found.select(pl.col("bound").alias("check"), "continuity_id", "policy",
                        pl.lit("fail").alias("severity"),
                        (pl.col("count").cast(pl.String) + pl.lit(" call(s); ") + pl.col("detail")).alias("detail"))
