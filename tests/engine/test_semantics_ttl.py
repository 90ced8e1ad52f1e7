"""The ttl-aware tokens trigger (issue 31): once the session's prompt cache has expired (the
idle gap since its last call exceeds the TTL) the prefix is written afresh anyway, so the
policy compacts as soon as the context reaches ``ttl_early_fraction`` of the threshold;
otherwise it waits for the threshold. Hand-built continuity, hand-computed answers, both
engines."""

from __future__ import annotations

import pytest
from _tiny import replay_input
from test_semantics import ENGINES, run

from workbench.engine import enums as E
from workbench.engine.policy import Compaction, CutRule, Policy, Provider

# Anthropic (the tiny continuities' provider): a 5-minute TTL, explicit caching.
# request 0 at 1 s: 2,000 + 1,000 = 3,000 tokens, cold (no previous prompt: nothing expired)
# request 1 at 100 s: + 3,000 = 6,000 >= 5,000, but 99 s after request 0: the cache is warm
# request 2 at 600 s: + 500 = 6,500 >= 5,000 and ~500 s idle: expired -> compaction
# request 3 at 1,000 s: expired again, but after the compaction the context is far below 5,000
EVENTS = [("S", 2000, 0), ("U", 1000, 1), ("A", 0, 2),
          ("U", 3000, 100), ("A", 0, 101),
          ("U", 500, 600), ("A", 0, 601),
          ("U", 100, 1000), ("A", 0, 1001)]
SUMMARY = Compaction(kind="summary", ratio=0.1, cap=20_000, prompt_tokens=0)


def _policy(early: float, cache: str | None = None) -> Policy:
    return Policy("ttl", trigger=CutRule(kind="tokens", tokens=10_000, ttl_early_fraction=early),
                  compaction=SUMMARY, provider=Provider(cache=cache))


def _checkpoints(events):
    return [(e["request"], e["tokens_before"]) for e in events if e["type"] == E.EventType.CHECKPOINT]


@pytest.mark.parametrize("engine", ENGINES)
def test_an_expired_cache_compacts_at_the_early_share(engine):
    ledger, events = run(engine, replay_input(EVENTS), _policy(0.5))
    assert _checkpoints(events) == [(2, 6500)]
    main = [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    assert [r["cache_loss"] for r in main][:3] == [E.CacheLoss.COLD, E.CacheLoss.NONE, E.CacheLoss.COMPACTION]


@pytest.mark.parametrize("engine", ENGINES)
def test_without_the_rule_nothing_reaches_the_threshold(engine):
    _, events = run(engine, replay_input(EVENTS), _policy(0.0))
    assert _checkpoints(events) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_share_above_the_context_waits_for_the_threshold(engine):
    # 0.7 x 10,000 = 7,000 > 6,500: the expired cache alone does not compact a small context
    _, events = run(engine, replay_input(EVENTS), _policy(0.7))
    assert _checkpoints(events) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_a_provider_without_caching_never_expires(engine):
    _, events = run(engine, replay_input(EVENTS), _policy(0.5, cache="none"))
    assert _checkpoints(events) == []


def test_the_share_is_lowered_against_the_threshold_and_only_for_tokens():
    assert _policy(0.5).lower(200_000, 1, 300_000.0, 1).params[E.Param.TTL_EARLY_TOKENS] == 5_000
    stride = Policy("s", trigger=CutRule(kind="stride", every_messages=4, ttl_early_fraction=0.5))
    assert stride.lower(200_000, 1, 300_000.0, 1).params[E.Param.TTL_EARLY_TOKENS] == 0
    assert "50% of that once the prompt cache expired" in _policy(0.5).trigger.describe(200_000)
