"""Filler for the modelled summarizer: span sentences and paths that touch no label.

A summary's filler is drawn from its span's own text: every path (``files``) and every
sentence of >= 20 characters and 3 words, in a section chosen by what it says (errors,
pending work, decisions, else problem solving; the first user request is the *intent*,
the last assistant reply the *current work*), minus anything overlapping a label or any
occurrence of a label's text. Per section at most ``CANDIDATES_MAX`` candidates are
sampled, shuffled, and taken round-robin across sections until the room is used.

What a text offers does not depend on the summary it ends up in, so each distinct event
text is read once (:class:`~workbench.summarize.filler_text.CandidateIndex`: its paths and
sentences as arrays, with their section; a dataset's span is read through its codes) and
a summary only concatenates the arrays of the events it reads, drops what overlaps a label
there (rare), and materialises the few candidates it samples. Every
candidate text has a number (equal texts, equal numbers), so the round robin runs over
numbers, compiled (:mod:`workbench.summarize.take_nb`), and a summary's filler comes out as
columns (:func:`fill_columns`), not one object per line.
:func:`reference_fill` is the same selection written plainly (every summary rescans its
events); the tests hold :func:`fill` to it, item for item.

>>> import numpy as np
>>> from workbench.summarize.base import SpanEvent
>>> ev = (SpanEvent(1, "message", "user", "Please fix the flaky retry loop in src/net/retry.py today."),
...       SpanEvent(2, "tool_result", "tool", "Traceback: the connection was refused by the server."),)
>>> items = fill(np.random.default_rng(0), ev, {}, [], 2000, set(), _TITLES)
>>> [(it.section, it.text) for it in items]  # doctest: +NORMALIZE_WHITESPACE
[('intent', 'Please fix the flaky retry loop in src/net/retry.py today.'),
 ('errors', 'Traceback: the connection was refused by the server.'), ('files', '`src/net/retry.py`')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.summarize.base import SpanCodes, SpanEvent, clip, iter_sentences, one_line, span_codes, span_columns
from workbench.summarize.filler_text import (
    _CODE,
    DRAW_ORDER,
    PATH_RE,
    WORDS_RE,
    CandidateIndex,
    candidate_index,
    sentence_section,
)

INTENT_MAX = 3
CURRENT_MAX = 3
CANDIDATES_MAX = 400   # per section, sampled first (spans can hold thousands of sentences)
SCAN_FACTOR = 20       # filler reads at most ~20x the summary's room in span text ...
SCAN_MIN_CHARS = 200_000  # ... but never less than this
SHORT_NEEDLE = 8       # label strings shorter than this only count as whole tokens
FEW_NEEDLES = 16       # up to this many label strings are searched one by one, not by automaton
_SURROGATE = re.compile("[\ud800-\udfff]")  # (the automaton takes valid UTF-8 only)

# the round-robin order of the sections (their draws: filler_text.DRAW_ORDER)
FILL_ORDER = ("intent", "current", "facts", "errors", "files", "pending", "solving")
_TITLES = {"intent": "Primary request and intent", "facts": "Key facts and decisions",
           "files": "Files and code", "errors": "Errors and fixes", "solving": "Problem solving",
           "pending": "Pending tasks", "current": "Current work"}


@dataclass
class Item:
    section: str
    key: tuple          # (seq, start) for source order inside a section
    text: str


class Guard:
    """Finds every occurrence of any label string in a text (so filler never carries one)."""

    def __init__(self, needles: Iterable[str]):
        self.needles = sorted({n.strip() for n in needles if n and n.strip()}, key=len,
                              reverse=True)

    def regions(self, text: str) -> list[tuple[int, int]]:
        out = []
        for n in self.needles:
            i = text.find(n)
            while i >= 0:
                j = i + len(n)
                if whole_token(text, n, i, j):
                    out.append((i, j))
                i = text.find(n, i + 1)
        return out


def whole_token(text: str, needle: str, i: int, j: int) -> bool:
    """A long needle counts anywhere; a short one only where it is not part of a longer
    word (a digit or letter, ``_`` or ``.`` before it; a word character after it)."""
    return len(needle) >= SHORT_NEEDLE or (
        (not needle[0].isalnum() or i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_."))
        and (not needle[-1].isalnum() or j == len(text) or not (text[j].isalnum() or text[j] == "_")))


def _ends(seqs: list[int], kinds: list[str], roles: list[str],
          texts: list[str]) -> tuple[int | None, int | None]:
    """The seqs of the span's first user request and last assistant reply (None: there is
    none), read from its columns (:func:`~workbench.summarize.base.span_columns`)."""
    def first(rows, role: str) -> int | None:
        return next((seqs[i] for i in rows
                     if roles[i] == role and kinds[i] == "message" and texts[i].strip()), None)

    return first(range(len(seqs)), "user"), first(range(len(seqs) - 1, -1, -1), "assistant")


def _take(queues: dict[str, list], room: int, present: set[str], titles: dict,
          text_of, item_of) -> list[Item]:
    """Round-robin over the sections: each turn takes the next candidate of a section that
    fits the room (skipping repeats of a text already taken)."""
    out: list[Item] = []
    seen_text: set[str] = set()
    heads = {s: 0 for s in queues}
    active = [s for s in FILL_ORDER if queues[s]]
    while active and room > 0:
        nxt = []
        for sec_name in active:
            q = queues[sec_name]
            while heads[sec_name] < len(q):
                ref = q[heads[sec_name]]
                heads[sec_name] += 1
                text = text_of(sec_name, ref)
                cost = len(text) + 3
                if sec_name not in present:  # the section's heading and blank line
                    cost += len(titles[sec_name]) + 7
                if text in seen_text:
                    continue
                if cost <= room:
                    out.append(item_of(sec_name, ref))
                    present.add(sec_name)
                    seen_text.add(text)
                    room -= cost
                    break
            if heads[sec_name] < len(q):
                nxt.append(sec_name)
        active = nxt
    return out


def _draw(rng, cands: dict) -> dict:
    """Per section: at most ``CANDIDATES_MAX`` sampled (source order kept), then shuffled.
    Candidates are a list or an array; the draws depend on their numbers only."""
    cands["intent"] = cands["intent"][:INTENT_MAX]
    cands["current"] = cands["current"][-CURRENT_MAX:]
    queues: dict = {}
    for sec_name in DRAW_ORDER:
        lst = cands[sec_name]
        if sec_name in ("intent", "current"):
            queues[sec_name] = lst
            continue
        if len(lst) > CANDIDATES_MAX:
            lst = _pick(lst, np.sort(rng.choice(len(lst), size=CANDIDATES_MAX, replace=False)))
        queues[sec_name] = _pick(lst, rng.permutation(len(lst))) if len(lst) else lst
    return queues


def _pick(lst, idx: np.ndarray):
    return lst[idx] if isinstance(lst, np.ndarray) else [lst[i] for i in idx.tolist()]


# --------------------------------------------------------------------------- the reference


def reference_fill(rng, events: Sequence[SpanEvent], spans_by_seq: dict, needles: Iterable[str],
                   room: int, present: set[str], titles: dict, max_item_chars: int = 240) -> list[Item]:
    """The filler, plainly: every event of the subset rescanned for every summary."""
    if room <= 0:
        return []
    guard = Guard(needles)
    first_user, last_assistant = _ends(*span_columns(events))
    cands: dict[str, list[Item]] = {k: [] for k in DRAW_ORDER}
    seen_paths: set[str] = set()
    for ev in scan_subset(rng, events, room, (first_user, last_assistant)):
        spans = [(x, y) for x, y, _ in spans_by_seq.get(ev.seq, ())] + guard.regions(ev.text)
        for m in PATH_RE.finditer(ev.text):
            p = m.group(0)
            if p not in seen_paths and not any(x < m.end() and m.start() < y for x, y in spans):
                seen_paths.add(p)
                cands["files"].append(Item("files", (ev.seq, m.start()), f"`{p}`"))
        for a, b in iter_sentences(ev.text, min_chars=20):
            if any(x < b and a < y for x, y in spans):
                continue
            piece = ev.text[a:b]
            if len(WORDS_RE.findall(piece)) < 3:
                continue
            line = clip(one_line(piece), max_item_chars)
            sec = ("intent" if ev.seq == first_user else "current" if ev.seq == last_assistant
                   else sentence_section(piece, ev.kind, ev.role))
            cands[sec].append(Item(sec, (ev.seq, a), line))
    queues = _draw(rng, cands)
    return _take(queues, room, present, titles, lambda _s, it: it.text, lambda _s, it: it)


# --------------------------------------------------------------------------- arrays


def _overlaps(starts: np.ndarray, ends: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    hit = np.zeros(len(starts), dtype=bool)
    for x, y in spans:
        hit |= (x < ends) & (starts < y)
    return hit


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # (only a lone surrogate cannot be encoded)
        return True
    return False


def _guard_regions(texts: list[str], needles: Iterable[str]) -> dict[str, list[tuple[int, int]]]:
    """Label-string occurrences per distinct text of ``texts`` (texts without one are left
    out): :func:`_guard_regions_at` by text."""
    texts = list(dict.fromkeys(texts))
    return {texts[t]: regions for t, regions in _guard_regions_at(texts, needles).items()}


def _guard_regions_at(texts: list[str], needles: Iterable[str]) -> dict[int, list[tuple[int, int]]]:
    """Label-string occurrences per text of ``texts`` (distinct), by its place in the list
    (texts without one are left out), found in the texts joined by NUL: needle by needle (a
    fast substring search each) for a few needles, else in one pass of an automaton over
    them all."""
    guard = Guard(needles)
    if not guard.needles:
        return {}
    blob = "\x00".join(texts)
    if any("\x00" in n for n in guard.needles) or _has_surrogate(blob):
        found = {t: guard.regions(text) for t, text in enumerate(texts)}  # the plain search
        return {t: r for t, r in found.items() if r}
    if len(guard.needles) <= FEW_NEEDLES:  # (building an automaton costs more than a few scans)
        found = []
        for k, needle in enumerate(guard.needles):
            i = blob.find(needle)
            while i >= 0:
                found.append((k, i, i + len(needle)))
                i = blob.find(needle, i + 1)
    else:
        from ahocorasick_rs import AhoCorasick

        found = AhoCorasick(guard.needles).find_matches_as_indexes(blob, overlapping=True)
    if not found:
        return {}
    hits = np.array(found, dtype=np.int64).reshape(-1, 3)
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1
    starts = np.cumsum(sizes) - sizes
    t_of = np.searchsorted(starts, hits[:, 1], side="right") - 1
    out: dict[int, list[tuple[int, int]]] = {}
    for (k, i, j), t, base in zip(hits.tolist(), t_of.tolist(), starts[t_of].tolist(), strict=True):
        if whole_token(texts[t], guard.needles[k], i - base, j - base):
            out.setdefault(t, []).append((i - base, j - base))
    return out


def _subset_rows(rng, seqs: list[int], texts: list[str], room: int, keep: tuple) -> np.ndarray | None:
    """:func:`scan_subset` as the sorted indexes of the events it keeps (None: all of them),
    from the span's seq and text columns."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return _subset_of_lengths(rng, np.asarray(seqs, dtype=np.int64), lengths, room, keep)


def _subset_of_lengths(rng, seqs: np.ndarray, lengths: np.ndarray, room: int, keep: tuple) -> np.ndarray | None:
    """:func:`_subset_rows` from the seq and text length of each event (arrays)."""
    limit = max(SCAN_MIN_CHARS, SCAN_FACTOR * room)
    if int(lengths.sum()) <= limit:
        return None
    order = rng.permutation(len(lengths))
    taken_before = np.cumsum(lengths[order])[:-1]
    rows = np.zeros(len(lengths), dtype=bool)
    rows[order[:1 + int(np.searchsorted(taken_before, limit, side="left"))]] = True
    rows |= _member(seqs, [k for k in keep if k is not None])
    return np.flatnonzero(rows)


def scan_subset(rng, events: Sequence[SpanEvent], room: int, keep: tuple) -> list[SpanEvent]:
    """The events filler is drawn from: all of them, or for a span with far more text
    than the summary can hold, a random subset with ~``SCAN_FACTOR`` x the room in text
    (plus the first request and the last reply), so the cost follows the summary size,
    not the span size."""
    seqs, _, _, texts = span_columns(events)
    rows = _subset_rows(rng, seqs, texts, room, keep)
    return list(events) if rows is None else [events[i] for i in rows.tolist()]


@dataclass
class FillerColumns:
    """The filler a summary takes, in the order taken: section, source position, text."""

    section: list[str]
    seq: list[int]
    start: list[int]
    text: list[str]

    def items(self) -> list[Item]:
        return [Item(s, (q, a), t) for s, q, a, t in zip(self.section, self.seq, self.start, self.text,
                                                          strict=True)]


_NO_FILLER = FillerColumns([], [], [], [])


def label_guards(labels) -> tuple[dict[int, list[tuple[int, int, str]]], list[str]]:
    """What the filler keeps clear of, from a span's labels: each event's label spans
    (``seq -> [(start, end, label id)]``) and every label's surface and value (``needles``)."""
    spans_by_seq: dict[int, list[tuple[int, int, str]]] = {}
    for lb in labels:
        spans_by_seq.setdefault(lb.seq, []).append((lb.start, lb.end, lb.label_id))
    return spans_by_seq, [s for lb in labels for s in (lb.surface, lb.value)]


def fill(rng, events: Sequence[SpanEvent], spans_by_seq: dict, needles: Iterable[str], room: int,
         present: set[str], titles: dict, max_item_chars: int = 240,
         index: CandidateIndex | None = None) -> list[Item]:
    """:func:`reference_fill`'s selection from precomputed per-text candidates."""
    return fill_columns(rng, events, spans_by_seq, needles, room, present, titles, max_item_chars,
                        index).items()


def fill_columns(rng, events: Sequence[SpanEvent], spans_by_seq: dict, needles: Iterable[str], room: int,
                 present: set[str], titles: dict, max_item_chars: int = 240,
                 index: CandidateIndex | None = None) -> FillerColumns:
    """:func:`fill` as columns (no object per item), from the span's codes: a dataset's span
    reads no string but those of the texts it meets first and of the items it takes."""
    if room <= 0:
        return _NO_FILLER
    index = index or candidate_index(max_item_chars)
    codes = span_codes(events)
    first_user, last_assistant = _coded_ends(codes)
    rows = _subset_of_lengths(rng, codes.seqs, index.table_lengths(codes)[codes.text], room,
                              (first_user, last_assistant))
    seqs, text, kind, role = ((codes.seqs, codes.text, codes.kind, codes.role) if rows is None else
                              (codes.seqs[rows], codes.text[rows], codes.kind[rows], codes.role[rows]))
    # the distinct (text, kind, role) of the subset: each is one record of the index
    keys, inverse = np.unique(_event_keys(codes, text, kind, role), return_inverse=True)
    key_texts = keys // (len(codes.kind_names) * len(codes.role_names))
    text_codes = key_texts[np.r_[True, key_texts[1:] != key_texts[:-1]]] if len(keys) else key_texts
    guarded = _guard_regions_at(_table_texts(codes, text_codes), needles)
    regions_of = {int(text_codes[t]): regions for t, regions in guarded.items()}
    index.reserve(len(keys))
    tids = index.records_of(codes, keys)[inverse.reshape(-1)]
    # every candidate of the subset in source order, gathered at once; then, only in events that
    # hold a label or a label's text, those overlapping one are left out
    s_pos, s_ev, s_first = index.sent.gather(tids)
    p_pos, p_ev, p_first = index.path.gather(tids)
    s_sec = index.sent.cols["section"][s_pos]
    s_keep = np.ones(len(s_pos), dtype=bool)
    p_keep = np.ones(len(p_pos), dtype=bool)
    ends = {first_user: _CODE["intent"], last_assistant: _CODE["current"]}
    marked = _member(seqs, [s for s in (*spans_by_seq, *ends) if s is not None])
    if regions_of:
        marked |= _member(text, list(regions_of))
    for j in np.flatnonzero(marked).tolist():
        seq, rec = int(seqs[j]), index.recs[tids[j]]
        spans = spans_by_seq.get(seq)
        regions = regions_of.get(int(text[j]))
        if spans or regions:
            spans = [(x, y) for x, y, _ in spans or ()] + (regions or [])
            a = s_first[j]
            s_keep[a:a + len(rec.sent_start)] = ~_overlaps(rec.sent_start, rec.sent_end, spans)
            a = p_first[j]
            p_keep[a:a + len(rec.path_start)] = ~_overlaps(rec.path_start, rec.path_end, spans)
        if seq in ends:  # the first request / the last reply: all of it is intent / current
            a = s_first[j]
            s_sec[a:a + len(rec.sent_start)] = ends[seq]
    s_pos, s_ev, s_sec = s_pos[s_keep], s_ev[s_keep], s_sec[s_keep]
    p_pos, p_ev = p_pos[p_keep], p_ev[p_keep]
    p_tid = index.path.cols["tid"][p_pos]
    cands: dict[str, np.ndarray] = {}
    for name in DRAW_ORDER:
        if name == "files":
            # a path counts once, at its first occurrence that touches no label
            _, first = np.unique(p_tid, return_index=True)
            first.sort()
            cands[name] = first
        else:
            cands[name] = np.flatnonzero(s_sec == _CODE[name])
    queues = _draw(rng, cands)
    # the queues end to end in round-robin order: each candidate's cost, text number, source
    sec_order = [name for name in FILL_ORDER if len(queues[name])]
    flat, at, ev = [], [], []
    for name in sec_order:
        f, pos, evs = (index.path, p_pos, p_ev) if name == "files" else (index.sent, s_pos, s_ev)
        flat.append(f)
        at.append(pos[queues[name]])
        ev.append(evs[queues[name]])
    if not sec_order:
        return _NO_FILLER
    sizes = np.array([len(x) for x in at], np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    col = {c: np.concatenate([f.cols[c][x] for f, x in zip(flat, at, strict=True)]) for c in ("length", "tid", "start")}
    heading = np.array([len(titles[name]) + 7 for name in sec_order], np.int64)
    had = np.array([name in present for name in sec_order], dtype=np.bool_)
    from workbench.summarize.take_nb import take_nb

    taken = take_nb(col["length"] + 3, col["tid"], bounds, heading, had, room, len(index.text_ids))
    present.update(name for name, h in zip(sec_order, had.tolist(), strict=True) if h)
    sec_of = np.searchsorted(bounds, taken, side="right") - 1
    return FillerColumns([sec_order[k] for k in sec_of.tolist()], seqs[np.concatenate(ev)[taken]].tolist(),
                         col["start"][taken].tolist(), index.texts_of(col["tid"][taken].tolist()))


def _table_texts(codes: SpanCodes, at: np.ndarray) -> list[str]:
    """The texts of ``codes``' table at ``at`` (a dataset's table is an object array: one gather)."""
    if isinstance(codes.table, np.ndarray):
        return codes.table[at].tolist()
    return [codes.table[i] for i in at.tolist()]


def _member(values: np.ndarray, wanted: list[int]) -> np.ndarray:
    """``np.isin(values, wanted)``, for a few wanted values by comparison (cheaper)."""
    if len(wanted) > 16:
        return np.isin(values, wanted)
    hit = np.zeros(len(values), dtype=bool)
    for w in wanted:
        hit |= values == w
    return hit


def _event_keys(codes: SpanCodes, text: np.ndarray, kind: np.ndarray, role: np.ndarray) -> np.ndarray:
    """Each event's ``(text, kind, role)`` codes as one number."""
    return (text * len(codes.kind_names) + kind) * len(codes.role_names) + role


def _coded_ends(codes: SpanCodes) -> tuple[int | None, int | None]:
    """:func:`_ends` from the span's codes (only the texts of user and assistant messages read,
    in turn, until one is not blank)."""
    message = _member(codes.kind, _codes_of(codes.kind_names, "message"))

    def first(role: str, step: int) -> int | None:
        rows = np.flatnonzero(message & _member(codes.role, _codes_of(codes.role_names, role)))[::step]
        for at in range(0, len(rows), 8):
            batch = rows[at:at + 8]
            for i, text in zip(batch.tolist(), _table_texts(codes, codes.text[batch]), strict=True):
                if text.strip():
                    return int(codes.seqs[i])
        return None

    return first("user", 1), first("assistant", -1)


def _codes_of(names, name: str) -> list[int]:
    """The codes that name ``name`` among ``names``."""
    return [code for code, n in enumerate(names) if n == name]
