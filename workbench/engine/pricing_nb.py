"""The price rule, compiled: the dollars of one call from a price table.

One rule for every path: :meth:`workbench.engine.pricing.PriceTable.cost` prices a ledger
with :func:`costs_nb`, and the in-kernel totals of :mod:`workbench.engine.metrics_nb` call
:func:`call_cost_nb` row by row. Tiers follow genai-prices: the tier is chosen by the
call's total input tokens (its prompt) and applies to every token of the call.

A price table is float64 ``[4 components, TABLE_WIDTH]``: per component ``[base $/token,
start_1, $/token_1, ..., start_MAX_TIERS, $/token_MAX_TIERS]``, ascending starts, unused
tiers starting at +inf (so every call checks the same MAX_TIERS starts: no per-component
count to read, a loop the compiler unrolls; half the cost per ledger row of a counted loop).

>>> import numpy as np
>>> table = np.full((4, TABLE_WIDTH), np.inf); table[PRICE.UNCACHED, :3] = (1.0, 100, 2.0)
>>> float(price_per_token_nb(table, PRICE.UNCACHED, 100)), float(price_per_token_nb(table, PRICE.UNCACHED, 101))
(1.0, 2.0)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench._numba import njit


class PriceComponents(NamedTuple):
    """Rows of a price table."""

    UNCACHED: int = 0
    CACHE_READ: int = 1
    CACHE_WRITE: int = 2
    OUTPUT: int = 3


class PriceColumns(NamedTuple):
    """Columns of a price table row."""

    BASE: int = 0  # $ per token below the first tier
    FIRST_TIER: int = 1  # (start, $ per token) pairs from here on: MAX_TIERS of them


PRICE = PriceComponents()
COLUMN = PriceColumns()
MAX_TIERS = 4
TABLE_WIDTH = COLUMN.FIRST_TIER + 2 * MAX_TIERS


@njit
def price_per_token_nb(table, component, prompt):
    """$ per token of one component for a call of ``prompt`` tokens: the last tier whose
    start the prompt exceeds, else the base price."""
    price = table[component, COLUMN.BASE]
    for t in range(MAX_TIERS):
        start = COLUMN.FIRST_TIER + 2 * t
        if prompt > table[component, start]:
            price = table[component, start + 1]
    return price


@njit
def call_cost_nb(table, prompt, cache_read, cache_write, uncached, output):
    """$ of one call."""
    return (uncached * price_per_token_nb(table, PRICE.UNCACHED, prompt)
            + cache_read * price_per_token_nb(table, PRICE.CACHE_READ, prompt)
            + cache_write * price_per_token_nb(table, PRICE.CACHE_WRITE, prompt)
            + output * price_per_token_nb(table, PRICE.OUTPUT, prompt))


@njit
def costs_nb(table, prompt, cache_read, cache_write, uncached, output):
    """$ of each call of a ledger (int64 column arrays in, float64 array out)."""
    out = np.empty(prompt.size, np.float64)
    for k in range(prompt.size):
        out[k] = call_cost_nb(table, prompt[k], cache_read[k], cache_write[k], uncached[k], output[k])
    return out
