"""What one event text offers the modelled summarizer's filler, read once per text.

Every path (``files``) and every sentence of >= 20 characters and 3 words of a text is a
candidate, in a section chosen by what the sentence says (:func:`sentence_section`: errors,
pending work, decisions, else problem solving). :class:`TextCandidates` reads a text once
(its sentences split in one call, each sentence's section found on the lowercase of an
ASCII text and only for the patterns whose words the text holds: :func:`section_finder`),
and :class:`CandidateIndex` keeps every text read, by ``(text, kind, role)`` and, for a
dataset's spans, by their code triple, with all candidates laid end to end in flat arrays
(:mod:`workbench.summarize.filler` gathers a summary's from them). The plain reading is
kept as the tests' oracle (tests/modelled_oracle.py).

>>> rec = TextCandidates("Then we fix src/a/b.py. The retry failed twice today.", "message", "user", 240,
...                      lambda texts: list(range(len(texts))))
>>> rec.lines, [DRAW_ORDER[k] for k in rec.sent_section.tolist()], rec.path_text(0)
(['Then we fix src/a/b.py.', 'The retry failed twice today.'], ['pending', 'errors'], '`src/a/b.py`')
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from workbench.summarize.base import SpanCodes, clip, one_line, sentence_bounds

ERROR_RE = re.compile(r"(?:error|exception)s?\b|\b(?:traceback|failed|failure|fatal|panic|"
                      r"denied|refused|timed out|unauthorized|cannot|can't|couldn't)\b", re.I)
DECISION_RE = re.compile(r"\b(?:decid\w*|decision|agreed|we will|we'll|let's|going to|plan|"
                         r"chose|choose|switch\w*|must|should|instead|prefer|use)\b", re.I)
PENDING_RE = re.compile(r"\b(?:todo|next step|still need|remaining|pending|follow[- ]up|"
                        r"will need|later|then|afterwards|not yet)\b", re.I)
PATH_RE = re.compile(r"(?<![\w/.:@-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]*\w\.[A-Za-z]{1,6}\b")
WORDS_RE = re.compile(r"[A-Za-z]{3,}")

# candidate sections in the order their random draws are made
DRAW_ORDER = ("intent", "facts", "files", "errors", "solving", "pending", "current")
_CODE = {name: i for i, name in enumerate(DRAW_ORDER)}


def sentence_section(piece: str, kind: str, role: str) -> str:
    """The section of a sentence that is neither the intent nor the current work."""
    if ERROR_RE.search(piece):
        return "errors"
    if PENDING_RE.search(piece) and role != "tool":
        return "pending"
    if DECISION_RE.search(piece) and kind in ("message", "reasoning"):
        return "facts"
    return "solving"


# what every match of each pattern contains (lowercase, ASCII): a text holding none of a
# pattern's words has no sentence it matches
_PATTERN_WORDS = (
    (ERROR_RE, ("error", "exception", "traceback", "failed", "failure", "fatal", "panic", "denied", "refused",
                "timed out", "unauthorized", "cannot", "can't", "couldn't")),
    (PENDING_RE, ("todo", "next step", "still need", "remaining", "pending", "follow", "will need", "later",
                  "then", "afterwards", "not yet")),
    (DECISION_RE, ("decid", "decision", "agreed", "we will", "we'll", "let's", "going to", "plan", "chose",
                   "choose", "switch", "must", "should", "instead", "prefer", "use")),
)
# the patterns matched on lowercase text, case-sensitively (the same matches on ASCII text)
_LOWERCASE = tuple(re.compile(pattern.pattern) for pattern, _ in _PATTERN_WORDS)


def section_finder(text: str, kind: str, role: str) -> Callable[[int, int], int]:
    """``f(a, b)``: the code of :func:`sentence_section` of ``text[a:b]``, found cheaper. On
    an ASCII text the patterns are matched on its lowercase without folding case at each
    position (on ASCII the same matches), and a pattern none of whose words occurs anywhere
    in the text is not searched at all; other texts are read by :func:`sentence_section`."""
    if not text.isascii():
        return lambda a, b: _CODE[sentence_section(text[a:b], kind, role)]
    low = text.lower()
    err, pending, decision = (pattern if applies and any(w in low for w in words) else None
                              for pattern, (_, words), applies in
                              zip(_LOWERCASE, _PATTERN_WORDS, (True, role != "tool", kind in ("message", "reasoning")),
                                  strict=True))
    errors, pend, facts, solving = _CODE["errors"], _CODE["pending"], _CODE["facts"], _CODE["solving"]

    def section(a: int, b: int) -> int:
        piece = low[a:b]
        if err is not None and err.search(piece):
            return errors
        if pending is not None and pending.search(piece):
            return pend
        if decision is not None and decision.search(piece):
            return facts
        return solving

    return section


class TextCandidates:
    """What one event text offers: its paths and its sentences (arrays), lines on demand.
    Every candidate's text (a line, or a path in backticks) is numbered by ``numbers``
    (equal texts, equal numbers: the filler skips a repeat by its number)."""

    __slots__ = ("text", "path_start", "path_end", "path_tid", "path_len", "sent_start",
                 "sent_end", "sent_section", "sent_len", "sent_tid", "lines")

    def __init__(self, text: str, kind: str, role: str, max_chars: int,
                 numbers: Callable[[list[str]], list[int]]):
        self.text = text
        ps, pe, paths = [], [], []
        if "/" in text:  # (every path has one)
            for m in PATH_RE.finditer(text):
                ps.append(m.start())
                pe.append(m.end())
                paths.append(f"`{m.group(0)}`")
        ss, se, sc, self.lines = [], [], [], []
        section = section_finder(text, kind, role)
        words = WORDS_RE.findall
        for a, b in sentence_bounds(text, 20):
            piece = text[a:b]
            if len(words(piece)) < 3:
                continue
            ss.append(a)
            se.append(b)
            sc.append(section(a, b))
            self.lines.append(clip(one_line(piece), max_chars))
        self.path_start, self.path_end = np.array(ps, np.int64), np.array(pe, np.int64)
        self.path_tid = np.array(numbers(paths), np.int64)
        self.sent_start, self.sent_end = np.array(ss, np.int64), np.array(se, np.int64)
        self.sent_section = np.array(sc, np.int8)
        self.sent_tid = np.array(numbers(self.lines), np.int64)
        self.path_len = self.path_end - self.path_start + 2  # the path in backticks
        self.sent_len = np.array([len(x) for x in self.lines], np.int64)

    def path_text(self, k: int) -> str:
        return f"`{self.text[self.path_start[k]:self.path_end[k]]}`"




class CandidateIndex:
    """:class:`TextCandidates` by (text, kind, role), built on first use; empties itself
    past ``limit`` texts. Every text's sentences and paths are also laid end to end in
    flat arrays (:class:`_Flat`), so a summary gathers the candidates of thousands of events
    with a few array operations instead of one step per event."""

    def __init__(self, max_chars: int = 240, limit: int = 100_000):
        self.max_chars, self.limit = max_chars, limit
        self._lengths: tuple | None = None  # (a dataset's text table, the length of each text)
        self._clear()

    def _clear(self) -> None:
        self._by_text: dict[tuple[str, str, str], int] = {}
        self.recs: list[TextCandidates] = []
        self.text_ids: dict[str, int] = {}  # a candidate's text -> its number (see TextCandidates)
        self._id_texts: list[str] = []
        cols = ("start", "end", "section", "length", "tid")
        self.sent = _Flat(cols, (np.int64, np.int64, np.int8, np.int64, np.int64))
        self.path = _Flat(cols, (np.int64, np.int64, np.int8, np.int64, np.int64))
        self._coded: tuple | None = None  # (table, kind names, role names): what the keys of _known code
        self._known = (np.zeros(0, np.int64), np.zeros(0, np.int64))  # (sorted code triples, their records)

    def table_lengths(self, codes: SpanCodes) -> np.ndarray:
        """The length of every text of ``codes``' table (kept with a dataset's table)."""
        if not codes.shared:
            return np.fromiter(map(len, codes.table), dtype=np.int64, count=len(codes.table))
        hit = self._lengths
        if hit is None or hit[0] is not codes.table:
            hit = self._lengths = (codes.table, np.fromiter(map(len, codes.table), dtype=np.int64,
                                                             count=len(codes.table)))
        return hit[1]

    def records_of(self, codes: SpanCodes, keys: np.ndarray) -> np.ndarray:
        """The record of every ``(text, kind, role)`` code triple of ``keys`` (distinct, coded
        by :func:`_event_keys`); texts first seen are read here. A dataset's table keeps the
        code triples it met, sorted (looked up at once, no string hashed again); a span's own
        table is looked up by text."""
        coded = (codes.table, codes.kind_names, codes.role_names)
        if codes.shared and (self._coded is None or any(a is not b for a, b in zip(self._coded, coded, strict=True))):
            self._coded, self._known = coded, (np.zeros(0, np.int64), np.zeros(0, np.int64))
        out = np.full(len(keys), -1, dtype=np.int64)
        known_keys, known_recs = self._known if codes.shared else (np.zeros(0, np.int64), None)
        if len(known_keys):
            at = np.minimum(np.searchsorted(known_keys, keys), len(known_keys) - 1)
            hit = known_keys[at] == keys
            out[hit] = known_recs[at[hit]]
        missing = np.flatnonzero(out < 0)
        if len(missing):
            n_kind, n_role = len(codes.kind_names), len(codes.role_names)
            for j, key in zip(missing.tolist(), keys[missing].tolist(), strict=True):
                text, rest = divmod(key, n_kind * n_role)
                kind, role = divmod(rest, n_role)
                out[j] = self._add((codes.table[text], codes.kind_names[kind], codes.role_names[role]))
            if codes.shared:
                grown_keys = np.concatenate([known_keys, keys[missing]])
                order = np.argsort(grown_keys, kind="stable")
                self._known = grown_keys[order], np.concatenate([known_recs, out[missing]])[order]
        return out

    def reserve(self, n: int) -> None:
        """Room for ``n`` more texts: past the limit the index starts afresh (before a summary
        gathers its texts, never while: their ids must stay valid)."""
        if len(self._by_text) + n > self.limit:
            self._clear()

    def _add(self, key: tuple[str, str, str]) -> int:
        hit = self._by_text.get(key)  # (a text met twice in one batch)
        if hit is None:
            rec = TextCandidates(*key, self.max_chars, self._numbers)
            hit = self._by_text[key] = len(self.recs)
            self.recs.append(rec)
            no_section = np.zeros(len(rec.path_start), np.int8)
            self.sent.add(rec.sent_start, rec.sent_end, rec.sent_section, rec.sent_len, rec.sent_tid)
            self.path.add(rec.path_start, rec.path_end, no_section, rec.path_len, rec.path_tid)
        return hit

    def _numbers(self, texts: list[str]) -> list[int]:
        """The number of each text (a text met first is numbered here)."""
        hits = list(map(self.text_ids.get, texts))
        if None in hits:
            ids, names = self.text_ids, self._id_texts
            for j, text in enumerate(texts):
                if hits[j] is None:
                    hits[j] = ids.setdefault(text, len(names))
                    if hits[j] == len(names):
                        names.append(text)
        return hits

    def texts_of(self, tids: list[int]) -> list[str]:
        """The candidate texts numbered ``tids``."""
        return list(map(self._id_texts.__getitem__, tids))


class _Flat:
    """Per-text arrays laid end to end (``offset[t]``, ``count[t]``: where text ``t``'s are),
    grown by doubling."""

    def __init__(self, names: tuple[str, ...], dtypes: tuple):
        self.names = names
        self.cols = {n: np.zeros(1024, d) for n, d in zip(names, dtypes, strict=True)}
        self.size = 0
        self.offset = np.zeros(1024, np.int64)
        self.count = np.zeros(1024, np.int64)
        self.texts = 0

    def add(self, *arrays: np.ndarray) -> None:
        n = len(arrays[0])
        if self.texts == len(self.offset):
            self.offset = np.concatenate([self.offset, np.zeros_like(self.offset)])
            self.count = np.concatenate([self.count, np.zeros_like(self.count)])
        if self.size + n > len(self.cols[self.names[0]]):
            grow = max(self.size + n, 2 * len(self.cols[self.names[0]]))
            for name, col in self.cols.items():
                bigger = np.zeros(grow, col.dtype)
                bigger[:self.size] = col[:self.size]
                self.cols[name] = bigger
        for name, arr in zip(self.names, arrays, strict=True):
            self.cols[name][self.size:self.size + n] = arr
        self.offset[self.texts], self.count[self.texts] = self.size, n
        self.size += n
        self.texts += 1

    def gather(self, tids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(position, event, first)`` of every candidate of texts ``tids`` (one text per
        event, in event order): the flat position, the event's index, and each event's first
        slot in the gathered order."""
        counts = self.count[tids]
        event = np.repeat(np.arange(len(tids)), counts)
        first = np.cumsum(counts) - counts
        local = np.arange(int(counts.sum())) - first[event]
        return self.offset[tids][event] + local, event, first


_INDEXES: dict[int, CandidateIndex] = {}


def candidate_index(max_chars: int) -> CandidateIndex:
    """The process's index for items of at most ``max_chars`` characters (shared by every
    summarizer instance, so the runs of a sweep read each text once)."""
    hit = _INDEXES.get(max_chars)
    if hit is None:
        hit = _INDEXES[max_chars] = CandidateIndex(max_chars)
    return hit
