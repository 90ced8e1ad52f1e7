"""The plain-Python twin of :mod:`workbench.engine.cache_miss_nb` (its oracle): the same
hash, the same loops, the same order of float operations, so both give identical figures
(``tests/engine/test_cache_miss.py`` checks it on generated ledgers)."""

from __future__ import annotations

MASK32 = 0xFFFFFFFF
MIX = 0x45D9F3B


def mix32(x: int) -> int:
    x = (((x >> 16) ^ x) * MIX) & MASK32
    x = (((x >> 16) ^ x) * MIX) & MASK32
    return (x >> 16) ^ x


def position_uniform(seed: int, position: int, draw: int) -> float:
    x = mix32(seed & MASK32)
    x = mix32(x ^ (position & MASK32))
    x = mix32(x ^ (draw & MASK32))
    return x / 4294967296.0


def miss_pass_reference(cost_hit, cost_prefix, cost_cold, p_miss, p_prefix, positions, seed: int,
                        n_draws: int) -> tuple[float, list[float]]:
    """``(expected total $, drawn totals $)``; see :func:`workbench.engine.cache_miss_nb.miss_pass_nb`."""
    hit, pre, cold = ([float(v) for v in a] for a in (cost_hit, cost_prefix, cost_cold))
    pm, pq, pos = [float(v) for v in p_miss], [float(v) for v in p_prefix], [int(v) for v in positions]
    expected = 0.0
    for i in range(len(hit)):
        p, q = pm[i], pq[i]
        expected += (1.0 - p) * hit[i] + p * q * pre[i] + p * (1.0 - q) * cold[i]
    draws = []
    for d in range(n_draws):
        total = 0.0
        for i in range(len(hit)):
            p = pm[i]
            if p <= 0.0:
                total += hit[i]
                continue
            u = position_uniform(int(seed), pos[i], d)
            if u < p * pq[i]:
                total += pre[i]
            elif u < p:
                total += cold[i]
            else:
                total += hit[i]
        draws.append(total)
    return expected, draws
