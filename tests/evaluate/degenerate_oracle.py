"""The degenerate-summary checks as they were before issue 30 (each summary's words, lines
and 4-word sequences built as Python objects): the test oracle of
:mod:`workbench.evaluate.degenerate`, whose flags must equal these."""

from __future__ import annotations

import math
import re

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

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
#: every ASCII character that is not a letter, as a space (an ASCII text's words, split in C)
_ASCII_NON_LETTERS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalpha()})
_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def degenerate_flags(text: str | None, *, budget_tokens: int | None, span_tokens: int | None) -> list[str]:
    """What is degenerate about ``text`` (see the module docstring), in :data:`FLAGS` order."""
    text = text or ""
    body = text.strip()
    if not body:
        return ["empty"]
    flags = []
    words = _words(body)  # (both text checks read the same words: split once)
    if _truncated(body, budget_tokens):
        flags.append("truncated")
    if _repetitive(body, words):
        flags.append("repetitive")
    if span_tokens is not None and span_tokens > 0 and approx_tokens(body) > span_tokens:
        flags.append("longer_than_span")
    if _wrong_language(body, words):
        flags.append("wrong_language")
    return flags


def _words(body: str) -> list[str]:
    """The lower-cased words of ``body``. An ASCII text is lower-cased at once (lower-casing
    ASCII moves no word boundary); any other word by word, as the checks define it."""
    if body.isascii():
        return body.lower().translate(_ASCII_NON_LETTERS).split()
    return [w.lower() for w in _WORD.findall(body)]


def _truncated(body: str, budget_tokens: int | None) -> bool:
    if len(_FENCE.findall(body)) % 2:
        return True
    used = budget_tokens is not None and budget_tokens > 0 and approx_tokens(body) >= BUDGET_USED * budget_tokens
    return used and body[-1] not in CLEAN_ENDINGS and not body.splitlines()[-1].lstrip().startswith(("#", "-", "*"))


def _repetitive(body: str, words: list[str] | None = None) -> bool:
    lines = [ln for ln in map(str.strip, body.lower().splitlines()) if ln]
    repeated = len(lines) - len(set(lines))
    if repeated >= MIN_REPEATED_LINES and repeated / len(lines) >= REPEATED_LINE_SHARE:
        return True
    words = _words(body) if words is None else words
    if len(words) < MIN_WORDS_REPETITION:
        return False
    n_grams = len(words) - NGRAM + 1
    # the distinct 4-word sequences, zipped in C (not a tuple sliced per position)
    distinct = len(set(zip(*(words[k:] for k in range(NGRAM)), strict=False)))
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


def _wrong_language(body: str, words: list[str] | None = None) -> bool:
    letters, latin = letter_counts(body)
    if not letters:
        return False
    if latin / letters < LATIN_SHARE:
        return True
    words = _words(body) if words is None else words
    if len(words) < MIN_WORDS_LANGUAGE:
        return False
    return sum(map(STOPWORDS.__contains__, words)) / len(words) < STOPWORD_SHARE
