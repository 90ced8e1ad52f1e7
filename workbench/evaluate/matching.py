"""Literal multi-pattern search for the text-level evaluations, one pass per text.

:class:`PatternIndex` puts literal patterns, each owned by one or more integer keys, in one
Aho-Corasick automaton (ahocorasick-rs: the fastest of pyahocorasick, ahocorasick-rs and
hyperscan to build *and* scan on this workload, measured in benchmarks/bench_evaluate.py's
notes) and answers "which keys have a pattern in this text".

* :class:`LeakScanner`: every leak fragment of every planted secret of a dataset (the
  criterion of :func:`workbench.redaction.harness.surviving_fragment`: a window of
  ``fragment_length(secret)`` characters that is not blank) in one index. A text's leak
  views (:func:`~workbench.redaction.harness.leak_views`) are computed and scanned once,
  and the secrets found are remembered by text, so every policy and channel that shows the
  same text reuses the answer. :meth:`LeakScanner.leaks_in` is ``harness.leaked`` for many
  secrets at once: the texts, and every consecutive pair joined (a reader sees them in
  sequence).
* :class:`JoinScan`: the keys found in ``sep.join(texts)`` built one text at a time, from
  each text's own matches plus the few characters around each separator (so a growing join,
  e.g. the memory written so far, is never rebuilt).
* :class:`FormIndex`: which planted facts a text holds in another form than their exact
  answer (:mod:`workbench.synth.fact_forms`), pre-filtered by one automaton over the
  answers' normal forms and confirmed by each candidate's own pattern.

>>> s = LeakScanner(["AKIAQ7WE9RT2YU4IO6PA", "hunter2hunter2"])
>>> sorted(s.leaks_in(["key AKIAQ7WE9RT2", "nothing here"]))
[0]
>>> sorted(s.leaks_in(["pass hunter2h", "unter2 ok"]))  # split across two texts
[1]
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from operator import itemgetter

_SURROGATE = re.compile("[\ud800-\udfff]")
# every character a decoded run of the leak views may hold (normalize's base64 / base32 /
# hex runs, percent, backslash and HTML escape runs, "=" padding): two of them meeting may join runs
_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=.~!$&'()*,;:@?%\\#")
MEMO_LIMIT = 200_000  # entries per memo before it starts afresh (a sweep worker lives long)


def text_digest(text: str | None) -> bytes | None:
    """What a memo key holds of a text: its digest (the text itself would keep it alive in
    the memo beside the row that stores it: a million-event run's summaries are its
    largest strings)."""
    return None if text is None else hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Memo(dict):
    """A dict that empties itself when it reaches ``limit`` entries (bounded memory, no
    bookkeeping per hit)."""

    def __init__(self, limit: int = MEMO_LIMIT):
        super().__init__()
        self.limit = limit

    def put(self, key, value):
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


class PatternIndex:
    """Literal patterns -> the keys that own them, in one automaton."""

    def __init__(self, owners: dict[str, Iterable[int]]):
        from ahocorasick_rs import AhoCorasick

        self.patterns = [p for p in owners if p]
        self._owners = [tuple(sorted(set(owners[p]))) for p in self.patterns]
        # the empty string is in every text (as ``"" in text`` says)
        self.always = frozenset(k for p, ks in owners.items() if not p for k in ks)
        self.max_len = max(map(len, self.patterns), default=0)
        self.values: list[str] = []         # set by of_values
        self.key_of: dict[str, int] = {}
        self._ac = AhoCorasick(self.patterns) if self.patterns else None
        self._holding: dict[str, PatternIndex] = {}
        self._nul_free: bool | None = None  # no pattern holds a NUL (known on first need)

    def matches(self, text: str) -> list[tuple[int, int, int]]:
        """Every occurrence, overlapping: ``(pattern index, start, end)``."""
        if self._ac is None or not text:
            return []
        try:
            return self._ac.find_matches_as_indexes(text, overlapping=True)
        except UnicodeEncodeError:
            # a lone surrogate (a decoded "\ud83d" escape) cannot be in any pattern
            return self._ac.find_matches_as_indexes(_SURROGATE.sub("\x00", text), overlapping=True)

    def keys_in(self, text: str) -> frozenset[int]:
        owners = self._owners
        found = {k for i, _, _ in self.matches(text) for k in owners[i]}
        return frozenset(found | self.always) if found or self.always else frozenset()

    @property
    def nul_free(self) -> bool:
        """No pattern holds a NUL: strings joined by NULs match as each alone."""
        if self._nul_free is None:
            self._nul_free = not any("\x00" in p for p in self.patterns)
        return self._nul_free

    def keys_by_part(self, parts: list[str]) -> list[frozenset[int]]:
        """``keys_in`` of each of ``parts``: one search of them NUL-joined when no pattern
        holds a NUL (then no match spans two), else one per part."""
        if not self.nul_free or len(parts) < 2:
            return [self.keys_in(p) for p in parts]
        out = [self.always] * len(parts)
        starts = [0, *accumulate(len(p) + 1 for p in parts)]
        owners = self._owners
        for i, a, _ in self.matches("\x00".join(parts)):
            k = bisect_right(starts, a) - 1
            out[k] = out[k].union(owners[i])
        return out

    def holding(self, chars: str) -> PatternIndex:
        """The index of the patterns that hold any of ``chars`` (same keys), built once."""
        sub = self._holding.get(chars)
        if sub is None:
            held = frozenset(chars)
            sub = self._holding[chars] = PatternIndex(
                {p: ks for p, ks in zip(self.patterns, self._owners, strict=True) if not held.isdisjoint(p)})
        return sub

    def owners(self, pattern_index: int) -> tuple[int, ...]:
        return self._owners[pattern_index]

    @classmethod
    def of_values(cls, values: Iterable[str]) -> PatternIndex:
        """One pattern per distinct value, its key the value's position in :attr:`values`."""
        distinct = list(dict.fromkeys(values))
        index = cls({v: (k,) for k, v in enumerate(distinct)})
        index.values = distinct
        index.key_of = {v: k for k, v in enumerate(distinct)}
        return index


@dataclass(frozen=True, slots=True)
class _Scanned:
    """A text's leak scan: the secrets found, and what a scan of it joined to a neighbour
    needs: the ends (``reach`` characters) of its normalised view and of its line-joined
    view around its first and last lines, and those lines (only the ends are kept: a
    memo of whole views of long summaries held hundreds of MB at a million events)."""

    keys: frozenset[int]
    normalized: bool          # False: the text is its own normalised view
    norm_head: str            # the normalised view's first / last ``reach`` characters
    norm_tail: str
    after_first: str          # the line-joined view after its first line's part, first ``reach`` chars
    before_last: str          # ... before its last line's part, last ``reach`` chars
    first: str
    last: str
    lines: int


def fragment_owners(secrets: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """Every leak fragment (a window of ``fragment_length(secret)`` characters, not blank)
    of every secret -> the secrets (their positions) that contain it."""
    from workbench.redaction.harness import fragment_length

    owners: dict[str, set[int]] = {}
    for k, secret in enumerate(secrets):
        m = fragment_length(secret)
        for i in range(len(secret) - m + 1):
            frag = secret[i:i + m]
            if frag.strip():
                owners.setdefault(frag, set()).add(k)
    return {frag: tuple(sorted(keys)) for frag, keys in owners.items()}


class LeakScanner:
    """Which planted secrets leak into a text: see the module docstring.

    A text's leak views are taken apart by line, exactly: normalising is per character and
    no decoded run (base64, hex, percent, ``\\u`` escapes) spans a line break, so the
    views of a text are the text, its normalised form and its line-joined form plus the
    views of each of its lines. The three whole views are their lines' end to end, so only
    a match across a line break (text, normalised form: the patterns that hold a break
    character) or across a junction of two lines' joined views is theirs alone: only the
    windows around those are searched (:meth:`_scan`; :meth:`_scan_whole`, every view
    searched whole, is the oracle of the tests). A line's views (``harness.leak_views`` of
    the line, its Python decoding being the costly part) are scanned once per distinct
    line, a text's new lines in one pass (:meth:`_lines_views`): summaries carry
    lines forward and quote the same event sentences, and two consecutive texts joined
    share every line but one with the texts alone. Within a line, each decoded run is
    searched once per distinct run; the line two texts glue is taken from its two parts'
    scans when nothing can cross the junction (:meth:`_glued_plainly`), as it mostly cannot
    (a space, quote or bracket ends most lines).
    """

    def __init__(self, secrets: Sequence[str], fragments: dict[str, Iterable[int]] | None = None):
        """``fragments``: :func:`fragment_owners` of ``secrets``, when already computed (a
        dataset's text index keeps them)."""
        self.secrets = list(secrets)
        self.key_of = {s: k for k, s in enumerate(self.secrets)}
        self.index = PatternIndex(fragment_owners(self.secrets) if fragments is None else fragments)
        self._text: Memo = Memo(20_000)  # a scan holds views of its text: fewer of them
        self._pair: Memo = Memo()
        self._line: Memo = Memo()
        self._run: Memo = Memo()  # (encoding or escape, run) -> secrets in its decoding

    def forget(self, *, lines: bool = True) -> None:
        """Drop the remembered scans (keep the automaton); ``lines=False`` keeps the scans
        of single lines and decoded runs, which the next run of a sweep meets again in the
        dataset's events."""
        for memo in (self._text, self._pair, *((self._line, self._run) if lines else ())):
            memo.clear()

    def leaks(self, text: str) -> frozenset[int]:
        """Secrets with a fragment in any leak view of ``text``."""
        return self._scanned(text).keys

    def leaks_in(self, texts: Sequence[str]) -> frozenset[int]:
        """Secrets leaked by ``texts`` read in sequence (``harness.leaked`` for each)."""
        out: set[int] = set()
        for t in texts:
            out |= self.leaks(t)
        for a, b in zip(texts, texts[1:], strict=False):
            hit = self._pair.get((a, b))
            if hit is None:
                hit = self._pair.put((a, b), self._scan_pair(a, b))
            out |= hit
        return frozenset(out)

    def _scanned(self, text: str) -> _Scanned:
        hit = self._text.get(text)
        return hit if hit is not None else self._text.put(text, self._scan(text))

    def _scan(self, text: str) -> _Scanned:
        """:meth:`_scan_whole` without searching again what its lines' scans searched: the
        text and its normalised view are its lines' views end to end with a ``"\\n"``
        between two (and the ``"\\r"`` a ``"\\r\\n"`` break strips), so a match in them
        that no line's scan has holds one of those characters: only the patterns that hold
        one are searched there; the line-joined view is its lines' end to end, searched
        whole (a match may span any number of short lines)."""
        from workbench.redaction.normalize import normalize

        index, memo = self.index, self._line
        raw_lines = text.split("\n")
        lines = raw_lines
        if "\r" in text:  # "\r\n" is one line break (the whole-text scans see the "\r")
            lines = [line[:-1] if line.endswith("\r") else line for line in lines[:-1]] + lines[-1:]
        hits = list(map(memo.get, lines))
        if None in hits:
            missing = [i for i, hit in enumerate(hits) if hit is None]
            fresh = dict(zip(new := list(dict.fromkeys(lines[i] for i in missing)), self._lines_views(new),
                             strict=True))
            for i in missing:
                hits[i] = fresh[lines[i]]
        found = set().union(*filter(None, map(itemgetter(0), hits)))
        pieces = list(map(itemgetter(1), hits))
        breaking = index.holding("\n\r") if len(raw_lines) > 1 else None
        reach = max(0, index.max_len - 1)
        if breaking is not None and breaking.patterns:
            found |= _across(breaking, text, _ends(raw_lines, 1), reach + 1, reach + 1)
        norm = None
        if not text.isascii():
            norm, _ = normalize(text)
            if norm == text:
                norm = None
            elif breaking is not None and breaking.patterns:
                found |= _across(breaking, norm, _ends(norm.split("\n"), 1), reach + 1, reach + 1)
        joined = "".join(pieces)
        if len(pieces) > 1:
            found |= _across(index, joined, _ends(pieces, 0), reach, reach)
        view = norm or text
        return _Scanned(frozenset(found), norm is not None, view[:reach], view[-reach:] if reach else "",
                        joined[len(pieces[0]):][:reach],
                        joined[:len(joined) - len(pieces[-1])][-reach:] if reach else "",
                        raw_lines[0], raw_lines[-1], len(raw_lines))

    def _scan_whole(self, text: str) -> _Scanned:
        """:meth:`_scan` searching every whole view of ``text`` (the oracle of the tests)."""
        from workbench.redaction.normalize import normalize

        index, memo = self.index, self._line
        found: set[int] = set()
        pieces: list[str] = []
        raw_lines = text.split("\n")
        lines = raw_lines
        if "\r" in text:  # "\r\n" is one line break (the whole-text scans see the "\r")
            lines = [line[:-1] if line.endswith("\r") else line for line in lines[:-1]] + lines[-1:]
        for line in lines:
            hit = memo.get(line)
            if hit is None:
                hit = self._line_views(line)
            if hit[0]:
                found |= hit[0]
            pieces.append(hit[1])
        found |= index.keys_in(text)
        norm = None
        if not text.isascii():
            norm, _ = normalize(text)
            if norm != text:
                found |= index.keys_in(norm)
            else:
                norm = None
        joined = "".join(pieces)
        found |= index.keys_in(joined)
        reach = max(0, index.max_len - 1)
        view = norm or text
        return _Scanned(frozenset(found), norm is not None, view[:reach], view[-reach:] if reach else "",
                        joined[len(pieces[0]):][:reach],
                        joined[:len(joined) - len(pieces[-1])][-reach:] if reach else "",
                        raw_lines[0], raw_lines[-1], len(raw_lines))

    def _scan_pair(self, a: str, b: str, *, by_parts: bool = True) -> frozenset[int]:
        """``_scan(a + b)`` from the scans of ``a`` and ``b``: the views of the joined text
        are theirs except near the junction and for the one line the junction glues
        (``by_parts``: that line's views taken from its two parts' when they are theirs end
        to end, :meth:`_glued_plainly`)."""
        index, reach = self.index, max(0, self.index.max_len - 1)
        sa, sb = self._scanned(a), self._scanned(b)
        found = set(sa.keys | sb.keys)
        if reach:
            found |= index.keys_in(a[-reach:] + b[:reach])
            if sa.normalized or sb.normalized:
                found |= index.keys_in(sa.norm_tail + sb.norm_head)
        glued = sa.last + sb.first
        if sb.lines > 1 and glued.endswith("\r"):
            glued = glued[:-1]
        hit = self._line.get(glued)
        if hit is None and by_parts:
            parts = self._glued_plainly(sa.last, sb.first[:-1] if sb.lines > 1 and sb.first.endswith("\r")
                                        else sb.first, glued)
            if parts is not None:
                # the joined view around the junction: each side is the end / start of its
                # text's joined view (searched whole in its scan), so only a match across
                # the junction is new
                if reach:
                    found |= index.keys_in((sa.before_last + parts[0])[-reach:] + (parts[1] + sb.after_first)[:reach])
                return frozenset(found)
        if hit is None:
            hit = self._line_views(glued)
        found |= hit[0]
        found |= index.keys_in(sa.before_last + hit[1] + sb.after_first)
        return frozenset(found)

    def _glued_plainly(self, head: str, tail: str, glued: str) -> tuple[str, str] | None:
        """The line ``glued`` = ``head + tail`` (the last line of a text and the first of the
        next, both scanned as lines) when its views hold nothing its parts' views and the
        junction windows of :meth:`_scan_pair` do not, and its line-joined view is its
        parts' end to end: those two parts (``head``'s and ``tail``'s line-joined views);
        None when that is not sure (then its views are scanned).

        Normalising is per character, so the normalised view is the parts' end to end;
        with no line break, real or escaped, the line-joined view is the normalised one;
        with a character at the junction that no decoded run (base64 / base32 / hex, percent,
        backslash or HTML escapes) can hold, every run lies in one part and is that part's
        run; and each part's HTML references are decoded in the glued line only if they
        are in the part alone (that escape is looked for only in a text with both ``&``
        and ``;``). A match across the junction in the line or its normalised view is in
        the junction windows; the line-joined view is searched whole by the caller."""
        from workbench.redaction.normalize import normalize

        if not head or not tail or glued != head + tail:
            return None
        norm_head, norm_tail = normalize(head)[0], normalize(tail)[0]
        if not norm_head or not norm_tail or (norm_head[-1] in _RUN_CHARS and norm_tail[0] in _RUN_CHARS):
            return None
        norm = norm_head + norm_tail
        if "\n" in norm or "\\n" in norm or ("&" in norm and not (";" in norm_head and ";" in norm_tail)):
            return None
        return norm_head, norm_tail

    def _line_views(self, line: str) -> tuple[frozenset[int], str]:
        """Secrets in the leak views of one line, and the line's line-joined view.

        The views are ``harness.leak_views(line)``: the line, its normalised and line-joined
        views, searched together, and the decoded texts of its normalised view
        (``normalize.decoded_texts``), each a function of its escape or base64 / base32 /
        hex run alone: a run's secrets are remembered by run (identifiers and paths recur on
        many lines). :meth:`_line_views_by_leak_views` is the same from ``leak_views`` (the
        oracle of the tests)."""
        return self._lines_views([line])[0]

    def _lines_views(self, lines: list[str]) -> list[tuple[frozenset[int], str]]:
        """:meth:`_line_views` of each of ``lines`` (remembered), the views of all searched
        in one pass and their binary runs found in one pass per encoding: NUL, in no
        fragment (checked) and in no run, parts them (a text's new lines come together)."""
        escapes, binary_runs, decode_escapes, join_lines, normalize = _line_tools()
        index, runs = self.index, self._run
        norms = [normalize(line)[0] for line in lines]
        # (join_lines finds a break only where a real or escaped one is)
        pieces = [join_lines(norm)[0] if "\\n" in norm or "\n" in norm else norm for norm in norms]
        views = [f"{line}\x00{norm}\x00{joined}" if norm != line else f"{line}\x00{joined}"
                 for line, norm, joined in zip(lines, norms, pieces, strict=True)]
        found = index.keys_by_part(views)
        for k, norm in enumerate(norms):
            for esc, escape_run in escapes:
                if esc.possible(norm):
                    for m in escape_run.finditer(norm):
                        key = (esc.name, m.group())
                        hit = runs.get(key)
                        if hit is None:
                            hit = runs.put(key, index.keys_in(decode_escapes(esc, key[1])[0]))
                        if hit:
                            found[k] = found[k] | hit
        every = "\x00".join(norms)
        starts = [0, *accumulate(len(norm) + 1 for norm in norms)]
        for name, decode, pattern in binary_runs:
            for m in pattern.finditer(every):
                key = (name, m.group())
                hit = runs.get(key)
                if hit is None:
                    raw = decode(key[1])
                    hit = runs.put(key, index.keys_in(raw.decode("utf-8", "replace")) if raw else frozenset())
                if hit:
                    k = bisect_right(starts, m.start()) - 1
                    found[k] = found[k] | hit
        put = self._line.put
        return [put(line, (keys, joined)) for line, keys, joined in zip(lines, found, pieces, strict=True)]

    def _line_views_by_leak_views(self, line: str) -> tuple[frozenset[int], str]:
        """:meth:`_line_views` from ``harness.leak_views`` itself (not remembered)."""
        from workbench.redaction.harness import leak_views
        from workbench.redaction.normalize import normalize

        views = leak_views(line)  # [line, normalised (when it differs), line-joined, decoded runs...]
        piece = views[1] if line.isascii() or normalize(line)[0] == line else views[2]
        return self.index.keys_in("\x00".join(views)), piece

def _ends(parts: list[str], sep: int):
    """Where each of ``parts`` but the last ends in the string of them joined by a ``sep``
    long separator (the separator's position, an array)."""
    import numpy as np

    ends = np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts))[:-1])
    return ends + np.arange(len(ends)) * sep if sep else ends


def _across(index: PatternIndex, text: str, centres, before: int, after: int) -> frozenset[int]:
    """Keys of ``index`` in ``text`` that a match holding a character within ``before`` of
    each of ``centres`` (to its left) or ``after`` (to its right) gives: only those windows
    are searched (a match is at most ``max_len`` long), cut out at C speed (the text as
    code points) and NUL-separated; the whole text when it is shorter than they, or when a
    pattern holds a NUL."""
    import numpy as np

    width = before + after
    if centres.size * (width + 1) >= len(text) or not index.nul_free:
        return index.keys_in(text)
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    padded = np.concatenate((np.zeros(before, np.uint32), codes, np.zeros(after + 1, np.uint32)))
    windows = padded[centres[:, None] + np.arange(width + 1)]
    windows[:, width] = 0
    return index.keys_in(windows.tobytes().decode("utf-32-le", "surrogatepass"))


@cache
def _line_tools():
    """What :meth:`LeakScanner._line_views` reads of the normalisation, imported once (it
    runs once per distinct line): the escape kinds with their run patterns, the binary
    encodings with theirs, and the functions."""
    from workbench.redaction.harness import MIN_LEAK_RUN_BYTES
    from workbench.redaction.normalize import (
        _ESCAPE_RUNS,
        BINARY_ENCODINGS,
        ESCAPES,
        _run_patterns,
        decode_escapes,
        join_lines,
        normalize,
    )

    escapes = tuple((esc, _ESCAPE_RUNS[esc.name]) for esc in ESCAPES)
    binary_runs = tuple((name, decode, pattern) for (name, _, decode), pattern
                        in zip(BINARY_ENCODINGS, _run_patterns(MIN_LEAK_RUN_BYTES), strict=True))
    return escapes, binary_runs, decode_escapes, join_lines, normalize


class JoinScan:
    """Keys of ``index`` found in ``sep.join(texts)``, texts added one at a time.

    A match lies inside one text (``text_keys(text)``, usually memoised by the caller) or
    overlaps a separator; the second kind is found by scanning, at each new separator, the
    ``max_len - 1`` characters either side of it in the joined string.
    """

    def __init__(self, index: PatternIndex, sep: str, text_keys=None):
        self.index, self.sep = index, sep
        self.text_keys = text_keys or index.keys_in
        self.found: set[int] = set(index.always)
        self._tail = ""  # the last characters of the join so far
        self._empty = True
        self._reach = max(0, index.max_len - 1)

    def add(self, text: str) -> None:
        self.found |= self.text_keys(text)
        reach = self._reach
        if not self._empty:
            window = self._tail + self.sep + text[:reach]
            self.found |= self.index.keys_in(window)
        joined = text if self._empty else self._tail + self.sep + text
        self._tail = joined[-reach:] if reach else ""
        self._empty = False


class FormIndex:
    """Facts (``(kind, answer)`` pairs, keyed by position) present in a text in any form
    :func:`~workbench.synth.fact_forms.form_pattern` recognises, the exact answer included
    (callers check that one first)."""

    def __init__(self, facts: Sequence[tuple[str, str]]):
        from workbench.synth.fact_forms import normal_forms

        self.facts = list(dict.fromkeys(facts))
        self.key_of = {f: k for k, f in enumerate(self.facts)}
        owners: dict[str, set[int]] = {}
        for k, (kind, answer) in enumerate(self.facts):
            for form in normal_forms(kind, answer):
                owners.setdefault(form, set()).add(k)
        self.index = PatternIndex(owners)
        self._memo = Memo(20_000)

    def forget(self) -> None:
        """Drop the remembered texts' answers (keep the automaton)."""
        self._memo.clear()

    def keys_in(self, text: str) -> frozenset[int]:
        hit = self._memo.get(text)
        if hit is not None:
            return hit
        from workbench.synth.fact_forms import form_pattern, normal_form_positions

        # a form's match starts where its normal form matches: each candidate is confirmed
        # by its pattern at that one position (the lower-cased text: the same positions)
        norm, where = normal_form_positions(text)
        low = text.lower() if self.index.patterns else text
        found: set[int] = set()
        for i, a, _ in self.index.matches(norm):
            for k in self.index.owners(i):
                if k not in found and form_pattern(*self.facts[k]).match(low, int(where[a])):
                    found.add(k)
        return self._memo.put(text, frozenset(found))
