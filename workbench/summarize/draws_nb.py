"""The first uniform of many seeded Mersenne Twisters at once, compiled.

The modelled summarizer draws each label's decision from its own generator, Python's
``random.Random(seed)`` seeded by a hash of the label's position (so a decision never
depends on which other labels share the summary or on the order summaries are written).
:func:`first_uniforms_nb` gives ``random.Random(int(s)).random()`` for every seed of an
array in one call: CPython's seeding of an int (the MT19937 ``init_by_array`` of its 32-bit
words, least significant first), one twist of the first two state words, tempering and
the 53-bit float of two outputs. Its plain twin is ``random.Random`` itself
(``tests/summarize/test_decisions.py`` holds the kernel to it).

Arrays and scalars only; the state of ``init_genrand(19650218)`` that every seeding starts
from is computed once (:func:`base_state_nb`) and copied per seed.
"""

from __future__ import annotations

import numpy as np

from workbench._numba import njit

N = 624
M = 397
MASK32 = 0xFFFFFFFF
UPPER = 0x80000000
LOWER = 0x7FFFFFFF
MATRIX_A = 0x9908B0DF


@njit
def base_state_nb():
    """MT19937 ``init_genrand(19650218)``: where ``init_by_array`` starts (uint64 [N])."""
    mt = np.empty(N, np.uint64)
    mt[0] = np.uint64(19650218)
    for i in range(1, N):
        prev = mt[i - 1]
        mt[i] = (np.uint64(1812433253) * (prev ^ (prev >> np.uint64(30))) + np.uint64(i)) & np.uint64(MASK32)
    return mt


@njit
def _temper_nb(y):
    y ^= y >> np.uint64(11)
    y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    y ^= y >> np.uint64(18)
    return y & np.uint64(MASK32)


@njit
def _twisted_nb(mt, k):
    """State word ``k`` (< N - M) after the first twist."""
    y = (mt[k] & np.uint64(UPPER)) | (mt[k + 1] & np.uint64(LOWER))
    out = mt[k + M] ^ (y >> np.uint64(1))
    if y & np.uint64(1):
        out ^= np.uint64(MATRIX_A)
    return out


@njit
def first_uniforms_nb(seeds, base):
    """``random.Random(int(s)).random()`` for each ``s`` of ``seeds`` (uint64, < 2**64;
    ``base``: :func:`base_state_nb`). float64 [len(seeds)]."""
    out = np.empty(len(seeds), np.float64)
    mt = np.empty(N, np.uint64)
    key = np.empty(2, np.uint64)
    for s in range(len(seeds)):
        seed = np.uint64(seeds[s])
        key[0] = seed & np.uint64(MASK32)
        key[1] = seed >> np.uint64(32)
        n_key = 2 if key[1] != 0 else 1
        mt[:] = base
        i = 1
        j = 0
        for _ in range(N):  # max(N, key length) == N
            prev = mt[i - 1]
            mt[i] = ((mt[i] ^ ((prev ^ (prev >> np.uint64(30))) * np.uint64(1664525)))
                     + key[j] + np.uint64(j)) & np.uint64(MASK32)
            i += 1
            j += 1
            if i >= N:
                mt[0] = mt[N - 1]
                i = 1
            if j >= n_key:
                j = 0
        for _ in range(N - 1):
            prev = mt[i - 1]
            mt[i] = ((mt[i] ^ ((prev ^ (prev >> np.uint64(30))) * np.uint64(1566083941)))
                     - np.uint64(i)) & np.uint64(MASK32)
            i += 1
            if i >= N:
                mt[0] = mt[N - 1]
                i = 1
        mt[0] = np.uint64(UPPER)
        # the first twist rewrites words 0 and 1 from words 0, 1, 2, M and M + 1 only
        w0 = _twisted_nb(mt, 0)
        w1 = _twisted_nb(mt, 1)
        a = _temper_nb(w0) >> np.uint64(5)
        b = _temper_nb(w1) >> np.uint64(6)
        out[s] = (float(a) * 67108864.0 + float(b)) * (1.0 / 9007199254740992.0)
    return out
