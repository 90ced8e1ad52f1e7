"""Session pruning (OpenClaw ``agents.defaults.contextPruning``, mode ``cache-ttl``): old tool
results are trimmed or cleared in the prompt of *one* request, never in the context itself.

OpenClaw's rule (``src/agents/pi-extensions/context-pruning/pruner.ts``, ``extension.ts``,
``settings.ts``; ``docs/concepts/session-pruning.md``), in the workbench's terms:

* the request must come at least ``ttl`` after the previous one (the cache has expired);
  OpenClaw reads the time of its last ``openclaw.cache-ttl`` marker, written once per agent
  run and re-armed by a prune: the workbench takes the previous model call [inferred];
* only tool results of the raw tail are prunable, after the continuity's first user message
  and before the output of the ``keep``-th most recent request (its last ``keep`` assistant
  turns are protected); fewer than ``keep`` outputs so far: no pruning;
* sizes are OpenClaw's character estimate, ``chars = 4 x tokens`` (its
  ``CHARS_PER_TOKEN_ESTIMATE``): the ratios are of the context window in tokens, the
  character settings are lowered to tokens here (:func:`lowered`);
* when the messages (the prompt less the harness's fixed prefix) reach ``soft_ratio`` of the
  window, every prunable result longer than ``max(softTrim.maxChars, head + tail)`` is
  trimmed to its head and tail plus a note; if the messages still reach ``hard_ratio`` and
  the prunable results hold at least ``minPrunableToolChars``, results are cleared to a
  placeholder oldest first until the ratio falls below ``hard_ratio``.

The pruned prompt is what the request sends and what the cache sees (its prefix); the next
request sends the unpruned context again and misses from the first pruned result on. The
reference engine and the context tracker (:mod:`workbench.evaluate.context`) take the step
from here; the kernel's twin is ``kernel_nb._prune_nb``.

>>> lowered(soft_trim_max_chars=4_000, soft_trim_head_chars=1_500, soft_trim_tail_chars=1_500,
...         min_prunable_tool_chars=50_000)
(1000.0, 772, 12500.0)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from workbench.engine import enums as E
from workbench.engine.prepare import ReplayInput

CHARS_PER_TOKEN = 4  # OpenClaw's CHARS_PER_TOKEN_ESTIMATE (pruner.ts)
TRIMMED, CLEARED = E.PruneState.TRIMMED, E.PruneState.CLEARED
# a trimmed result is its head, "\n...\n", its tail and this note (pruner.ts), here for a
# six-digit original length
_TRIM_NOTE = "\n...\n\n\n[Tool result trimmed: kept first {h} chars and last {t} chars of 100000 chars.]"


def lowered(*, soft_trim_max_chars: int, soft_trim_head_chars: int, soft_trim_tail_chars: int,
            min_prunable_tool_chars: int) -> tuple[float, int, float]:
    """OpenClaw's character settings in tokens: (a result is trimmed when its tokens exceed
    this, the tokens of a trimmed result, the prunable minimum)."""
    head, tail = soft_trim_head_chars, soft_trim_tail_chars
    # pruner.ts trims only when the result is longer than maxChars and than head + tail
    over = max(soft_trim_max_chars, head + tail) / CHARS_PER_TOKEN
    kept = math.ceil((head + tail + len(_TRIM_NOTE.format(h=head, t=tail))) / CHARS_PER_TOKEN)
    return over, kept, min_prunable_tool_chars / CHARS_PER_TOKEN


class PruneRule(NamedTuple):
    """The lowered rule (``Policy.lower`` fills the ``Param.PRUNE_*`` slots and ``Cfg.PRUNE_KEEP``)."""

    ttl_ms: float  # 0: pruning off
    keep: int  # protected assistant turns (0: every tool result of the tail is prunable)
    soft_ratio: float
    hard_ratio: float
    hard_on: bool
    min_tokens: float
    soft_over: float
    soft_keep: int
    placeholder: int
    window: float

    @property
    def on(self) -> bool:
        return self.ttl_ms > 0

    @classmethod
    def from_config(cls, cfg: np.ndarray, params: np.ndarray) -> PruneRule:
        """From a lowered policy (``Policy.lower``)."""
        P = E.Param
        return cls(float(params[P.PRUNE_TTL_MS]), int(cfg[E.Cfg.PRUNE_KEEP]),
                   float(params[P.PRUNE_SOFT_RATIO]), float(params[P.PRUNE_HARD_RATIO]),
                   bool(params[P.PRUNE_HARD_ON]), float(params[P.PRUNE_MIN]),
                   float(params[P.PRUNE_SOFT_OVER]), int(params[P.PRUNE_SOFT_KEEP]),
                   int(params[P.PRUNE_PLACEHOLDER]), float(params[P.WINDOW]))

    @classmethod
    def of(cls, policy, window: int) -> PruneRule:
        """From a policy on a window (as ``Policy.lower`` lowers it)."""
        return cls.from_config(*policy.lower(window, 0, 0.0, 1))

    def size(self, state: int, tokens: int) -> int:
        """Tokens of a tool result in the pruned prompt (``state``: 0, TRIMMED or CLEARED)."""
        return tokens if state == 0 else self.soft_keep if state == TRIMMED else self.placeholder


def first_user_row(inp: ReplayInput) -> int:
    """The continuity's first user message (-1: none): nothing before it is pruned."""
    users = np.flatnonzero(inp.is_user_message)
    return int(users[0]) if users.size else -1


def prune_step(inp: ReplayInput, tail: list[int], eff: list[int], messages: int, r: int,
               rule: PruneRule) -> dict[int, int]:
    """The prune of request ``r``'s prompt: ``{row: TRIMMED | CLEARED}`` (empty: the request
    is sent unpruned). ``tail``: the shown raw tail, ``eff``: its rows' tokens as they stand
    in the context, ``messages``: the prompt's tokens less the harness's fixed prefix."""
    if not rule.on or r == 0 or inp.req_ts[r] - inp.req_ts[r - 1] < rule.ttl_ms:
        return {}
    if rule.keep > 0 and r < rule.keep:
        return {}
    total = messages
    if total / rule.window < rule.soft_ratio:
        return {}
    first = first_user_row(inp)
    protect = int(inp.req_first_row[r - rule.keep]) if rule.keep > 0 else inp.n
    if first < 0:
        return {}
    prunable = [(i, e) for i, e in zip(tail, eff, strict=True)
                if inp.is_tool_result[i] and first < i < protect]
    state = {i: TRIMMED for i, e in prunable if e > rule.soft_over}
    total += sum(rule.soft_keep - e for i, e in prunable if i in state)
    sizes = [rule.size(state.get(i, 0), e) for i, e in prunable]
    if not rule.hard_on or total / rule.window < rule.hard_ratio or sum(sizes) < rule.min_tokens:
        return state
    for (i, _), size in zip(prunable, sizes, strict=True):
        if total / rule.window < rule.hard_ratio:
            break
        state[i] = CLEARED
        total += rule.placeholder - size
    return state
