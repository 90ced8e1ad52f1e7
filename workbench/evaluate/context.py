"""Which raw events are in the compiled context at each request, read from the engines'
own prompt record (:mod:`workbench.engine.prompt_record`): the engines decide what each
call's prompt holds and record it; the evaluations (retention, leakage through the
compiled context, bundles, the determinism hash, the derived texts) read it here.

:class:`ContextTracker` walks a replay's requests and actions in order. After
:meth:`~ContextTracker.advance` to request ``r`` it stands at ``r``'s main call; while the
actions of ``r`` are still pending (:meth:`~ContextTracker.pending`) it stands at ``r``'s
first call (the flush call when one ran), and after :meth:`~ContextTracker.apply` at the
state that action left (the record's event rows). Nothing is re-derived: the only rules
here are how a row weighs as a placeholder (:class:`~workbench.engine.prompt_record.PromptView`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from workbench.engine import enums as E
from workbench.engine.policy import COMPILES, STRATEGIES, Policy
from workbench.engine.prepare import ReplayInput
from workbench.rundir import wire as W
from workbench.rundir.wire import LOCAL_EVENT, OPAQUE_KIND, REBUILD_EVENT

CHECKPOINT = W.CHECKPOINT_EVENT
TRUNCATION = W.TRUNCATION_EVENT  # overflow handling: not a checkpoint frame
#: the events that change what the compiled context holds (and a two-layer policy's local
#: checkpoints, which do not but whose text a later rebuild puts there)
ACTIONS = (CHECKPOINT, W.MERGE_EVENT, W.EDIT_EVENT, W.OVERFLOW_EVENT, TRUNCATION, REBUILD_EVENT,
           LOCAL_EVENT)
#: the same, as the engines' event types
ACTION_TYPES = (E.EventType.CHECKPOINT, E.EventType.MERGE, E.EventType.CONTEXT_EDIT, E.EventType.OVERFLOW,
                E.EventType.TRUNCATION, E.EventType.REBUILD, E.EventType.LOCAL_CHECKPOINT)


@dataclass
class ContextState:
    cut: int = -1  # the cut's row
    segments: list[tuple[str, int]] = field(default_factory=list)  # (artifact id, tokens)
    retained: list[int] = field(default_factory=list)  # rows
    cleared_upto: int = -1  # the row of the last cleared position


def visible_mask(inp: ReplayInput, policy: Policy) -> np.ndarray:
    """The rows the policy's compiled contexts are made of: the model-visible events, and
    the log's own summaries when the policy keeps them and its compile strategy shows them."""
    recorded_rows = E.recorded_summaries_visible(STRATEGIES[policy.compaction.kind],
                                                 COMPILES.index(policy.compile.strategy))
    return inp.visible | (inp.is_summary if recorded_rows else False)


class ContextTracker:
    """Walk requests in order over one replay's prompt record (``record``: the run's
    :meth:`~workbench.engine.run.SimulationResult.prompt_record` of this policy and
    continuity); ``state`` and :meth:`raw_rows` describe where the walk stands."""

    def __init__(self, inp: ReplayInput, policy: Policy, events, window: int = 0, *, record):
        import polars as pl

        from workbench.engine.presets import replayed_rule
        from workbench.engine.prompt_record import PromptView

        name = policy.name  # the run's events carry the policy's name ...
        policy = replayed_rule(policy, inp)  # ... the rule is what was replayed on this continuity
        self.inp, self.policy, self.record = inp, policy, record
        self.view = PromptView.of_policy(record, inp, policy)
        self.shows_summaries = policy.compile.shows_summaries
        self.visible_rows = record.rows
        self.keep_first = policy.trigger.keep_first
        ev = events.filter((pl.col("policy") == name) & (pl.col("continuity_id") == inp.continuity_id)
                           & pl.col("event_type").is_in(list(ACTIONS)))
        rows = list(ev.iter_rows(named=True))
        engine_events = np.flatnonzero(np.isin(record.event_types, ACTION_TYPES))
        if len(rows) != engine_events.size:
            raise ValueError(f"{inp.continuity_id}/{name}: the events hold {len(rows)} actions, its prompt record "
                             f"{engine_events.size}: they are not of one replay")
        for row, e in zip(rows, engine_events.tolist(), strict=True):
            row["_event"] = e
        self.actions = [(int(r["request"]), i, r) for i, r in enumerate(rows)]  # in the engines' order
        # artifact number -> id (the events name each artifact the replay made)
        self.artifact_ids = {}
        for r in rows:
            if r.get("summary_artifact_id") is not None:
                self.artifact_ids.setdefault(int(record.event_artifacts[r["_event"]]), r["summary_artifact_id"])
        # provider-window items (Holon §4.2): opaque, in the context but no readable memory
        self.opaque_ids = {r["summary_artifact_id"] for _, _, r in self.actions
                           if r.get("summary_kind") == OPAQUE_KIND and r.get("summary_artifact_id") is not None}
        self._calls = _calls_by_request(record, inp.n_requests)
        self.main_calls = self._calls[1]  # each request's main call (its record row)
        self._next = 0
        self._overflow_request = -1
        self._at: tuple[str, int] = ("none", -1)
        self._full: tuple | None = None  # (request, call), its full rows in prompt order, sorted
        self.request = -1

    # ---- walking -------------------------------------------------------------------------
    @property
    def action_requests(self) -> list[int]:
        """Requests at which an action (checkpoint, merge, edit, overflow, truncation) is applied."""
        return sorted({r for r, _, _ in self.actions})

    def advance(self, r: int) -> ContextState:
        """Apply every action taken up to and including request ``r``: stand at ``r``'s main call."""
        while self._next < len(self.actions) and self.actions[self._next][0] <= r:
            self._apply_one(self.actions[self._next][2])
            self._next += 1
        self.request = r
        self._at = ("call", int(self._calls[1][r]))
        return self.state

    def pending(self, r: int) -> list[dict]:
        """Actions of request ``r`` not applied yet (apply them one by one with :meth:`apply`)."""
        out = []
        while self._next < len(self.actions) and self.actions[self._next][0] <= r:
            out.append(self.actions[self._next][2])
            self._next += 1
        return out

    def span_of(self, a: dict) -> list[int]:
        """The raw rows a checkpoint action covers: the raw tail as it stood just before it,
        up to its cut (the state the event before it left, the request's visible rows)."""
        e = a["_event"]
        before = int(self.record.after[e - 1, E.After.CUT]) if e > 0 else -1
        end = int(self.record.after[e, E.After.CUT])
        nvp = int(np.searchsorted(self.visible_rows, int(self.inp.req_first_row[a["request"]])))
        if nvp < self.keep_first:
            return []
        lo = max(before + 1, self.keep_first)
        return self.visible_rows[lo:min(end + 1, nvp)].tolist()

    def overflowed(self, r: int) -> bool:
        """Whether an overflow was applied at request ``r`` (an emergency action follows it)."""
        return self._overflow_request == r

    def apply(self, a: dict, span: list[int] | None = None) -> None:
        """Apply one action (``span`` is accepted for callers that computed it)."""
        self._apply_one(a)

    def _apply_one(self, a: dict) -> None:
        if a["event_type"] == W.OVERFLOW_EVENT:
            self._overflow_request = int(a["request"])
        if a["event_type"] != LOCAL_EVENT:  # a local checkpoint leaves the provider window as it is
            self._at = ("event", int(a["_event"]))

    # ---- where the walk stands -------------------------------------------------------------
    def _call(self, r: int) -> int:
        """The call whose prompt describes request ``r`` at the walk's place: its main call once
        its actions are applied, else its first call (the flush call when one ran)."""
        first, main = self._calls
        return int(main[r]) if self.request >= r or self._at == ("call", int(main[r])) else int(first[r])

    @property
    def state(self) -> ContextState:
        rec = self.record
        kind, i = self._at
        if kind == "none":
            return ContextState()
        if kind == "event":
            a = rec.after[i]
            segs = rec.segment_artifacts[a[E.After.SEGMENTS_HEAD]:a[E.After.SEGMENTS_TAIL]].tolist()
            toks = rec.segment_tokens[a[E.After.SEGMENTS_HEAD]:a[E.After.SEGMENTS_TAIL]].tolist()
            return ContextState(cut=self._row(int(a[E.After.CUT])),
                                segments=[(self.artifact_ids.get(n), t) for n, t in zip(segs, toks, strict=True)],
                                retained=rec.after_retained_rows(i).tolist(),
                                cleared_upto=self._row(int(a[E.After.CLEARED])))
        s = rec.shown[i]
        return ContextState(cut=self._row(int(s[E.Shown.CUT])), segments=self._named(rec.segments(i)),
                            retained=rec.retained_rows(i).tolist(), cleared_upto=self._row(int(s[E.Shown.CLEARED])))

    def _row(self, v: int) -> int:
        return int(self.visible_rows[v]) if v >= 0 else -1

    def _named(self, segments: list[tuple[int, int]]) -> list[tuple[str, int]]:
        return [(self.artifact_ids.get(n), t) for n, t in segments]

    @property
    def shown_segments(self) -> list[tuple[str, int]]:
        """The summary items compiled into the context where the walk stands (none under
        ``recent_messages_v1``, which keeps them for the next fold but never shows them)."""
        if not self.shows_summaries:
            return []
        return self.state.segments

    def head(self, p: int) -> list[int]:
        """The pinned head of the request whose first output row is ``p`` (the walk at it)."""
        return self.record.head_rows(self._call(int(np.searchsorted(self.inp.req_first_row, p)))).tolist()

    def raw_rows(self, r: int) -> list[int]:
        """Rows whose full text is in the prompt of request ``r`` (head, retained items, the
        raw tail but its placeholders and the results a session prune trimmed or cleared)."""
        return self._full_rows(r).tolist()

    def _full_rows(self, r: int) -> np.ndarray:
        k = self._call(r)
        if self._full is None or self._full[0] != (r, k):
            rows = self.view.full_rows(k, r)
            self._full = ((r, k), rows, np.sort(rows))
        return self._full[1]

    def shows(self, i: int, r: int) -> bool:
        """Whether row ``i``'s full text is in the compiled context of request ``r`` (the walk at ``r``)."""
        self._full_rows(r)
        ordered = self._full[2]
        j = int(np.searchsorted(ordered, i))
        return j < ordered.size and int(ordered[j]) == i

    def tokens(self, r: int) -> int:
        """Tokens of the prompt request ``r`` sent (the ledger's ``context_after``)."""
        return self.view.sent_tokens(self._call(r), r)

    def pruned(self, r: int) -> dict[int, int]:
        """The session prune of request ``r``'s prompt: ``{row: PruneState}``, empty when unpruned."""
        return self.view.pruned(self._call(r), r)


def _calls_by_request(record, n_requests: int) -> tuple[np.ndarray, np.ndarray]:
    """``(first call, main call)`` of each request: ledger rows, in the record's order."""
    req = record.call_requests
    first = np.searchsorted(req, np.arange(n_requests), side="left")
    main = np.searchsorted(req, np.arange(n_requests), side="right") - 1
    return first.astype(np.int64), main.astype(np.int64)


__all__ = ["ContextTracker", "ContextState"]
