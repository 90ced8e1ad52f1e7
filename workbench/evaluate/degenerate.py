"""Degenerate summaries, whichever summarizer wrote them: cheap checks on the text alone.

:func:`degenerate_flags` names what is wrong with one summary (an empty list: nothing):

* ``empty``: no text but white space, where a readable summary was due;
* ``truncated``: the text stops mid-way: an unclosed code fence, or, once it has used 90%
  of its token budget, a last character that ends neither a sentence nor a line of markup
  (a model cut off at ``max_tokens``); unbalanced brackets are no sign, real summaries
  quote code;
* ``repetitive``: at least half of its 4-word sequences, or (with 3 or more repeats) a
  third of its lines, already written earlier in the text (a small model at temperature 0
  loops; real and modelled summaries stay under 40% and 20%: a file path or a line of the
  log may recur in a long summary);
* ``longer_than_span``: more tokens than the span it replaced (a compaction that grows);
* ``wrong_language``: not English: under half of its letters Latin, or, over 40 words or
  more, under 4% of them English stop words (an English summary has ~20-40%; a summary
  that is a list of values still has its ``the``, ``of``, ``to``).

The text checks read every character once and are counted over arrays (letters by code
point, each distinct non-ASCII one asked once; an ASCII text's words split in C; the 4-word
sequences as integer codes), so they run on every summary whose text exists — recorded,
HTTP, sampled and, today, modelled ones too (every evaluation of a modelled summary still
reads its text). A :class:`SummaryJudge` judges the summaries of a run: no word crosses a
line, so each distinct line's words are split and numbered once, and a summary that carries
the previous one's lines forward (most of its lines, in a folding policy's chain) costs its
new lines only. ``empty`` and ``longer_than_span`` are numbers of the summary's size alone.

Tokens here are the summary's characters / 4 (the rule the compaction table's
``summary_text_tokens`` uses); the budget is the compaction's ``summary_tokens``.

>>> degenerate_flags("The port moved to 9443. " * 12, budget_tokens=200, span_tokens=4000)
['repetitive']
>>> degenerate_flags("Key facts: the gateway listens on port 9443.", budget_tokens=200, span_tokens=4000)
[]
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Sequence

FLAGS = ("empty", "truncated", "repetitive", "longer_than_span", "wrong_language")

#: share of a budget after which a text that stops mid-sentence counts as cut off
BUDGET_USED = 0.9
#: a text ending in one of these ended on purpose (sentence, markup, list, code, quote)
CLEAN_ENDINGS = frozenset(".!?:;)]}>\"'`*_|-…")
MIN_REPEATED_LINES = 3
REPEATED_LINE_SHARE = 1 / 3
NGRAM = 4
REPEATED_NGRAM_SHARE = 0.5
MIN_WORDS_REPETITION = 24
LATIN_SHARE = 0.5
MIN_WORDS_LANGUAGE = 40
STOPWORD_SHARE = 0.04
#: English function words that are not also common words of the other Latin-script
#: languages a model drifts into (no "a", "in", "is", "die", "de", "la")
STOPWORDS = frozenset({
    "the", "of", "to", "and", "for", "with", "that", "this", "was", "were", "are", "be", "been", "has",
    "have", "had", "it", "its", "from", "by", "on", "at", "as", "or", "not", "but", "which", "will",
    "would", "should", "can", "could", "into", "than", "then", "there", "their", "they", "we", "you", "your", "our",
    "he", "she", "his", "her", "them", "these", "those", "what", "when", "where", "who", "how", "all", "any",
    "each", "also", "only", "after", "before", "about", "over", "under", "out", "up", "if", "so", "no", "yes",
    "do", "does", "did", "done", "just", "more", "most",
})

#: word numbers under this fit a 4-word sequence's code in an int64
_FOUR_WORD_CODES = 55_108
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
#: every ASCII character that is not a letter, as a space (an ASCII text's words, split in C)
_ASCII_NON_LETTERS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalpha()})
#: ... and as a space except the line break (a block of lines' words, split in C, line by line)
_ASCII_NON_LETTERS_BUT_LINES = str.maketrans({c: " " for c in map(chr, range(128))
                                              if not c.isalpha() and c != "\n"})
#: the ASCII line boundaries of ``str.splitlines`` other than ``\n``
_OTHER_ASCII_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"
_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def degenerate_flags(text: str | None, *, budget_tokens: int | None, span_tokens: int | None) -> list[str]:
    """What is degenerate about ``text`` (see the module docstring), in :data:`FLAGS` order."""
    return SummaryJudge().flags(text, budget_tokens=budget_tokens, span_tokens=span_tokens)


class SummaryJudge:
    """:func:`degenerate_flags` for many summaries: each distinct line's words are split
    once and numbered (the numbers are this judge's own), so a summary's words are its
    lines' numbers put end to end. Each distinct line is also numbered by its stripped,
    lower-cased form, so a summary whose only line breaks are ``\\n`` (``splitlines`` is
    ``split("\\n")`` there) has its repeated lines counted from those numbers."""

    def __init__(self):
        self._vocabulary: dict[str, int] = {}
        # a line -> (its word numbers as int64 bytes, how many of its words are STOPWORDS,
        # the number of its stripped lower case or -1 when blank)
        self._lines: dict[str, tuple[bytes, int, int]] = {}
        self._stripped: dict[str, int] = {}

    def flags(self, text: str | None, *, budget_tokens: int | None, span_tokens: int | None) -> list[str]:
        """What is degenerate about ``text`` (see the module docstring), in :data:`FLAGS` order."""
        text = text or ""
        body = text.strip()
        if not body:
            return ["empty"]
        flags = []
        parts = body.split("\n")
        codes, stopwords, keys = self._line_numbers(parts)
        words = _int64s(codes)  # (both text checks read the same words: split once)
        plain = body.isascii() and not any(c in body for c in _OTHER_ASCII_BREAKS)
        if _truncated(body, budget_tokens, parts[-1] if plain else None):
            flags.append("truncated")
        if (_repeated_keys(keys) if plain else _repeated_lines(body)) or _repeated_ngrams(words):
            flags.append("repetitive")
        if span_tokens is not None and span_tokens > 0 and approx_tokens(body) > span_tokens:
            flags.append("longer_than_span")
        if _not_latin(body) or (len(words) >= MIN_WORDS_LANGUAGE and stopwords / len(words) < STOPWORD_SHARE):
            flags.append("wrong_language")
        return flags

    def _line_numbers(self, parts: list[str]) -> tuple[bytes, int, tuple[int, ...]]:
        """The word numbers (:func:`_words`) of the lines ``parts`` in order (int64 bytes,
        joined in C: no array per line), how many of the words are :data:`STOPWORDS`, and
        each line's stripped-form number."""
        lines = self._lines
        known = list(map(lines.get, parts))  # (most lines are carried ones)
        if None in known:
            self._learn(list(dict.fromkeys(p for p, k in zip(parts, known, strict=True) if k is None)))
            known = list(map(lines.__getitem__, parts))
        codes, stopwords, keys = zip(*known, strict=True)
        return b"".join(codes), sum(stopwords), keys

    def _learn(self, new: list[str]) -> None:
        """Number the lines ``new`` (distinct, not met before): their words (an ASCII block
        lower-cased and split at once) and their stripped form."""
        block = "\n".join(new)
        if block.isascii():  # (no line holds "\n": the block's lines are the new lines)
            pieces = block.lower().translate(_ASCII_NON_LETTERS_BUT_LINES).split("\n")
            words_of = [piece.split() for piece in pieces]
        else:
            words_of = [_words(line) for line in new]
        vocabulary, stripped = self._vocabulary, self._stripped
        for line, words in zip(new, words_of, strict=True):
            for w in words:
                if w not in vocabulary:
                    vocabulary[w] = len(vocabulary)
            key = line.lower().strip()
            self._lines[line] = (array("q", map(vocabulary.__getitem__, words)).tobytes(),
                                 sum(map(STOPWORDS.__contains__, words)),
                                 stripped.setdefault(key, len(stripped)) if key else -1)


def _int64s(data: bytes):
    import numpy as np

    return np.frombuffer(data, dtype=np.int64)


def _repeated_keys(keys: Sequence[int]) -> bool:
    """:func:`_repeated_lines` from the lines' stripped-form numbers (-1: blank), when the
    body's lines are split at ``\\n`` only."""
    blank = keys.count(-1)
    lines = len(keys) - blank
    repeated = lines - (len(set(keys)) - (blank > 0))
    return repeated >= MIN_REPEATED_LINES and repeated / lines >= REPEATED_LINE_SHARE


def _words(body: str) -> list[str]:
    """The lower-cased words of ``body``. An ASCII text is lower-cased at once (lower-casing
    ASCII moves no word boundary); any other word by word, as the checks define it."""
    if body.isascii():
        return body.lower().translate(_ASCII_NON_LETTERS).split()
    return [w.lower() for w in _WORD.findall(body)]


def _truncated(body: str, budget_tokens: int | None, last_line: str | None = None) -> bool:
    """``last_line``: ``body.splitlines()[-1]`` when the caller has it."""
    if ("```" in body or "~~~" in body) and len(_FENCE.findall(body)) % 2:  # (no fence without them)
        return True
    used = budget_tokens is not None and budget_tokens > 0 and approx_tokens(body) >= BUDGET_USED * budget_tokens
    if not used or body[-1] in CLEAN_ENDINGS:
        return False
    return not (body.splitlines()[-1] if last_line is None else last_line).lstrip().startswith(("#", "-", "*"))


def _repeated_lines(body: str) -> bool:
    """At least :data:`MIN_REPEATED_LINES` and :data:`REPEATED_LINE_SHARE` of the non-blank
    lines (stripped, lower-cased) already written earlier."""
    lines = [ln for ln in map(str.strip, body.lower().splitlines()) if ln]
    repeated = len(lines) - len(set(lines))
    return repeated >= MIN_REPEATED_LINES and repeated / len(lines) >= REPEATED_LINE_SHARE


def _repeated_ngrams(words) -> bool:
    """At least :data:`REPEATED_NGRAM_SHARE` of the :data:`NGRAM`-word sequences of
    ``words`` (word numbers, an int64 array) already written earlier: counted exactly by
    numbering the distinct word pairs, then the distinct pairs of pairs."""
    import numpy as np

    if len(words) < MIN_WORDS_REPETITION:
        return False
    span = int(words.max()) + 1
    if span < _FOUR_WORD_CODES:  # NGRAM == 4: a sequence's code is its 4 numbers in base ``span``
        grams = ((words[:-3] * span + words[1:-2]) * span + words[2:-1]) * span + words[3:]
    else:  # (more words than that: number the word pairs, then pair the pairs at i and i + 2)
        _, pairs = np.unique(words[:-1] * span + words[1:], return_inverse=True)
        pairs = pairs.astype(np.int64).reshape(-1)
        grams = pairs[:-2] * (int(pairs.max()) + 1) + pairs[2:]
    grams = np.sort(grams)
    distinct = 1 + int(np.count_nonzero(grams[1:] != grams[:-1]))
    n_grams = len(words) - NGRAM + 1
    return (n_grams - distinct) / n_grams >= REPEATED_NGRAM_SHARE


def letter_counts(body: str) -> tuple[int, int]:
    """``(letters, latin letters)`` of ``body``: characters ``str.isalpha`` calls letters, and
    those below U+0250 (Basic Latin .. Latin Extended-B). Counted over the code points as an
    array: ASCII letters by arithmetic, each distinct other code point asked once."""
    import numpy as np

    cp = np.frombuffer(body.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ascii_letters = int(np.count_nonzero(((cp | 0x20) - 0x61) < 26))  # a-z, A-Z (unsigned wrap)
    if body.isascii():
        return ascii_letters, ascii_letters
    other, counts = np.unique(cp[cp >= 0x80], return_counts=True)
    alpha = np.fromiter((chr(c).isalpha() for c in other.tolist()), dtype=bool, count=len(other))
    letters = ascii_letters + int(counts[alpha].sum())
    latin = ascii_letters + int(counts[alpha & (other < 0x250)].sum())
    return letters, latin


def _not_latin(body: str) -> bool:
    """Under :data:`LATIN_SHARE` of the letters Latin (a text without letters is not judged)."""
    letters, latin = letter_counts(body)
    return bool(letters) and latin / letters < LATIN_SHARE


def count_degenerate(compactions) -> dict[str, dict[str, object]]:
    """Per policy of a compaction table: ``degenerate_summaries`` (readable summaries with any
    flag), ``summaries_judged`` and ``degenerate_by_flag`` ({flag: count}); the counts the
    evaluation's headline carries and the verdict shows."""
    out: dict[str, dict[str, object]] = {}
    for row in compactions.select("policy", "degenerate").iter_rows(named=True):
        slot = out.setdefault(row["policy"], {"degenerate_summaries": 0, "summaries_judged": 0,
                                              "degenerate_by_flag": dict.fromkeys(FLAGS, 0)})
        flags = row["degenerate"]
        if flags is None:
            continue
        slot["summaries_judged"] += 1
        slot["degenerate_summaries"] += bool(flags)
        for flag in flags:
            slot["degenerate_by_flag"][flag] += 1
    return out
