"""Integer codes shared by the policy lowering, both engines and the output tables.

Each code family is a ``NamedTuple`` class with int defaults and one module-level
instance (vectorbt's ``enums.py`` habit): ``Trigger.TOKENS`` is a plain ``int`` in Python
and a compile-time constant inside ``@njit`` code, so kernels use the same names as the
API. :func:`names` gives the lower-case name of each code (what tables and specs show).

The kernel sees a policy as ``kinds`` (int64 vector) and ``params`` (float64 vector);
the ``K_*``/``P_*`` constants below are the slots. Never renumber: runs store the codes.

>>> Trigger.TOKENS, names(CallKind)[CallKind.FLUSH]
(2, 'flush')
"""

from __future__ import annotations

from typing import NamedTuple


class TriggerT(NamedTuple):
    NONE: int = 0  # never compacts (context grows until it overflows)
    STRIDE: int = 1  # every N message events, anchored to the N-th message (ADR-0011)
    TOKENS: int = 2  # context tokens >= threshold
    TIME: int = 3  # wall-clock interval since the last compaction
    EVENTS: int = 4  # model-visible events in the view > max_size (OpenHands)
    TURNS: int = 5  # every N+M turns, keeping the last M (SWE-agent / Complexity Trap)
    RECORDED: int = 6  # where the imported log recorded a compaction boundary (as-recorded)


class StrategyT(NamedTuple):
    NONE: int = 0
    SUMMARY: int = 1  # modelled LLM summary (readable artifact); folds or accumulates segments
    OPAQUE: int = 2  # provider compaction item: size only, unreadable
    TRUNCATE: int = 3  # drop the span, no summary
    CLEAR_TOOL_USES: int = 4  # Anthropic context editing: old tool results -> placeholders
    RECORDED: int = 5  # keep the log's own summary event (as-recorded replay)


class CacheModeT(NamedTuple):
    NONE: int = 0  # provider without prompt caching
    EXPLICIT: int = 1  # Anthropic: breakpoint at the end; new tokens are written (premium)
    AUTOMATIC: int = 2  # OpenAI: automatic prefix caching in fixed increments, no write cost
    # automatic prefix caching whose writes are billed (OpenAI from GPT-5.6: 1.25x input):
    # the uncached tail of a cacheable prompt is written, as with explicit caches
    AUTOMATIC_WRITES: int = 3


class CallKindT(NamedTuple):
    MAIN: int = 0  # the agent's own request, as recorded in the continuity
    COMPACTION: int = 1  # a summarizer / compaction call made by the policy
    FLUSH: int = 2  # a pre-compaction memory flush turn (invisible to the user)
    MERGE: int = 3  # a hierarchical merge of summary segments


class CacheLossT(NamedTuple):
    """Why a request read less from the cache than the previous prompt of its key."""

    NONE: int = 0  # the whole previous prompt was read back (or nothing was lost)
    COLD: int = 1  # first request of this cache key
    TTL: int = 2  # the gap since the key was last used exceeded the TTL
    COMPACTION: int = 3  # the policy compacted (intentional)
    EDIT: int = 4  # the policy edited older context: masking or clearing tool uses (intentional)
    DRIFT: int = 5  # request shape changed without a policy edit (e.g. a different cache key)
    BELOW_MINIMUM: int = 6  # the common prefix is shorter than the minimum cacheable size
    TRUNCATION: int = 7  # an overflow truncated the oldest raw events (not a compaction)
    # the log recorded the provider reading back less than the model's common prefix for the
    # very prompt the replay sent (a miss of the provider's own, e.g. another cache replica)
    RECORDED_MISS: int = 8
    # the policy rebuilt the provider window from its local checkpoint and reset the provider
    # continuation (Holon §5.4): nothing is read back, by intent
    RESET: int = 9


class LedgerFlagT(NamedTuple):
    """Bits of a ledger row's ``flags``."""

    COMPACTED: int = 1  # a compaction was applied before this main request
    FLUSHED: int = 2  # a flush ran before this main request
    OVERFLOW: int = 4  # the context exceeded the window before the emergency action
    EMERGENCY: int = 8  # an emergency action ran
    EDITED: int = 16  # masking/clearing changed older context in this request
    SKIPPED_NO_PROGRESS: int = 32  # the rule fired but the cut would not make enough progress
    SKIPPED_NO_SAFE_CUT: int = 64  # the rule fired but no safe cut point existed
    TRUNCATED: int = 128  # the overflow's last resort dropped the oldest raw events (not a compaction)
    # the main request was sent session-pruned (OpenClaw contextPruning): old tool results
    # trimmed or cleared in that request's prompt only; the context itself is unchanged
    PRUNED: int = 256
    # the main request still exceeded the window after the emergency action: the provider
    # rejects it (OpenAI's 400 ``context_length_exceeded``, Anthropic's "prompt is too long"),
    # so the harness sees an error, nothing is billed and nothing is cached; its row keeps the
    # attempted prompt in ``context_after`` and has 0 prompt tokens (counted as failed_requests)
    FAILED: int = 512


class EventTypeT(NamedTuple):
    CHECKPOINT: int = 1  # ADR-0011 continuity_compaction_checkpoint_created
    FLUSH: int = 2
    OVERFLOW: int = 3
    CONTEXT_EDIT: int = 4  # clear_tool_uses applied
    MERGE: int = 5  # hierarchical segments merged
    TRUNCATION: int = 6  # overflow handling dropped the oldest raw events: no checkpoint frame,
    #                      no summary, not a compaction (a policy whose strategy is truncation
    #                      compacts with CHECKPOINT frames of kind truncation_v1 instead)
    # two-layer policies (workbench.engine.provider_window): the local layer's readable
    # checkpoint, which leaves the provider window as it is (Holon §4.1, §5.3) ...
    LOCAL_CHECKPOINT: int = 7
    # ... and the explicit rebuild of the provider window from it, a continuation reset (§5.4)
    REBUILD: int = 8


class CompileStrategyT(NamedTuple):
    """How the context is compiled (ADR-0011 compile strategies)."""

    SUMMARIES_RECENT_MESSAGES_V1: int = 0  # the latest summary items + the recent raw messages
    RECENT_MESSAGES_V1: int = 1  # the recent raw messages only: summary items are never compiled in


class RetainT(NamedTuple):
    """Raw items carried across a compaction (Codex keeps recent user messages)."""

    NONE: int = 0
    USER_MESSAGES: int = 1
    MESSAGES: int = 2


class EmergencyT(NamedTuple):
    """What happens when the context exceeds the window."""

    TRUNCATE: int = 0  # drop the oldest raw events until it fits (a truncation)
    COMPACT: int = 1  # a forced compaction (summary/opaque strategies), then truncation if still over
    # drop the older half of the raw tail first (Roo Code's sliding-window fallback), then
    # truncate further only if it still does not fit
    TRUNCATE_HALF: int = 2


class PruneStateT(NamedTuple):
    """What session pruning did to one tool result of a request's prompt."""

    NONE: int = 0
    TRIMMED: int = 1  # head and tail kept, with a note (OpenClaw's soft trim)
    CLEARED: int = 2  # replaced by a placeholder (OpenClaw's hard clear)


Trigger = TriggerT()
Strategy = StrategyT()
CacheMode = CacheModeT()
CallKind = CallKindT()
CacheLoss = CacheLossT()
LedgerFlag = LedgerFlagT()
EventType = EventTypeT()
Retain = RetainT()
CompileStrategy = CompileStrategyT()
Emergency = EmergencyT()
PruneState = PruneStateT()

# the causes of cache loss the policy chose (Holon §5.5: intentional compaction, as against
# request-shape drift, CacheLoss.DRIFT): its compactions, its edits of older context, a
# rebuild's reset. The summary's two cache-loss columns count by it (both reducers)
INTENTIONAL_LOSSES = (CacheLoss.COMPACTION, CacheLoss.EDIT, CacheLoss.RESET)


def names(codes: NamedTuple) -> dict[int, str]:
    """``{code: lower-case name}`` of one code family, e.g. ``names(CallKind)[0] == "main"``."""
    return {value: name.lower() for name, value in codes._asdict().items()}


def recorded_summaries_visible(strategy: int, compile_strategy: int) -> bool:
    """Whether the log's own summary events are compiled in as rows: only when the policy
    keeps them (``Strategy.RECORDED``) and its compile strategy shows summaries."""
    return strategy == Strategy.RECORDED and compile_strategy != CompileStrategy.RECENT_MESSAGES_V1


# ---- slots of the lowered policy -------------------------------------------------------
K_TRIGGER, K_STRATEGY, K_CACHE_MODE, K_ACCUMULATE, K_MESSAGE_BOUNDARY, K_RETAIN_KIND, \
    K_FLUSH, K_SUMMARY_SHARES_CACHE, K_CLEAR_INPUTS, K_EMERGENCY, K_COMPILE_LIMIT_MESSAGES, \
    K_MASK_AFTER_TURNS, K_MAX_SEGMENTS, K_TRIGGER_SCOPE, K_COMPILE = range(15)
N_KINDS = 15

(P_TRIGGER_VALUE, P_TRIGGER_KEEP_TURNS, P_KEEP_FIRST, P_KEEP_LAST_EVENTS, P_KEEP_LAST_TOKENS,
 P_MIN_PROGRESS, P_RETAIN_TOKENS, P_SUMMARY_RATIO, P_SUMMARY_CAP, P_SUMMARY_FLOOR,
 P_SUMMARY_PROMPT, P_FLUSH_THRESHOLD, P_FLUSH_PROMPT, P_FLUSH_OUTPUT, P_MASK_PLACEHOLDER,
 P_CLEAR_KEEP, P_CLEAR_AT_LEAST, P_CLEAR_PLACEHOLDER, P_WINDOW, P_MIN_CACHEABLE,
 P_CACHE_GRANULARITY, P_TTL_MS, P_MASK_KEEP_TOKENS, P_MASK_AT_LEAST, P_PROBE_PROMPT,
 P_MASK_KEEP_RESULTS, P_MASK_IDLE_MS, P_KEEP_LAST_SHARE,
 # session pruning (workbench.engine.pruning.PruneRule): ttl (0: off), protected assistant
 # turns, soft/hard ratios of the window, hard clear on, prunable minimum, soft-trim size
 # bound and trimmed size, cleared placeholder (tokens)
 P_PRUNE_TTL_MS, P_PRUNE_KEEP, P_PRUNE_SOFT_RATIO, P_PRUNE_HARD_RATIO, P_PRUNE_HARD_ON, P_PRUNE_MIN,
 P_PRUNE_SOFT_OVER, P_PRUNE_SOFT_KEEP, P_PRUNE_PLACEHOLDER,
 # two layers (workbench.engine.provider_window): the local checkpoint's trigger and prompt
 P_LOCAL_TOKENS, P_LOCAL_PROMPT,
 # ---- added by branch `task` (issue 31, task-state-checkpoints): the tokens of the fixed
 # task-state block every summary carries on top of its modelled size (0: none)
 P_TASK_STATE_TOKENS) = range(40)
N_PARAMS = 40

# a share (of the tail's tokens) as an integer in parts per million: both engines compute the
# kept tokens as ``ppm * tokens // SHARE_SCALE`` so that they agree to the token
SHARE_SCALE = 1_000_000


def share_ppm(share: float) -> int:
    return int(round(float(share) * SHARE_SCALE))
