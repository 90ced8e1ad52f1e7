"""No call is ever sent over the context window (issue 26, item 1), on both engines: a main request
that cannot be made to fit is a counted failed request (the provider's error), a policy call sends
the newest part that fits, and the opaque presets keep their provider items within the window."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from _tiny import replay_input

from workbench.engine import enums as E
from workbench.engine.metrics import replay_totals
from workbench.engine.policy import Compaction, CutRule, Policy
from workbench.engine.pricing import price_table
from workbench.engine.provider import resolve_provider
from workbench.engine.records import LEDGER, TOTALS
from workbench.engine.reference import replay_reference

ENGINES = ["reference"]
if importlib.util.find_spec("workbench.engine.kernel") is not None:
    ENGINES.append("kernel")


def replay(engine: str, inp, policy: Policy):
    prov = resolve_provider(policy, continuity_model=inp.model, continuity_window=inp.context_window)
    cfg, params = policy.lower(prov.window, prov.cache_mode, prov.ttl_ms, prov.granularity)
    excluded = inp.excluded_mask(policy.compaction.exclude_tools)
    if engine == "kernel":
        from workbench.engine.kernel import replay_kernel

        return replay_kernel(inp, cfg, params, excluded)
    return replay_reference(inp, cfg, params, excluded)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_request_that_cannot_fit_fails_and_is_counted_never_sent_over(engine):
    """The pinned system prompt alone is over the window: nothing the emergency action may drop
    makes the request fit, so each main request is the provider's error: flagged FAILED, 0 prompt
    tokens billed, the attempted context kept, and counted in failed_requests (not the peak)."""
    window = 1000
    inp = replay_input([("S", 1200, 0), ("U", 50, 1), ("A", 20, 2), ("U", 40, 3), ("A", 20, 4)], window)
    policy = Policy("pinned", trigger=CutRule(kind="none", keep_first=1), emergency="truncate")
    led, ev = replay(engine, inp, policy)
    main = led[led[:, LEDGER.call_kind] == E.CallKind.MAIN]
    assert (led[:, LEDGER.prompt_tokens] <= window).all()
    assert ((main[:, LEDGER.flags] & E.LedgerFlag.FAILED) != 0).all()
    assert (main[:, LEDGER.prompt_tokens] == 0).all() and (main[:, LEDGER.cache_read_tokens] == 0).all()
    assert (main[:, LEDGER.context_after] > window).all()  # what the harness tried to send
    totals, costs = replay_totals(led, ev, price_table("claude-sonnet-4-5"))
    assert totals[TOTALS.failed_requests] == main.shape[0] == 2
    assert totals[TOTALS.peak_context_tokens] == 0 and totals[TOTALS.full_requests] == 0 and costs[0] == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_compaction_call_over_the_window_sends_the_newest_part_that_fits(engine):
    """The summarizer's prompt (the context plus its instruction) would exceed the window: it is
    clipped to the window and reads back at most the fixed prefix; the request after it fits."""
    window = 1000
    events = [("S", 100, 0), ("U", 300, 1), ("A", 50, 2), ("U", 300, 3), ("A", 50, 4), ("U", 400, 5),
              ("A", 50, 6)]
    inp = replay_input(events, window)
    policy = Policy("s", trigger=CutRule(kind="tokens", tokens=900, keep_first=1),
                    compaction=Compaction(kind="summary", ratio=0.1, floor=10, cap=100, prompt_tokens=200))
    led, _ = replay(engine, inp, policy)
    assert (led[:, LEDGER.prompt_tokens] <= window).all()
    comp = led[led[:, LEDGER.call_kind] == E.CallKind.COMPACTION]
    assert comp.shape[0] == 1 and comp[0, LEDGER.prompt_tokens] == window
    assert comp[0, LEDGER.context_before] + 200 > window  # it was over before the clip
    assert comp[0, LEDGER.cache_read_tokens] <= inp.prefix_tokens
    assert not (led[:, LEDGER.flags] & E.LedgerFlag.FAILED).any()


def test_the_engines_agree_on_failed_and_clipped_calls():
    if "kernel" not in ENGINES:
        pytest.skip("no kernel engine")
    window = 1000
    inp = replay_input([("S", 1200, 0), ("U", 50, 1), ("A", 20, 2), ("U", 900, 3), ("A", 20, 4)], window)
    for policy in (Policy("pinned", trigger=CutRule(kind="none", keep_first=1), emergency="truncate"),
                   Policy("s", trigger=CutRule(kind="tokens", tokens=900, keep_first=0),
                          compaction=Compaction(kind="summary", ratio=0.1, floor=10, cap=100, prompt_tokens=200))):
        ref, kev = replay("reference", inp, policy), replay("kernel", inp, policy)
        assert np.array_equal(ref[0], kev[0]) and np.array_equal(ref[1], kev[1]), policy.name


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("preset,window", [("openai-responses-compact", 8_000), ("codex-remote", 20_000),
                                           ("holon-openai", 20_000)])
def test_opaque_presets_stay_within_the_window(engine, preset, window):
    """Issue 26: openai-responses-compact's items accumulated without limit (peak 459,198 tokens
    in a 200k window; here 49,650 in an 8k one). Each compaction item replaces everything before
    it (OpenAI's compaction guide), so no main request fails and no call goes over the window."""
    from dataclasses import replace

    from test_parity import generated

    from workbench.engine.presets import PRESETS

    inp = replace(generated("long-running", 2000, 2), context_window=window)
    led, _ = replay(engine, inp, PRESETS[preset])
    main = led[led[:, LEDGER.call_kind] == E.CallKind.MAIN]
    assert (led[:, LEDGER.prompt_tokens] <= window).all(), preset
    assert (main[:, LEDGER.context_after] <= window).all(), preset
    assert not (main[:, LEDGER.flags] & E.LedgerFlag.FAILED).any(), preset
