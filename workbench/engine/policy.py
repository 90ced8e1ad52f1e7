"""Policies: frozen dataclasses, a name registry, YAML/TOML specs, and the one lowering to
the configuration both engines read (:meth:`Policy.lower`, :class:`Lowered`).

A policy is a cut-point rule + a compaction strategy + masking + a pre-compaction flush +
a compile strategy + redaction settings + a provider/model + the summarizer's prompt and
model. Names in the registry (:mod:`workbench.engine.presets`) are what specs, notebooks
and the CLI use. :data:`SECTIONS` names each section's dataclass (specs, the schema and
sweeps read it from here).

>>> from workbench.engine.presets import get_policy
>>> p = get_policy("claude-code")
>>> p.trigger.threshold(200_000)
167000
>>> get_policy("claude-code", {"trigger.reserve_tokens": 40_000}).trigger.threshold(200_000)
160000
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from workbench.engine import enums as E
from workbench.engine.thresholds import compaction_threshold, flush_problems, flush_threshold
from workbench.errors import PolicyError

TRIGGERS = {name: code for code, name in E.names(E.Trigger).items()}
STRATEGIES = {name: code for code, name in E.names(E.Strategy).items()}
CACHE_MODES = {name: code for code, name in E.names(E.CacheMode).items()}
RETAIN = {name: code for code, name in E.names(E.Retain).items()}
EMERGENCY = {name: code for code, name in E.names(E.Emergency).items()}
COMPILES = tuple(E.names(E.CompileStrategy).values())  # compile strategy names, in code order
PRUNING_MODES = ("off", "cache-ttl")
# a share (of a window, a threshold, a span) within [0, 1]: the annotation of such a field is
# its schema bound (workbench.engine.policy_schema), declared with the field
Share = float
SCOPES = ("total", "body")  # what a tokens trigger measures (CutRule.scope)


@dataclass(frozen=True)
class CutRule:
    """When to compact and where the cut may fall."""

    kind: str = "none"  # none | stride | tokens | time | events | turns | recorded
    every_messages: int = 0  # stride: cut at every N-th message event
    tokens: int = 0  # tokens: absolute threshold ...
    fraction: Share = 0.0  # ... or a fraction of the window ...
    reserve_tokens: int = 0  # ... or window minus a reserve (first non-zero wins)
    # with fraction: that share of the window less these tokens (Roo Code reserves the
    # request's maxTokens below 0.9 x window)
    fraction_less_tokens: int = 0
    interval_s: float = 0.0  # time: seconds between compactions
    max_events: int = 0  # events: view size that triggers (OpenHands max_size)
    every_turns: int = 0  # turns: N turns summarized ...
    keep_turns: int = 0  # ... keeping the last M turns raw
    message_boundary: bool = True  # the cut (to_seq) must be a message event (ADR-0011)
    keep_first: int = 1  # first K model-visible events are pinned (system prompt, task)
    keep_last_events: int = 0  # at least this many recent events stay raw
    keep_last_tokens: int = 0  # at most this many recent tokens stay raw (0: no bound)
    keep_last_fraction: Share = 0.0  # ... or that share of the window (Letta: 0.3)
    # ... or that share of the tokens the history holds since the last cut, whichever keeps more
    # (Gemini CLI keeps the newest 30 % of its history, not of the window)
    keep_last_share: Share = 0.0
    min_progress: Share = 0.0  # skip if fewer than this share of the view's events go
    # tokens: what the threshold is compared with: ``total`` (the whole prompt) or ``body``
    # (the prompt less the fixed prefix and the pinned head: Codex's
    # model_auto_compact_token_limit_scope = "body_after_prefix")
    scope: str = "total"
    # tokens, ttl-aware (no harness ships it; issue 31): once the prompt cache has expired (the
    # idle gap since the session's last call exceeds the TTL) the prefix is written afresh
    # anyway, so compact as soon as the context reaches this share of the threshold rather than
    # pay that write now and the compaction's later (0: off; a share, so a tiny context stays)
    ttl_early_fraction: Share = 0.0

    def threshold(self, window: int) -> int:
        return compaction_threshold(self.tokens, self.fraction, self.reserve_tokens, window,
                                    fraction_less_tokens=self.fraction_less_tokens)

    def trigger_value(self, window: int) -> float:
        k = TRIGGERS[self.kind]
        if k == E.Trigger.STRIDE:
            return float(self.every_messages)
        if k == E.Trigger.TOKENS:
            return float(self.threshold(window))
        if k == E.Trigger.TIME:
            return float(self.interval_s * 1000.0)
        if k == E.Trigger.EVENTS:
            return float(self.max_events)
        if k == E.Trigger.TURNS:
            return float(self.every_turns)
        return 0.0

    def describe(self, window: int | None) -> str:
        """When this rule compacts, in words (``window``: the context window, ``None`` when
        the continuity gives it: then the 200k default is assumed and said)."""
        k = self.kind
        if k == "tokens":
            w = window or 200_000
            thr = self.threshold(w)
            of = f"~{thr / 1000:,.0f}k of {'a ' if window else 'an assumed '}{w / 1000:,.0f}k window"
            less = f" less {self.fraction_less_tokens:,} tokens" if self.fraction_less_tokens else ""
            how = (f"{self.tokens:,} tokens" if self.tokens else f"{self.fraction:.0%} of the window{less}"
                   if self.fraction else f"the window less {self.reserve_tokens:,} tokens")
            early = (f", or at {self.ttl_early_fraction:.0%} of that once the prompt cache expired"
                     if self.ttl_early_fraction else "")
            return f"compacts at {how} ({of}){early}"
        return {"none": "never compacts", "stride": f"compacts every {self.every_messages:,} messages",
                "time": f"compacts every {self.interval_s:g} s", "events": f"compacts at {self.max_events:,} events",
                "turns": f"summarizes every {self.every_turns:,} turns, keeping the last {self.keep_turns:,}",
                "recorded": "compacts where the log recorded a compaction"}.get(k, k)

    def rule_id(self) -> str:
        """A stable ``cut_rule_id`` naming the rule and its parameters (ADR-0011)."""
        params = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                  if f.name != "kind" and getattr(self, f.name) != f.default}
        body = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
        return f"{self.kind}_v1" + (f"({body})" if body else "")


@dataclass(frozen=True)
class Compaction:
    """What replaces the span before the cut."""

    kind: str = "none"  # none | summary | opaque | truncate | clear_tool_uses | recorded
    ratio: Share = 0.1  # summary size = ratio x source tokens ...
    cap: int = 20_000  # ... at most cap ...
    floor: int = 0  # ... at least floor
    prompt_tokens: int = 600  # the summarization instruction appended to the call
    accumulate: bool = False  # new items are appended (segments) instead of folded in
    max_segments: int = 0  # accumulate: merge all segments when more than this (0: never)
    shares_cache: bool = True  # the compaction call reuses the session's cached prefix
    retain: str = "none"  # none | user_messages | messages kept raw across the cut
    retain_tokens: int = 0
    clear_keep: int = 3  # clear_tool_uses: most recent tool uses kept
    clear_at_least: int = 0  # clear only if it frees this many tokens
    clear_inputs: bool = False  # also clear the tool call inputs
    exclude_tools: tuple[str, ...] = ()
    placeholder_tokens: int = 8  # size of a cleared tool result placeholder
    # summary: a second call after each summary that checks it against the summary alone
    # (Gemini CLI's "probe"): this instruction's tokens (0: none)
    probe_prompt_tokens: int = 0
    # opaque + accumulate: a second, local layer (workbench.engine.provider_window): a readable
    # checkpoint once this many raw tokens followed the last one (0: none) ...
    local_tokens: int = 0
    local_prompt_tokens: int = 0  # ... asked with this instruction
    # summary: a task-state checkpoint (issue 31's task-state-checkpoints): every summary also
    # carries the task state (done, remaining, next step, decisions) in a fixed structure of
    # this many tokens on top of its ratio/floor/cap size, since structured summaries compress
    # less (openai/codex#35935, openclaw/openclaw#22542); the summarizer keeps every task-state
    # fact (workbench.summarize.settings.policy_options). 0: a stock summary
    task_state_tokens: int = 0


@dataclass(frozen=True)
class Masking:
    """Observation masking: tool outputs older than ``after_turns`` become placeholders;
    or, by tokens, every tool output but the newest ``keep_tokens`` of them, once that
    frees at least ``at_least_tokens`` (Gemini CLI's tool-output masking, opencode's prune);
    or, by count, every tool output but the newest ``keep_results``. ``idle_s`` > 0 runs
    the by-tokens/by-count step only on a request that follows the previous one by at least
    that long (the cache has expired anyway: Claude Code's time-based microcompact).
    Masked outputs stay masked."""

    after_turns: int = 0  # 0: off
    placeholder_tokens: int = 8
    keep_tokens: int = 0  # > 0: mask by tokens (the newest this many tool-output tokens stay)
    at_least_tokens: int = 0  # ... only when masking frees at least this many tokens
    keep_results: int = 0  # > 0: mask by count (the newest this many tool outputs stay)
    idle_s: float = 0.0  # > 0: mask (by tokens or count) only after a gap this long


@dataclass(frozen=True)
class Pruning:
    """Session pruning (OpenClaw ``agents.defaults.contextPruning``; the rule is
    :mod:`workbench.engine.pruning`): in mode ``cache-ttl``, a request coming ``ttl_s`` or
    more after the previous one is sent with old tool results trimmed (messages at
    ``soft_trim_ratio`` of the window) or cleared (at ``hard_clear_ratio``, when at least
    ``min_prunable_tool_chars`` are prunable), the last ``keep_last_assistants`` assistant
    turns protected. Transient: the context keeps every result; only that request's prompt
    (and what the cache holds of it) is pruned. Sizes in characters, as OpenClaw's keys."""

    mode: str = "off"  # off | cache-ttl
    ttl_s: float = 300.0
    keep_last_assistants: int = 3
    soft_trim_ratio: Share = 0.3
    hard_clear_ratio: Share = 0.5
    min_prunable_tool_chars: int = 50_000
    soft_trim_max_chars: int = 4_000
    soft_trim_head_chars: int = 1_500
    soft_trim_tail_chars: int = 1_500
    hard_clear: bool = True
    placeholder_tokens: int = 8  # "[Old tool result content cleared]"


@dataclass(frozen=True)
class Flush:
    """Pre-compaction memory flush (Signet §6.4 / OpenClaw): a silent turn that fires
    ``soft_threshold_tokens`` below the policy's *compaction* threshold (the Signet
    analysis: the flush MUST trigger at the compaction threshold minus a safety margin), at
    most once per compaction; see :meth:`Policy.flush_threshold`."""

    enabled: bool = False
    # OpenClaw's reserveTokensFloor is the compaction's reserve: the flush has none of its own.
    # Kept so tied sweeps (``trigger.reserve_tokens,flush.reserve_tokens``) still read; any
    # value but the default must equal trigger.reserve_tokens
    reserve_tokens: int = 20_000
    soft_threshold_tokens: int = 4_000  # the safety margin below the compaction threshold
    fraction: Share = 0.0  # > 0: flush no later than fraction x window (Letta's memory warning)
    prompt_tokens: int = 120  # "Pre-compaction memory flush. Store durable memories now."
    output_tokens: int = 400  # memory entries written (the reply is NO_REPLY)


@dataclass(frozen=True)
class Compile:
    """How each request's context is compiled (ADR-0011). ``summaries_recent_messages_v1``:
    the pinned head, the retained block, the latest summary items, then the raw events after
    the cut; with no checkpoint yet it is ``recent_messages_v1``. ``recent_messages_v1``: the
    same without any summary item (the policy's summary and opaque items, and recorded
    summaries): compactions still run, are paid for and write their checkpoints and
    artifacts, but the span they cut leaves the prompt with nothing in its place. Both show
    only the raw tail from its ``recent_messages_limit``-th last message on."""

    strategy: str = "summaries_recent_messages_v1"
    recent_messages_limit: int = 0  # RECENT_MESSAGES_V1_LIMIT (0: unbounded)

    @property
    def shows_summaries(self) -> bool:
        """Whether summary items are compiled into the context."""
        return COMPILES.index(self.strategy) != E.CompileStrategy.RECENT_MESSAGES_V1


@dataclass(frozen=True)
class Provider:
    """Model and cache rules. ``None`` fields come from the continuity (as recorded)."""

    model: str | None = None
    provider: str | None = None
    context_window: int | None = None
    max_output: int = 32_000
    cache: str | None = None  # explicit | automatic | automatic_writes | none (default: by provider)
    ttl_s: float | None = None
    min_cacheable: int = 1024
    granularity: int | None = None


@dataclass(frozen=True)
class Redaction:
    sr1_carry_forward: bool = True  # summaries go through the redaction harness again


@dataclass(frozen=True)
class Summarizer:
    """What the text-level summarizer is asked with (the engines model summaries by size and
    never read this): a system prompt file and a model, for the HTTP summarizer
    (:mod:`workbench.summarize.settings`); unset, the run's summarizer options decide. A
    prompt path is taken from the project directory and may not leave it."""

    prompt: str | None = None  # a text file holding the system prompt
    model: str | None = None  # the model the summarizer endpoint is asked for


@dataclass(frozen=True)
class Policy:
    name: str
    description: str = ""
    trigger: CutRule = field(default_factory=CutRule)
    compaction: Compaction = field(default_factory=Compaction)
    masking: Masking = field(default_factory=Masking)
    flush: Flush = field(default_factory=Flush)
    compile: Compile = field(default_factory=Compile)
    provider: Provider = field(default_factory=Provider)
    redaction: Redaction = field(default_factory=Redaction)
    summarizer: Summarizer = field(default_factory=Summarizer)
    pruning: Pruning = field(default_factory=Pruning)
    emergency: str = "compact"  # compact | truncate | truncate_half
    # set when ``description`` was written from overridden parameters: the description it
    # replaced, which the digest hashes in its place (the digest names parameters, and the
    # run and artifact ids and seeds built from it must not move with the wording)
    base_description: str | None = field(default=None, repr=False)

    # ---- construction ---------------------------------------------------------------
    def __post_init__(self) -> None:
        checks = [
            (self.trigger.kind in TRIGGERS, f"trigger.kind must be one of {sorted(TRIGGERS)}"),
            (self.compaction.kind in STRATEGIES, f"compaction.kind must be one of {sorted(STRATEGIES)}"),
            (self.compaction.retain in RETAIN, f"compaction.retain must be one of {sorted(RETAIN)}"),
            (self.emergency in EMERGENCY, f"emergency must be one of {sorted(EMERGENCY)}"),
            (self.compile.strategy in COMPILES, f"compile.strategy must be one of {COMPILES}"),
            (self.pruning.mode in PRUNING_MODES, f"pruning.mode must be one of {PRUNING_MODES}"),
            (self.provider.cache is None or self.provider.cache in CACHE_MODES,
             f"provider.cache must be one of {sorted(CACHE_MODES)}"),
            (0.0 <= self.compaction.ratio <= 1.0, "compaction.ratio must be within [0, 1]"),
            (self.trigger.keep_first >= 0 and self.trigger.keep_last_events >= 0,
             "keep_first/keep_last_events must be >= 0"),
            (not (self.trigger.kind == "stride" and self.trigger.every_messages <= 0),
             "a stride trigger needs every_messages > 0"),
            (not (self.trigger.kind == "turns" and self.trigger.every_turns <= 0),
             "a turns trigger needs every_turns > 0"),
            (not (self.trigger.kind == "events" and self.trigger.max_events <= 0),
             "an events trigger needs max_events > 0"),
            (not (self.trigger.kind == "time" and self.trigger.interval_s <= 0),
             "a time trigger needs interval_s > 0"),
            (not (self.trigger.kind == "tokens" and not (self.trigger.tokens or self.trigger.fraction
                                                          or self.trigger.reserve_tokens)),
             "a tokens trigger needs tokens, fraction or reserve_tokens"),
            (not (self.masking.keep_tokens > 0 and self.masking.keep_results > 0),
             "masking keeps by tokens (keep_tokens) or by count (keep_results), not both"),
            (not (self.masking.idle_s > 0 and not (self.masking.keep_tokens or self.masking.keep_results)),
             "masking.idle_s gates masking by tokens or by count: set keep_tokens or keep_results"),
            (self.compaction.local_tokens == 0 or (self.compaction.kind == "opaque" and self.compaction.accumulate
                                                   and self.compaction.retain == "none"),
             "compaction.local_tokens (a local checkpoint layer) needs kind opaque, accumulate, retain none"),
            (self.compaction.task_state_tokens >= 0, "compaction.task_state_tokens must be >= 0"),
            (self.compaction.task_state_tokens == 0 or self.compaction.kind == "summary",
             "compaction.task_state_tokens (a task-state checkpoint in every summary) needs kind summary"),
        ]
        checks += self._flush_checks()
        for ok, msg in checks:
            if not ok:
                raise PolicyError(f"policy {self.name!r}: {msg}")

    def _flush_checks(self) -> list[tuple[bool, str]]:
        f, t = self.flush, self.trigger
        if not f.enabled:
            return []
        return [(False, m) for m in flush_problems(t.kind, t.scope, self.compaction.kind, f.reserve_tokens,
                                                   Flush.reserve_tokens, t.reserve_tokens,
                                                   f.soft_threshold_tokens)]

    def flush_threshold(self, window: int) -> int:
        """Context tokens at which the flush fires: ``soft_threshold_tokens`` below the
        compaction threshold (and, with ``flush.fraction``, no later than that share of the
        window); never below 0. Moving the trigger moves the flush with it."""
        return flush_threshold(self.trigger.threshold(window), self.flush.soft_threshold_tokens,
                               self.flush.fraction, window)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["compaction"]["exclude_tools"] = list(self.compaction.exclude_tools)
        if self.base_description is None:
            del d["base_description"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Policy:
        parts = SECTIONS
        kwargs: dict[str, Any] = {}
        for key, value in d.items():
            if key in parts:
                if not isinstance(value, dict):
                    raise PolicyError(f"policy section {key!r} must be a mapping")
                known = {f.name for f in dataclasses.fields(parts[key])}
                unknown = set(value) - known
                if unknown:
                    raise PolicyError(f"unknown {key} parameter(s) {sorted(unknown)}; known: {sorted(known)}")
                if key == "compaction" and "exclude_tools" in value:
                    value = {**value, "exclude_tools": tuple(value["exclude_tools"])}
                kwargs[key] = parts[key](**value)
            elif key in ("name", "description", "emergency", "base_description"):
                kwargs[key] = value
            else:
                raise PolicyError(f"unknown policy key {key!r}")
        if "name" not in kwargs:
            raise PolicyError("a policy needs a name")
        return cls(**kwargs)

    def with_overrides(self, overrides: dict[str, Any], name: str | None = None) -> Policy:
        """A copy with dotted-key overrides, e.g. ``{"trigger.fraction": 0.8}``."""
        d = self.to_dict()
        changed = []
        for dotted, value in overrides.items():
            section, _, key = dotted.partition(".")
            if not key:
                if section not in ("description", "emergency"):
                    raise PolicyError(f"override {dotted!r} must be section.key")
                d[section] = value
                continue
            if section not in d or not isinstance(d[section], dict):
                raise PolicyError(f"unknown policy section {section!r} in override {dotted!r}")
            if key not in d[section]:
                raise PolicyError(f"unknown parameter {dotted!r}; known in {section}: {sorted(d[section])}")
            if d[section][key] != value:
                changed.append(f"{dotted}={value}")
            d[section][key] = value
        if name:
            d["name"] = name
        if "description" in overrides:
            d.pop("base_description", None)  # the user's words, hashed as they are
        elif changed:
            # the preset's words describe the preset's parameters: say what changed instead
            rule = CutRule(**d["trigger"])
            d.setdefault("base_description", d["description"])
            d["description"] = (f"{self.name} with {', '.join(changed)}: "
                                f"{rule.describe(d['provider']['context_window'])}")
        return Policy.from_dict(d)

    def digest(self) -> str:
        """A stable 12-hex id of every parameter. A section added later (summarizer, pruning)
        is left out while unset, so a policy's digest (and the run and artifact ids built from
        it) is the one it had before policies had that section."""
        import orjson

        d = self.to_dict()
        if "base_description" in d:
            d["description"] = d.pop("base_description")
        for section in _ADDED_SECTIONS:
            if getattr(self, section) == SECTIONS[section]():
                del d[section]
        for section, fields in _ADDED_FIELDS.items():
            for name, default in fields.items():
                if d[section][name] == default:
                    del d[section][name]
        return hashlib.sha256(orjson.dumps(d, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]

    def at_overflow(self) -> str:
        """What the engines do when this policy's context exceeds the window (after the
        overflow is recorded): a forced compaction when the policy summarizes or makes
        opaque items and ``emergency`` is ``compact``, then, while the context still does
        not fit, a truncation of the oldest raw events (counted as ``truncations``, never as
        compactions); a request that still exceeds the window is never sent over it: it fails
        (the provider's error, counted as ``failed_requests``)."""
        truncate = ("truncate the oldest events (a truncation, not a compaction); a request still over "
                    "the window fails (the provider's error, counted)")
        if self.emergency == "compact" and self.compaction.kind in ("summary", "opaque"):
            return "forced compaction; if still over the window, " + truncate
        if self.emergency == "truncate_half":
            return "drop the older half of the raw events; if still over the window, " + truncate
        return truncate

    # ---- lowering -------------------------------------------------------------------
    def lower(self, window: int, cache_mode: int, ttl_ms: float, granularity: int) -> Lowered:
        """The one lowering: this policy on a provider (its window, ``CacheMode``, TTL and cache
        granularity) as the configuration both engines read, the integer slots ``enums.Cfg``
        and the real-valued slots ``enums.Param`` (the kernel adds the continuity's few facts,
        ``kernel.with_continuity``)."""
        t, c, m, f = self.trigger, self.compaction, self.masking, self.flush
        cfg = np.zeros(E.N_CFG, np.int64)
        params = np.zeros(E.N_PARAMS, np.float64)
        C, P = E.Cfg, E.Param
        mask_on = m.after_turns > 0 or m.keep_tokens > 0 or m.keep_results > 0
        cfg[C.TRIGGER] = TRIGGERS[t.kind]
        cfg[C.TRIGGER_SCOPE] = SCOPES.index(t.scope)
        cfg[C.TRIGGER_KEEP_TURNS] = t.keep_turns
        cfg[C.CUT_AT_MESSAGE] = int(t.message_boundary)
        cfg[C.KEEP_FIRST] = t.keep_first
        cfg[C.KEEP_LAST_EVENTS] = t.keep_last_events
        cfg[C.KEEP_LAST_TOKENS] = max(t.keep_last_tokens, int(t.keep_last_fraction * window))
        cfg[C.KEEP_LAST_SHARE_PPM] = E.share_ppm(t.keep_last_share)
        params[P.TRIGGER_VALUE] = t.trigger_value(window)
        params[P.MIN_PROGRESS] = t.min_progress
        if t.kind == "tokens" and t.ttl_early_fraction > 0:
            params[P.TTL_EARLY_TOKENS] = max(1, int(t.ttl_early_fraction * t.threshold(window)))
        cfg[C.STRATEGY] = STRATEGIES[c.kind]
        cfg[C.ACCUMULATE] = int(c.accumulate)
        cfg[C.MAX_SEGMENTS] = c.max_segments
        cfg[C.SUMMARY_SHARES_CACHE] = int(c.shares_cache)
        cfg[C.SUMMARY_PROMPT] = c.prompt_tokens
        cfg[C.PROBE_PROMPT] = c.probe_prompt_tokens if c.kind == "summary" else 0
        cfg[C.RETAIN_KIND] = RETAIN[c.retain]
        cfg[C.RETAIN_TOKENS] = c.retain_tokens
        cfg[C.CLEARING] = int(c.kind == "clear_tool_uses")
        cfg[C.CLEAR_KEEP] = c.clear_keep
        cfg[C.CLEAR_INPUTS] = int(c.clear_inputs)
        cfg[C.CLEAR_PLACEHOLDER] = c.placeholder_tokens
        cfg[C.LOCAL_TOKENS] = c.local_tokens
        cfg[C.LOCAL_PROMPT] = c.local_prompt_tokens
        params[P.SUMMARY_RATIO] = c.ratio
        params[P.SUMMARY_CAP] = c.cap
        params[P.SUMMARY_FLOOR] = c.floor
        params[P.TASK_STATE_TOKENS] = c.task_state_tokens
        params[P.CLEAR_AT_LEAST] = c.clear_at_least
        cfg[C.MASKING] = int(mask_on)
        cfg[C.MASK_AFTER_TURNS] = m.after_turns
        cfg[C.MASK_PLACEHOLDER] = m.placeholder_tokens
        cfg[C.MASK_KEEP_TOKENS] = m.keep_tokens
        cfg[C.MASK_KEEP_RESULTS] = m.keep_results
        cfg[C.MASK_AT_LEAST] = m.at_least_tokens
        cfg[C.MASK_IDLE_MS] = int(np.ceil(m.idle_s * 1000.0))  # request times are whole ms
        cfg[C.FLUSH] = int(f.enabled)
        cfg[C.FLUSH_PROMPT] = f.prompt_tokens
        cfg[C.FLUSH_OUTPUT] = f.output_tokens
        params[P.FLUSH_THRESHOLD] = self.flush_threshold(window) if f.enabled else 0
        cfg[C.RECENT_MESSAGES_LIMIT] = self.compile.recent_messages_limit
        cfg[C.HIDE_SUMMARIES] = int(not self.compile.shows_summaries)
        cfg[C.EMERGENCY] = EMERGENCY[self.emergency]
        cfg[C.CACHE_MODE] = cache_mode
        cfg[C.MIN_CACHEABLE] = self.provider.min_cacheable
        cfg[C.CACHE_GRANULARITY] = max(1, int(granularity))
        params[P.WINDOW] = window
        params[P.TTL_MS] = ttl_ms
        self._lower_pruning(cfg, params)
        return Lowered(cfg, params)

    def _lower_pruning(self, cfg: np.ndarray, params: np.ndarray) -> None:
        from workbench.engine.pruning import lowered

        pr = self.pruning
        if pr.mode == "off":
            return  # every pruning slot 0: the ttl slot says off
        over, kept, least = lowered(soft_trim_max_chars=pr.soft_trim_max_chars,
                                    soft_trim_head_chars=pr.soft_trim_head_chars,
                                    soft_trim_tail_chars=pr.soft_trim_tail_chars,
                                    min_prunable_tool_chars=pr.min_prunable_tool_chars)
        P = E.Param
        cfg[E.Cfg.PRUNING] = int(pr.ttl_s > 0)
        cfg[E.Cfg.PRUNE_KEEP] = pr.keep_last_assistants
        params[P.PRUNE_TTL_MS] = pr.ttl_s * 1000.0
        params[P.PRUNE_SOFT_RATIO] = pr.soft_trim_ratio
        params[P.PRUNE_HARD_RATIO] = pr.hard_clear_ratio
        params[P.PRUNE_HARD_ON] = int(pr.hard_clear)
        params[P.PRUNE_MIN] = least
        params[P.PRUNE_SOFT_OVER] = over
        params[P.PRUNE_SOFT_KEEP] = kept
        params[P.PRUNE_PLACEHOLDER] = pr.placeholder_tokens


class Lowered(NamedTuple):
    """A policy lowered on a provider (:meth:`Policy.lower`): what both engines read."""

    cfg: np.ndarray  # int64 [enums.N_CFG]: the ``enums.Cfg`` slots (the continuity's left 0)
    params: np.ndarray  # float64 [enums.N_PARAMS]: the ``enums.Param`` slots


# fields added after runs were made: at their defaults they stay out of the digest, so the
# ids of every earlier policy (and of the runs and artifacts built on them) do not change
_ADDED_FIELDS = {"trigger": {"scope": "total", "keep_last_share": 0.0, "ttl_early_fraction": 0.0,
                             "fraction_less_tokens": 0},
                 "compaction": {"probe_prompt_tokens": 0, "local_tokens": 0, "local_prompt_tokens": 0,
                                "task_state_tokens": 0},
                 "masking": {"keep_tokens": 0, "at_least_tokens": 0, "keep_results": 0, "idle_s": 0.0}}

#: section name -> its dataclass: the one list of policy sections
SECTIONS: dict[str, type] = {"trigger": CutRule, "compaction": Compaction, "masking": Masking,
                             "flush": Flush, "compile": Compile, "provider": Provider,
                             "redaction": Redaction, "summarizer": Summarizer, "pruning": Pruning}
# sections added after runs were made: left out of the digest while at their defaults
_ADDED_SECTIONS = ("summarizer", "pruning")
