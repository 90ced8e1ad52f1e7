"""Which raw events are in the compiled context at each request, rebuilt from a run's
events (checkpoints, merges, clearing edits, overflow truncations) and its resolved policy,
and which of them a request's session prune left out of the prompt it sent (re-derived with
the engines' own step, :func:`workbench.engine.pruning.prune_step`: a prune leaves no event).

The engines account tokens but do not emit the compiled context itself; text-level
evaluations (retention, leakage through the compiled context) need it at a few requests
only. This tracker re-derives it from the same rules the reference engine applies. Its
faithfulness is tested: the context size it rebuilds equals the ledger's
``context_after`` for every main request of every preset.

Walking is incremental: :meth:`ContextTracker.advance` applies only the actions taken since
the last request it was at, :attr:`ContextTracker.action_requests` lists the requests where
the context changes shape, and :meth:`ContextTracker.shows` answers whether one row is in
the compiled context without listing the others (binary searches over the visible rows).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

import numpy as np

from workbench.engine import enums as E
from workbench.engine.masking import MaskRule, mask_step
from workbench.engine.policy import COMPILES, STRATEGIES, Policy
from workbench.engine.prepare import ReplayInput
from workbench.engine.provider import context_window_of
from workbench.engine.pruning import PruneRule, prune_step
from workbench.rundir import wire as W
from workbench.rundir.wire import LOCAL_EVENT, OPAQUE_KIND, REBUILD_EVENT

CHECKPOINT = W.CHECKPOINT_EVENT
TRUNCATION = W.TRUNCATION_EVENT  # overflow handling: not a checkpoint frame
#: the events that change what the compiled context holds (and a two-layer policy's local
#: checkpoints, which do not but whose text a later rebuild puts there)
ACTIONS = (CHECKPOINT, W.MERGE_EVENT, W.EDIT_EVENT, W.OVERFLOW_EVENT, TRUNCATION, REBUILD_EVENT,
           LOCAL_EVENT)


@dataclass
class ContextState:
    cut: int = -1
    segments: list[tuple[str, int]] = field(default_factory=list)  # (artifact id, tokens)
    retained: list[int] = field(default_factory=list)
    cleared_upto: int = -1


def visible_mask(inp: ReplayInput, policy: Policy) -> np.ndarray:
    """The rows the policy's compiled contexts are made of: the model-visible events, and
    the log's own summaries when the policy keeps them and its compile strategy shows them."""
    recorded_rows = E.recorded_summaries_visible(STRATEGIES[policy.compaction.kind],
                                                 COMPILES.index(policy.compile.strategy))
    return inp.visible | (inp.is_summary if recorded_rows else False)


class ContextTracker:
    """Walk requests in order; ``state`` and :meth:`raw_rows` describe request ``r``."""

    def __init__(self, inp: ReplayInput, policy: Policy, events, window: int):
        import polars as pl

        from workbench.engine.presets import replayed_rule

        name = policy.name  # the run's events carry the policy's name ...
        policy = replayed_rule(policy, inp)  # ... the rule is what was replayed on this continuity
        self.inp, self.policy = inp, policy
        strategy = policy.compaction.kind
        self.shows_summaries = policy.compile.shows_summaries
        self.visible = visible_mask(inp, policy)
        self.visible_rows = np.flatnonzero(self.visible)
        self.keep_first = policy.trigger.keep_first
        self._head_rows: list[int] | None = None
        self.mask_after = policy.masking.after_turns
        # masking by tokens or count: tool outputs at visible positions below the bound are
        # masked; the bound moves as the engines move it (workbench.engine.masking.mask_step)
        self.mask_rule = MaskRule.of(policy.masking)
        self.mask_bound = 0
        self._masked_through = -1  # the last request whose masking step was applied
        # session pruning trims or clears tool results in one request's prompt only
        self.prune_rule = PruneRule.of(policy, context_window_of(policy, inp.context_window))
        self._pruned: tuple[int, dict[int, int]] = (-1, {})
        self.limit = policy.compile.recent_messages_limit
        self.accumulate = policy.compaction.accumulate
        self.strategy = strategy
        self.mask_tokens = policy.masking.placeholder_tokens
        self.clear_tokens = policy.compaction.placeholder_tokens
        self.excluded = inp.excluded_mask(policy.compaction.exclude_tools)
        # messages among the visible rows before visible position k: tail message counts
        self._visible_msgs = np.concatenate(
            ([0], np.cumsum(inp.is_message[self.visible_rows], dtype=np.int64)))
        ev = events.filter((pl.col("policy") == name) & (pl.col("continuity_id") == inp.continuity_id))
        self.actions = sorted(
            ((int(r["request"]), i, r) for i, r in enumerate(ev.iter_rows(named=True))
             if r["event_type"] in ACTIONS),
            key=lambda t: (t[0], t[1]))
        # provider-window items (Holon §4.2): opaque, in the context but no readable memory
        self.opaque_ids = {r["summary_artifact_id"] for _, _, r in self.actions
                           if r.get("summary_kind") == OPAQUE_KIND and r.get("summary_artifact_id") is not None}
        self._next = 0
        self._overflow_request = -1
        self.state = ContextState()
        self._retained_set: set[int] = set()
        self.request = -1

    @property
    def action_requests(self) -> list[int]:
        """Requests at which an action (checkpoint, merge, edit, overflow, truncation) is applied."""
        return sorted({r for r, _, _ in self.actions})

    def advance(self, r: int) -> ContextState:
        """Apply every action taken up to and including request ``r``."""
        if self.mask_rule.bounded:  # request by request: a masking step comes before its actions
            for q in range(self._masked_through + 1, r + 1):
                while self._next < len(self.actions) and self.actions[self._next][0] < q:
                    self.apply(self.actions[self._next][2])
                    self._next += 1
                self._mask_by_bound(q)
        while self._next < len(self.actions) and self.actions[self._next][0] <= r:
            self.apply(self.actions[self._next][2])
            self._next += 1
        self.request = r
        return self.state

    def _mask_by_bound(self, q: int) -> None:
        """The engines' masking step of request ``q`` (masking.mask_step)."""
        self._masked_through = q
        p = int(self.inp.req_first_row[q])
        self.mask_bound = mask_step(self.inp, self.visible_rows, self.tail(p), p, q, self.mask_bound,
                                    self.mask_rule)

    def pending(self, r: int) -> list[dict]:
        """Actions of request ``r`` not applied yet (apply them one by one with :meth:`apply`)."""
        out = []
        while self._next < len(self.actions) and self.actions[self._next][0] <= r:
            out.append(self.actions[self._next][2])
            self._next += 1
        return out

    def span_of(self, a: dict) -> list[int]:
        """The raw rows a checkpoint action covers, as the tail stood just before it."""
        to_row = int(np.searchsorted(self.inp.seq, a["to_seq"]))
        p = int(self.inp.req_first_row[a["request"]])
        return [i for i in self.tail(p) if i <= to_row]

    def overflowed(self, r: int) -> bool:
        """Whether an overflow was applied at request ``r`` (an emergency action follows it)."""
        return self._overflow_request == r

    def apply(self, a: dict, span: list[int] | None = None) -> None:
        """Apply one action; ``span``: :meth:`span_of` the action when the caller has it."""
        s = self.state
        if a["event_type"] == LOCAL_EVENT:  # the provider window is left as it is
            return
        if a["event_type"] == W.OVERFLOW_EVENT:
            self._overflow_request = int(a["request"])
            return
        if a["event_type"] == W.EDIT_EVENT:
            s.cleared_upto = int(np.searchsorted(self.inp.seq, a["to_seq"]))
            return
        if a["event_type"] == W.MERGE_EVENT:
            s.segments = [(a["summary_artifact_id"], int(a["item_tokens"]))]
            return
        if a["event_type"] == TRUNCATION:  # the overflow's last resort: a cut that retains nothing
            s.cut = int(np.searchsorted(self.inp.seq, a["to_seq"]))
            return
        if a["event_type"] == REBUILD_EVENT:  # the local checkpoint and the raw events after its cut
            s.segments = [(a["summary_artifact_id"], int(a["item_tokens"]))]
            s.cut = int(np.searchsorted(self.inp.seq, a["to_seq"]))
            return
        to_row = int(np.searchsorted(self.inp.seq, a["to_seq"]))
        if span is None:
            span = self.span_of(a)
        kind = a["summary_kind"]
        if kind in (W.SUMMARY_KIND, W.OPAQUE_KIND):
            item = (a["summary_artifact_id"], int(a["item_tokens"]))
            s.segments = [*s.segments, item] if self.accumulate else [item]
        self._retain(span)
        s.cut = to_row

    def _retain(self, span: list[int]) -> None:
        c = self.policy.compaction
        if c.retain == "none":
            return
        pick = self.inp.is_user_message if c.retain == "user_messages" else self.inp.is_message
        candidates = sorted(set(self.state.retained) | {i for i in span if pick[i]})
        kept, acc = [], 0
        for i in reversed(candidates):
            t = int(self.inp.tokens[i])
            if acc + t > c.retain_tokens:
                break
            acc += t
            kept.append(i)
        self.state.retained = sorted(kept)
        self._retained_set = set(kept)

    # ---- the compiled context at the current request --------------------------------
    @property
    def shown_segments(self) -> list[tuple[str, int]]:
        """The summary items compiled into the context: ``state.segments`` (what the next
        fold reads) unless the compile strategy shows no summaries (``recent_messages_v1``)."""
        return self.state.segments if self.shows_summaries else []

    def head(self, p: int) -> list[int]:
        first = self._head_rows
        if first is None:  # (a list once: the head is asked for at every request)
            first = self._head_rows = self.visible_rows[: self.keep_first].tolist()
        return first[:bisect_left(first, p)]

    def tail(self, p: int) -> list[int]:
        head = self.head(p)
        if len(head) < self.keep_first:
            return []
        base = max(self.state.cut, head[-1] if head else -1)
        lo = np.searchsorted(self.visible_rows, base, side="right")
        hi = np.searchsorted(self.visible_rows, p, side="left")
        return [int(i) for i in self.visible_rows[lo:hi]]

    def shown_tail(self, tail: list[int]) -> list[int]:
        if self.limit <= 0:
            return tail
        msgs = [i for i in tail if self.inp.is_message[i]]
        if len(msgs) <= self.limit:
            return tail
        start = msgs[-self.limit]
        return [i for i in tail if i >= start]

    def shown_window(self, p: int) -> tuple[int, int]:
        """``(lo, hi)``: the shown raw tail of the request whose first output row is ``p``,
        as visible positions ``[lo, hi)`` (``visible_rows[lo:hi]``), without listing it."""
        vis = self.visible_rows
        hi = int(np.searchsorted(vis, p, side="left"))
        n_head = min(self.keep_first, hi)
        if n_head < self.keep_first:
            return hi, hi  # the head is not full yet: no tail
        base = max(self.state.cut, int(vis[n_head - 1]) if n_head else -1)
        lo = int(np.searchsorted(vis, base, side="right"))
        msgs = self._visible_msgs
        if self.limit > 0 and lo < hi and msgs[hi] - msgs[lo] > self.limit:
            lo = int(np.searchsorted(msgs, msgs[hi] - self.limit, side="right")) - 1
        return lo, hi

    def masked(self, i: int, r: int) -> bool:
        if self.mask_rule.bounded:
            return bool(self.inp.is_tool_result[i]) and int(np.searchsorted(self.visible_rows, i)) < self.mask_bound
        req = int(self.inp.row_request[i])
        return self.mask_after > 0 and bool(self.inp.is_tool_result[i]) and req >= 0 and r - req >= self.mask_after

    def cleared(self, i: int) -> bool:
        clearable = self.inp.is_tool_result[i] or (self.policy.compaction.clear_inputs and self.inp.is_tool_call[i])
        return i <= self.state.cleared_upto and bool(clearable) and not bool(self.excluded[i])

    def eff(self, i: int, r: int) -> int:
        """Tokens of tail row ``i`` as it stands in the context at request ``r``."""
        return self.mask_tokens if self.masked(i, r) else self.clear_tokens if self.cleared(i) else int(self.inp.tokens[i])

    def pruned(self, r: int) -> dict[int, int]:
        """The session prune of request ``r``'s prompt (the state must be at ``r``): ``{row:
        PruneState}``, empty when it was sent unpruned."""
        if not self.prune_rule.on:
            return {}
        if self._pruned[0] != r:
            tail = self.shown_tail(self.tail(int(self.inp.req_first_row[r])))
            messages = self.unpruned_tokens(r) - int(self.inp.prefix_tokens)
            self._pruned = (r, prune_step(self.inp, tail, [self.eff(i, r) for i in tail], messages, r,
                                          self.prune_rule))
        return self._pruned[1]

    def raw_rows(self, r: int) -> list[int]:
        """Rows whose full text is in the prompt of request ``r`` (a trimmed or cleared tool
        result is not)."""
        p = int(self.inp.req_first_row[r])
        pruned = self.pruned(r)
        rows = self.head(p) + list(self.state.retained)
        rows += [i for i in self.shown_tail(self.tail(p))
                 if not self.masked(i, r) and not self.cleared(i) and i not in pruned]
        return rows

    def shows(self, i: int, r: int) -> bool:
        """Whether row ``i``'s full text is in the compiled context of request ``r`` (the
        state must be at ``r``): ``i in raw_rows(r)``, without building the list."""
        vis = self.visible_rows
        k = int(np.searchsorted(vis, i))
        if k == len(vis) or vis[k] != i:
            return i in self._retained_set
        p = int(self.inp.req_first_row[r])
        if k < self.keep_first and i < p:
            return True
        if i in self._retained_set:
            return True
        lo, hi = self.shown_window(p)
        if not lo <= k < hi:
            return False
        return not self.masked(i, r) and not self.cleared(i) and i not in self.pruned(r)

    def tokens(self, r: int) -> int:
        """Tokens of the prompt request ``r`` sent (the ledger's ``context_after``)."""
        total = self.unpruned_tokens(r)
        for i, state in self.pruned(r).items():
            total += self.prune_rule.size(state, self.eff(i, r)) - self.eff(i, r)
        return total

    def unpruned_tokens(self, r: int) -> int:
        """Tokens of the compiled context at request ``r`` (before a session prune)."""
        p = int(self.inp.req_first_row[r])
        total = int(self.inp.prefix_tokens)  # the harness's fixed prefix (provider tokens)
        total += sum(int(self.inp.tokens[i]) for i in self.head(p))
        total += sum(int(self.inp.tokens[i]) for i in self.state.retained)
        total += sum(t for _, t in self.shown_segments)
        total += sum(self.eff(i, r) for i in self.shown_tail(self.tail(p)))
        return total


def summary_kinds_with_text() -> tuple[str, ...]:
    return (W.SUMMARY_KIND, W.RECORDED_KIND, W.MERGE_KIND)


__all__ = ["ContextTracker", "ContextState", "summary_kinds_with_text", "E"]
