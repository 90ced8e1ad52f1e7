"""The compaction call on or off the session's cached prefix (``compaction.shares_cache``),
hand-computed in both engines, and each harness preset's setting with its source."""

from __future__ import annotations

import pytest
from _tiny import replay_input

from workbench.engine.policy import Compaction, CutRule, Policy
from workbench.engine.provider import resolve_provider
from workbench.engine.records import LEDGER
from workbench.engine.run import replay

# S 1,000 + U 2,000 -> request 0 (3,000); + A 500 + U 1,000 -> request 1 (4,500);
# + A 500 + U 1,000 = 6,000 >= 5,000 -> the summarizer call at request 2: the 6,000-token
# context + its 200-token instruction = 6,200 tokens
EVENTS = [("S", 1000, 0), ("U", 2000, 1), ("A", 500, 2), ("U", 1000, 10), ("A", 500, 11),
          ("U", 1000, 20), ("A", 100, 21)]


def _policy(shares_cache: bool) -> Policy:
    return Policy("t", trigger=CutRule(kind="tokens", tokens=5_000, keep_first=1),
                  compaction=Compaction(kind="summary", ratio=0.1, floor=100, cap=1_000, prompt_tokens=200,
                                        shares_cache=shares_cache))


@pytest.mark.parametrize("engine", ["kernel", "reference"])
@pytest.mark.parametrize(("shares_cache", "read", "write"), [
    (True, 4_500, 1_700),   # rides the main prefix: request 1's whole 4,500-token prompt is read back
    (False, 0, 6_200),      # its own prefix (no tools, another system prompt): everything written
])
def test_the_compaction_call_reads_the_main_prefix_only_when_it_shares_it(engine, shares_cache, read, write):
    inp = replay_input(EVENTS)
    pol = _policy(shares_cache)
    prov = resolve_provider(pol, continuity_model="claude-sonnet-4-5", continuity_window=200_000)
    led, _ = replay(inp, pol, prov, engine)
    (call,) = led[led[:, LEDGER.call_kind] == 1]
    assert call[LEDGER.request] == 2
    assert call[LEDGER.prompt_tokens] == 6_200
    assert (call[LEDGER.cache_read_tokens], call[LEDGER.cache_write_tokens]) == (read, write)
    main = led[led[:, LEDGER.call_kind] == 0]
    assert main[:, LEDGER.prompt_tokens].tolist()[:2] == [3_000, 4_500]


def test_each_harness_says_whether_its_compaction_call_rides_the_prefix():
    from workbench.engine.presets import SOURCE, get_policy

    # opencode's default 'prepend' compaction sends tools: {} and system: [] (source read);
    # Claude Code re-writes the conversation (the recorded acompact call); Codex's local call
    # omits the tool specs
    for name in ("opencode", "claude-code", "codex-local"):
        assert get_policy(name).compaction.shares_cache is False, name
        assert "shares_cache = false" in SOURCE[name], name
    # opencode's opt-in suffix mode rides the main request: the switch turns it on
    assert get_policy("opencode", {"compaction.shares_cache": True}).compaction.shares_cache is True
