"""Session pruning (OpenClaw contextPruning, mode cache-ttl) on a hand-built continuity with
hand-computed answers, in both engines and in the context tracker.

Window 20,000 tokens, OpenClaw's defaults lowered to tokens (chars = 4 x tokens): soft trim
at 0.3 (6,000 tokens of messages), hard clear at 0.5 (10,000), a trimmed result is 772
tokens (1,500 + 1,500 chars + marker and note), a result is trimmed when it is longer than
1,000 tokens (4,000 chars), hard clear needs 12,500 prunable tokens (50,000 chars).

Requests (a run of outputs is one): 0 at 2 s (C1), 1 at 4 s (C2), 2 at 6 s (C3), 3 at 8 s
(C4), 4 at GAP s (A5), 5 at GAP + 10 s (A6). Context at request 4: S 1,000 + U 100 + C1 10 +
R1 5,000 + C2 10 + R2 5,000 + C3 10 + R3 500 + C4 10 + R4 3,000 = 14,640 (0.732 of the
window). The last 3 assistant turns (requests 1-3) are protected from C2 (row 4) on, so R1
(row 3) is the only prunable result.
"""

from __future__ import annotations

import polars as pl
import pytest
from _tiny import replay_input
from test_semantics import ENGINES, run

from workbench.engine import enums as E
from workbench.engine.policy import Policy, Pruning
from workbench.engine.presets import get_policy
from workbench.evaluate.context import ContextTracker

WINDOW = 20_000
R1 = 3  # the row of the one prunable result


def continuity(gap: float):
    return replay_input([("S", 1000, 0), ("U", 100, 1), ("C", 10, 2, "c1"), ("R", 5000, 3, "c1"),
                         ("C", 10, 4, "c2"), ("R", 5000, 5, "c2"), ("C", 10, 6, "c3"), ("R", 500, 7, "c3"),
                         ("C", 10, 8, "c4"), ("R", 3000, 9, "c4"), ("A", 10, gap), ("U", 50, gap + 1),
                         ("A", 10, gap + 10)], window=WINDOW)


PRUNING = Policy("p", pruning=Pruning(mode="cache-ttl"))


def _main(ledger):
    return [r for r in ledger if r["call_kind"] == E.CallKind.MAIN]


def _pruned(row) -> bool:
    return bool(row["flags"] & E.LedgerFlag.PRUNED)


@pytest.mark.parametrize("engine", ENGINES)
def test_after_the_ttl_the_request_is_sent_soft_trimmed_and_the_next_one_in_full(engine):
    """Request 4 comes 392 s after request 3 (>= the 300 s ttl): R1 is trimmed to 772 ->
    14,640 - 5,000 + 772 = 10,412 (0.5206 of the window, still >= 0.5, but 772 prunable tokens
    are under the 12,500 minimum: no hard clear). The cache expired too (392 s > 300 s):
    10,412 written instead of 14,640. Request 5 (10 s later) is not pruned: 14,640 + A5 10 +
    U 50 = 14,700, of which it reads back only S, U, C1 (1,110) and writes 13,590 (an edit)."""
    ledger, _ = run(engine, continuity(400), PRUNING)
    main = _main(ledger)
    assert [r["prompt_tokens"] for r in main] == [1100, 6110, 11_120, 11_630, 10_412, 14_700]
    assert [_pruned(r) for r in main] == [False, False, False, False, True, False]
    assert (main[4]["cache_read_tokens"], main[4]["cache_write_tokens"], main[4]["cache_loss"]) == \
        (0, 10_412, E.CacheLoss.TTL)
    assert (main[4]["context_before"], main[4]["context_after"]) == (14_640, 10_412)
    assert (main[5]["cache_read_tokens"], main[5]["cache_write_tokens"], main[5]["cache_loss"]) == \
        (1110, 13_590, E.CacheLoss.EDIT)


@pytest.mark.parametrize("engine", ENGINES)
def test_without_pruning_the_same_requests_write_less_in_total(engine):
    """The cost of a transient prune: unpruned, request 4 writes 14,640 and request 5 reads it
    back and writes 60 (14,700 in all), against 10,412 + 13,590 = 24,002 pruned."""
    ledger, _ = run(engine, continuity(400), Policy("raw"))
    main = _main(ledger)
    assert [(r["cache_read_tokens"], r["cache_write_tokens"]) for r in main[4:]] == [(0, 14_640), (14_640, 60)]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_hard_clear_clears_oldest_first_until_under_the_ratio(engine):
    """minPrunableToolChars 2,000 (500 tokens): the trimmed R1 (772 >= 500) is cleared to the
    8-token placeholder: 10,412 - 772 + 8 = 9,648 (0.48 < 0.5: clearing stops there)."""
    pol = Policy("p", pruning=Pruning(mode="cache-ttl", min_prunable_tool_chars=2_000))
    main = _main(run(engine, continuity(400), pol)[0])
    assert main[4]["prompt_tokens"] == 9_648 and _pruned(main[4])
    assert main[5]["prompt_tokens"] == 14_700 and main[5]["cache_read_tokens"] == 1110


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("change", [{"gap": 300}, {"keep_last_assistants": 5}, {"soft_trim_ratio": 0.75},
                                    {"mode": "off"}])
def test_no_prune_before_the_ttl_with_too_few_assistant_turns_or_under_the_soft_ratio(engine, change):
    """A gap of 292 s (< 300), 5 protected turns (request 4 has only 4 before it), a soft
    ratio of 0.75 (> 0.732) or pruning off: request 4 is sent in full, 14,640."""
    change = dict(change)  # the parameter is shared by both engines' cases
    gap = change.pop("gap", 400)
    pol = Policy("p", pruning=Pruning(**{"mode": "cache-ttl", **change}))
    main = _main(run(engine, continuity(gap), pol)[0])
    assert main[4]["prompt_tokens"] == 14_640 and not any(_pruned(r) for r in main)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["openclaw-pruning", "openclaw-pruning-flush"])
def test_the_presets_prune_request_4(engine, name):
    """Both presets on the 20k window with a 4k reserve (compaction at 16,000, never reached:
    at most 14,700): request 4 is sent trimmed, 10,412. With the flush (at 16,000 - 4,000 =
    12,000) a flush call comes first at request 4 (14,640 + its 120-token instruction)."""
    pol = get_policy(name, {"provider.context_window": WINDOW, "trigger.reserve_tokens": 4_000})
    ledger, _ = run(engine, continuity(400), pol)
    main = _main(ledger)
    assert main[4]["prompt_tokens"] == 10_412 and [_pruned(r) for r in main].count(True) == 1
    flushes = [r["prompt_tokens"] for r in ledger if r["call_kind"] == E.CallKind.FLUSH]
    assert flushes == ([14_760] if name.endswith("flush") else [])


def test_the_context_tracker_sees_the_prune_of_that_request_only():
    """Request 4's prompt holds R1 trimmed (not its full text): raw_rows and shows leave it
    out and tokens is the sent 10,412; request 5 holds R1 in full again (14,700)."""
    inp = continuity(400)
    events = pl.DataFrame(schema={"policy": pl.String, "continuity_id": pl.String, "event_type": pl.String,
                                  "request": pl.Int64})
    from workbench.engine.provider import resolve_provider
    from workbench.engine.run import replay

    prov = resolve_provider(PRUNING, continuity_model=inp.model, continuity_window=inp.context_window)
    _, _, record = replay(inp, PRUNING, prov, record=True)
    tracker = ContextTracker(inp, PRUNING, events, record=record)
    tracker.advance(4)
    assert tracker.tokens(4) == 10_412 and R1 not in tracker.raw_rows(4) and not tracker.shows(R1, 4)
    assert tracker.pruned(4) == {R1: E.PruneState.TRIMMED}
    tracker.advance(5)
    assert tracker.tokens(5) == 14_700 and R1 in tracker.raw_rows(5) and tracker.shows(R1, 5)


def test_pruning_is_checked_and_kept_out_of_old_digests():
    from workbench.engine.policy_schema import check_field
    from workbench.errors import PolicyError

    assert Policy("raw").digest() == Policy("raw", pruning=Pruning()).digest()
    assert Policy("raw").digest() != PRUNING.digest()
    with pytest.raises(PolicyError):
        check_field("pruning.soft_trim_ratio", 1.5)
    with pytest.raises(PolicyError):
        Policy("p", pruning=Pruning(mode="always"))


def test_the_context_tracker_agrees_with_both_engines_where_pruning_fires(tmp_path):
    """A generated multi-actor continuity (idle gaps of minutes between speakers) under
    openclaw-pruning-flush on a 12k window with a 4k reserve and a 2,000-char prunable
    minimum: requests are sent pruned, both soft-trimmed and hard-cleared, and the tracker's
    prompt size is the ledger's ``context_after`` at every main request, in both engines."""
    from workbench.engine.run import simulate
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    ds = generate_dataset(GeneratorConfig(profile="multi-actor", events=1500, seed=2), tmp_path / "ds")
    pol = get_policy("openclaw-pruning-flush", {"provider.context_window": 12_000, "trigger.reserve_tokens": 4_000,
                                                "flush.soft_threshold_tokens": 1_000,
                                                "pruning.min_prunable_tool_chars": 2_000})
    for engine in ENGINES:
        res = simulate(ds, [pol], engine=engine)
        inp = next(iter(res.inputs.values()))
        main = res.ledger.filter(pl.col("call_kind") == "main")
        pruned = main.filter((pl.col("flags") & E.LedgerFlag.PRUNED) > 0)
        assert pruned.height >= 5, engine
        tracker = ContextTracker(inp, pol, res.events, record=res.prompt_record(pol.name, inp.continuity_id))
        states = set()
        for r, expected in zip(main["request"].to_list(), main["context_after"].to_list(), strict=True):
            tracker.advance(r)
            assert tracker.tokens(r) == expected, (engine, r)
            states |= set(tracker.pruned(r).values())
        assert states == {E.PruneState.TRIMMED, E.PruneState.CLEARED}, engine
