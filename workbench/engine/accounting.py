"""Provider-token accounting: replay a log in the tokens its provider billed.

A log holds what the agent saw, not everything the harness sent: Claude Code's system
prompt and tool schemas (tens of thousands of tokens) are in no record, and the provider's
tokenizer counts the same text differently from cl100k. The import fits, per continuity,
``recorded ≈ a + b·counted`` (:mod:`workbench.sources.calibrate`); harness profiles
(:mod:`workbench.sources.profiles`) pool those lines per harness × model family. With
``provider`` accounting the replay uses such a line:

* the unseen overhead ``a`` is a real prefix of every call's prompt (``prefix_tokens``:
  cached, read and written like the rest, never cut);
* each event costs ``b ×`` its counted tokens, rounded per event (the kernel stays integer);
* **anchored to the recorded usage**: where a request's prompt was recorded, the events
  appended since the previous recorded request are rescaled (largest remainder, in
  proportion to ``b ×`` counted) so that, as long as the replayed context is the recorded
  one, the prompt *is* the recorded prompt, exactly, and the provider's recorded split of
  it (cache read, cache write: its own misses included) is what the call reads and writes
  (``ReplayInput.billed_usage``; once a policy changes the context the cache model bills). A recorded prompt smaller than the
  one before it in the same stretch (Claude drops earlier turns' thinking blocks) is
  averaged with its neighbours (:func:`monotone`): no event gets negative tokens. The prefix
  is capped by what the recorded prompts leave room for (a fitted intercept can exceed the
  first prompt). After a recorded compaction boundary the first request anchors the log's
  summary and the events after it. Outputs are the recorded output tokens where recorded.

A harness decides to compact on the last response's reported usage plus an estimate of what
was appended since; anchored, the replayed context before a recorded request *is* that request's
recorded prompt, so a tokens trigger sees what the harness saw up to the estimate's error (one
request at most on the bundled Claude Code 2.0.76 session: 36 against the recorded 37).

``counted`` accounting leaves the counted tokens as they are (no prefix): what synthetic
continuities use unless a harness profile is asked for (``accounting="provider"``: the
profile of the policy's harness gives the prefix and the factor).

>>> import numpy as np
>>> from workbench.engine.accounting import spread
>>> spread(np.array([10, 30, 0, 60]), 50).tolist()
[5, 15, 0, 30]
>>> spread(np.array([1, 1, 1]), 2).tolist()
[1, 1, 0]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from workbench.engine.prepare import recorded_summary_sizes

ACCOUNTINGS = ("auto", "provider", "counted")


@dataclass(frozen=True)
class Line:
    """How counted tokens become provider tokens for one continuity."""

    prefix: float  # a: tokens the harness sends that the log does not hold
    factor: float  # b: provider tokens per counted token
    source: str  # "counted", "own fit", or "profile HARNESS/FAMILY"
    anchored: bool = True  # rescale to the recorded prompts where the log has them
    # what the log does not show, for a line that is not anchored (workbench.tokens.unlogged):
    per_request: float = 0.0  # framing tokens each request adds (on its first output row)
    attachments: tuple = ()  # ((seq, counted tokens), ...): files a user message attached
    drop_thinking: bool = False  # earlier turns' thinking is not sent (Anthropic)
    restored: float = 0.0  # tokens a recorded summary brings along (files re-attached after it)
    # ((seq of a model run's first output row, served without tool search), ...) of a session
    # that switched model, and the prefix such a model carries beyond the others
    switches: tuple = ()
    switch_tokens: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"prefix_tokens": int(round(self.prefix)), "factor": round(float(self.factor), 4),
                "source": self.source, "anchored": self.anchored}


COUNTED = Line(0.0, 1.0, "counted", anchored=False)
# an imported log with usage but no fitted line or profile: counted tokens, rescaled to
# the recorded prompts where it has them
RECORDED_ONLY = Line(0.0, 1.0, "recorded usage only")


def spread(weights: np.ndarray, total: int) -> np.ndarray:
    """``total`` split over ``weights`` in proportion, integers summing to ``total``
    (largest remainder; ties to the earlier row). All-zero weights: evenly."""
    w = np.asarray(weights, dtype=np.float64)
    n = w.size
    if n == 0:
        return np.zeros(0, np.int64)
    if w.sum() <= 0:
        w = np.ones(n)
    exact = w * (total / w.sum())
    out = np.floor(exact).astype(np.int64)
    short = int(total - out.sum())
    if short > 0:
        order = np.argsort(-(exact - out), kind="stable")
        out[order[:short]] += 1
    return out


@dataclass(frozen=True)
class Recorded:
    """What a continuity's log recorded per request of its :class:`ReplayInput`
    (-1 where nothing): the prompt (input + cache read + cache write), the output, and the
    provider's split of the prompt into cache read and cache write."""

    prompt: np.ndarray  # int64 [R]
    output: np.ndarray  # int64 [R]
    cache_read: np.ndarray | None = None  # int64 [R]
    cache_write: np.ndarray | None = None  # int64 [R]

    def __post_init__(self):
        for name in ("cache_read", "cache_write"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.full(self.prompt.size, -1, np.int64))

    def input_fields(self) -> dict[str, np.ndarray]:
        """The :class:`ReplayInput` fields that carry it."""
        return {"recorded_prompt": self.prompt, "recorded_output": self.output,
                "recorded_cache": np.stack([self.cache_read, self.cache_write])}

    @classmethod
    def of(cls, inp) -> Recorded | None:
        """What :meth:`input_fields` put on ``inp`` (None: nothing recorded)."""
        if inp.recorded_prompt is None:
            return None
        cache = inp.recorded_cache if inp.recorded_cache is not None else (None, None)
        return cls(inp.recorded_prompt, inp.recorded_output, *cache)

    @classmethod
    def from_events(cls, events, inp) -> Recorded:
        """From one continuity's events frame (sorted by seq, as ``prepare_continuity``
        got it): a request's usage is the first usage recorded for it (on its output or a
        usage record such as Codex's token_count); background calls are left out."""
        from workbench.continuity.enums import Origin

        n_req = inp.n_requests
        prompt, output, read, write = (np.full(n_req, -1, np.int64) for _ in range(4))
        if n_req == 0 or "usage_input" not in events.columns:
            return cls(prompt, output, read, write)
        ui = events["usage_input"].to_numpy()
        rows = np.flatnonzero(ui >= 0)
        if rows.size == 0:
            return cls(prompt, output, read, write)
        raw_read = events["usage_cache_read"].to_numpy()[rows]  # -1: the log does not say
        raw_write = events["usage_cache_write"].to_numpy()[rows]
        cr, cw = np.maximum(raw_read, 0), np.maximum(raw_write, 0)
        out = events["usage_output"].to_numpy()[rows]
        origin = events["origin"].to_numpy()[rows] if "origin" in events.columns else np.zeros(rows.size)
        request = events["request"].to_numpy()[rows].astype(np.int64)
        # the ReplayInput's request index of each recorded continuity request
        index = {int(s): i for i, s in enumerate(inp.req_source.tolist())}
        for k, row in enumerate(rows.tolist()):
            i = index.get(int(request[k]))
            # requests are numbered per chain: a side chain's own usage inside its parent
            # maps to no request of the replay
            if i is None or prompt[i] >= 0 or origin[k] == int(Origin.BACKGROUND):
                continue
            prompt[i] = int(ui[row] + cr[k] + cw[k])
            output[i] = int(out[k]) if out[k] >= 0 else -1
            read[i], write[i] = int(raw_read[k]), int(raw_write[k])
        return cls(prompt, output, read, write)


def provider_view(inp, line: Line, recorded: Recorded | None = None):
    """``inp`` (a :class:`~workbench.engine.prepare.ReplayInput` in counted tokens) in
    provider tokens under ``line``; the counted input itself for :data:`COUNTED`."""
    if line is COUNTED or (line.prefix == 0 and line.factor == 1 and not line.anchored):
        return inp
    counted = np.asarray(inp.tokens, np.int64)
    tokens = np.rint(counted * line.factor).astype(np.int64)
    prefix = max(0, int(round(line.prefix)))
    out_tok = np.rint(np.asarray(inp.req_output_tokens) * line.factor).astype(np.int64)
    if line.anchored and recorded is not None:
        prefix = min(prefix, _room(inp, tokens, recorded.prompt))
        sent = _anchor(inp, tokens, prefix, recorded.prompt)
        has = recorded.output >= 0
        out_tok[has] = recorded.output[has]
        billed = np.stack([sent, recorded.cache_read, recorded.cache_write])
    else:
        billed = None
        tokens = _unlogged(inp, line, tokens)
    rec_sum = recorded_summary_sizes(tokens, inp.visible, inp.is_summary, inp.is_boundary)
    return replace(inp, tokens=tokens, prefix_tokens=prefix, req_output_tokens=out_tok,
                   recorded_summary_tokens=rec_sum, billed_usage=billed)


def _unlogged(inp, line: Line, tokens: np.ndarray) -> np.ndarray:
    """``tokens`` with what the log does not show added (an unanchored line's estimate:
    :mod:`workbench.tokens.unlogged`): attached files at their message, the framing of each
    request on its first output row, the files restored after a compaction on each recorded
    summary, and thinking a later user turn drops at 0 (counted up to its turn's end in the
    kernel's static view, nothing after)."""
    if not (line.per_request or line.attachments or line.drop_thinking or line.restored
            or (line.switches and line.switch_tokens)):
        return tokens
    from workbench.tokens.unlogged import dropped_thinking

    tokens = tokens.copy()
    if line.drop_thinking:
        tokens[dropped_thinking(inp.kind, inp.is_user_message) & inp.visible] = 0
    if line.attachments:
        rows = {int(s): i for i, s in enumerate(np.asarray(inp.seq).tolist())}
        for seq, counted in line.attachments:
            if int(seq) in rows:
                tokens[rows[int(seq)]] += int(round(counted * line.factor))
    if line.restored:
        tokens[np.asarray(inp.is_summary, bool)] += int(round(line.restored))
    if line.switches and line.switch_tokens:
        _switched_prefix(inp, line, tokens)
    if line.per_request:
        first = np.asarray(inp.req_first_row, np.int64)
        first = first[(first >= 0) & (first < tokens.size)]
        np.add.at(tokens, first, int(round(line.per_request)))
    return tokens


def _switched_prefix(inp, line: Line, tokens: np.ndarray) -> None:
    """The prefix a model without tool search carries (:func:`workbench.tokens.unlogged.
    tool_search_offset`), in place, on the last visible row a request sends: the first request
    of a run such a model serves, and its first request after each recorded boundary inside
    the run; taken back (from that row on, never below 0) where a model with tool search
    takes over with no boundary in between (a boundary dropped the rows that held it)."""
    extra = int(round(line.switch_tokens))
    rows = {int(s): i for i, s in enumerate(np.asarray(inp.seq).tolist())}
    shown = np.flatnonzero(np.asarray(inp.visible, bool) | np.asarray(inp.is_summary, bool))
    if not shown.size:
        return
    firsts = np.sort(np.asarray(inp.req_first_row, np.int64))
    firsts = firsts[(firsts >= 0) & (firsts < tokens.size)]
    runs = sorted((rows[int(s)], bool(no)) for s, no in line.switches if int(s) in rows)
    boundaries = np.flatnonzero(inp.is_boundary)

    def sent_by(first_out: int) -> int:  # the last visible row before a request's first output
        return int(shown[max(int(np.searchsorted(shown, first_out)) - 1, 0)])

    for n, (start, no) in enumerate(runs):
        end = runs[n + 1][0] if n + 1 < len(runs) else tokens.size
        if no:
            at = [start] + [int(firsts[np.searchsorted(firsts, b)]) for b in boundaries[(boundaries > start)
                                                                                         & (boundaries < end)]
                            if np.searchsorted(firsts, b) < firsts.size]
            for first_out in at:
                if first_out < end:
                    tokens[sent_by(first_out)] += extra
        elif n and runs[n - 1][1] and not ((boundaries > runs[n - 1][0]) & (boundaries < start)).any():
            left = extra
            for i in range(sent_by(start), tokens.size):
                take = min(left, int(tokens[i]))
                tokens[i] -= take
                left -= take
                if not left:
                    break


def _stretches(inp, prompt: np.ndarray):
    """Per recorded request: (its first output row, the first row of its stretch: just
    after the latest recorded compaction boundary before it, else 0)."""
    boundaries = np.flatnonzero(inp.is_boundary)
    anchored = np.flatnonzero(prompt >= 0)
    fo = np.asarray(inp.req_first_row)[anchored].astype(np.int64)
    k = np.searchsorted(boundaries, fo, side="left")
    start = np.where(k > 0, boundaries[np.maximum(k - 1, 0)] if boundaries.size else 0, 0)
    return anchored, fo, k, start


def _room(inp, tokens: np.ndarray, prompt: np.ndarray) -> int:
    """The largest prefix the recorded prompts leave room for: no recorded prompt may be
    smaller than the prefix plus the events it holds (in the line's tokens)."""
    anchored, fo, _k, start = _stretches(inp, prompt)
    if anchored.size == 0:
        return 1 << 62
    shown = (inp.visible | inp.is_summary).astype(np.int64)
    cum = np.concatenate([[0], np.cumsum(tokens * shown)])
    held = cum[fo] - cum[start]
    return max(0, int((prompt[anchored] - held).min()))


def monotone(values: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence closest to ``values`` in least squares (pool adjacent
    violators): a recorded prompt below the one before it is averaged with its
    neighbours instead of giving events negative tokens.

    >>> monotone(np.array([5.0, 3.0, 4.0, 9.0])).tolist()
    [4.0, 4.0, 4.0, 9.0]
    """
    blocks: list[list[float]] = []  # [mean, count]
    for v in np.asarray(values, dtype=np.float64).tolist():
        blocks.append([v, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    return np.concatenate([np.full(int(c), m) for m, c in blocks]) if blocks else np.zeros(0)


def _anchor(inp, tokens: np.ndarray, prefix: int, prompt: np.ndarray) -> np.ndarray:
    """Rescale ``tokens`` in place so that the context before each recorded request (in a
    stretch between recorded compaction boundaries) sums to its recorded prompt (made
    non-decreasing within the stretch first: :func:`monotone`). Returns per request the
    prompt an unchanged replay sends there (the prefix included; -1: not recorded)."""
    shown = inp.visible | inp.is_summary
    sent = np.full(prompt.size, -1, np.int64)
    anchored, fo, stretch, starts = _stretches(inp, prompt)
    for k in np.unique(stretch).tolist():
        idx = np.flatnonzero(stretch == k)
        start = int(starts[idx[0]])
        targets = np.maximum(np.rint(monotone(prompt[anchored[idx]] - prefix)), 0).astype(np.int64)
        reached, carried = start, 0  # context rows of the stretch before ``reached`` sum to ``carried``
        sent[anchored[idx]] = targets + prefix
        for j, target in zip(fo[idx].tolist(), targets.tolist(), strict=True):
            rows = np.flatnonzero(shown[reached:j]) + reached
            if rows.size == 0:
                continue  # nothing to carry the difference: the next recorded request takes it
            tokens[rows] = spread(tokens[rows], target - carried)
            carried, reached = target, j
    return sent


class Accountant:
    """Chooses each continuity's line and gives the replay its provider-token view.

    ``mode``: ``auto`` (provider for imported logs, counted for generated ones),
    ``provider`` or ``counted``. ``profiles``: a profiles document
    (:func:`workbench.sources.profiles.load_profiles`; the packaged one by default).
    ``line_source``: ``own`` (a log's own fitted line first, its harness profile when it
    has none) or ``profile`` (always the profile: how a log the profiles never saw would
    be replayed). ``overrides``: continuity id -> the line it must use (leave-one-log-out
    audits)."""

    def __init__(self, mode: str = "auto", profiles: dict[str, Any] | None = None,
                 line_source: str = "own", tokenizer: str = "cl100k",
                 overrides: dict[str, Line] | None = None):
        from workbench.errors import WorkbenchError

        if mode not in ACCOUNTINGS:
            raise WorkbenchError(f"unknown accounting {mode!r}; choose one of {', '.join(ACCOUNTINGS)}")
        if line_source not in ("own", "profile"):
            raise WorkbenchError(f"unknown line source {line_source!r}; choose own or profile")
        self.mode, self.line_source, self.tokenizer = mode, line_source, tokenizer
        self._profiles = profiles
        self.overrides = dict(overrides or {})
        self._views: dict[tuple, Any] = {}
        self.notes: dict[str, list[str]] = {}

    @property
    def profiles(self) -> dict[str, Any]:
        if self._profiles is None:
            from workbench.sources.profiles import load_profiles

            self._profiles = load_profiles()
        return self._profiles

    def calibration_digest(self) -> str:
        """12 hex of the profiles document in use (it changes the tokens of a replay)."""
        import hashlib

        import orjson

        doc = {k: v for k, v in self.profiles.items() if k != "_path"}
        return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]

    def describe(self) -> dict[str, Any]:
        return {"mode": self.mode, "line_source": self.line_source,
                "profiles": self.profiles.get("_path"), "profiles_digest": self.calibration_digest()}

    def line(self, inp, policy) -> Line:
        """The line of ``inp`` replayed under ``policy``."""
        from workbench.engine.presets import log_format_of
        from workbench.sources.profiles import model_family

        imported = inp.harness is not None
        if self.mode == "counted" or (self.mode == "auto" and not imported):
            return COUNTED
        if inp.continuity_id in self.overrides:
            return self.overrides[inp.continuity_id]
        if imported and self.line_source == "own" and inp.own_line is not None:
            a, b = inp.own_line
            return Line(a, b, "own fit")
        harness = inp.harness if imported else log_format_of(policy)
        found = self._profile(harness, model_family(inp.model))
        if found is None:
            if imported and inp.recorded_prompt is not None and (inp.recorded_prompt >= 0).any():
                # no line, but the log's own usage: the recorded prompts anchor the events
                return RECORDED_ONLY
            what = (f"the {inp.harness} log" if imported else
                    f"{policy.name} (harness {harness or 'unknown'})")
            self.notes.setdefault(f"no calibration profile for {what}: replayed in counted tokens",
                                  []).append(f"{policy.name}/{inp.continuity_id}")
            return COUNTED
        name, prof = found
        return Line(float(prof["prefix_tokens"]), float(prof["factor"]), f"profile {name}",
                    anchored=imported)

    def _profile(self, harness: str | None, family: str):
        from workbench.sources.profiles import profile_for

        if harness is None or self.profiles.get("tokenizer", "cl100k") != self.tokenizer:
            return None  # a factor is per counting tokenizer
        return profile_for(self.profiles, harness, family)

    def forget(self, inp) -> None:
        """Drop the views of ``inp`` (its last replay is done: its arrays can be freed)."""
        for key in [k for k in self._views if k[0] == id(inp)]:
            del self._views[key]

    def view(self, inp, policy):
        """``(input in this policy's tokens, its line)``; views are shared between policies
        with the same line (the kernel builds a continuity's positions once per view)."""
        line = self.line(inp, policy)
        key = (id(inp), line)
        if key not in self._views:
            self._views[key] = (provider_view(inp, line, Recorded.of(inp)), inp)  # keep inp alive with its id
        return self._views[key][0], line
