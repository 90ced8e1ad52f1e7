"""The token thresholds of a policy's rules: where a tokens trigger compacts and where the
pre-compaction flush fires (Signet's analysis: at the compaction threshold minus a safety
margin), and what a flush needs to be tied to one. Plain functions of numbers and names, the
policy's methods (:class:`workbench.engine.policy.Policy`) call them.

>>> compaction_threshold(0, 0.0, 33_000, 200_000)
167000
>>> flush_threshold(167_000, 4_000, 0.0, 200_000)
163000
>>> flush_threshold(95_000, 4_000, 0.75, 100_000)  # Letta's warning comes first
75000
>>> compaction_threshold(0, 0.9, 0, 200_000, fraction_less_tokens=8_192)  # Roo Code
171808
"""

from __future__ import annotations


def compaction_threshold(tokens: int, fraction: float, reserve_tokens: int, window: int, *,
                         fraction_less_tokens: int = 0) -> int:
    """Absolute ``tokens``, else ``fraction`` of the window (less ``fraction_less_tokens``:
    Roo Code's 0.9 x window - maxTokens), else the window less ``reserve_tokens`` (the first
    that is set); 0 when none is."""
    if tokens:
        return int(tokens)
    if fraction:
        return int(fraction * window) - int(fraction_less_tokens)
    if reserve_tokens:
        return int(window - reserve_tokens)
    return 0


def flush_threshold(compaction_at: int, soft_threshold_tokens: int, fraction: float, window: int) -> int:
    """``soft_threshold_tokens`` below the compaction threshold and, with ``fraction``, no
    later than that share of the window; never below 0."""
    at = compaction_at - soft_threshold_tokens
    if fraction:
        at = min(at, int(fraction * window))
    return max(0, int(at))


def flush_problems(trigger_kind: str, scope: str, compaction_kind: str, flush_reserve: int, default_reserve: int,
                   trigger_reserve: int, soft_threshold_tokens: int) -> list[str]:
    """Why an enabled flush cannot be tied to the policy's compaction threshold (empty: it can)."""
    problems = []
    if trigger_kind == "none" or compaction_kind == "none":
        problems.append("flush.enabled needs a compaction: the flush fires flush.soft_threshold_tokens below the "
                        "compaction threshold, and this policy never compacts")
    elif trigger_kind != "tokens":
        problems.append(f"flush.enabled needs a tokens trigger: the flush fires flush.soft_threshold_tokens below "
                        f"the compaction threshold, and a {trigger_kind} trigger has no token threshold")
    if scope != "total":
        problems.append("flush.enabled needs trigger.scope total: the flush compares the whole prompt with the "
                        "compaction threshold")
    if flush_reserve not in (default_reserve, trigger_reserve):
        problems.append(f"flush.reserve_tokens ({flush_reserve:,}) is not the compaction's reserve "
                        f"(trigger.reserve_tokens {trigger_reserve:,}): the flush fires "
                        "flush.soft_threshold_tokens below the compaction threshold; set the trigger instead")
    if soft_threshold_tokens < 0:
        problems.append("flush.soft_threshold_tokens must be >= 0")
    return problems
