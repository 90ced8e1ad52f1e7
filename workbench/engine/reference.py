"""The reference engine: plain Python, readable, slow. It *is* the semantics; the numba
kernel engine must produce identical ledgers and events (tests/engine/test_parity.py).

For each request ``r`` (whose first output event is row ``p``), in order:

1. **Compile** the context as a list of items, each ``(tag, id, tokens)``, after the
   fixed prefix (``prefix_tokens``: what the harness sends that the log does not hold,
   its system prompt and tool schemas; part of every call's prompt and always common to
   two prompts of a key): the pinned head (first ``keep_first`` model-visible events), the retained block
   (raw items carried across a cut, e.g. Codex's recent user messages), the summary or
   opaque items (one when folded, several when accumulated), then the raw tail: visible
   events after the cut and before ``p``. Tool results older than ``mask_after_turns``
   requests are placeholders (masking; or every one but the newest by tokens or by count,
   :func:`~workbench.engine.masking.mask_step`, optionally only after an idle gap); cleared tool uses are placeholders (clearing);
   a ``recent_messages_limit`` shows only the tail from the L-th last message on.
2. **Flush** when context >= flush threshold (``Policy.flush_threshold``: a margin below the
   compaction threshold) and no flush ran at this compaction count:
   a call with the context plus the flush instruction; its output never enters the context.
   Only the policy's compactions advance that count; an overflow truncation does not.
3. **Compact** when the cut-point rule fires: choose the latest allowed cut (rule, then
   keep-last-K events/tokens), snap it back to a safe row (a message when the rule demands
   message boundaries; never while a tool call waits for its result), check minimum
   progress, then apply the strategy (summary call, opaque item, truncation, recorded
   summary, or clearing old tool uses).
4. **Overflow**: if the context exceeds the window, record it; the emergency action
   compacts (forced; summary and opaque strategies with ``emergency: compact``) and then,
   if the context still exceeds the window, truncates the oldest raw events until it fits: a
   ``TRUNCATION`` event (no checkpoint frame, no summary, no ``memory.compacted``), the
   ``TRUNCATED`` flag, a cache lost to ``truncation``. No call is sent over the window
   (``docs/window-bound.md``): a main request that still does not fit is a *failed* request,
   the provider's error (``FAILED``; nothing billed, read, written or cached; the attempted
   context in ``context_after``); a policy call that would not fit sends the newest part that
   fits, as Codex trims its compaction request (codex-rs/core/src/compact.rs), and reads back
   at most the fixed prefix (a loss counted as ``truncation`` unless another came first).
5. **Prune** (session pruning, :func:`~workbench.engine.pruning.prune_step`): after an idle
   gap, the main request's prompt may carry old tool results trimmed or cleared; the context
   keeps them, and the next request sends them again. Pruned results are items of their own
   (``trimmed``/``pruned``), so two prompts share them only where both pruned them alike.
6. **Account** the main request: the cached prefix is the longest common prefix (in items, counted in
   tokens) with the previous prompt of the same cache key, if used within the TTL and at least the
   minimum cacheable size, rounded down to the provider's granularity. Explicit caches (Anthropic)
   write everything after the read prefix; automatic caches (OpenAI) write nothing, unless the
   provider bills writes (``automatic_writes``: OpenAI from GPT-5.6), then they write what they
   did not read, as explicit caches do. A shortfall is attributed to compaction, an edit (masking
   or clearing), a truncation, drift (anything else), the TTL, or a cold start.

Compaction and flush calls are accounted the same way, with their own prompts (what each prompt held:
:mod:`workbench.engine.prompt_record`). A two-layer policy (``compaction.local_tokens``) also rebuilds
its window from its local checkpoint where a single layer would merge, and makes local checkpoints
after step 4 (a continuation reset is cache loss ``reset``): :mod:`workbench.engine.provider_window`.
"""

from __future__ import annotations

import numpy as np

from workbench.engine import enums as E
from workbench.engine import provider_window
from workbench.engine.enums import SHARE_SCALE, Cfg, Param
from workbench.engine.masking import MaskRule, mask_step
from workbench.engine.prepare import ReplayInput
from workbench.engine.prompt_record import ReferenceRecorder
from workbench.engine.pruning import TRIMMED, PruneRule, prune_step
from workbench.engine.records import N_EVENT, N_LEDGER, event_row, ledger_row

Item = tuple[str, int, int]


def clamp_summary(source: int, ratio: float, cap: float, floor: float) -> int:
    """Modelled summary size: ``ratio x source`` tokens, within [floor, cap]."""
    return int(min(cap, max(floor, np.floor(ratio * source))))


class _Replay:
    def __init__(self, inp: ReplayInput, cfg: np.ndarray, params: np.ndarray, excluded: np.ndarray):
        self.inp, self.c, self.p = inp, cfg, params  # the lowered policy (Policy.lower), as the kernel reads it
        self.excluded = excluded
        self.trigger = int(cfg[Cfg.TRIGGER])
        self.strategy = int(cfg[Cfg.STRATEGY])
        self.shows_summaries = not cfg[Cfg.HIDE_SUMMARIES]
        self.visible = inp.visible | (inp.is_summary if E.summaries_visible_in(cfg) else False)
        self.visible_rows = np.flatnonzero(self.visible)
        self.keep_first = int(cfg[Cfg.KEEP_FIRST])
        self.prefix = int(inp.prefix_tokens)
        self.mask_rule = MaskRule.from_config(cfg)
        self.mask_bound = 0  # masking by tokens/count: outputs at visible positions below it are masked
        self.prune_rule = PruneRule.from_config(cfg, params)
        self.cut = self.cleared_upto = -1  # the cut row; the last cleared row (clear_tool_uses)
        self.segments: list[tuple[int, int]] = []
        self.retained: list[int] = []
        self.next_artifact = 0
        self.compactions = 0
        self.flushed_at = -1
        self.last_compaction_request = 0
        self.last_compaction_ts = int(inp.req_ts[0]) if inp.n_requests else 0
        self.next_stride = 1
        self.boundaries_done = -1
        self.coverage_from = -1
        # per cache key (0: main requests, 1: policy calls): its last prompt, and what broke it since
        self.prev_items: list[list[Item] | None] = [None, None]
        self.prev_ts = [0, 0]
        self.compacted_since, self.truncated_since, self.edited_since = [False, False], [False, False], [False, False]
        self.window_start = -1  # first tail row shown under a recent-messages limit
        # the local layer of a two-layer policy (provider_window): its cut row, checkpoint
        # tokens and artifact; a rebuild's pending continuation reset, by cache key
        self.local_cut, self.local_tokens, self.local_artifact = -1, 0, -1
        self.reset_since = [False, False]
        self.ledger: list[tuple[int, ...]] = []
        self.events: list[tuple[int, ...]] = []
        self.prompts = ReferenceRecorder(self.visible_rows)  # what each call's prompt held

    def summary_size(self, source: int) -> int:
        """The modelled size of a summary of ``source`` tokens: clamped, plus a task-state block."""
        p = self.p
        return (clamp_summary(source, p[Param.SUMMARY_RATIO], p[Param.SUMMARY_CAP], p[Param.SUMMARY_FLOOR])
                + int(p[Param.TASK_STATE_TOKENS]))

    # ---- compile ------------------------------------------------------------------
    def head(self, p: int) -> list[int]:
        return [int(i) for i in self.visible_rows[: self.keep_first] if i < p]

    def tail(self, p: int) -> list[int]:
        """Visible rows after the cut (and the pinned head) and before ``p``; by bisection (ADR-0011: O(k))."""
        head = self.head(p)
        base = max(self.cut, head[-1] if len(head) == self.keep_first and head else -1)
        if len(head) < self.keep_first:  # all visible rows so far are pinned
            return []
        lo = int(np.searchsorted(self.visible_rows, base, side="right"))
        hi = int(np.searchsorted(self.visible_rows, p, side="left"))
        return self.visible_rows[lo:hi].tolist()

    def masked(self, i: int, r: int) -> bool:
        if not self.inp.is_tool_result[i]:
            return False
        if self.mask_rule.bounded:  # by tokens/count: every output before the bound (visible positions)
            return self.position(i) < self.mask_bound
        m = int(self.c[Cfg.MASK_AFTER_TURNS])
        req = int(self.inp.row_request[i])
        return m > 0 and req >= 0 and r - req >= m

    def position(self, i: int) -> int:
        """The visible position of row ``i`` (how many visible rows come before it)."""
        return int(np.searchsorted(self.visible_rows, i))

    def mask_by_bound(self, r: int, p: int) -> bool:
        """Masking by tokens or count (:func:`~workbench.engine.masking.mask_step`); True when outputs were masked now."""
        bound = mask_step(self.inp, self.visible_rows, self.tail(p), p, r, self.mask_bound, self.mask_rule)
        moved, self.mask_bound = bound != self.mask_bound, bound
        return moved

    def clearable(self, i: int) -> bool:
        kind_ok = self.inp.is_tool_result[i] or (self.c[Cfg.CLEAR_INPUTS] and self.inp.is_tool_call[i])
        return bool(kind_ok) and not bool(self.excluded[i])

    def eff(self, i: int, r: int) -> int:
        """Tokens of tail row ``i`` as it stands in the context at request ``r``."""
        if self.masked(i, r):
            return int(self.c[Cfg.MASK_PLACEHOLDER])
        if i <= self.cleared_upto and self.clearable(i):
            return int(self.c[Cfg.CLEAR_PLACEHOLDER])
        return int(self.inp.tokens[i])

    def shown_tail(self, tail: list[int]) -> list[int]:
        limit = int(self.c[Cfg.RECENT_MESSAGES_LIMIT])
        if limit <= 0:
            return tail
        msgs = [i for i in tail if self.inp.is_message[i]]
        if len(msgs) <= limit:
            return tail
        start = msgs[-limit]
        return [i for i in tail if i >= start]

    def size(self, items: list[Item]) -> int:
        """Prompt tokens of ``items``: the fixed prefix (``inp.prefix_tokens``: the
        harness's system prompt and tool schemas, never in the log) plus every item."""
        return self.prefix + sum(t for _, _, t in items)

    def compile(self, r: int, p: int) -> list[Item]:
        items: list[Item] = [("row", i, int(self.inp.tokens[i])) for i in self.head(p)]
        items += [("ret", i, int(self.inp.tokens[i])) for i in self.retained]
        if self.shows_summaries:  # recent_messages_v1 keeps the segments (a fold reads them) but never shows them
            items += [("seg", no, t) for no, t in self.segments]
        items += [("row", i, self.eff(i, r)) for i in self.shown_tail(self.tail(p))]
        return items

    def prune(self, r: int, p: int, items: list[Item]) -> list[Item]:
        """The prompt request ``r`` sends: ``items`` pruned (the context keeps every result)."""
        if not self.prune_rule.on:
            return items
        tail = self.shown_tail(self.tail(p))
        state = prune_step(self.inp, tail, [self.eff(i, r) for i in tail], self.size(items) - self.prefix, r,
                           self.prune_rule)
        return [("trimmed" if state[i] == TRIMMED else "pruned", i, self.prune_rule.size(state[i], t))
                if tag == "row" and i in state else (tag, i, t) for tag, i, t in items]

    # ---- accounting ---------------------------------------------------------------
    def account(self, key: int, items: list[Item], trailer: int, r: int, call: int, output: int,
                before: int, after: int, flags: int) -> None:
        self.prompts.add(self, r, items)
        mode = int(self.c[Cfg.CACHE_MODE])
        min_cache = int(self.c[Cfg.MIN_CACHEABLE])
        gran = int(self.c[Cfg.CACHE_GRANULARITY])
        ts = int(self.inp.req_ts[r])
        total = self.size(items) + trailer
        if flags & E.LedgerFlag.FAILED:  # rejected by the provider: nothing billed, cached or answered
            self.ledger.append(ledger_row(
                request=r, call_kind=int(call), prompt_tokens=0, cache_read_tokens=0, cache_write_tokens=0,
                uncached_tokens=0, output_tokens=0, context_before=before, context_after=after, flags=int(flags),
                cache_loss=int(E.CacheLoss.NONE), cache_key=key, ts_ms=ts))
            return
        window = int(self.p[Param.WINDOW])
        # a policy call never goes over the window: the harness sends the newest part that fits
        # (module docstring, step 4), so it reads back at most the fixed prefix
        clipped = call != E.CallKind.MAIN and total > window
        if clipped:
            total = window
        read = write = 0
        loss = E.CacheLoss.NONE
        if mode != E.CacheMode.NONE:
            prev = self.prev_items[key]
            if prev is None or self.reset_since[key] or ts - self.prev_ts[key] > self.p[Param.TTL_MS]:
                loss = (E.CacheLoss.COLD if prev is None else E.CacheLoss.RESET if self.reset_since[key]
                        else E.CacheLoss.TTL)
                lcp = 0
            else:
                lcp = self.prefix  # the harness's fixed prefix is always common
                for a, b in zip(prev, items, strict=False):
                    if a != b:
                        break
                    lcp += a[2]
                if lcp < self.size(prev):
                    loss = (E.CacheLoss.COMPACTION if self.compacted_since[key]
                            else E.CacheLoss.TRUNCATION if self.truncated_since[key]
                            else E.CacheLoss.EDIT if self.edited_since[key] else E.CacheLoss.DRIFT)
                if clipped and lcp > min(self.prefix, total):
                    lcp = min(self.prefix, total)
                    if loss == E.CacheLoss.NONE:
                        loss = E.CacheLoss.TRUNCATION
                if lcp < min_cache:
                    if loss == E.CacheLoss.NONE:
                        loss = E.CacheLoss.BELOW_MINIMUM
                    lcp = 0
            read = (lcp // gran) * gran
            writes = mode in (E.CacheMode.EXPLICIT, E.CacheMode.AUTOMATIC_WRITES)
            if writes and total >= min_cache:
                write = total - read
            billed = self.billed(r, total) if call == E.CallKind.MAIN else None
            if billed is not None:  # the provider's recorded split of this very prompt
                billed_read, billed_write = billed
                if billed_read < read and loss == E.CacheLoss.NONE:
                    loss = E.CacheLoss.RECORDED_MISS
                read = billed_read
                if not writes:
                    write = 0
                elif billed_write is not None:
                    write = min(billed_write, total - read)
                else:
                    write = total - read if total >= min_cache else 0
        self.prev_items[key] = list(items)  # the trailing instruction is never reused
        self.prev_ts[key] = ts
        self.compacted_since[key] = self.truncated_since[key] = self.edited_since[key] = self.reset_since[key] = False
        self.ledger.append(ledger_row(
            request=r, call_kind=int(call), prompt_tokens=total, cache_read_tokens=read,
            cache_write_tokens=write, uncached_tokens=total - read - write, output_tokens=output,
            context_before=before, context_after=after, flags=int(flags), cache_loss=int(loss),
            cache_key=key, ts_ms=ts))

    def billed(self, r: int, total: int) -> tuple[int, int | None] | None:
        """``(cache read, cache write or None)`` the log recorded for request ``r`` when its
        recorded prompt is ``total`` tokens (``inp.billed_usage``), else None."""
        usage = self.inp.billed_usage
        if usage is None or usage[1, r] < 0 or usage[0, r] != total:
            return None
        return min(int(usage[1, r]), total), (int(usage[2, r]) if usage[2, r] >= 0 else None)

    def mark(self, compacted: bool = False, edited: bool = False, truncated: bool = False) -> None:
        for key in (0, 1):
            self.compacted_since[key] |= compacted
            self.edited_since[key] |= edited
            self.truncated_since[key] |= truncated

    def event(self, etype, r, from_row=-1, to_row=-1, artifact=-1, before=0, after=0, item=0,
              span_events=0, span_tokens=0, strategy=0) -> None:
        self.events.append(event_row(
            type=int(etype), request=r, from_row=from_row, to_row=to_row, artifact_no=artifact,
            tokens_before=before, tokens_after=after, item_tokens=item, span_events=span_events,
            span_tokens=span_tokens, strategy=int(strategy)))
        self.prompts.after_event(self)

    # ---- the cut-point rule ---------------------------------------------------------
    def rule(self, r: int, p: int, context: int, tail: list[int], n_items: int) -> int | None:
        """The latest row the rule allows to be cut, or None when it does not fire."""
        t, value = self.trigger, self.p[Param.TRIGGER_VALUE]
        if t == E.Trigger.TOKENS:
            if self.c[Cfg.TRIGGER_SCOPE]:  # the body: less the fixed prefix and the pinned head
                context -= self.prefix + sum(int(self.inp.tokens[i]) for i in self.head(p))
            # ttl-aware: at the early share once the session's cache (key 0) expired: re-written anyway
            early = (0 < self.p[Param.TTL_EARLY_TOKENS] <= context and self.c[Cfg.CACHE_MODE] != E.CacheMode.NONE
                     and self.prev_items[0] is not None and self.inp.req_ts[r] - self.prev_ts[0] > self.p[Param.TTL_MS])
            return p - 1 if context >= value or early else None
        if t == E.Trigger.STRIDE:
            if p == 0:
                return None
            k = int(self.inp.msg_ordinal[p - 1]) // int(value)
            if k < self.next_stride:
                return None
            self.next_stride = k + 1
            anchor = int(np.searchsorted(self.inp.msg_ordinal, k * int(value), side="left"))
            return anchor if anchor > self.cut else None
        if t == E.Trigger.TIME:
            return p - 1 if self.inp.req_ts[r] - self.last_compaction_ts >= value else None
        if t == E.Trigger.EVENTS:
            if n_items <= value:
                return None
            keep = max(0, int(value) // 2 - self.keep_first - 1)
            return tail[len(tail) - keep - 1] if len(tail) > keep else None
        if t == E.Trigger.TURNS:
            m = int(self.c[Cfg.TRIGGER_KEEP_TURNS])
            if r - self.last_compaction_request < value + m:
                return None
            older = [i for i in tail if self.inp.row_request[i] <= r - m]
            return older[-1] if older else None
        if t == E.Trigger.RECORDED:
            pending = [int(b) for b in np.flatnonzero(self.inp.is_boundary) if self.boundaries_done < b < p]
            if not pending:
                return None
            self.boundaries_done = pending[-1]
            self.recorded_summary = int(sum(self.inp.recorded_summary_tokens[b] for b in pending))
            return pending[-1] - 1
        return None

    def choose_cut(self, r: int, latest: int, tail: list[int], respect_keep: bool = True) -> int | None:
        if respect_keep:
            keep_events = int(self.c[Cfg.KEEP_LAST_EVENTS])
            if keep_events > 0:
                if len(tail) <= keep_events:
                    return None
                latest = min(latest, tail[-keep_events - 1])
            keep_tokens = int(self.c[Cfg.KEEP_LAST_TOKENS])
            ppm = int(self.c[Cfg.KEEP_LAST_SHARE_PPM])
            if ppm > 0:
                keep_tokens = max(keep_tokens, ppm * sum(self.eff(i, r) for i in tail) // SHARE_SCALE)
            if keep_tokens > 0:
                acc, kept = 0, 0
                for i in reversed(tail):
                    if acc + self.eff(i, r) > keep_tokens:
                        break
                    acc += self.eff(i, r)
                    kept += 1
                if kept >= len(tail):
                    return None
                latest = min(latest, tail[len(tail) - kept - 1])
        need_message = bool(self.c[Cfg.CUT_AT_MESSAGE])
        for i in reversed(tail):
            if i > latest:
                continue
            if self.inp.open_after[i] == 0 and (not need_message or self.inp.is_message[i]):
                return i
        return None

    # ---- actions ------------------------------------------------------------------
    def compact(self, r: int, p: int, latest: int, forced: bool) -> int:
        """Try to compact; returns LedgerFlag bits describing what happened."""
        items = self.compile(r, p)
        before = self.size(items)
        tail = self.tail(p)
        cut = self.choose_cut(r, latest, tail, respect_keep=True)
        if cut is None and forced:
            cut = self.choose_cut(r, latest, tail, respect_keep=False)
        if cut is None:
            return E.LedgerFlag.SKIPPED_NO_SAFE_CUT
        span = [i for i in tail if i <= cut]
        if not forced and len(span) < self.p[Param.MIN_PROGRESS] * len(items):
            return E.LedgerFlag.SKIPPED_NO_PROGRESS
        span_tokens = sum(self.eff(i, r) for i in span)
        s = self.strategy
        artifact = -1
        item_tokens = 0
        accumulate = bool(self.c[Cfg.ACCUMULATE])
        if s in (E.Strategy.SUMMARY, E.Strategy.OPAQUE, E.Strategy.RECORDED):
            if s == E.Strategy.RECORDED:
                item_tokens = self.recorded_summary if self.trigger == E.Trigger.RECORDED else 0
            else:  # an accumulated item summarizes its span; a folded one the earlier items too
                item_tokens = self.summary_size(span_tokens + (0 if accumulate else sum(t for _, t in self.segments)))
            artifact = self.next_artifact
            self.next_artifact += 1
            key = 0 if self.c[Cfg.SUMMARY_SHARES_CACHE] else 1
            self.account(key, items, int(self.c[Cfg.SUMMARY_PROMPT]), r, E.CallKind.COMPACTION,
                         item_tokens, before, before, 0)
            if s != E.Strategy.RECORDED:
                if accumulate:
                    self.segments.append((artifact, item_tokens))
                else:
                    self.segments = [(artifact, item_tokens)]
            probe = int(self.c[Cfg.PROBE_PROMPT])
            if probe > 0 and s == E.Strategy.SUMMARY:
                # the probe: the summary (with the segments it sits in) checked in a call of its own,
                # a prompt of its own shape (the summarizer's cache key)
                self.account(1, [("seg", no, t) for no, t in self.segments], probe, r, E.CallKind.COMPACTION,
                             item_tokens, before, before, 0)
        self.retain(span, cut)
        if self.coverage_from < 0 or accumulate or s == E.Strategy.TRUNCATE:
            self.coverage_from = span[0]
        self.cut = cut
        self.compactions += 1
        self.last_compaction_request = r
        self.last_compaction_ts = int(self.inp.req_ts[r])
        self.mark(compacted=True)
        after = self.size(self.compile(r, p))
        self.event(E.EventType.CHECKPOINT, r, self.coverage_from, cut, artifact, before, after,
                   item_tokens, len(span), span_tokens, s)
        self.merge_if_needed(r, p)
        return E.LedgerFlag.COMPACTED

    def retain(self, span: list[int], cut: int) -> None:
        kind = int(self.c[Cfg.RETAIN_KIND])
        if kind == E.Retain.NONE:
            return
        budget = int(self.c[Cfg.RETAIN_TOKENS])
        pick = self.inp.is_user_message if kind == E.Retain.USER_MESSAGES else self.inp.is_message
        candidates = sorted(set(self.retained) | {i for i in span if pick[i]})
        kept, acc = [], 0
        for i in reversed(candidates):
            if acc + int(self.inp.tokens[i]) > budget:
                break
            acc += int(self.inp.tokens[i])
            kept.append(i)
        self.retained = sorted(kept)

    def merge_if_needed(self, r: int, p: int) -> None:
        limit = int(self.c[Cfg.MAX_SEGMENTS])
        if not (self.c[Cfg.ACCUMULATE] and limit > 0 and len(self.segments) > limit):
            return
        if self.c[Cfg.LOCAL_TOKENS] > 0:  # opaque items are not merged: rebuilt from the local checkpoint
            return provider_window.rebuild(self, r, p)
        seg_items: list[Item] = [("seg", no, t) for no, t in self.segments]
        total = sum(t for _, t in self.segments)
        merged = self.summary_size(total)
        before = self.size(self.compile(r, p))
        self.account(1, seg_items, int(self.c[Cfg.SUMMARY_PROMPT]), r, E.CallKind.MERGE, merged, before, before, 0)
        artifact = self.next_artifact
        self.next_artifact += 1
        self.segments = [(artifact, merged)]
        self.mark(compacted=True)
        after = self.size(self.compile(r, p))
        self.event(E.EventType.MERGE, r, -1, -1, artifact, before, after, merged, len(seg_items), total,
                   E.Strategy.SUMMARY)

    def clear_tool_uses(self, r: int, p: int) -> int:
        tail = self.tail(p)
        calls = [i for i in tail if self.inp.is_tool_call[i]]
        keep = int(self.c[Cfg.CLEAR_KEEP])
        if len(calls) <= keep:
            return 0
        boundary = calls[-keep] if keep > 0 else p
        fresh = [i for i in tail if self.cleared_upto < i < boundary and self.clearable(i)]
        gain = sum(max(0, self.eff(i, r) - int(self.c[Cfg.CLEAR_PLACEHOLDER])) for i in fresh)
        if not fresh or gain <= 0 or gain < self.p[Param.CLEAR_AT_LEAST]:
            return 0
        before = self.size(self.compile(r, p))
        self.cleared_upto = boundary - 1
        self.mark(edited=True)
        after = self.size(self.compile(r, p))
        self.event(E.EventType.CONTEXT_EDIT, r, fresh[0], boundary - 1, -1, before, after, gain,
                   len(fresh), gain, E.Strategy.CLEAR_TOOL_USES)
        return E.LedgerFlag.EDITED

    def truncate_half(self, r: int, p: int) -> int:
        """Emergency (Roo Code's fallback): drop the older half of the raw tail (cut at its last safe row)."""
        tail = self.tail(p)
        safe = self.safe_rows(tail[:len(tail) // 2])
        if not safe:
            return 0
        return self.cut_tail(r, p, tail, safe[-1], self.size(self.compile(r, p)))

    def safe_rows(self, rows: list[int]) -> list[int]:
        """Rows an emergency truncation may cut at: no tool call awaits its result (a message if cuts need one)."""
        need_message = bool(self.c[Cfg.CUT_AT_MESSAGE])
        return [i for i in rows if self.inp.open_after[i] == 0 and (not need_message or self.inp.is_message[i])]

    def cut_tail(self, r: int, p: int, tail: list[int], chosen: int, before: int) -> int:
        """Truncate the tail up to row ``chosen`` (an overflow's last resort: nothing retained,
        no checkpoint frame) and record it; returns ``LedgerFlag.TRUNCATED``."""
        span = [i for i in tail if i <= chosen]
        span_tokens = sum(self.eff(i, r) for i in span)
        self.cut = chosen
        self.mark(truncated=True)
        after = self.size(self.compile(r, p))
        self.event(E.EventType.TRUNCATION, r, span[0], chosen, -1, before, after, 0, len(span),
                   span_tokens, E.Strategy.TRUNCATE)
        return E.LedgerFlag.TRUNCATED

    def truncate_to_fit(self, r: int, p: int) -> int:
        """Emergency: cut at the earliest safe row that makes the context fit the window (a
        truncation, not a compaction). Returns ``LedgerFlag.TRUNCATED`` when it cut."""
        window = self.p[Param.WINDOW]
        items = self.compile(r, p)
        before = self.size(items)
        tail = self.tail(p)
        safe = self.safe_rows(tail)
        if not safe:
            return 0
        saved_cut = self.cut
        chosen = safe[-1]
        for i in safe:
            self.cut = i
            if self.size(self.compile(r, p)) <= window:
                chosen = i
                break
        self.cut = saved_cut
        return self.cut_tail(r, p, tail, chosen, before)

    # ---- the loop -----------------------------------------------------------------
    def run(self):
        inp = self.inp
        window = self.p[Param.WINDOW]
        mask_after = int(self.c[Cfg.MASK_AFTER_TURNS])
        for r in range(inp.n_requests):
            p = int(inp.req_first_row[r])
            flags = 0
            if self.mask_rule.bounded:
                if self.mask_by_bound(r, p):
                    self.mark(edited=True)
                    flags |= E.LedgerFlag.EDITED
            elif mask_after > 0 and r >= mask_after:
                newly = [i for i in self.shown_tail(self.tail(p))
                         if inp.is_tool_result[i] and inp.row_request[i] == r - mask_after]
                if newly:
                    self.mark(edited=True)
                    flags |= E.LedgerFlag.EDITED
            if self.c[Cfg.RECENT_MESSAGES_LIMIT] > 0:
                shown = self.shown_tail(self.tail(p))
                start = shown[0] if shown else -1
                if start != self.window_start and len(shown) < len(self.tail(p)):
                    # the bounded window slid: older raw messages left the prompt
                    self.mark(edited=True)
                    flags |= E.LedgerFlag.EDITED
                self.window_start = start
            items = self.compile(r, p)
            before = self.size(items)
            if (self.c[Cfg.FLUSH] and before >= self.p[Param.FLUSH_THRESHOLD]
                    and self.flushed_at != self.compactions):
                output = int(self.c[Cfg.FLUSH_OUTPUT])
                self.account(0, items, int(self.c[Cfg.FLUSH_PROMPT]), r, E.CallKind.FLUSH, output,
                             before, before, 0)
                self.flushed_at = self.compactions
                flags |= E.LedgerFlag.FLUSHED
                self.event(E.EventType.FLUSH, r, -1, p - 1, -1, before, before, output, 0, 0, 0)
            if self.trigger != E.Trigger.NONE and self.strategy != E.Strategy.NONE:
                tail = self.tail(p)
                latest = self.rule(r, p, before, tail, len(items))
                if latest is not None:
                    if self.strategy == E.Strategy.CLEAR_TOOL_USES:
                        flags |= self.clear_tool_uses(r, p)
                    else:
                        flags |= self.compact(r, p, latest, forced=False)
            items = self.compile(r, p)
            context = self.size(items)
            if context > window:
                flags |= E.LedgerFlag.OVERFLOW | E.LedgerFlag.EMERGENCY
                self.event(E.EventType.OVERFLOW, r, -1, -1, -1, context, context, 0, 0, 0, 0)
                if (self.c[Cfg.EMERGENCY] == E.Emergency.COMPACT
                        and self.strategy in (E.Strategy.SUMMARY, E.Strategy.OPAQUE)):
                    flags |= self.compact(r, p, p - 1, forced=True) & E.LedgerFlag.COMPACTED
                    items = self.compile(r, p)
                    context = self.size(items)
                if context > window and self.c[Cfg.EMERGENCY] == E.Emergency.TRUNCATE_HALF:
                    flags |= self.truncate_half(r, p)
                    items = self.compile(r, p)
                    context = self.size(items)
                if context > window:
                    flags |= self.truncate_to_fit(r, p)
                    items = self.compile(r, p)
                    context = self.size(items)
            if self.c[Cfg.LOCAL_TOKENS] > 0 and not flags & E.LedgerFlag.COMPACTED:
                provider_window.local_checkpoint(self, r, p)
            sent = self.prune(r, p, items)
            pruned = sent != items
            if pruned:
                flags |= E.LedgerFlag.PRUNED
                self.edited_since[0] = True
            if self.size(sent) > window:  # never sent over the window: the provider's error
                flags |= E.LedgerFlag.FAILED
            self.account(0, sent, 0, r, E.CallKind.MAIN, int(inp.req_output_tokens[r]), before,
                         self.size(sent), flags)
            if pruned:  # the next prompt sends the pruned results in full again
                self.edited_since[0] = True
        ledger = np.array(self.ledger, dtype=np.int64).reshape(-1, N_LEDGER)
        events = np.array(self.events, dtype=np.int64).reshape(-1, N_EVENT)
        return ledger, events


def replay_reference(inp: ReplayInput, cfg: np.ndarray, params: np.ndarray, excluded: np.ndarray | None = None,
                     *, record: bool = False) -> tuple:
    """Replay one continuity; returns (ledger, events) int64 matrices (see records.py), and
    with ``record`` its prompt record (:mod:`workbench.engine.prompt_record`) as a third."""
    replay = _Replay(inp, cfg, params, np.zeros(inp.n, bool) if excluded is None else excluded)
    ledger, events = replay.run()
    return (ledger, events, replay.prompts.record(ledger, events)) if record else (ledger, events)
