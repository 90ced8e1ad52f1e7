"""The degenerate-summary checks as they were before issue 30 (each summary's words, lines
and 4-word sequences built as Python objects): the test oracle of
:mod:`workbench.evaluate.degenerate`, whose flags must equal these."""

from __future__ import annotations

# the rule's thresholds and its unchanged pieces (words, letters, fences, tokens) are the
# module's own: only the checks issue 30 replaced are kept here as they were
from workbench.evaluate.degenerate import (
    _FENCE,
    BUDGET_USED,
    CLEAN_ENDINGS,
    LATIN_SHARE,
    MIN_REPEATED_LINES,
    MIN_WORDS_LANGUAGE,
    MIN_WORDS_REPETITION,
    NGRAM,
    REPEATED_LINE_SHARE,
    REPEATED_NGRAM_SHARE,
    STOPWORD_SHARE,
    STOPWORDS,
    _words,
    approx_tokens,
    letter_counts,
)


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
