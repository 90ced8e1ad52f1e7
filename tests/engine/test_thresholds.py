"""Where a tokens trigger compacts and the flush fires (workbench.engine.thresholds), by hand."""

from __future__ import annotations

import pytest

from workbench.engine.thresholds import compaction_threshold, flush_problems, flush_threshold


@pytest.mark.parametrize("tokens,fraction,reserve,window,want", [
    (8_192, 0.9, 20_000, 200_000, 8_192),  # absolute tokens first
    (0, 0.9, 20_000, 200_000, 180_000),  # then the fraction
    (0, 0.0, 33_000, 200_000, 167_000),  # then the window less the reserve
    (0, 0.0, 0, 200_000, 0),  # none: no threshold
    (0, 0.333, 0, 1_000, 333),  # fractions round down
])
def test_compaction_threshold(tokens, fraction, reserve, window, want):
    assert compaction_threshold(tokens, fraction, reserve, window) == want


@pytest.mark.parametrize("at,soft,fraction,window,want", [
    (167_000, 4_000, 0.0, 200_000, 163_000),
    (95_000, 4_000, 0.75, 100_000, 75_000),  # the fraction comes first
    (70_000, 4_000, 0.75, 100_000, 66_000),  # ... unless the margin does
    (3_000, 5_000, 0.0, 10_000, 0),  # never below 0
    (1_000, 0, 0.0, 10_000, 1_000),
])
def test_flush_threshold(at, soft, fraction, window, want):
    assert flush_threshold(at, soft, fraction, window) == want


def test_flush_problems_name_each_rule():
    ok = ("tokens", "total", "summary", 20_000, 20_000, 33_000, 4_000)
    assert flush_problems(*ok) == []
    assert flush_problems("tokens", "total", "summary", 33_000, 20_000, 33_000, 4_000) == []  # tied reserves
    cases = {("none", "total", "summary", 20_000, 20_000, 0, 4_000): "never compacts",
             ("tokens", "total", "none", 20_000, 20_000, 0, 4_000): "never compacts",
             ("events", "total", "summary", 20_000, 20_000, 0, 4_000): "a events trigger has no token threshold",
             ("tokens", "body", "summary", 20_000, 20_000, 0, 4_000): "trigger.scope total",
             ("tokens", "total", "summary", 30_000, 20_000, 33_000, 4_000): "(30,000) is not the compaction's "
                                                                            "reserve (trigger.reserve_tokens 33,000)",
             ("tokens", "total", "summary", 20_000, 20_000, 0, -1): "must be >= 0"}
    for args, says in cases.items():
        (problem,) = flush_problems(*args)
        assert says in problem, (args, problem)
