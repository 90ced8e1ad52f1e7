"""The pre-compaction flush is tied to the compaction threshold (Signet's analysis: the flush
MUST trigger at the compaction threshold minus a safety margin), on hand-built continuities
with hand-computed answers, in both engines: it fires once before each compaction of
claude-code, letta and openclaw-flush, also after the trigger is tuned, and a policy that
never compacts refuses it."""

from __future__ import annotations

import pytest
from _tiny import replay_input
from test_semantics import ENGINES, run

from workbench.engine import enums as E
from workbench.engine.policy import Compaction, CutRule, Flush, Policy
from workbench.engine.policy_schema import check_window
from workbench.engine.presets import get_policy
from workbench.errors import PolicyError


def _climb(flush_at: int, compact_at: int) -> list[tuple]:
    """A 1,000-token system prompt, then user turns that bring the context to one token
    under the flush threshold (request 0), onto it (1), one under the compaction threshold
    (2) and onto it (3); every answer is empty."""
    return [("S", 1000, 0), ("U", flush_at - 1001, 1), ("A", 0, 2),
            ("U", 1, 3), ("A", 0, 4),
            ("U", compact_at - flush_at - 1, 5), ("A", 0, 6),
            ("U", 1, 7), ("A", 0, 8)]


# (preset, overrides, window, flush threshold, compaction threshold), all computed by hand
CASES = [
    # Claude Code 2.1: compaction at 200k - 33k = 167,000; 4,000 below it. It used to flush at
    # 200k - 20k (flush.reserve_tokens) - 4k = 176,000: after the compaction, so never.
    ("claude-code@2.1", {"flush.enabled": True}, 200_000, 163_000, 167_000),
    # tuning the trigger moves the flush with it: 200k - 60k = 140,000 -> 136,000
    ("claude-code@2.1", {"flush.enabled": True, "trigger.reserve_tokens": 60_000}, 200_000, 136_000, 140_000),
    # OpenClaw: window - reserveTokensFloor (20k) - softThresholdTokens (4k)
    ("openclaw-flush", {}, 200_000, 176_000, 180_000),
    ("openclaw-flush", {"trigger.reserve_tokens": 40_000}, 200_000, 156_000, 160_000),
    # Letta: compaction at 0.95 x 100k = 95,000; the memory warning at 0.75 x 100k = 75,000
    # comes first (min(95,000 - 4,000, 75,000))
    ("letta", {"provider.context_window": 100_000}, 100_000, 75_000, 95_000),
    # ... and stays before the compaction when the trigger is tuned below it: min(70,000 -
    # 4,000, 75,000) = 66,000 (it used to stay at 75,000, after the compaction: never)
    ("letta", {"provider.context_window": 100_000, "trigger.fraction": 0.7}, 100_000, 66_000, 70_000),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,overrides,window,flush_at,compact_at", CASES)
def test_the_flush_fires_once_just_below_the_compaction(engine, name, overrides, window, flush_at, compact_at):
    pol = get_policy(name, overrides)
    assert pol.flush_threshold(window) == flush_at and pol.trigger.threshold(window) == compact_at
    ledger, events = run(engine, replay_input(_climb(flush_at, compact_at), window=window), pol)
    assert [r["request"] for r in ledger if r["call_kind"] == E.CallKind.FLUSH] == [1]
    assert [e["request"] for e in events if e["type"] == E.EventType.CHECKPOINT] == [3]


@pytest.mark.parametrize("engine", ENGINES)
def test_once_per_compaction_count(engine):
    """After the compaction the context climbs past the flush threshold again: one more
    flush (compaction count 1), then none until the next compaction."""
    pol = Policy("f", trigger=CutRule(kind="tokens", tokens=8000, keep_first=1, message_boundary=False),
                 compaction=Compaction(kind="summary", ratio=0.1, floor=0, cap=10_000, prompt_tokens=0),
                 flush=Flush(enabled=True, soft_threshold_tokens=1000))
    events = _climb(7000, 8000) + [("U", 6500, 9), ("A", 0, 10), ("U", 10, 11), ("A", 0, 12)]
    ledger, evs = run(engine, replay_input(events, window=10_000), pol)
    # request 3 compacts 8,000 to the pinned system prompt (1,000) + a summary of the other
    # 7,000 at ratio 0.1 (700) = 1,700; request 4: 1,700 + 6,500 = 8,200 >= 7,000: flush again
    # (compaction count 1), >= 8,000: the second compaction (to 1,720); request 5: 1,730
    assert [r["request"] for r in ledger if r["call_kind"] == E.CallKind.FLUSH] == [1, 4]
    assert [e["request"] for e in evs if e["type"] == E.EventType.CHECKPOINT] == [3, 4]
    assert [r["context_after"] for r in ledger if r["call_kind"] == E.CallKind.MAIN] == [
        6999, 7000, 7999, 1700, 1720, 1730]


@pytest.mark.parametrize("name,overrides,why", [
    ("no-compaction", {"flush.enabled": True}, "never compacts"),
    ("rip-adr0011", {"flush.enabled": True}, "stride trigger has no token threshold"),
    ("openhands-default", {"flush.enabled": True}, "events trigger has no token threshold"),
    ("openclaw-flush", {"flush.reserve_tokens": 30_000}, "is not the compaction's reserve"),
    ("codex-local", {"flush.enabled": True, "trigger.scope": "body"}, "trigger.scope total"),
])
def test_a_flush_without_a_compaction_threshold_is_refused(name, overrides, why):
    with pytest.raises(PolicyError, match=why):
        get_policy(name, overrides)


def test_tied_sweeps_still_read_and_the_window_check_names_the_margin():
    pol = get_policy("openclaw-flush", {"trigger.reserve_tokens": 33_000, "flush.reserve_tokens": 33_000})
    assert pol.flush_threshold(200_000) == 200_000 - 33_000 - 4_000
    with pytest.raises(PolicyError, match="soft_threshold_tokens below the compaction threshold"):
        check_window(get_policy("openclaw-flush", {"flush.soft_threshold_tokens": 180_000}), 200_000)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["claude-code@2.1", "openclaw-flush", "letta"])
def test_on_a_generated_continuity_one_flush_precedes_every_compaction(engine, name):
    """A 3,000-event long-running continuity on a 20k window (thresholds scaled): every
    compaction has exactly one flush since the previous one (in an earlier request or its own,
    before it), and there is at least one compaction to check."""
    from scaled_presets import on_window
    from test_parity import generated

    pol = on_window(get_policy(name, {"flush.enabled": True}), 20_000)
    ledger, events = run(engine, generated("long-running", 3000, 2), pol)
    calls = [(r["request"], r["call_kind"]) for r in ledger
             if r["call_kind"] in (E.CallKind.FLUSH, E.CallKind.COMPACTION)]
    compactions = [e["request"] for e in events if e["type"] == E.EventType.CHECKPOINT]
    assert len(compactions) >= 3
    flushes_since = 0
    for _request, kind in calls:
        if kind == E.CallKind.FLUSH:
            flushes_since += 1
        elif kind == E.CallKind.COMPACTION:
            assert flushes_since == 1, calls
            flushes_since = 0
