"""Holon's two compaction layers (:mod:`workbench.engine.provider_window`) on a hand-built
continuity with hand-computed answers, in both engines.

Rounds of a 4,000-token user message and a 1,000-token reply after a 1,000-token system
prompt: request k's raw context is 5,000 (k + 1). The provider compacts at 20,000 into
opaque items of 10 % of the span (the system prompt pinned); the local layer checkpoints
once 9,000 raw tokens followed its cut, 10 % of the previous checkpoint plus that span; past
2 opaque items the window is rebuilt from the local checkpoint.

* request 1: raw S..U1 = 10,000 >= 9,000: local checkpoint of 1,000 (its call: the 10,000
  context + a 500 instruction, on the summarizer's key); the window stays 10,000.
* request 3: 20,000: provider item of 0.1 x 19,000 = 1,900 (U0..U3), window 2,900; the local
  layer would fire (A1..U3 = 10,000) but not in a round where the window was compacted.
* requests 4, 6, 8, 10: local checkpoints of 0.1 x (1,000 + 15,000) = 1,600, 0.1 x (1,600 +
  10,000) = 1,160, then 1,116 and 1,111; the window is never changed by them.
* request 7: window 22,900: the second item, 0.1 x 20,000 = 2,000 (A3..U7), window 4,900.
* request 11: window 24,900: a third item of 2,000 (6,900 with the system prompt and the two
  before); 3 > 2 items: rebuilt from the local checkpoint of request 10 (1,111, cut at U10) +
  A10, U11: 1,000 + 1,111 + 5,000 = 7,111; the main call reads nothing back (reset).
"""

from __future__ import annotations

import numpy as np
import pytest
from _tiny import replay_input
from test_semantics import ENGINES, run
from test_semantics_harnesses import _rounds

from workbench.engine import enums as E
from workbench.engine import metrics
from workbench.engine.presets import get_policy
from workbench.engine.pricing import price_table
from workbench.engine.records import EVENT_COLUMNS, LEDGER_COLUMNS

POLICY = get_policy("holon-openai", {
    "provider.context_window": 100_000, "trigger.fraction": 0.0, "trigger.tokens": 20_000,
    "compaction.ratio": 0.1, "compaction.floor": 0, "compaction.cap": 100_000,
    "compaction.local_tokens": 9_000, "compaction.local_prompt_tokens": 500, "compaction.max_segments": 2})


def _replay(engine):
    return run(engine, replay_input(_rounds(1_000, 4_000, 1_000, n=12)), POLICY)


def _of(events, etype):
    return [(e["request"], e["item_tokens"]) for e in events if e["type"] == etype]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_two_layers_compact_where_and_as_much_as_computed(engine):
    ledger, events = _replay(engine)
    assert _of(events, E.EventType.LOCAL_CHECKPOINT) == [(1, 1_000), (4, 1_600), (6, 1_160), (8, 1_116),
                                                         (10, 1_111)]
    assert _of(events, E.EventType.CHECKPOINT) == [(3, 1_900), (7, 2_000), (11, 2_000)]
    main = [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    assert [r["context_after"] for r in main] == [5_000, 10_000, 15_000, 2_900, 7_900, 12_900, 17_900, 4_900,
                                                  9_900, 14_900, 19_900, 7_111]
    first = [r for r in ledger if r["request"] == 1 and r["call_kind"] == E.CallKind.COMPACTION]
    assert [(r["prompt_tokens"], r["output_tokens"], r["cache_key"]) for r in first] == [(10_500, 1_000, 1)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_local_checkpoint_leaves_the_provider_window_as_it_is(engine):
    ledger, events = _replay(engine)
    main = {r["request"]: r for r in ledger if r["call_kind"] == E.CallKind.MAIN}
    for e in events:
        if e["type"] == E.EventType.LOCAL_CHECKPOINT:
            assert e["tokens_before"] == e["tokens_after"] == main[e["request"]]["context_after"]
            assert not main[e["request"]]["flags"] & E.LedgerFlag.COMPACTED  # never in a compaction's round


@pytest.mark.parametrize("engine", ENGINES)
def test_past_the_item_bound_the_window_is_rebuilt_from_the_local_checkpoint_and_reset(engine):
    ledger, events = _replay(engine)
    rebuilt = [e for e in events if e["type"] == E.EventType.REBUILD]
    local = [e for e in events if e["type"] == E.EventType.LOCAL_CHECKPOINT][-1]
    assert len(rebuilt) == 1
    r = rebuilt[0]
    assert (r["request"], r["tokens_before"], r["tokens_after"], r["item_tokens"], r["span_events"],
            r["span_tokens"]) == (11, 6_900, 7_111, 1_111, 3, 5_900)
    assert (r["artifact_no"], r["to_row"]) == (local["artifact_no"], local["to_row"])
    main = [x for x in ledger if x["call_kind"] == E.CallKind.MAIN]
    assert (main[11]["cache_loss"], main[11]["cache_read_tokens"]) == (E.CacheLoss.RESET, 0)


@pytest.mark.parametrize("engine", ENGINES)
def test_cache_loss_is_split_into_intentional_and_drift(engine):
    """Lost cache on the session key: after each provider item (requests 3, 7: compaction)
    and at the rebuild (11: reset); on the summarizer's key the local calls lose theirs to the
    window's compactions in between (requests 4, 8: compaction) or read the previous local
    call's prompt back (6, 10: none); no drift anywhere."""
    ledger, events = _replay(engine)
    losses = [(r["request"], r["cache_key"], r["cache_loss"]) for r in ledger
              if r["cache_loss"] not in (E.CacheLoss.NONE, E.CacheLoss.COLD)]
    assert losses == [(3, 0, E.CacheLoss.COMPACTION), (4, 1, E.CacheLoss.COMPACTION),
                      (7, 0, E.CacheLoss.COMPACTION), (8, 1, E.CacheLoss.COMPACTION), (11, 0, E.CacheLoss.RESET)]
    led = np.array([[r[c] for c in LEDGER_COLUMNS] for r in ledger], np.int64)
    ev = np.array([[e[c] for c in EVENT_COLUMNS] for e in events], np.int64)
    totals, _ = metrics.replay_totals(led, ev, price_table("claude-sonnet-4-5", "anthropic"))
    cols = dict(zip(metrics.TOTAL_COLUMNS, totals.tolist(), strict=True))
    assert (cols["cache_loss_intentional"], cols["cache_loss_drift"], cols["compactions"]) == (5, 0, 3)
