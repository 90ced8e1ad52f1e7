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
    """Each rule's message, whole: a user reads it as the reason a policy is refused."""
    ok = ("tokens", "total", "summary", 20_000, 20_000, 33_000, 4_000)
    assert flush_problems(*ok) == []
    assert flush_problems("tokens", "total", "summary", 33_000, 20_000, 33_000, 4_000) == []  # tied reserves
    assert flush_problems("tokens", "total", "summary", 20_000, 20_000, 0, 0) == []  # no margin: allowed
    never = ("flush.enabled needs a compaction: the flush fires flush.soft_threshold_tokens below the "
             "compaction threshold, and this policy never compacts")
    cases = {
        ("none", "total", "summary", 20_000, 20_000, 0, 4_000): never,
        ("tokens", "total", "none", 20_000, 20_000, 0, 4_000): never,
        ("events", "total", "summary", 20_000, 20_000, 0, 4_000):
            "flush.enabled needs a tokens trigger: the flush fires flush.soft_threshold_tokens below the "
            "compaction threshold, and a events trigger has no token threshold",
        ("tokens", "body", "summary", 20_000, 20_000, 0, 4_000):
            "flush.enabled needs trigger.scope total: the flush compares the whole prompt with the "
            "compaction threshold",
        ("tokens", "total", "summary", 30_000, 20_000, 33_000, 4_000):
            "flush.reserve_tokens (30,000) is not the compaction's reserve (trigger.reserve_tokens 33,000): "
            "the flush fires flush.soft_threshold_tokens below the compaction threshold; set the trigger instead",
        ("tokens", "total", "summary", 20_000, 20_000, 0, -1): "flush.soft_threshold_tokens must be >= 0",
    }
    for args, says in cases.items():
        assert flush_problems(*args) == [says], args
