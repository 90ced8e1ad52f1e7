"""Tokenizer calibration against recorded usage.

For every request that has recorded usage, the provider's prompt size is
``usage_input + usage_cache_read + usage_cache_write``. The workbench's own estimate of
the same prompt is the sum of ``tokens_<tokenizer>`` over the events visible in the
context at that request: every context event (message, tool call/result, reasoning,
summary, metadata with text such as Codex's base instructions) with ``seq`` before the
request's first output event and after the latest recorded compaction boundary before
it. What the log does not hold (Claude Code's system prompt and tool schemas, Codex's
tool schemas) is unknown, so the fit has an intercept::

    recorded ≈ a + b · counted

``b`` is the tokenizer factor (provider tokens per workbench token, plus whatever the
harness strips or adds per item), ``a`` the unseen fixed overhead. The fit is Huber-robust
(IRLS), and errors are absolute percentage errors of the fitted line: median and p90 in
sample, and the median of a 5-fold interleaved cross-validation (out of sample).
Sources without usage, or with fewer than three requests, get a ``status`` that says so.

A line is only fitted where it means something; otherwise the status is ``not
meaningful`` with a ``reason`` and no factor:

* a request counts only when its usage is one model call of the continuity's own
  context: usage reported by a background model call (origin BACKGROUND: a condenser or
  summariser, whose prompt is not the continuity's context) is left out, and so is a
  request whose counted context holds no anchor of the conversation (a system,
  developer or user message, or a summary): the log does not hold what was sent (e.g. an
  event stream that starts mid-conversation). Left-out requests are counted in
  ``requests_excluded``; when none is left the source is not meaningful;
* a parser that knows its recorded usage is not per request sets the continuity meta key
  :data:`NOT_MEANINGFUL` to the reason (e.g. OpenHands SDK stats updates that span
  several LLM calls);
* a fitted factor outside :data:`PLAUSIBLE_FACTOR` is no tokenizer factor: the counted
  context does not follow the recorded prompts; the rejected line is kept under
  ``rejected_fit`` for diagnosis.

>>> import numpy as np
>>> from workbench.sources.calibrate import robust_line
>>> a, b = robust_line(np.array([1.0, 2, 3, 4]), np.array([12.0, 14, 16, 18]))
>>> round(a, 6), round(b, 6)
(10.0, 2.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role

CONTEXT_KINDS = (EventKind.MESSAGE, EventKind.TOOL_CALL, EventKind.TOOL_RESULT,
                 EventKind.REASONING, EventKind.SUMMARY, EventKind.META)
NOT_CONTEXT_NAMES = ("legacy_summary",)  # Claude Code /resume titles: never sent to the model
ANCHOR_ROLES = (Role.SYSTEM, Role.DEVELOPER, Role.USER)  # MESSAGE roles that anchor a context
MIN_REQUESTS = 3
# provider tokens per cl100k/approx token: tokenizers differ by tens of percent and
# harnesses add per-item framing, but a factor 3x away from 1 is not a tokenizer factor
PLAUSIBLE_FACTOR = (1 / 3, 3.0)
NOT_MEANINGFUL = "calibration_not_meaningful"  # continuity meta key a parser may set (reason)


def robust_line(x: np.ndarray, y: np.ndarray, *, iters: int = 50, k: float = 1.345,
                weights: np.ndarray | None = None) -> tuple[float, float]:
    """Huber-weighted least squares fit of ``y ≈ a + b·x``; returns (a, b). ``weights``
    (optional, per point) scale each point's say, e.g. so that every log of a pooled fit
    counts the same whatever its number of requests."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.size == 0:
        return float("nan"), float("nan")
    if x.size == 1 or np.ptp(x) == 0:
        return float(np.median(y - x)), 1.0
    prior = np.ones_like(x) if weights is None else np.asarray(weights, dtype=np.float64)
    X = np.column_stack([np.ones_like(x), x])
    sp = np.sqrt(prior)
    beta = np.linalg.lstsq(X * sp[:, None], y * sp, rcond=None)[0]
    for _ in range(iters):
        r = y - X @ beta
        scale = 1.4826 * np.median(np.abs(r - np.median(r)))
        if not np.isfinite(scale) or scale <= 1e-9 * max(1.0, float(np.abs(y).max())):
            break
        u = np.abs(r) / (k * scale)
        w_new = np.where(u <= 1, 1.0, 1.0 / np.maximum(u, 1e-12))
        sw = np.sqrt(w_new * prior)
        beta_new = np.linalg.lstsq(X * sw[:, None], y * sw, rcond=None)[0]
        done = np.allclose(beta_new, beta, rtol=1e-9, atol=1e-9)
        beta = beta_new
        if done:
            break
    return float(beta[0]), float(beta[1])


def _ape(pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(pred - y) / y * 100.0


def fit_report(counted: np.ndarray, recorded: np.ndarray) -> dict[str, Any]:
    """Fit and describe the errors for one source's (counted, recorded) pairs."""
    x = np.asarray(counted, dtype=np.float64)
    y = np.asarray(recorded, dtype=np.float64)
    keep = y > 0
    x, y = x[keep], y[keep]
    n = int(x.size)
    out: dict[str, Any] = {"requests_with_usage": n}
    if n == 0:
        out["status"] = "no recorded usage"
        return out
    raw_ape = _ape(x, y)
    out["uncalibrated"] = {
        "median_ratio_recorded_over_counted": _r(np.median(y / np.maximum(x, 1))),
        "ape_median_pct": _r(np.median(raw_ape)),
        "ape_p90_pct": _r(np.percentile(raw_ape, 90)),
    }
    out["recorded_prompt_tokens"] = {"min": int(y.min()), "median": int(np.median(y)), "max": int(y.max())}
    out["counted_tokens"] = {"min": int(x.min()), "median": int(np.median(x)), "max": int(x.max())}
    if n < MIN_REQUESTS:
        out["status"] = f"too few requests with usage to fit a line ({n} < {MIN_REQUESTS})"
        out["intercept_if_factor_1"] = _r(np.median(y - x))
        return out
    a, b = robust_line(x, y)
    ape = _ape(a + b * x, y)
    fit = {
        "method": "huber-irls",
        "factor": _r(b, 4),
        "intercept": _r(a, 1),
        "ape_median_pct": _r(np.median(ape)),
        "ape_p90_pct": _r(np.percentile(ape, 90)),
        "ape_max_pct": _r(ape.max()),
    }
    lo, hi = PLAUSIBLE_FACTOR
    if not lo <= b <= hi:
        out.update({"status": "not meaningful", "rejected_fit": fit,
                    "reason": f"the fitted factor {b:.3g} is not a plausible tokenizer factor "
                              f"({lo:.2f}..{hi:.2f}): the counted context does not follow the "
                              "recorded prompts"})
        return out
    out.update({"status": "ok", **fit})
    if n < 10:
        out["caution"] = ("fewer than 10 requests: the in-sample error of a two-parameter fit is "
                          "optimistic and there is no cross-validation")
    else:
        folds = np.arange(n) % 5
        cv = np.empty(n)
        for f in range(5):
            test = folds == f
            a_f, b_f = robust_line(x[~test], y[~test])
            cv[test] = _ape(a_f + b_f * x[test], y[test])
        out["cv_ape_median_pct"] = _r(np.median(cv))
        out["cv_ape_p90_pct"] = _r(np.percentile(cv, 90))
    return out


def _r(v, nd: int = 2) -> float:
    return round(float(v), nd)


def request_points(continuity, kind, flags, request, usage_input, usage_cache_read,
                   usage_cache_write, tokens, context_mask=None):
    """Per request with recorded usage: (continuity, request, counted, recorded).

    Arrays are whole-dataset columns ordered by (continuity, seq). ``context_mask`` says
    which rows are sent to the model (default: kinds in :data:`CONTEXT_KINDS`).
    """
    kind = np.asarray(kind)
    if context_mask is None:
        context_mask = np.isin(kind, np.array([int(k) for k in CONTEXT_KINDS], dtype=kind.dtype))
    counted = _ContextSums(tokens, flags, context_mask)
    return [(c, rq, counted.between(lo, fo), recorded)
            for c, rq, _u, lo, fo, recorded in _request_windows(
                continuity, kind, flags, request, usage_input, usage_cache_read, usage_cache_write)]


class _ContextSums:
    """Sums of a per-row value over the context rows ``[lo, fo)`` of one chain (main and
    side chain apart: a side-chain request sees the side chain's rows)."""

    def __init__(self, values, flags, context_mask):
        v = np.asarray(values).astype(np.int64)
        mask = np.asarray(context_mask, dtype=bool)
        self.side = (np.asarray(flags).astype(np.int64) & int(EventFlag.SIDECHAIN)) != 0
        self.cum_main, self.cum_side = (np.concatenate([[0], np.cumsum(np.where(mask & chain, v, 0))])
                                        for chain in (~self.side, self.side))

    def between(self, lo: int, fo: int) -> int:
        cum = self.cum_side if self.side[fo] else self.cum_main
        return int(cum[fo] - cum[lo])


def _request_windows(continuity, kind, flags, request, usage_input, usage_cache_read, usage_cache_write):
    """Per row ``u`` with recorded usage: (continuity, request, u, lo, fo, recorded): the
    request's context is the rows ``[lo, fo)``, from the continuity's start (or just after
    its latest compaction boundary) up to the request's first output ``fo`` (``u`` itself
    when the request has no output in the log)."""
    continuity = np.asarray(continuity)
    kind = np.asarray(kind)
    flags = np.asarray(flags).astype(np.int64)
    request = np.asarray(request).astype(np.int64)
    ui, ucr, ucw = (np.asarray(a).astype(np.int64) for a in (usage_input, usage_cache_read, usage_cache_write))
    n = kind.size
    rows = np.arange(n)
    is_out = (flags & int(EventFlag.OUTPUT)) != 0
    has_usage = ui >= 0
    boundaries = np.flatnonzero(kind == int(EventKind.COMPACTION))
    # continuity starts (rows are grouped by continuity)
    starts = np.flatnonzero(np.concatenate([[True], continuity[1:] != continuity[:-1]])) if n else np.zeros(0, int)
    start_of = np.zeros(n, dtype=np.int64)
    if n:
        start_of[starts] = starts
        start_of = np.maximum.accumulate(start_of)
    # first output row of each (continuity, request)
    key_c = continuity.astype(np.int64)
    out_rows = rows[is_out & (request >= 0)]
    first_out: dict[tuple[int, int], int] = {}
    for r_ in out_rows[::-1].tolist():  # reversed so the earliest wins
        first_out[(int(key_c[r_]), int(request[r_]))] = r_
    res = []
    for u in np.flatnonzero(has_usage).tolist():
        c, rq = int(key_c[u]), int(request[u])
        fo = first_out.get((c, rq), u)
        s = int(start_of[fo])
        bi = np.searchsorted(boundaries, fo) - 1
        lo = s
        if bi >= 0 and boundaries[bi] >= s:
            lo = int(boundaries[bi]) + 1
        recorded = int(ui[u] + max(ucr[u], 0) + max(ucw[u], 0))
        res.append((c, rq, u, lo, fo, recorded))
    return res


def calibration_points(events, continuity_ids: list[str], tokenizer: str = "cl100k"
                       ) -> tuple[dict[int, tuple[list[int], list[int]]], dict[int, dict[str, int]]]:
    """The (counted, recorded) pairs a line is fitted on, per continuity index, and the
    requests left out per continuity index with why (``background_call``,
    ``context_not_in_log``)."""
    col = f"tokens_{tokenizer}"
    names = events.column("name").to_pylist()
    kind = events.column("kind").to_numpy()
    mask = np.isin(kind, np.array([int(k) for k in CONTEXT_KINDS], dtype=kind.dtype))
    if any(nm in NOT_CONTEXT_NAMES for nm in names):
        mask &= ~np.fromiter((nm in NOT_CONTEXT_NAMES for nm in names), dtype=bool, count=len(names))
    role = events.column("role").to_numpy()
    anchor = mask & (((kind == int(EventKind.MESSAGE)) & np.isin(role, [int(r) for r in ANCHOR_ROLES]))
                     | (kind == int(EventKind.SUMMARY)))
    origin = events.column("origin").to_numpy()
    tokens = events.column(col).to_numpy()
    flags = events.column("flags").to_numpy()
    counted = _ContextSums(tokens, flags, mask)
    anchors = _ContextSums(anchor, flags, mask)
    windows = _request_windows(events.column("continuity").to_numpy(), kind, flags,
                               events.column("request").to_numpy(), events.column("usage_input").to_numpy(),
                               events.column("usage_cache_read").to_numpy(),
                               events.column("usage_cache_write").to_numpy())
    by: dict[int, tuple[list[int], list[int]]] = {}
    excluded: dict[int, dict[str, int]] = {}
    for c, _req, u, lo, fo, recorded in windows:
        if recorded <= 0:
            continue  # no usage to compare (fit_report drops these too)
        why = ("background_call" if origin[u] == int(Origin.BACKGROUND)
               else "context_not_in_log" if anchors.between(lo, fo) == 0 else None)
        if why is not None:
            excluded.setdefault(c, {}).setdefault(why, 0)
            excluded[c][why] += 1
            continue
        xs, ys = by.setdefault(c, ([], []))
        xs.append(counted.between(lo, fo))
        ys.append(recorded)
    return by, excluded


def calibrate_table(events, continuity_ids: list[str], tokenizer: str = "cl100k",
                    not_meaningful: dict[str, str | None] | None = None) -> dict[str, Any]:
    """Calibration report per continuity id for an Arrow events table.

    ``not_meaningful``: continuity id -> the reason its recorded usage cannot calibrate
    (from the parser, :data:`NOT_MEANINGFUL`), or None.
    """
    by, excluded = calibration_points(events, continuity_ids, tokenizer)
    report = {}
    for c, cid in enumerate(continuity_ids):
        xs, ys = by.get(c, ([], []))
        out = excluded.get(c, {})
        reason = (not_meaningful or {}).get(cid)
        if reason is None and out and not xs:
            reason = _excluded_reason(out)
        if reason is not None:
            rep: dict[str, Any] = {"requests_with_usage": len(xs) + sum(out.values()),
                                   "status": "not meaningful", "reason": reason}
        else:
            rep = fit_report(np.array(xs), np.array(ys))
            rep["requests_with_usage"] += sum(out.values())
        if out:
            rep["requests_excluded"] = dict(sorted(out.items()))
        rep["tokenizer"] = tokenizer
        report[cid] = rep
    return report


def _excluded_reason(excluded: dict[str, int]) -> str:
    parts = []
    if excluded.get("context_not_in_log"):
        parts.append(f"{excluded['context_not_in_log']} request(s) whose context is not in the log "
                     "(no system, developer or user message, or summary, before them: the log "
                     "starts mid-conversation)")
    if excluded.get("background_call"):
        parts.append(f"{excluded['background_call']} background model call(s) (condenser or "
                     "summariser: their prompt is not this continuity's context)")
    return "no request with recorded usage is left to calibrate on: " + "; ".join(parts)
