"""Integer codes shared by the policy lowering, both engines and the output tables.

The kernel sees a policy as ``kinds`` (int64 vector) and ``params`` (float64 vector);
the ``K_*``/``P_*`` constants below are the slots. Never renumber: runs store them.
"""

from __future__ import annotations

from enum import IntEnum


class Trigger(IntEnum):
    NONE = 0  # never compacts (context grows until it overflows)
    STRIDE = 1  # every N message events, anchored to the N-th message (ADR-0011)
    TOKENS = 2  # context tokens >= threshold
    TIME = 3  # wall-clock interval since the last compaction
    EVENTS = 4  # model-visible events in the view > max_size (OpenHands)
    TURNS = 5  # every N+M turns, keeping the last M (SWE-agent / Complexity Trap)
    RECORDED = 6  # where the imported log recorded a compaction boundary (as-recorded)


class Strategy(IntEnum):
    NONE = 0
    SUMMARY = 1  # modelled LLM summary (readable artifact); folds or accumulates segments
    OPAQUE = 2  # provider compaction item: size only, unreadable
    TRUNCATE = 3  # drop the span, no summary
    CLEAR_TOOL_USES = 4  # Anthropic context editing: old tool results -> placeholders
    RECORDED = 5  # keep the log's own summary event (as-recorded replay)


class CacheMode(IntEnum):
    NONE = 0  # provider without prompt caching
    EXPLICIT = 1  # Anthropic: breakpoint at the end; new tokens are written (premium)
    AUTOMATIC = 2  # OpenAI: automatic prefix caching in fixed increments, no write cost


class CallKind(IntEnum):
    MAIN = 0  # the agent's own request, as recorded in the continuity
    COMPACTION = 1  # a summarizer / compaction call made by the policy
    FLUSH = 2  # a pre-compaction memory flush turn (invisible to the user)
    MERGE = 3  # a hierarchical merge of summary segments


class CacheLoss(IntEnum):
    """Why a request read less from the cache than the previous prompt of its key."""

    NONE = 0  # the whole previous prompt was read back (or nothing was lost)
    COLD = 1  # first request of this cache key
    TTL = 2  # the gap since the key was last used exceeded the TTL
    COMPACTION = 3  # the policy compacted (intentional)
    EDIT = 4  # the policy edited older context: masking or clearing tool uses (intentional)
    DRIFT = 5  # request shape changed without a policy edit (e.g. a different cache key)
    BELOW_MINIMUM = 6  # the common prefix is shorter than the minimum cacheable size


class LedgerFlag(IntEnum):
    COMPACTED = 1  # a compaction was applied before this main request
    FLUSHED = 2  # a flush ran before this main request
    OVERFLOW = 4  # the context exceeded the window before the emergency action
    EMERGENCY = 8  # an emergency action ran
    EDITED = 16  # masking/clearing changed older context in this request
    SKIPPED_NO_PROGRESS = 32  # the rule fired but the cut would not make enough progress
    SKIPPED_NO_SAFE_CUT = 64  # the rule fired but no safe cut point existed


class EventType(IntEnum):
    CHECKPOINT = 1  # ADR-0011 continuity_compaction_checkpoint_created
    FLUSH = 2
    OVERFLOW = 3
    CONTEXT_EDIT = 4  # clear_tool_uses applied
    MERGE = 5  # hierarchical segments merged


# ---- slots of the lowered policy -------------------------------------------------------
K_TRIGGER, K_STRATEGY, K_CACHE_MODE, K_ACCUMULATE, K_MESSAGE_BOUNDARY, K_RETAIN_KIND, \
    K_FLUSH, K_SUMMARY_SHARES_CACHE, K_CLEAR_INPUTS, K_EMERGENCY, K_COMPILE_LIMIT_MESSAGES, \
    K_MASK_AFTER_TURNS, K_MAX_SEGMENTS = range(13)
N_KINDS = 13

(P_TRIGGER_VALUE, P_TRIGGER_KEEP_TURNS, P_KEEP_FIRST, P_KEEP_LAST_EVENTS, P_KEEP_LAST_TOKENS,
 P_MIN_PROGRESS, P_RETAIN_TOKENS, P_SUMMARY_RATIO, P_SUMMARY_CAP, P_SUMMARY_FLOOR,
 P_SUMMARY_PROMPT, P_FLUSH_THRESHOLD, P_FLUSH_PROMPT, P_FLUSH_OUTPUT, P_MASK_PLACEHOLDER,
 P_CLEAR_KEEP, P_CLEAR_AT_LEAST, P_CLEAR_PLACEHOLDER, P_WINDOW, P_MIN_CACHEABLE,
 P_CACHE_GRANULARITY, P_TTL_MS) = range(22)
N_PARAMS = 22

# Retained raw items carried across a compaction (Codex keeps recent user messages).
RETAIN_NONE, RETAIN_USER_MESSAGES, RETAIN_MESSAGES = 0, 1, 2
# What happens when the context exceeds the window.
EMERGENCY_TRUNCATE, EMERGENCY_COMPACT = 0, 1
