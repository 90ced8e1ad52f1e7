"""A preset on a smaller context window, for tests that need many compactions on small data:
the window is overridden and every absolute token threshold, reserve and flush margin is
scaled with it (a 200k-window reserve on a 20k window would put the threshold below zero,
which a policy may not)."""

from __future__ import annotations

REFERENCE_WINDOW = 200_000


def on_window(policy, window: int):
    """``policy`` replayed on ``window``: its own window if it fixes one, else ``window``
    with absolute thresholds scaled by ``window / 200k``."""
    if policy.provider.context_window:
        return policy
    scale = window / REFERENCE_WINDOW
    over = {"provider.context_window": window}
    t, f = policy.trigger, policy.flush
    for key, value in (("trigger.tokens", t.tokens), ("trigger.reserve_tokens", t.reserve_tokens),
                       ("flush.soft_threshold_tokens", f.soft_threshold_tokens if f.enabled else 0),
                       ("compaction.local_tokens", policy.compaction.local_tokens)):
        if value:
            over[key] = max(1, int(value * scale))
    return policy.with_overrides(over)
