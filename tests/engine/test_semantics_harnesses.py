"""Issue 16's rules, each on a hand-built continuity with a hand-computed answer, in both
engines: masking by tokens, the probe call after a summary, the half truncation, the body
scope of a tokens trigger, and where each new harness preset first compacts."""

from __future__ import annotations

from dataclasses import replace

import pytest
from _tiny import replay_input
from test_semantics import ENGINES, SUMMARY, run

from workbench.engine import enums as E
from workbench.engine.policy import CutRule, Masking, Policy
from workbench.engine.presets import get_policy

# S system 100, U 50, then three tool calls (10) each answered by a 200-token result, then text
TOOLS = [("S", 100, 0), ("U", 50, 1), ("C", 10, 2, "c1"), ("R", 200, 3, "c1"), ("C", 10, 4, "c2"),
         ("R", 200, 5, "c2"), ("C", 10, 6, "c3"), ("R", 200, 7, "c3"), ("A", 10, 8)]


def _main(ledger):
    return [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]


@pytest.mark.parametrize("engine", ENGINES)
def test_masking_by_tokens_keeps_the_newest_outputs(engine):
    """keep 300 tool-output tokens, mask when >= 150 are freed, placeholders of 10:
    request 1 sees R1 (200 <= 300): nothing masked, 360 tokens; request 2 sees R1, R2 (400 >
    300): R1 masked (frees 190), 100+50+10+10+10+200 = 380; request 3: R2 masked too, 400."""
    pol = Policy("m", masking=Masking(keep_tokens=300, at_least_tokens=150, placeholder_tokens=10))
    ledger, _ = run(engine, replay_input(TOOLS), pol)
    main = _main(ledger)
    assert [r["prompt_tokens"] for r in main] == [150, 360, 380, 400]
    assert [bool(r["flags"] & E.LedgerFlag.EDITED) for r in main] == [False, False, True, True]


@pytest.mark.parametrize("engine", ENGINES)
def test_masking_by_tokens_waits_until_enough_is_freed(engine):
    """The same with 200 to be freed: R1 alone frees 190 (not enough) at request 2; at
    request 3 R1 and R2 free 380 together: 100+50+10+10+10+10+10+200 = 400."""
    pol = Policy("m", masking=Masking(keep_tokens=300, at_least_tokens=200, placeholder_tokens=10))
    ledger, _ = run(engine, replay_input(TOOLS), pol)
    assert [r["prompt_tokens"] for r in _main(ledger)] == [150, 360, 570, 400]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_probe_is_a_call_of_its_own_after_the_summary(engine):
    """The compaction of test_semantics' first case (summary 420 tokens) followed by a probe
    of 300 instruction tokens: prompt 420 + 300, output 420, on the summarizer's cache key
    (cold, and under the 1,024-token minimum: nothing read or written); the next request
    still reads the system prompt back."""
    inp = replay_input([("S", 2000, 0), ("U", 500, 1), ("A", 100, 2), ("U", 500, 3),
                        ("A", 100, 4), ("U", 3000, 5), ("A", 100, 6)])
    pol = Policy("t", trigger=CutRule(kind="tokens", tokens=5000, keep_first=1),
                 compaction=replace(SUMMARY, probe_prompt_tokens=300))
    ledger, _ = run(engine, inp, pol)
    kinds = [r["call_kind"] for r in ledger]
    assert kinds == [E.CallKind.MAIN, E.CallKind.MAIN, E.CallKind.COMPACTION, E.CallKind.COMPACTION,
                     E.CallKind.MAIN]
    probe = ledger[3]
    assert (probe["prompt_tokens"], probe["output_tokens"], probe["cache_key"]) == (720, 420, 1)
    assert (probe["cache_read_tokens"], probe["cache_write_tokens"]) == (0, 0)
    assert (ledger[4]["prompt_tokens"], ledger[4]["cache_read_tokens"]) == (2420, 2000)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("emergency,after,span", [("truncate_half", 400, 2), ("truncate", 500, 1)])
def test_the_half_truncation_drops_the_older_half(engine, emergency, after, span):
    """Window 550; request 2's context is 600: the half truncation drops U1 and A1 (the older
    two of the five tail events) -> 400; truncating to fit drops U1 only -> 500."""
    inp = replay_input([("S", 100, 0), ("U", 100, 1), ("A", 100, 2), ("U", 100, 3), ("A", 100, 4),
                        ("U", 100, 5), ("A", 100, 6)])
    pol = Policy("t", emergency=emergency).with_overrides({"provider.context_window": 550})
    ledger, events = run(engine, inp, pol)
    assert [r["prompt_tokens"] for r in _main(ledger)] == [200, 400, after]
    (cut,) = [e for e in events if e["type"] == E.EventType.TRUNCATION]
    assert (cut["from_row"], cut["span_events"], cut["tokens_before"], cut["tokens_after"]) == (1, span, 600, after)
    assert not [e for e in events if e["type"] == E.EventType.CHECKPOINT]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scope,first", [("body", 2), ("total", 0)])
def test_the_body_scope_leaves_out_the_prefix_and_the_head(engine, scope, first):
    """A 1,000-token fixed prefix and a 500-token system prompt: the prompts are 1,600, 1,710,
    1,820; their bodies 100, 210, 320. A 300-token threshold on the body fires at request 2,
    on the whole prompt at request 0."""
    inp = replace(replay_input([("S", 500, 0), ("U", 100, 1), ("A", 10, 2), ("U", 100, 3), ("A", 10, 4),
                                ("U", 100, 5), ("A", 10, 6)]), prefix_tokens=1_000)
    pol = Policy("t", trigger=CutRule(kind="tokens", tokens=300, keep_first=1, scope=scope), compaction=SUMMARY)
    ledger, _ = run(engine, inp, pol)
    assert [r["prompt_tokens"] for r in ledger if r["call_kind"] == E.CallKind.MAIN][0] <= 1_600
    comps = [r["request"] for r in ledger if r["call_kind"] == E.CallKind.COMPACTION]
    assert comps[0] == first


def _rounds(system: int, user: int, reply: int, n: int):
    out = [("S", system, 0)]
    for k in range(n):
        out += [("U", user, 2 * k + 1), ("A", reply, 2 * k + 2)]
    return out


# request k's context: the system prompt, k + 1 user messages and k replies
#   rounds of 9,000 + 1,000 after a 1,000-token system prompt: 10,000 (k + 1)
#   aider's rounds of 900 + 100: 1,000 k + 1,900, its body (less the system prompt) 1,000 k + 900
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("preset,rounds,first", [
    ("cline", (1_000, 9_000, 1_000), 16),      # 0.9 x 0.9 x 200k = 162,000 <= 170,000
    ("roo-code", (1_000, 9_000, 1_000), 17),   # 0.9 x 200k = 180,000
    ("opencode", (1_000, 9_000, 1_000), 16),   # 200k - max(min(32k max output, 32k), 20k) = 168,000 <= 170,000
    ("hermes", (1_000, 9_000, 1_000), 9),      # 0.5 x 200k = 100,000
    ("gemini-cli", (1_000, 9_000, 1_000), 9),  # 0.5 x 200k = 100,000
    ("aider", (1_000, 900, 100), 8),           # body 8,900 >= 8,192 (7,900 at request 7)
])
def test_each_new_preset_first_compacts_where_its_rule_says(engine, preset, rounds, first):
    pol = get_policy(preset, {"provider.context_window": 200_000})
    ledger, events = run(engine, replay_input(_rounds(*rounds, n=20)), pol)
    comps = [e["request"] for e in events if e["type"] == E.EventType.CHECKPOINT]
    assert comps and comps[0] == first, comps
    main = _main(ledger)
    assert main[first]["context_before"] == (10_000 * (first + 1) if preset != "aider" else 1_000 * first + 1_900)
    if preset == "gemini-cli":  # the probe follows the summary call
        calls = [r for r in ledger if r["request"] == first and r["call_kind"] == E.CallKind.COMPACTION]
        assert len(calls) == 2 and calls[1]["output_tokens"] == calls[0]["output_tokens"]


# S, U, then three tool calls each answered (2 s apart), then a reply ~66 minutes later
IDLE = [("S", 100, 0), ("U", 50, 1), ("C", 10, 2, "c1"), ("R", 200, 3, "c1"), ("C", 10, 4, "c2"),
        ("R", 200, 5, "c2"), ("C", 10, 6, "c3"), ("R", 200, 7, "c3"), ("A", 10, 4_000)]


@pytest.mark.parametrize("engine", ENGINES)
def test_masking_by_count_keeps_the_newest_outputs(engine):
    """keep the newest tool output, placeholders of 10: request 1 sees R1 alone (kept), 360;
    request 2 masks R1: 100+50+10+10+10+200 = 380; request 3 masks R2 too: 400."""
    pol = Policy("m", masking=Masking(keep_results=1, placeholder_tokens=10))
    main = _main(run(engine, replay_input(IDLE), pol)[0])
    assert [r["prompt_tokens"] for r in main] == [150, 360, 380, 400]


@pytest.mark.parametrize("engine", ENGINES)
def test_masking_after_an_idle_gap_only(engine):
    """The same gated at 3,600 s: requests 1 and 2 come 2 s after the one before (no
    masking: 360, 570); request 3 comes 3,994 s later: R1 and R2 masked at once,
    100+50+10+10+10+10+10+200 = 400."""
    pol = Policy("m", masking=Masking(keep_results=1, idle_s=3_600.0, placeholder_tokens=10))
    main = _main(run(engine, replay_input(IDLE), pol)[0])
    assert [r["prompt_tokens"] for r in main] == [150, 360, 570, 400]
    assert [bool(r["flags"] & E.LedgerFlag.EDITED) for r in main] == [False, False, False, True]


@pytest.mark.parametrize("engine", ENGINES)
def test_claude_code_microcompact_clears_all_but_five_after_an_hour(engine):
    """Seven tool outputs of 200 (2 s apart), then a reply 66 min later: the preset keeps the
    newest 5 and clears the two oldest to 8-token placeholders: 150 + 7 x 10 + 5 x 200 +
    2 x 8 = 1,236 (1,620 without the gap rule)."""
    events = [("S", 100, 0), ("U", 50, 1)]
    for k in range(7):
        events += [("C", 10, 2 + 2 * k, f"c{k}"), ("R", 200, 3 + 2 * k, f"c{k}")]
    events.append(("A", 10, 4_000))
    main = _main(run(engine, replay_input(events), get_policy("claude-code-microcompact"))[0])
    assert main[-1]["prompt_tokens"] == 1_236
    assert main[-2]["prompt_tokens"] == 150 + 6 * 10 + 6 * 200  # 2 s after the one before: nothing cleared
    assert _main(run(engine, replay_input(events), get_policy("claude-code"))[0])[-1]["prompt_tokens"] == 1_620
