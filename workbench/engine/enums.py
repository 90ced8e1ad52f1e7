"""Integer codes shared by the policy lowering, both engines and the output tables.

Each code family is a ``NamedTuple`` class with int defaults and one module-level
instance (vectorbt's ``enums.py`` habit): ``Trigger.TOKENS`` is a plain ``int`` in Python
and a compile-time constant inside ``@njit`` code, so kernels use the same names as the
API. :func:`names` gives the lower-case name of each code (what tables and specs show).

A policy reaches both engines as one lowered configuration (``Policy.lower``): the integer
slots ``Cfg`` (:class:`ConfigSlots`) and the real-valued slots ``Param`` (:class:`ParamSlots`),
each declared once below with its meaning, offsets derived. Never renumber a code: runs store
the codes.

>>> Trigger.TOKENS, names(CallKind)[CallKind.FLUSH]
(2, 'flush')
"""

from __future__ import annotations

from typing import Annotated, NamedTuple, get_type_hints


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


def summaries_visible_in(cfg) -> bool:
    """:func:`recorded_summaries_visible` of a lowered configuration (``Cfg`` slots)."""
    return cfg[Cfg.STRATEGY] == Strategy.RECORDED and not cfg[Cfg.HIDE_SUMMARIES]


# ---- the kernel's state vector: one declaration ------------------------------------------
# A replay keeps everything it knows in one int64 vector ``st``: the configuration slots
# (``Policy.lower`` fills the policy's, ``kernel.with_continuity`` the few the continuity adds;
# read-only during the replay; the reference engine reads the same vector), then the state
# slots, then one previous-prompt descriptor per cache key.
# Each slot is a field below, in order, with its meaning; the offsets are derived from that
# order (``Cfg``, ``State``, ``Prev``, ``KEY_BASE``), so two slots can never share a cell.
# Inside ``@njit`` code ``st[State.CUT]`` is a compile-time constant, like ``Trigger.TOKENS``.
# "position" is a visible position (the v-th model-visible row, see kernel_nb).


class ConfigSlots(NamedTuple):
    """Configuration slots: the lowered policy's integers, and a few facts of the continuity
    (``kernel.CONTINUITY_SLOTS``, filled by ``kernel.with_continuity``)."""

    KEEP_FIRST: Annotated[int, "visible positions pinned at the head of every prompt, never cut"]
    RECENT_MESSAGES_LIMIT: Annotated[int, "compile: at most this many recent raw messages shown (0: all)"]
    MASK_AFTER_TURNS: Annotated[int, "masking by turns: tool outputs older than this many requests masked (0: off)"]
    MASK_PLACEHOLDER: Annotated[int, "tokens of a masked tool output's placeholder"]
    CLEAR_PLACEHOLDER: Annotated[int, "tokens of a cleared tool use's placeholder"]
    MASKING: Annotated[int, "1: the policy masks tool outputs (by turns, tokens or count)"]
    CLEARING: Annotated[int, "1: the strategy is clear_tool_uses"]
    HAS_OUTPUT_RESULTS: Annotated[int, "1: some tool result is a model output (mask class 1 exists)"]
    MONOTONE_SUMS: Annotated[int, "1: tokens and placeholders are >= 0, so tail token sums never decrease"]
    TRIGGER: Annotated[int, "the cut-point rule (Trigger)"]
    STRATEGY: Annotated[int, "the compaction strategy (Strategy)"]
    CACHE_MODE: Annotated[int, "the provider's prompt caching (CacheMode)"]
    MIN_CACHEABLE: Annotated[int, "the shortest prefix (tokens) the provider caches"]
    CACHE_GRANULARITY: Annotated[int, "cached prefixes are multiples of this many tokens (>= 1)"]
    ACCUMULATE: Annotated[int, "1: summaries accumulate as segments; 0: each folds the previous one in"]
    RETAIN_KIND: Annotated[int, "raw items carried across a compaction (Retain)"]
    RETAIN_TOKENS: Annotated[int, "token budget of the retained items"]
    SUMMARY_SHARES_CACHE: Annotated[int, "1: the compaction call reuses the main prompt's cache key"]
    MAX_SEGMENTS: Annotated[int, "summary segments kept before a hierarchical merge (0: no limit)"]
    EMERGENCY: Annotated[int, "what an overflow does (Emergency)"]
    FLUSH: Annotated[int, "1: a pre-compaction memory flush runs"]
    KEEP_LAST_EVENTS: Annotated[int, "at least this many recent events stay raw at a cut"]
    KEEP_LAST_TOKENS: Annotated[int, "at most this many recent tokens stay raw at a cut (0: no bound)"]
    SUMMARY_PROMPT: Annotated[int, "tokens of the summarizer's instruction"]
    FLUSH_PROMPT: Annotated[int, "tokens of the flush turn's instruction"]
    FLUSH_OUTPUT: Annotated[int, "tokens the flush turn writes"]
    CLEAR_KEEP: Annotated[int, "clear_tool_uses: the newest tool uses kept"]
    TRIGGER_KEEP_TURNS: Annotated[int, "turns trigger: the last turns kept raw"]
    CUT_AT_MESSAGE: Annotated[int, "1: a cut falls on a message event (ADR-0011)"]
    TOKENS_NONNEG: Annotated[int, "1: every row's tokens are >= 0"]
    CLEAR_INPUTS: Annotated[int, "1: clear_tool_uses also clears the tool calls' inputs"]
    PRE_MASKED0: Annotated[int, "PRE row: placeholder correction of masked class-0 results (-1: not built)"]
    PRE_MASKED1: Annotated[int, "PRE row: the same for class-1 results, model outputs (-1: not built)"]
    PRE_CLEARED: Annotated[int, "PRE row: placeholder correction of cleared rows (-1: not built)"]
    PRE_CLEARED_MASKED0: Annotated[int, "PRE row: correction of rows both cleared and masked, class 0 (-1)"]
    PRE_CLEARED_MASKED1: Annotated[int, "PRE row: the same, class 1 (-1: not built)"]
    PREFIX_TOKENS: Annotated[int, "tokens the harness sends before any event (system prompt, tools): never cut"]
    MASK_KEEP_TOKENS: Annotated[int, "masking by tokens: the newest tool-output tokens that stay (0: off)"]
    MASK_AT_LEAST: Annotated[int, "masking by tokens/count: mask only when that frees this many tokens"]
    PRE_OUTPUT_TOKENS: Annotated[int, "PRE row: tool-output token sums, where the masking bound falls (-1)"]
    PROBE_PROMPT: Annotated[int, "tokens of the probe call after each summary (0: no probe)"]
    TRIGGER_SCOPE: Annotated[int, "tokens trigger compares 0: the whole prompt, 1: less prefix and pinned head"]
    MASK_KEEP_RESULTS: Annotated[int, "masking by count: the newest tool outputs that stay (0: off)"]
    MASK_IDLE_MS: Annotated[int, "masking by tokens/count runs only after this idle gap (ms)"]
    KEEP_LAST_SHARE_PPM: Annotated[int, "share of the tail's tokens kept raw at a cut (ppm), if above KEEP_LAST_TOKENS"]
    PRUNING: Annotated[int, "1: session pruning trims/clears old tool results per request"]
    PRUNE_KEEP: Annotated[int, "session pruning: the newest assistant turns protected"]
    FIRST_USER: Annotated[int, "position of the first user message (-1: none or not pruning)"]
    LOCAL_TOKENS: Annotated[int, "two layers: a local checkpoint after this many raw tokens (0: one layer)"]
    LOCAL_PROMPT: Annotated[int, "two layers: tokens of the local checkpoint's instruction"]
    HIDE_SUMMARIES: Annotated[int, "1: recent_messages_v1: segments are kept but never compiled in"]


class StateSlots(NamedTuple):
    """State slots: what a replay has done so far (after the configuration slots)."""

    CUT: Annotated[int, "position of the last cut (-1: none); the raw tail starts after it"]
    CLEARED: Annotated[int, "clear_tool_uses: the last cleared position (-1: none)"]
    CLEARED_ROW: Annotated[int, "the row of the clearing bound (-1: none)"]
    NEXT_ARTIFACT: Annotated[int, "number of the next summary/checkpoint artifact"]
    COMPACTIONS: Annotated[int, "compactions so far"]
    FLUSHED_AT: Annotated[int, "the compaction count at the last flush (-1: never)"]
    LAST_COMPACTION_REQUEST: Annotated[int, "request index of the last compaction"]
    LAST_COMPACTION_TS: Annotated[int, "timestamp (ms) of the last compaction (the first request's at start)"]
    NEXT_STRIDE: Annotated[int, "stride trigger: the next message ordinal that fires"]
    NEXT_BOUNDARY: Annotated[int, "recorded trigger: the next recorded boundary to reach"]
    RECORDED_SUMMARY_TOKENS: Annotated[int, "recorded trigger: the size of the boundary's recorded summary"]
    COVERED_FROM: Annotated[int, "the first row the current summary covers (-1: none)"]
    SHOWN_START: Annotated[int, "bounded compile window: its first shown position (-1: none)"]
    RETAINED_HEAD: Annotated[int, "retained items: start of the current window in RET"]
    RETAINED_TAIL: Annotated[int, "retained items: end of the current window in RET"]
    RETAINED_TOKENS: Annotated[int, "tokens of the retained items shown"]
    SEGMENTS_HEAD: Annotated[int, "summary segments: start of the current window in SEG"]
    SEGMENTS_TAIL: Annotated[int, "summary segments: end of the current window in SEG"]
    SEGMENT_TOKENS: Annotated[int, "tokens of the current summary segments"]
    MASKED0: Annotated[int, "masking: class-0 tool results before this position are masked"]
    MASKED1: Annotated[int, "masking: class-1 tool results (model outputs) before this position are masked"]
    LEDGER_ROWS: Annotated[int, "ledger rows written to the buffer"]
    EVENT_ROWS: Annotated[int, "event rows written to the buffer"]
    CLEAR_SCAN: Annotated[int, "clear_tool_uses: the first clearable position not yet passed"]
    CALLS_SEEN: Annotated[int, "clear_tool_uses: tool calls seen before CALL_SCAN (the last in a ring)"]
    CALL_SCAN: Annotated[int, "clear_tool_uses: the position the tool-call scan reached"]
    GAIN_FROM: Annotated[int, "clearing gain window: its start (clearable rows in [GAIN_FROM, GAIN_TO))"]
    GAIN_TO: Annotated[int, "clearing gain window: its end"]
    GAIN_COUNT: Annotated[int, "clearable rows in the gain window"]
    GAIN_TOKENS: Annotated[int, "tokens clearing the gain window frees"]
    GAIN_TO0: Annotated[int, "the gain window's end over masked class-0 rows"]
    GAIN_COUNT0: Annotated[int, "clearable masked class-0 rows in [GAIN_FROM, GAIN_TO0)"]
    GAIN_TOKENS0: Annotated[int, "tokens clearing them frees (placeholder for placeholder)"]
    GAIN_TO1: Annotated[int, "the gain window's end over masked class-1 rows"]
    GAIN_COUNT1: Annotated[int, "clearable masked class-1 rows in [GAIN_FROM, GAIN_TO1)"]
    GAIN_TOKENS1: Annotated[int, "tokens clearing them frees"]
    PRUNED_ENTRIES: Annotated[int, "session pruning: entries of the main prompt being sent (PRN rows 2-3; 0: none)"]
    LOCAL_CUT: Annotated[int, "two layers: the local layer's cut position (-1: none yet)"]
    LOCAL_TOKENS: Annotated[int, "two layers: tokens of the local checkpoint"]
    LOCAL_ARTIFACT: Annotated[int, "two layers: the local checkpoint's artifact (-1: none)"]
    RESET_PENDING: Annotated[int, "1: the session key's continuation is reset at its next call (a rebuild)"]


class PromptSlots(NamedTuple):
    """Fields of one cache key's previous-prompt descriptor (at ``KEY_BASE + key * KEY_SIZE``)."""

    EXISTS: Annotated[int, "1: the key sent a prompt before"]
    TOTAL: Annotated[int, "that prompt's tokens"]
    HEAD: Annotated[int, "its pinned head length (positions)"]
    RETAINED_HEAD: Annotated[int, "its retained window's start"]
    RETAINED_TAIL: Annotated[int, "its retained window's end"]
    SEGMENTS_HEAD: Annotated[int, "its segment window's start"]
    SEGMENTS_TAIL: Annotated[int, "its segment window's end"]
    TAIL_START: Annotated[int, "the first raw position it showed"]
    TAIL_END: Annotated[int, "the position after the last raw one it showed"]
    MASKED0: Annotated[int, "the class-0 masking bound then"]
    MASKED1: Annotated[int, "the class-1 masking bound then"]
    CLEARED: Annotated[int, "the clearing bound then"]
    TS: Annotated[int, "when it was sent (ms): the TTL runs from here"]
    COMPACTED: Annotated[int, "1: a compaction changed the context since"]
    EDITED: Annotated[int, "1: masking/clearing edited older context since"]
    TRUNCATED: Annotated[int, "1: an overflow truncated the context since"]
    PRUNED: Annotated[int, "1: it was sent pruned (its entries in PRN rows 0-1, key 0 only)"]
    PRUNED_FIRST: Annotated[int, "the first pruned position in it"]


class ShownColumns(NamedTuple):
    """What one call's prompt held: the columns of a prompt-record row, one per ledger row
    (``workbench.engine.prompt_record``; the kernel writes them after the ledger columns).
    Positions are visible positions; the two windows index the record's own buffers."""

    CUT: Annotated[int, "position of the context's cut then (-1: none); the raw tail starts after it"]
    HEAD: Annotated[int, "pinned positions shown: [0, HEAD)"]
    RETAINED_HEAD: Annotated[int, "retained items shown: start of their window in the retained buffer"]
    RETAINED_TAIL: Annotated[int, "retained items shown: end of that window"]
    SEGMENTS_HEAD: Annotated[int, "summary items shown: start of their window in the segment buffer"]
    SEGMENTS_TAIL: Annotated[int, "summary items shown: end of that window"]
    TAIL_START: Annotated[int, "first raw tail position shown (0 with TAIL_END when none is)"]
    TAIL_END: Annotated[int, "the position after the last raw tail position shown"]
    MASKED0: Annotated[int, "class-0 tool results before this position stood masked"]
    MASKED1: Annotated[int, "class-1 tool results (model outputs) before this position stood masked"]
    CLEARED: Annotated[int, "the last position clear_tool_uses had cleared (-1: none)"]
    PRUNED: Annotated[int, "tool results the session prune trimmed or cleared in it (0: sent unpruned)"]


class AfterColumns(NamedTuple):
    """The context's state right after one event (a checkpoint, merge, edit, truncation ...):
    the columns of a prompt record's event rows, one per event row (the kernel writes them
    after the event columns). The windows are the state's, shown or not (recent_messages_v1)."""

    CUT: Annotated[int, "position of the cut (-1: none)"]
    RETAINED_HEAD: Annotated[int, "retained items: start of their window in the retained buffer"]
    RETAINED_TAIL: Annotated[int, "retained items: end of that window"]
    SEGMENTS_HEAD: Annotated[int, "summary segments: start of their window in the segment buffer"]
    SEGMENTS_TAIL: Annotated[int, "summary segments: end of that window"]
    CLEARED: Annotated[int, "the last position clear_tool_uses has cleared (-1: none)"]


N_CACHE_KEYS = 2  # the session's key and the compaction calls' own key
Cfg = ConfigSlots(*range(len(ConfigSlots._fields)))
N_CFG = len(Cfg)
State = StateSlots(*range(N_CFG, N_CFG + len(StateSlots._fields)))
KEY_BASE = N_CFG + len(State)
Prev = PromptSlots(*range(len(PromptSlots._fields)))  # offsets inside one key's descriptor
KEY_SIZE = len(Prev)
N_STATE = KEY_BASE + N_CACHE_KEYS * KEY_SIZE
Shown = ShownColumns(*range(len(ShownColumns._fields)))  # columns of one prompt-record row
N_SHOWN = len(Shown)
After = AfterColumns(*range(len(AfterColumns._fields)))  # columns of one prompt-record event row
N_AFTER = len(After)


def slot_meanings(slots: type) -> dict[str, str]:
    """``{slot name: its one-line meaning}`` of a slot declaration (``ConfigSlots`` ...)."""
    hints = get_type_hints(slots, include_extras=True)
    return {name: " ".join(hints[name].__metadata__) for name in slots._fields}


class ParamSlots(NamedTuple):
    """Real-valued slots: the part of the lowered policy the engines compare as floats (ratios,
    durations in ms, sizes in characters over a ratio), the float64 vector ``params``."""

    TRIGGER_VALUE: Annotated[float, "the rule's threshold: messages, tokens, ms, events or turns (Trigger)"]
    MIN_PROGRESS: Annotated[float, "a cut must take at least this share of the view's items"]
    SUMMARY_RATIO: Annotated[float, "a summary's size is this share of the tokens it replaces ..."]
    SUMMARY_CAP: Annotated[float, "... at most this many tokens ..."]
    SUMMARY_FLOOR: Annotated[float, "... at least this many tokens"]
    TASK_STATE_TOKENS: Annotated[float, "tokens of the task-state block every summary carries (0: none)"]
    FLUSH_THRESHOLD: Annotated[float, "context tokens at which the flush fires (Policy.flush_threshold)"]
    CLEAR_AT_LEAST: Annotated[float, "clear_tool_uses runs only when it frees this many tokens"]
    WINDOW: Annotated[float, "the context window (tokens) the replay may not exceed"]
    TTL_MS: Annotated[float, "the prompt cache's time to live (ms)"]
    TTL_EARLY_TOKENS: Annotated[float, "ttl-aware tokens trigger: compact at this many once the cache expired (0: off)"]
    PRUNE_TTL_MS: Annotated[float, "session pruning: the idle gap (ms) after which a prompt is pruned (0: off)"]
    PRUNE_SOFT_RATIO: Annotated[float, "session pruning: trim when the prompt fills this share of the window"]
    PRUNE_HARD_RATIO: Annotated[float, "session pruning: clear when the prompt fills this share of the window"]
    PRUNE_HARD_ON: Annotated[float, "session pruning: 1 when the hard clear is on"]
    PRUNE_MIN: Annotated[float, "session pruning: clear only when this many tokens are prunable"]
    PRUNE_SOFT_OVER: Annotated[float, "session pruning: results over this many tokens are trimmed"]
    PRUNE_SOFT_KEEP: Annotated[float, "session pruning: tokens a trimmed result keeps (head, tail, note)"]
    PRUNE_PLACEHOLDER: Annotated[float, "session pruning: tokens of a cleared result's placeholder"]


Param = ParamSlots(*range(len(ParamSlots._fields)))
N_PARAMS = len(Param)

# a share (of the tail's tokens) as an integer in parts per million: both engines compute the
# kept tokens as ``ppm * tokens // SHARE_SCALE`` so that they agree to the token
SHARE_SCALE = 1_000_000


def share_ppm(share: float) -> int:
    return int(round(float(share) * SHARE_SCALE))
