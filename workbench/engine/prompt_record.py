"""The prompt record: what every call of a replay sent, as the engine that replayed it
decided (issue "one semantics": the evaluations read this instead of re-deriving it).

One row per ledger row (flush, compaction, probe, merge, local checkpoint and main calls
alike) and one per event row (the state it left, columns :data:`~workbench.engine.enums.After`);
the call rows' columns :data:`~workbench.engine.enums.Shown`: the pinned head ``[0, HEAD)``, the
retained items and the summary items shown (windows into the record's two buffers), the
raw tail shown ``[TAIL_START, TAIL_END)``, the context's cut, the masking bounds of the two
tool-result classes, the clearing bound and how many tool results a session prune trimmed
or cleared in it. Positions are visible positions (``rows[v]`` is the row of position
``v``); a row holds O(1) numbers whatever the context's size, so the record grows with the
calls, not with their contexts.

The kernel writes the columns beside each ledger row (``kernel_nb._record_shown_nb``); the
reference engine describes each prompt it built (:class:`ReferenceRecorder`, from the
items it sends). ``tests/engine/test_prompt_record.py`` checks the two records equal on
random policies x continuities, that the record read back gives the reference engine's
own prompts, and that the context size it implies is the ledger's ``context_after``.

>>> import numpy as np
>>> from workbench.engine.enums import N_SHOWN, Shown
>>> row = np.zeros(N_SHOWN, np.int64); row[[Shown.HEAD, Shown.TAIL_START, Shown.TAIL_END]] = 2, 5, 9
>>> none = np.zeros(0, np.int64)
>>> rec = PromptRecord(row[None, :], rows=np.arange(10), retained=none, segment_artifacts=none,
...                    segment_tokens=none, after=EMPTY_AFTER, event_artifacts=none, event_types=none,
...                    call_requests=none)
>>> rec.head_rows(0).tolist(), rec.tail_rows(0).tolist()
([0, 1], [5, 6, 7, 8])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.engine.enums import N_AFTER, N_SHOWN, After, Shown

#: the record of no call and of no event (a continuity without requests)
EMPTY_SHOWN = np.zeros((0, N_SHOWN), np.int64)
EMPTY_AFTER = np.zeros((0, N_AFTER), np.int64)


@dataclass(frozen=True)
class PromptRecord:
    """One replay's prompt record (see the module docstring)."""

    shown: np.ndarray  # int64 [calls, N_SHOWN]: row k describes ledger row k's prompt
    rows: np.ndarray  # int64: the row of each visible position
    retained: np.ndarray  # int64 positions: the retained buffer RETAINED_HEAD/TAIL index
    segment_artifacts: np.ndarray  # int64 artifact numbers: the segment buffer SEGMENTS_HEAD/TAIL index
    segment_tokens: np.ndarray  # int64 tokens of each segment
    after: np.ndarray  # int64 [events, N_AFTER]: row e is the state event row e left
    event_artifacts: np.ndarray  # int64: each event row's artifact number (-1: none)
    event_types: np.ndarray  # int64: each event row's EventType
    call_requests: np.ndarray  # int64: each call's request (the ledger's request column)

    def column(self, name: str) -> np.ndarray:
        return self.shown[:, getattr(Shown, name)]

    def head_rows(self, k: int) -> np.ndarray:
        return self.rows[: self.shown[k, Shown.HEAD]]

    def tail_rows(self, k: int) -> np.ndarray:
        return self.rows[self.shown[k, Shown.TAIL_START]:self.shown[k, Shown.TAIL_END]]

    def retained_rows(self, k: int) -> np.ndarray:
        return self.rows[self.retained[self.shown[k, Shown.RETAINED_HEAD]:self.shown[k, Shown.RETAINED_TAIL]]]

    def segments(self, k: int) -> list[tuple[int, int]]:
        """``[(artifact number, tokens)]`` of the summary items shown in call ``k``'s prompt."""
        lo, hi = self.shown[k, Shown.SEGMENTS_HEAD], self.shown[k, Shown.SEGMENTS_TAIL]
        return list(zip(self.segment_artifacts[lo:hi].tolist(), self.segment_tokens[lo:hi].tolist(), strict=True))

    def cut_row(self, k: int) -> int:
        """The row of the context's cut when call ``k`` was made (-1: none)."""
        v = int(self.shown[k, Shown.CUT])
        return int(self.rows[v]) if v >= 0 else -1

    def after_retained_rows(self, e: int) -> np.ndarray:
        """Rows of the retained items right after event ``e``."""
        return self.rows[self.retained[self.after[e, After.RETAINED_HEAD]:self.after[e, After.RETAINED_TAIL]]]

    def after_segments(self, e: int) -> list[int]:
        """Artifact numbers of the summary segments right after event ``e`` (shown or not)."""
        return self.segment_artifacts[self.after[e, After.SEGMENTS_HEAD]:self.after[e, After.SEGMENTS_TAIL]].tolist()

    def expanded_after(self, e: int) -> tuple:
        """The state event ``e`` left, as engine-independent values (see :meth:`expanded`)."""
        a = self.after[e]
        return (int(a[After.CUT]), int(a[After.CLEARED]), tuple(self.after_retained_rows(e).tolist()),
                tuple(self.after_segments(e)))

    def expanded(self, k: int) -> tuple:
        """Call ``k``'s prompt as engine-independent values (the buffers' windows listed):
        two engines' records are equal when these are, row by row."""
        s = self.shown[k]
        return (*(int(s[c]) for c in (Shown.CUT, Shown.HEAD, Shown.TAIL_START, Shown.TAIL_END, Shown.MASKED0,
                                      Shown.MASKED1, Shown.CLEARED, Shown.PRUNED)),
                tuple(self.retained_rows(k).tolist()), tuple(self.segments(k)))


def main_calls(ledger: np.ndarray) -> np.ndarray:
    """Index (ledger row) of each request's main call: a request's last call is its main one."""
    from workbench.engine.records import LEDGER

    req = ledger[:, LEDGER.request]
    if req.size == 0:
        return np.zeros(0, np.int64)
    last = np.flatnonzero(np.append(req[1:] != req[:-1], True))
    return last.astype(np.int64)


class ReferenceRecorder:
    """The reference engine's prompt record, built call by call from the items each prompt
    holds (``reference._Replay.account``) and the replay's state then."""

    def __init__(self, visible_rows: np.ndarray):
        self.visible_rows = visible_rows
        self.shown: list[list[int]] = []
        self.retained: list[int] = []
        self.segment_artifacts: list[int] = []
        self.segment_tokens: list[int] = []
        self.after: list[list[int]] = []

    def position_at_or_before(self, row: int) -> int:
        """The last visible position whose row is <= ``row`` (-1: none; ``row`` -1: -1)."""
        return int(np.searchsorted(self.visible_rows, row, side="right")) - 1 if row >= 0 else -1

    def add(self, replay, r: int, items: list) -> None:
        """Describe the prompt ``items`` that ``replay`` sends at request ``r``."""
        from workbench.engine import enums as E

        pos = self.visible_rows.searchsorted
        s = [0] * N_SHOWN
        tail: list[int] = []
        s[Shown.RETAINED_HEAD] = len(self.retained)
        s[Shown.SEGMENTS_HEAD] = len(self.segment_artifacts)
        for tag, i, t in items:
            if tag == "seg":
                self.segment_artifacts.append(i)
                self.segment_tokens.append(t)
            elif tag == "ret":
                self.retained.append(int(pos(i)))
            else:  # a raw row: pinned (head positions come first) or of the tail
                v = int(pos(i))
                if v < replay.keep_first:
                    s[Shown.HEAD] += 1
                else:
                    tail.append(v)
                s[Shown.PRUNED] += tag in ("trimmed", "pruned")
        s[Shown.RETAINED_TAIL] = len(self.retained)
        s[Shown.SEGMENTS_TAIL] = len(self.segment_artifacts)
        if tail:
            s[Shown.TAIL_START], s[Shown.TAIL_END] = tail[0], tail[-1] + 1
        s[Shown.CUT] = self.position_at_or_before(replay.cut)
        s[Shown.CLEARED] = self.position_at_or_before(replay.cleared_upto)
        inp = replay.inp
        if replay.mask_rule.bounded:
            s[Shown.MASKED0] = s[Shown.MASKED1] = replay.mask_bound
        else:  # by turns: the outputs of requests r - m and before (class 1: one request later)
            m = int(replay.c[E.Cfg.MASK_AFTER_TURNS])
            if m > 0 and r >= m:
                q = r - m
                s[Shown.MASKED0] = int(pos(inp.req_first_row[q]))
                s[Shown.MASKED1] = (int(pos(inp.req_first_row[q + 1])) if q + 1 < inp.n_requests
                                    else len(self.visible_rows))
        self.shown.append(s)

    def after_event(self, replay) -> None:
        """Describe the state ``replay`` is in right after writing an event row."""
        a = [0] * N_AFTER
        a[After.CUT] = self.position_at_or_before(replay.cut)
        a[After.CLEARED] = self.position_at_or_before(replay.cleared_upto)
        a[After.RETAINED_HEAD] = len(self.retained)
        self.retained.extend(int(v) for v in self.visible_rows.searchsorted(replay.retained))
        a[After.RETAINED_TAIL] = len(self.retained)
        a[After.SEGMENTS_HEAD] = len(self.segment_artifacts)
        self.segment_artifacts.extend(no for no, _ in replay.segments)
        self.segment_tokens.extend(t for _, t in replay.segments)
        a[After.SEGMENTS_TAIL] = len(self.segment_artifacts)
        self.after.append(a)

    def record(self, ledger: np.ndarray, events: np.ndarray) -> PromptRecord:
        """The record of the replay whose ledger and event rows are ``ledger``, ``events``."""
        from workbench.engine.records import EVENT, LEDGER

        i64 = lambda a: np.asarray(a, dtype=np.int64)  # noqa: E731
        return PromptRecord(i64(self.shown).reshape(-1, N_SHOWN), i64(self.visible_rows), i64(self.retained),
                            i64(self.segment_artifacts), i64(self.segment_tokens), i64(self.after).reshape(-1, N_AFTER),
                            i64(events[:, EVENT.artifact_no]), i64(events[:, EVENT.type]),
                            i64(ledger[:, LEDGER.request]))


def kernel_record(ledger: np.ndarray, events: np.ndarray, rows: np.ndarray, retained: np.ndarray,
                  segments: np.ndarray) -> PromptRecord:
    """The record of a kernel replay: the columns it wrote after the ledger's and the event
    columns (``ledger``, ``events``: the wide buffers, their written rows only) and its two buffers."""
    from workbench.engine.records import EVENT, LEDGER, N_EVENT, N_LEDGER

    shown = np.ascontiguousarray(ledger[:, N_LEDGER:N_LEDGER + N_SHOWN])
    after = np.ascontiguousarray(events[:, N_EVENT:N_EVENT + N_AFTER])
    return PromptRecord(shown, np.asarray(rows, dtype=np.int64), np.array(retained, dtype=np.int64),
                        np.array(segments[0], dtype=np.int64), np.array(segments[1], dtype=np.int64), after,
                        np.array(events[:, EVENT.artifact_no]), np.array(events[:, EVENT.type]),
                        np.array(ledger[:, LEDGER.request]))


class PromptView:
    """A prompt record read as rows and tokens: which raw rows a call's prompt showed in full,
    which as placeholders, and what it all weighed, for one continuity x (replayed) policy.

    What the engines decided comes from the record; how a decided placeholder weighs (the
    policy's placeholder sizes) and which rows carry one (tool results; with ``clear_inputs``
    tool calls; never an excluded tool's) are the policy's. The session prune of a pruned
    prompt is the engines' own step (:func:`~workbench.engine.pruning.prune_step`) over the
    recorded tail.
    """

    def __init__(self, record: PromptRecord, inp, *, mask_tokens: int, clear_tokens: int, clear_inputs: bool,
                 excluded: np.ndarray, prune_rule):
        self.record, self.inp = record, inp
        self.mask_tokens, self.clear_tokens, self.prune_rule = int(mask_tokens), int(clear_tokens), prune_rule
        rows = record.rows
        self.tokens = np.asarray(inp.tokens, dtype=np.int64)[rows]  # by position
        self.is_result = np.asarray(inp.is_tool_result, bool)[rows]
        # mask class 1: a tool result the request before its position's request produced (a model
        # output, masked one request later; kernel_nb.F_OUT)
        started = np.searchsorted(np.asarray(inp.req_first_row), rows, side="right")
        self.class1 = self.is_result & (np.asarray(inp.row_request)[rows] == started - 1)
        call = np.asarray(inp.is_tool_call, bool)[rows] if clear_inputs else False
        self.clearable = (self.is_result | call) & ~np.asarray(excluded, bool)[rows]

    @classmethod
    def lowered(cls, record: PromptRecord, inp, cfg: np.ndarray, params: np.ndarray, excluded) -> PromptView:
        """From the lowered policy the engines replayed (``Policy.lower``)."""
        from workbench.engine.enums import Cfg
        from workbench.engine.pruning import PruneRule

        return cls(record, inp, mask_tokens=int(cfg[Cfg.MASK_PLACEHOLDER]),
                   clear_tokens=int(cfg[Cfg.CLEAR_PLACEHOLDER]), clear_inputs=bool(cfg[Cfg.CLEAR_INPUTS]),
                   excluded=np.zeros(inp.n, bool) if excluded is None else excluded,
                   prune_rule=PruneRule.from_config(cfg, params))

    @classmethod
    def of_policy(cls, record: PromptRecord, inp, policy) -> PromptView:
        """From the replayed policy (``presets.replayed_rule``) on the continuity's window."""
        from workbench.engine.provider import context_window_of
        from workbench.engine.pruning import PruneRule

        return cls(record, inp, mask_tokens=policy.masking.placeholder_tokens,
                   clear_tokens=policy.compaction.placeholder_tokens, clear_inputs=policy.compaction.clear_inputs,
                   excluded=inp.excluded_mask(policy.compaction.exclude_tools),
                   prune_rule=PruneRule.of(policy, context_window_of(policy, inp.context_window)))

    # ---- one call ----------------------------------------------------------------------
    def placeholders(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(masked, cleared)``: bool per raw tail position shown in call ``k`` (masking wins)."""
        s = self.record.shown[k]
        lo, hi = int(s[Shown.TAIL_START]), int(s[Shown.TAIL_END])
        v = np.arange(lo, hi)
        bound = np.where(self.class1[lo:hi], s[Shown.MASKED1], s[Shown.MASKED0])
        masked = self.is_result[lo:hi] & (v < bound)
        cleared = ~masked & self.clearable[lo:hi] & (v <= s[Shown.CLEARED])
        return masked, cleared

    def tail_tokens(self, k: int) -> np.ndarray:
        """Tokens of each raw tail position shown in call ``k``, as it stood in the context."""
        s = self.record.shown[k]
        masked, cleared = self.placeholders(k)
        raw = self.tokens[s[Shown.TAIL_START]:s[Shown.TAIL_END]]
        return np.where(masked, self.mask_tokens, np.where(cleared, self.clear_tokens, raw))

    def unpruned_tokens(self, k: int) -> int:
        """Tokens of call ``k``'s compiled context before a session prune (prefix included)."""
        s = self.record.shown[k]
        rec = self.record
        head = int(self.tokens[: s[Shown.HEAD]].sum())
        retained = int(self.tokens[rec.retained[s[Shown.RETAINED_HEAD]:s[Shown.RETAINED_TAIL]]].sum())
        segments = int(rec.segment_tokens[s[Shown.SEGMENTS_HEAD]:s[Shown.SEGMENTS_TAIL]].sum())
        return int(self.inp.prefix_tokens) + head + retained + segments + int(self.tail_tokens(k).sum())

    def pruned(self, k: int, r: int) -> dict[int, int]:
        """``{row: PruneState}`` of call ``k`` (request ``r``'s main call) when it was sent pruned."""
        if self.record.shown[k, Shown.PRUNED] == 0:
            return {}
        from workbench.engine.pruning import prune_step

        tail = self.record.tail_rows(k).tolist()
        messages = self.unpruned_tokens(k) - int(self.inp.prefix_tokens)
        return prune_step(self.inp, tail, self.tail_tokens(k).tolist(), messages, r, self.prune_rule)

    def sent_tokens(self, k: int, r: int) -> int:
        """Tokens of the prompt call ``k`` sent, its prune applied (a main call: ``context_after``)."""
        total = self.unpruned_tokens(k)
        pruned = self.pruned(k, r)
        if pruned:
            eff = dict(zip(self.record.tail_rows(k).tolist(), self.tail_tokens(k).tolist(), strict=True))
            total += sum(self.prune_rule.size(state, eff[i]) - eff[i] for i, state in pruned.items())
        return total

    def full_rows(self, k: int, r: int) -> np.ndarray:
        """Rows whose full text call ``k``'s prompt held: the head, the retained items, and the
        raw tail but its placeholders and pruned results (in prompt order)."""
        masked, cleared = self.placeholders(k)
        tail = self.record.tail_rows(k)[~(masked | cleared)]
        pruned = self.pruned(k, r)
        if pruned:
            tail = tail[~np.isin(tail, np.fromiter(pruned, np.int64, len(pruned)))]
        return np.concatenate([self.record.head_rows(k), self.record.retained_rows(k), tail])

    def items(self, k: int, r: int) -> list[tuple[str, int, int]]:
        """Call ``k``'s prompt as the reference engine's items ``(tag, id, tokens)``."""
        rec = self.record
        out = [("row", int(i), int(self.inp.tokens[i])) for i in rec.head_rows(k).tolist()]
        out += [("ret", int(i), int(self.inp.tokens[i])) for i in rec.retained_rows(k).tolist()]
        out += [("seg", no, t) for no, t in rec.segments(k)]
        pruned = self.pruned(k, r)
        from workbench.engine.pruning import TRIMMED

        for i, t in zip(rec.tail_rows(k).tolist(), self.tail_tokens(k).tolist(), strict=True):
            state = pruned.get(i, 0)
            tag = "row" if not state else "trimmed" if state == TRIMMED else "pruned"
            out.append((tag, i, self.prune_rule.size(state, t)))
        return out
