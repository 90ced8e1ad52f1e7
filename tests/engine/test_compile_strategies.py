"""ADR-0011 compile strategies on a hand-built continuity, hand-computed, on both engines:
``summaries_recent_messages_v1`` compiles the latest summary in; ``recent_messages_v1``
runs the same compactions (same cut points, same summarizer calls, the same folded
summary sizes) but compiles no summary item in."""

from __future__ import annotations

import pytest
from _tiny import replay_input
from test_semantics import ENGINES, SUMMARY, run

from workbench.engine import enums as E
from workbench.engine.policy import Compile, CutRule, Policy
from workbench.errors import PolicyError

# S 2000 | U 500  A 100 | U 500  A 100 | U 3000  A 100 | U 3000  A 100
EVENTS = [("S", 2000, 0), ("U", 500, 1), ("A", 100, 2), ("U", 500, 3), ("A", 100, 4),
          ("U", 3000, 5), ("A", 100, 6), ("U", 3000, 7), ("A", 100, 8)]


def policy(strategy: str) -> Policy:
    return Policy("t", trigger=CutRule(kind="tokens", tokens=5000, keep_first=1), compaction=SUMMARY,
                  compile=Compile(strategy=strategy))


@pytest.mark.parametrize("engine", ENGINES)
def test_recent_messages_v1_runs_the_same_compactions_but_compiles_no_summary(engine):
    results = {s: run(engine, replay_input(EVENTS), policy(s))
               for s in ("summaries_recent_messages_v1", "recent_messages_v1")}
    sizes = {}
    for strategy, (ledger, events) in results.items():
        cps = [e for e in events if e["type"] == E.EventType.CHECKPOINT]
        # request 2: 2000 + 500 + 100 + 500 + 100 + 3000 = 6200 >= 5000: rows 1..5 (4200) -> 420.
        # request 3 (summaries): 2000 + 420 + 100 + 3000 = 5520; (recent) 2000 + 100 + 3000 = 5100:
        # both >= 5000, rows 6..7 (3100) folded with the kept 420 -> 0.1 x 3520 = 352 in both
        # (the summary folds the previous one whether or not the context showed it)
        assert [(c["request"], c["from_row"], c["to_row"], c["item_tokens"], c["span_tokens"]) for c in cps] == [
            (2, 1, 5, 420, 4200), (3, 1, 7, 352, 3100)]
        comp = [r for r in ledger if r["call_kind"] == E.CallKind.COMPACTION]
        assert [(r["prompt_tokens"], r["output_tokens"]) for r in comp] == [
            (6200 + 100, 420), ((5520 if strategy.startswith("summaries") else 5100) + 100, 352)]
        sizes[strategy] = [r["prompt_tokens"] for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    # main prompts: 2500, 3100, then the system prompt + the summary (summaries) or alone (recent)
    assert sizes["summaries_recent_messages_v1"] == [2500, 3100, 2000 + 420, 2000 + 352]
    assert sizes["recent_messages_v1"] == [2500, 3100, 2000, 2000]


@pytest.mark.parametrize("engine", ENGINES)
def test_without_a_checkpoint_summaries_recent_messages_falls_back_to_recent_messages(engine):
    # no compaction fires: both strategies compile the head and the last 2 messages only
    limited = {s: Policy("t", compile=Compile(strategy=s, recent_messages_limit=2))
               for s in ("summaries_recent_messages_v1", "recent_messages_v1")}
    out = {s: run(engine, replay_input(EVENTS), p)[0] for s, p in limited.items()}
    assert out["summaries_recent_messages_v1"] == out["recent_messages_v1"]
    # request 3: S + (A 100, U 3000): the last two messages of the tail
    assert [r["prompt_tokens"] for r in out["recent_messages_v1"]] == [2500, 2000 + 100 + 500,
                                                                      2000 + 100 + 3000, 2000 + 100 + 3000]


def test_the_compile_strategy_is_validated_and_lowered():
    with pytest.raises(PolicyError, match="compile.strategy"):
        Policy("t", compile=Compile(strategy="recent_messages_v2"))
    hidden = {s: Policy("t", compile=Compile(strategy=s)).lower(100_000, 1, 300_000.0, 1).cfg[E.Cfg.HIDE_SUMMARIES]
              for s in ("summaries_recent_messages_v1", "recent_messages_v1")}
    assert hidden == {"summaries_recent_messages_v1": 0, "recent_messages_v1": 1}
    assert not Policy("t", compile=Compile(strategy="recent_messages_v1")).compile.shows_summaries
