"""The semantics that matter, each on a hand-built continuity with a hand-computed answer.
Every test runs on both engines: a kernel that fails to import fails them, never skips them."""

from __future__ import annotations

import numpy as np
import pytest
from _tiny import replay_input

from workbench.engine import enums as E
from workbench.engine.checkpoints import Checkpoint, select_checkpoint
from workbench.engine.policy import Compaction, CutRule, Flush, Policy, Provider
from workbench.engine.provider import resolve_provider
from workbench.engine.records import EVENT_COLUMNS, LEDGER_COLUMNS
from workbench.engine.reference import replay_reference

ENGINES = ["reference", "kernel"]


def run(engine: str, inp, policy: Policy):
    prov = resolve_provider(policy, continuity_model=inp.model, continuity_window=inp.context_window)
    cfg, params = policy.lower(prov.window, prov.cache_mode, prov.ttl_ms, prov.granularity)
    excluded = inp.excluded_mask(policy.compaction.exclude_tools)
    if engine == "kernel":
        from workbench.engine.kernel import replay_kernel

        led, ev = replay_kernel(inp, cfg, params, excluded)
    else:
        led, ev = replay_reference(inp, cfg, params, excluded)
    ledger = [dict(zip(LEDGER_COLUMNS, map(int, row), strict=True)) for row in led]
    events = [dict(zip(EVENT_COLUMNS, map(int, row), strict=True)) for row in ev]
    return ledger, events


SUMMARY = Compaction(kind="summary", ratio=0.1, floor=0, cap=10_000, prompt_tokens=100)


@pytest.mark.parametrize("engine", ENGINES)
def test_cached_prefix_after_compaction_is_only_what_precedes_the_summary(engine):
    inp = replay_input([("S", 2000, 0), ("U", 500, 1), ("A", 100, 2), ("U", 500, 3),
                        ("A", 100, 4), ("U", 3000, 5), ("A", 100, 6)])
    pol = Policy("t", trigger=CutRule(kind="tokens", tokens=5000, keep_first=1), compaction=SUMMARY)
    ledger, events = run(engine, inp, pol)
    main = [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    comp = [r for r in ledger if r["call_kind"] == E.CallKind.COMPACTION]
    # request 0: 2000 + 500, cold: everything written
    assert (main[0]["prompt_tokens"], main[0]["cache_read_tokens"], main[0]["cache_write_tokens"]) == (2500, 0, 2500)
    # request 1: previous prompt read back, the new 600 written
    assert (main[1]["prompt_tokens"], main[1]["cache_read_tokens"], main[1]["cache_write_tokens"]) == (3100, 2500, 600)
    # request 2: 6200 >= 5000 -> the summarizer call reads the whole previous prompt ...
    assert len(comp) == 1
    assert (comp[0]["prompt_tokens"], comp[0]["cache_read_tokens"], comp[0]["output_tokens"]) == (6300, 3100, 420)
    # ... and the next request reads only the system prompt that precedes the summary
    assert main[2]["prompt_tokens"] == 2000 + 420
    assert main[2]["cache_read_tokens"] == 2000
    assert main[2]["cache_write_tokens"] == 420
    assert main[2]["cache_loss"] == E.CacheLoss.COMPACTION
    (cp,) = [e for e in events if e["type"] == E.EventType.CHECKPOINT]
    assert (cp["from_row"], cp["to_row"], cp["item_tokens"], cp["span_tokens"]) == (1, 5, 420, 4200)


@pytest.mark.parametrize("engine", ENGINES)
def test_cache_expires_after_the_ttl_gap(engine):
    # Anthropic: 5-minute TTL, refreshed by every use
    inp = replay_input([("S", 2000, 0), ("U", 100, 1), ("A", 50, 2), ("U", 100, 400),
                        ("A", 50, 401), ("U", 100, 690), ("A", 50, 691), ("U", 100, 992), ("A", 50, 993)])
    ledger, _ = run(engine, inp, Policy("raw"))
    assert [r["cache_read_tokens"] for r in ledger] == [0, 0, 2250, 0]
    assert [r["cache_loss"] for r in ledger] == [E.CacheLoss.COLD, E.CacheLoss.TTL, E.CacheLoss.NONE, E.CacheLoss.TTL]
    # 401 -> 691 is 290 s (within 300 s); 691 -> 993 is 302 s (expired)


@pytest.mark.parametrize("engine", ENGINES)
def test_flush_fires_once_per_compaction_count_exactly_at_the_formula(engine):
    # compaction at 8,000; soft 1,000 below it -> flush threshold 7,000
    events = [("S", 1000, 0), ("U", 5999, 1), ("A", 0, 2),  # context 6,999: no flush
              ("U", 1, 3), ("A", 0, 4),  # context 7,000: flush
              ("U", 500, 5), ("A", 0, 6),  # 7,500: already flushed at this compaction count
              ("U", 1000, 7), ("A", 0, 8),  # 8,500 >= 8,000: compaction (count 1); then 7,000+?
              ("U", 6000, 9), ("A", 0, 10)]  # after compaction 1000 + summary + 6000 >= 7,000: flush again
    pol = Policy("f", trigger=CutRule(kind="tokens", tokens=8000, keep_first=1, message_boundary=False),
                 compaction=Compaction(kind="summary", ratio=0.1, floor=0, cap=10_000, prompt_tokens=0),
                 flush=Flush(enabled=True, soft_threshold_tokens=1000, output_tokens=300),
                 provider=Provider(context_window=10_000))
    ledger, evs = run(engine, replay_input(events, window=10_000), pol)
    flushes = [r for r in ledger if r["call_kind"] == E.CallKind.FLUSH]
    assert [f["request"] for f in flushes] == [1, 4]
    assert flushes[0]["context_before"] == 7000
    assert flushes[0]["output_tokens"] == 300
    # the flush output never reaches the context
    main = [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    assert main[1]["context_after"] == 7000
    assert [e["request"] for e in evs if e["type"] == E.EventType.CHECKPOINT] == [3]


def _stride_cut(engine, events):
    pol = Policy("s", trigger=CutRule(kind="stride", every_messages=3, keep_first=1), compaction=SUMMARY)
    inp = replay_input(events)
    _, evs = run(engine, inp, pol)
    return inp, [e for e in evs if e["type"] == E.EventType.CHECKPOINT]


@pytest.mark.parametrize("engine", ENGINES)
def test_stride_anchors_to_the_nth_message_and_ignores_side_effects(engine):
    plain = [("S", 10, 0), ("U", 10, 1), ("A", 10, 2), ("U", 10, 3), ("A", 10, 4), ("U", 10, 5), ("A", 10, 6)]
    dense = []
    for e in plain:
        dense.append(e)
        dense.extend([("X", 5, e[2])] * 7)  # seven side effects after every message
    inp_a, cps_a = _stride_cut(engine, plain)
    inp_b, cps_b = _stride_cut(engine, dense)
    # messages: S(1) U(2) A(3): the 3rd message is the first assistant message
    assert [c["to_row"] for c in cps_a] == [2, 5]
    ids_a = [inp_a.message_id[c["to_row"]] for c in cps_a]
    ids_b = [inp_b.message_id[c["to_row"]] for c in cps_b]
    assert ids_a == ["m2", "m5"]
    assert [inp_b.kind[c["to_row"]] for c in cps_b] == [1, 1]  # message events
    assert [int(inp_b.msg_ordinal[c["to_row"]]) for c in cps_b] == [3, 6]
    assert len(ids_b) == len(ids_a)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cut_never_splits_a_tool_pair(engine):
    # parallel tool calls: the latest allowed cut (row 5, after R1) would split C2/R2
    events = [("S", 100, 0), ("U", 100, 1), ("A", 100, 2), ("C", 100, 3, "c1"), ("C", 100, 4, "c2"),
              ("R", 3000, 5, "c1"), ("R", 3000, 6, "c2"), ("A", 100, 7), ("U", 100, 8), ("A", 100, 9)]
    pol = Policy("p", trigger=CutRule(kind="tokens", tokens=5000, keep_first=1, keep_last_events=3,
                                      message_boundary=False), compaction=SUMMARY)
    inp = replay_input(events)
    _, evs = run(engine, inp, pol)
    (cp,) = [e for e in evs if e["type"] == E.EventType.CHECKPOINT]
    # tail rows 1..8; keep the last 3 (6, 7, 8) -> latest 5, where c2 is still open -> snap to 2
    assert cp["to_row"] == 2
    pair = {3: 5, 4: 6}
    for call, result in pair.items():
        assert not (call <= cp["to_row"] < result)


@pytest.mark.parametrize("engine", ENGINES)
def test_message_boundary_cut_lands_on_a_message(engine):
    events = [("S", 100, 0), ("U", 100, 1), ("A", 100, 2), ("C", 100, 3, "c1"), ("R", 6000, 4, "c1"),
              ("A", 100, 5), ("C", 100, 6, "c2"), ("R", 100, 7, "c2"), ("A", 100, 8)]
    inp = replay_input(events)
    # request 1 (first output row 5) sees 6,400 tokens >= 6,000; the latest allowed cut is row 4
    free = Policy("m", trigger=CutRule(kind="tokens", tokens=6000, keep_first=1, message_boundary=False),
                  compaction=SUMMARY)
    _, evs = run(engine, inp, free)
    assert [e["to_row"] for e in evs if e["type"] == E.EventType.CHECKPOINT][0] == 4  # a tool result
    bound = Policy("m", trigger=CutRule(kind="tokens", tokens=6000, keep_first=1), compaction=SUMMARY)
    _, evs = run(engine, inp, bound)
    cps = [e for e in evs if e["type"] == E.EventType.CHECKPOINT]
    assert cps and all(inp.is_message[c["to_row"]] for c in cps)
    assert cps[0]["to_row"] == 2  # the assistant message before the tool call


def test_adr0011_tie_break_picks_the_later_checkpoint_frame():
    frames = [Checkpoint(frame_seq=100, from_seq=0, to_seq=40, artifact_id="first"),
              Checkpoint(frame_seq=105, from_seq=0, to_seq=40, artifact_id="racer"),
              Checkpoint(frame_seq=103, from_seq=0, to_seq=60, artifact_id="beyond")]
    assert select_checkpoint(frames, from_seq=50).artifact_id == "racer"
    # completion order must not matter: the stream order (frame_seq) arbitrates
    assert select_checkpoint(list(reversed(frames)), from_seq=50).artifact_id == "racer"
    assert select_checkpoint(frames, from_seq=60).artifact_id == "beyond"
    assert select_checkpoint(frames, from_seq=39) is None


@pytest.mark.parametrize("engine", ENGINES)
def test_overflow_is_recorded_when_the_policy_lets_the_context_exceed_the_window(engine):
    events = [("S", 500, 0), ("U", 1000, 1), ("A", 100, 2), ("U", 1500, 3), ("A", 100, 4),
              ("U", 200, 5), ("A", 100, 6)]
    pol = Policy("raw", emergency="truncate", provider=Provider(context_window=3000))
    ledger, evs = run(engine, replay_input(events, window=3000), pol)
    main = [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    # request 1: 500 + 1000 + 100 + 1500 = 3100 > 3000 -> overflow, truncated to fit
    assert [bool(r["flags"] & E.LedgerFlag.OVERFLOW) for r in main] == [False, True, False]
    assert main[1]["context_before"] == 3100
    # emergency truncation: the earliest safe cut that fits drops the first user message
    assert main[1]["context_after"] == 500 + 100 + 1500
    assert main[2]["context_after"] == 2100 + 100 + 200
    assert sum(e["type"] == E.EventType.OVERFLOW for e in evs) == 1
    assert np.all([r["context_after"] <= 3000 for r in main])


@pytest.mark.parametrize("engine", ENGINES)
def test_an_overflow_truncation_is_a_truncation_not_a_compaction(engine):
    """Issue 15: the overflow's last resort drops the oldest events; it is counted as a
    truncation (its own event type and ledger flag, its own cache-loss cause), never as a
    compaction or a checkpoint frame."""
    from workbench.engine.metrics import replay_totals
    from workbench.engine.records import EVENT, N_EVENT, N_LEDGER, TOTALS

    events = [("S", 500, 0), ("U", 1000, 1), ("A", 100, 2), ("U", 1500, 3), ("A", 100, 4),
              ("U", 200, 5), ("A", 100, 6)]
    pol = Policy("raw", emergency="truncate", provider=Provider(context_window=3000))
    inp = replay_input(events, window=3000)
    ledger, evs = run(engine, inp, pol)
    main = [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    assert [e["type"] for e in evs] == [E.EventType.OVERFLOW, E.EventType.TRUNCATION]
    (cut,) = [e for e in evs if e["type"] == E.EventType.TRUNCATION]
    # it dropped the first user message (row 1) only: 3100 -> 2100 tokens
    assert (cut["request"], cut["from_row"], cut["to_row"], cut["span_events"], cut["span_tokens"]) == (1, 1, 1, 1, 1000)
    assert (cut["tokens_before"], cut["tokens_after"], cut["artifact_no"]) == (3100, 2100, -1)
    assert [bool(r["flags"] & E.LedgerFlag.TRUNCATED) for r in main] == [False, True, False]
    assert not any(r["flags"] & E.LedgerFlag.COMPACTED for r in main)
    assert main[1]["cache_loss"] == E.CacheLoss.TRUNCATION  # the prefix it broke: not a compaction's
    led = np.array([list(r.values()) for r in ledger], np.int64).reshape(-1, N_LEDGER)
    ev = np.array([list(e.values()) for e in evs], np.int64).reshape(-1, N_EVENT)
    prov = resolve_provider(pol, continuity_model=inp.model, continuity_window=inp.context_window)
    totals, _ = replay_totals(led, ev, prov.prices)
    assert (totals[TOTALS.compactions], totals[TOTALS.truncations], totals[TOTALS.overflows]) == (0, 1, 1)
    assert ev[:, EVENT.type].tolist().count(E.EventType.CHECKPOINT) == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_an_overflow_truncation_does_not_rearm_the_flush(engine):
    """The flush runs once per compaction count; a truncation is not a compaction, so it
    does not open a new count (it used to: every truncation re-armed the flush)."""
    # window 3,000; compaction at 2,500 but the last 100 events stay raw, so it never finds a
    # cut; soft 500 below it -> flush threshold 2,000
    events = [("S", 500, 0), ("U", 1000, 1), ("A", 100, 2),  # 1,500: no flush
              ("U", 1500, 3), ("A", 100, 4),  # 3,100: flush, no cut, overflow, truncated to 2,100
              ("U", 200, 5), ("A", 100, 6)]  # 2,400 >= 2,000, but no compaction since: no flush
    pol = Policy("stuck-flush", emergency="truncate", provider=Provider(context_window=3000),
                 trigger=CutRule(kind="tokens", tokens=2500, keep_first=1, keep_last_events=100),
                 compaction=Compaction(kind="summary", ratio=0.1, floor=0, cap=10_000, prompt_tokens=0),
                 flush=Flush(enabled=True, soft_threshold_tokens=500, output_tokens=50))
    ledger, evs = run(engine, replay_input(events, window=3000), pol)
    assert [r["request"] for r in ledger if r["call_kind"] == E.CallKind.FLUSH] == [1]
    assert [e["type"] for e in evs].count(E.EventType.TRUNCATION) == 1
    main = [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]
    assert main[2]["context_before"] == 2400
