"""issue 31's ``task-state-checkpoints``: every summary carries the task state in a fixed
structure of ``compaction.task_state_tokens`` tokens on top of its modelled size, in both
engines, on a hand-built continuity with hand-computed answers.

Rounds of a 4,000-token user message and a 1,000-token reply after a 1,000-token system
prompt (pinned): request k's raw context is 5,000 (k + 1). Summaries are 10 % of what they
replace (floor 0), compaction at 20,000 tokens, a task-state block of 700 tokens:

* request 3 (20,000): U0..U3 = 19,000 -> 1,900 + 700 = 2,600; the context 1,000 + 2,600 = 3,600;
* requests 4..7 add 5,000 each: 8,600, 13,600, 18,600, then 23,600 at request 7: the folded
  summary reads the previous one (2,600) and A3..U7 (20,000): 2,260 + 700 = 2,960, the
  context 3,960;
* a stock summary (no block) is 1,900 then 0.1 x (1,900 + 20,000) = 2,190: the block costs
  700 + 70 tokens at the second compaction, and every later request reads them.
"""

from __future__ import annotations

import pytest
from _tiny import replay_input
from test_semantics import ENGINES, run
from test_semantics_harnesses import _rounds

from workbench.engine import enums as E
from workbench.engine.policy import Compaction, CutRule, Policy
from workbench.errors import PolicyError


def _policy(block: int) -> Policy:
    return Policy("task-state", trigger=CutRule(kind="tokens", tokens=20_000, keep_first=1),
                  compaction=Compaction(kind="summary", ratio=0.1, floor=0, cap=100_000, prompt_tokens=500,
                                        task_state_tokens=block))


def _checkpoints(engine, block):
    ledger, events = run(engine, replay_input(_rounds(1_000, 4_000, 1_000, n=9)), _policy(block))
    main = [r["context_after"] for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    return [(e["request"], e["item_tokens"]) for e in events if e["type"] == E.EventType.CHECKPOINT], main


@pytest.mark.parametrize("engine", ENGINES)
def test_every_summary_carries_the_task_state_block(engine):
    checkpoints, main = _checkpoints(engine, 700)
    assert checkpoints == [(3, 2_600), (7, 2_960)]
    assert main == [5_000, 10_000, 15_000, 3_600, 8_600, 13_600, 18_600, 3_960, 8_960]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stock_summary_has_no_block(engine):
    checkpoints, main = _checkpoints(engine, 0)
    assert checkpoints == [(3, 1_900), (7, 2_190)]
    assert main[3] == 2_900 and main[-1] == 8_190


def test_only_a_summary_carries_a_task_state_checkpoint():
    with pytest.raises(PolicyError, match="task_state_tokens"):
        Policy("x", compaction=Compaction(kind="opaque", task_state_tokens=500))
    with pytest.raises(PolicyError, match="task_state_tokens"):
        Policy("x", compaction=Compaction(kind="summary", task_state_tokens=-1))


def test_a_stock_policy_keeps_its_digest():
    """The field left at 0 stays out of the digest: earlier run ids do not move (the claude-code
    preset's digest before the field existed)."""
    from workbench.engine.presets import get_policy

    assert get_policy("claude-code").digest() == "591376410d48"
    assert get_policy("claude-code", {"compaction.task_state_tokens": 700}).digest() != "591376410d48"
