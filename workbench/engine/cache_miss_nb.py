"""The provider's own cache misses, compiled: expected cost and seeded draws over a ledger.

A provider can miss its prompt cache inside the TTL (another replica, an evicted entry): the
call then reads only what survived (the system and tool prefix, or nothing) and writes the
rest again. :mod:`workbench.engine.cache_miss` decides, per ledger row, the chance of such a
miss and the dollars of the call in each of its three outcomes; this pass turns them into
the expected cost and ``n_draws`` totals drawn from the miss model, each draw's outcome for a
row seeded by the row's request position (not by the row's place in the array, nor by any
state), so the same continuity and policy give byte-identical draws in every engine, worker
and order.

A miss does not change what later calls read: the call writes its whole prompt again (or,
on a provider that bills no writes, caches it anyway), so the next call finds the same
prefix it would have found after a hit. Each row's outcome is therefore independent and the
pass never feeds back into the replay.

Outcomes per row: ``hit`` (the replay's own read), ``prefix`` (a miss where the system and
tool prefix survived), ``cold`` (a miss that read nothing). ``p_miss[i]`` is the chance of a
miss, ``p_prefix[i]`` the chance that a miss keeps the prefix.

>>> import numpy as np
>>> hit, prefix, cold = np.array([1.0, 1.0]), np.array([2.0, 2.0]), np.array([3.0, 3.0])
>>> expected, draws = miss_pass_nb(hit, prefix, cold, np.array([0.5, 0.0]), np.array([0.5, 0.5]),
...                                np.array([0, 1]), 7, 3)
>>> float(expected), draws.size
(2.75, 3)
"""

from __future__ import annotations

import numpy as np

from workbench._numba import njit

MASK32 = 0xFFFFFFFF
MIX = 0x45D9F3B  # a 32-bit integer hash multiplier; products stay below 2**59 in int64


@njit
def mix32_nb(x):
    """A 32-bit integer hash step (xor-shift, multiply) in int64 arithmetic."""
    x = (((x >> 16) ^ x) * MIX) & MASK32
    x = (((x >> 16) ^ x) * MIX) & MASK32
    return (x >> 16) ^ x


@njit
def position_uniform_nb(seed, position, draw):
    """A uniform number in [0, 1) that depends only on (seed, position, draw)."""
    x = mix32_nb(seed & MASK32)
    x = mix32_nb(x ^ (position & MASK32))
    x = mix32_nb(x ^ (draw & MASK32))
    return x / 4294967296.0


@njit
def miss_pass_nb(cost_hit, cost_prefix, cost_cold, p_miss, p_prefix, positions, seed, n_draws):
    """``(expected total $, n_draws drawn totals $)`` over the rows (float64 / int64 arrays)."""
    n = cost_hit.size
    expected = 0.0
    for i in range(n):
        p = p_miss[i]
        q = p_prefix[i]
        expected += (1.0 - p) * cost_hit[i] + p * q * cost_prefix[i] + p * (1.0 - q) * cost_cold[i]
    draws = np.empty(n_draws, np.float64)
    for d in range(n_draws):
        total = 0.0
        for i in range(n):
            p = p_miss[i]
            if p <= 0.0:
                total += cost_hit[i]
                continue
            u = position_uniform_nb(seed, positions[i], d)
            if u < p * p_prefix[i]:
                total += cost_prefix[i]
            elif u < p:
                total += cost_cold[i]
            else:
                total += cost_hit[i]
        draws[d] = total
    return expected, draws
