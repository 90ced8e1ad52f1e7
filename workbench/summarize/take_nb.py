"""The filler's round robin over its sections, compiled.

A modelled summary's filler (:mod:`workbench.summarize.filler`) takes its candidates turn
by turn across the sections: each turn a section takes its next candidate that fits the
room left (its cost, plus the section's heading if the section has no line yet) and whose
text was not taken before; a section with no candidate left drops out. :func:`take_nb` is
that loop over numbers: the queues laid end to end (``bounds[s]:bounds[s + 1]`` is section
``s``'s, in round-robin order), each candidate's cost and text number. Its plain twin is
:func:`workbench.summarize.filler._take` (the same selection over objects;
``tests/summarize/test_take_nb.py`` holds the kernel to it).
"""

from __future__ import annotations

import numpy as np

from workbench._numba import njit


@njit
def take_nb(costs, tids, bounds, heading, present, room, n_texts):
    """Flat positions of the candidates taken, in the order taken. ``heading[s]``: what
    section ``s``'s heading costs; ``present[s]``: it has one already (set here as sections
    get their first line); ``n_texts``: text numbers are below it."""
    n_sec = len(bounds) - 1
    heads = bounds[:-1].copy()
    seen = np.zeros(n_texts, np.bool_)
    taken = np.empty(len(costs), np.int64)
    k = 0
    active = np.empty(n_sec, np.int64)
    n_active = 0
    for s in range(n_sec):
        if bounds[s + 1] > bounds[s]:
            active[n_active] = s
            n_active += 1
    while n_active > 0 and room > 0:
        m = 0
        for a in range(n_active):
            s = active[a]
            end = bounds[s + 1]
            extra = 0 if present[s] else heading[s]
            h = heads[s]
            while h < end:
                cost = costs[h] + extra
                h += 1
                if cost > room or seen[tids[h - 1]]:
                    continue
                taken[k] = h - 1
                k += 1
                present[s] = True
                seen[tids[h - 1]] = True
                room -= cost
                break
            heads[s] = h
            if h < end:
                active[m] = s
                m += 1
        n_active = m
    return taken[:k]
