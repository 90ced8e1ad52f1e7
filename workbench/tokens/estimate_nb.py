"""Compiled token estimator over UTF-8 bytes (no tokenizer vocabulary needed).

It walks the bytes once, splitting them the way cl100k's pre-tokenizer does (letter
runs with an optional leading space, digit runs in groups of three, punctuation runs,
whitespace), and charges each piece an expected token cost: a letter run costs one
token per ``LETTERS_PER_TOKEN`` letters beyond the first few, since BPE merges common
short words whole and splits long or rare ones. Non-ASCII bytes cost more (roughly a
token per 1-2 code points in cl100k).

``estimate_tokens_py`` is the pure-Python twin used as the test oracle.
"""

from __future__ import annotations

import math

import numpy as np

from workbench._numba import njit

# Parameters fitted once (grid search) against cl100k counts on the recorded logs' text;
# benchmarks/bench_tokenize.py reports the error of these values per source.
WORD_FREE_LETTERS = 6.0  # a letter run this long or shorter is usually one token
LETTERS_PER_TOKEN = 5.0  # beyond that
DIGITS_PER_TOKEN = 3.0
PUNCT_PER_TOKEN = 4.0
NONASCII_BYTES_PER_TOKEN = 3.5
NEWLINE_TOKENS = 0.5  # newlines often merge with neighbouring whitespace
SPACE_RUN_TOKENS = 0.5  # runs of two or more spaces (indentation)

_LETTER, _DIGIT, _SPACE, _NEWLINE, _PUNCT, _HIGH = 0, 1, 2, 3, 4, 5


def _byte_classes() -> np.ndarray:
    cls = np.full(256, _PUNCT, dtype=np.uint8)
    for c in range(ord("a"), ord("z") + 1):
        cls[c] = _LETTER
    for c in range(ord("A"), ord("Z") + 1):
        cls[c] = _LETTER
    for c in range(ord("0"), ord("9") + 1):
        cls[c] = _DIGIT
    cls[ord(" ")] = _SPACE
    cls[ord("\t")] = _SPACE
    cls[ord("\n")] = _NEWLINE
    cls[ord("\r")] = _NEWLINE
    cls[128:] = _HIGH
    return cls


BYTE_CLASSES = _byte_classes()


def _run_cost(cls: int, length: int) -> float:
    if cls == _LETTER:
        if length <= WORD_FREE_LETTERS:
            return 1.0
        return 1.0 + (length - WORD_FREE_LETTERS) / LETTERS_PER_TOKEN
    if cls == _DIGIT:
        return math.ceil(length / DIGITS_PER_TOKEN)
    if cls == _PUNCT:
        return math.ceil(length / PUNCT_PER_TOKEN)
    if cls == _HIGH:
        return length / NONASCII_BYTES_PER_TOKEN
    if cls == _NEWLINE:
        return NEWLINE_TOKENS
    # runs of spaces: a single space merges into the next word
    return 0.0 if length == 1 else SPACE_RUN_TOKENS


@njit
def _run_cost_nb(cls, length):
    if cls == 0:
        if length <= WORD_FREE_LETTERS:
            return 1.0
        return 1.0 + (length - WORD_FREE_LETTERS) / LETTERS_PER_TOKEN
    if cls == 1:
        return math.ceil(length / DIGITS_PER_TOKEN)
    if cls == 4:
        return math.ceil(length / PUNCT_PER_TOKEN)
    if cls == 5:
        return length / NONASCII_BYTES_PER_TOKEN
    if cls == 3:
        return NEWLINE_TOKENS
    if length == 1:
        return 0.0
    return SPACE_RUN_TOKENS


@njit
def estimate_tokens_nb(data, offsets, classes, out):
    """Estimate tokens for each string ``data[offsets[i]:offsets[i+1]]`` (UTF-8 bytes)."""
    n = offsets.shape[0] - 1
    for i in range(n):
        start = offsets[i]
        end = offsets[i + 1]
        total = 0.0
        j = start
        while j < end:
            c = classes[data[j]]
            k = j + 1
            while k < end and classes[data[k]] == c:
                k += 1
            total += _run_cost_nb(c, k - j)
            j = k
        out[i] = np.int32(math.ceil(total)) if end > start else np.int32(0)
    return out


def estimate_tokens_py(text: str) -> int:
    """Pure-Python twin of :func:`estimate_tokens_nb` for one string."""
    data = text.encode("utf-8")
    if not data:
        return 0
    total = 0.0
    j = 0
    while j < len(data):
        c = int(BYTE_CLASSES[data[j]])
        k = j + 1
        while k < len(data) and BYTE_CLASSES[data[k]] == c:
            k += 1
        total += _run_cost(c, k - j)
        j = k
    return int(math.ceil(total))
