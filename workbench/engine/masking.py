"""Masking by a bound: every tool output of the raw tail but the newest ``keep_tokens``
tokens (or ``keep_results`` outputs) becomes a placeholder, once that frees ``at_least``
tokens, optionally only after an idle gap. The reference engine takes its masking step from
here; the kernel's twin is ``kernel_nb._mask_by_bound_nb``. The evaluations read the bound
each prompt was sent with from the engines' prompt record (:mod:`workbench.engine.prompt_record`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench.engine import enums as E
from workbench.engine.prepare import ReplayInput


class MaskRule(NamedTuple):
    """Masking by a bound: keep the newest ``keep_tokens`` tool-output tokens or the newest
    ``keep_results`` tool outputs, mask only when that frees ``at_least`` tokens, and (with
    ``idle_ms`` > 0) only on a request that follows the previous one by that long."""

    keep_tokens: int
    keep_results: int
    at_least: int
    placeholder: int
    idle_ms: float

    @property
    def bounded(self) -> bool:
        """Masking by a bound at all (by tokens or by count), rather than by turns or none."""
        return self.keep_tokens > 0 or self.keep_results > 0

    @classmethod
    def from_config(cls, cfg: np.ndarray) -> MaskRule:
        """From a lowered policy's ``Cfg`` slots (``Policy.lower``)."""
        C = E.Cfg
        return cls(int(cfg[C.MASK_KEEP_TOKENS]), int(cfg[C.MASK_KEEP_RESULTS]), int(cfg[C.MASK_AT_LEAST]),
                   int(cfg[C.MASK_PLACEHOLDER]), float(cfg[C.MASK_IDLE_MS]))

    @classmethod
    def of(cls, masking) -> MaskRule:
        """From a policy's :class:`~workbench.engine.policy.Masking` (as ``Policy.lower`` does)."""
        return cls(masking.keep_tokens, masking.keep_results, masking.at_least_tokens,
                   masking.placeholder_tokens, masking.idle_s * 1000.0)


def mask_step(inp: ReplayInput, visible_rows: np.ndarray, tail: list[int], p: int, r: int, bound: int,
              rule: MaskRule) -> int:
    """The masking step of request ``r`` (first output row ``p``): every tool output of the
    ``tail`` but the newest ``rule.keep_tokens`` tokens (or ``rule.keep_results`` outputs) of
    them becomes a placeholder, once that frees at least ``rule.at_least``; with
    ``rule.idle_ms`` only when request ``r`` comes that long after request ``r - 1``. Returns
    the new bound (visible positions below it are masked); it only moves forward, and stays
    ``bound`` when nothing is masked now."""
    if rule.idle_ms > 0 and not (r > 0 and inp.req_ts[r] - inp.req_ts[r - 1] >= rule.idle_ms):
        return bound

    def position(i: int) -> int:
        return int(np.searchsorted(visible_rows, i))

    results = [i for i in tail if inp.is_tool_result[i]]
    bound_row = tail[0] if tail else p  # the first row whose outputs up to p are kept
    if rule.keep_results > 0:
        if len(results) >= rule.keep_results:
            bound_row = results[-rule.keep_results]
    else:
        acc = 0
        for i in reversed(results):
            if acc + int(inp.tokens[i]) > rule.keep_tokens:
                bound_row = i + 1
                break
            acc += int(inp.tokens[i])
    c = position(bound_row)
    at_least, placeholder = rule.at_least, rule.placeholder
    a = max(bound, position(tail[0]) if tail else position(p))
    fresh = [i for i in results if a <= position(i) < c]
    if c <= a or sum(int(inp.tokens[i]) for i in fresh) <= 0:
        return bound
    if sum(int(inp.tokens[i]) - placeholder for i in fresh) < at_least:
        return bound
    return c
