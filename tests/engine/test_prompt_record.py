"""The prompt record (workbench.engine.prompt_record): what each call's prompt held, as both
engines record it, on the parity suite's random policies x continuities.

Three checks per replay: the kernel's record equals the reference engine's (every column,
the retained and segment windows listed; per call and per event); the record read back (``PromptView.items``) is the
very prompt the reference engine built for each call; and the context it implies for each
main call is the ledger's ``context_after``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.engine.test_parity import (
    CACHE,
    PROFILES,
    _settings,
    accounting,
    chunk_st,
    expand,
    generated,
    policies,
    tiny_input,
    with_prefix,
)
from workbench.engine import enums as E
from workbench.engine.kernel import replay_kernel
from workbench.engine.policy import Masking, Policy
from workbench.engine.prompt_record import PromptView, ReferenceRecorder, main_calls
from workbench.engine.records import LEDGER
from workbench.engine.reference import replay_reference


def reference_prompts(inp, cfg, params, excluded):
    """The reference replay with its record, and the items of every prompt it sent."""
    sent: list[list] = []
    add = ReferenceRecorder.add

    def keep(self, replay, r, items):
        sent.append(list(items))
        add(self, replay, r, items)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ReferenceRecorder, "add", keep)
        ledger, events, record = replay_reference(inp, cfg, params, excluded, record=True)
    return ledger, events, record, sent


def assert_recorded(inp, policy: Policy, window: int, cache: str = "explicit", ttl_s: float = 300.0,
                    granularity: int = 1) -> None:
    cfg, params = policy.lower(window, int(CACHE[cache]), ttl_s * 1000.0, granularity)
    excluded = inp.excluded_mask(policy.compaction.exclude_tools)
    ref_l, ref_e, ref, sent = reference_prompts(inp, cfg, params, excluded)
    ker_l, ker_e, ker = replay_kernel(inp, cfg, params, excluded, record=True)
    assert np.array_equal(ref_l, ker_l), "the ledgers differ (test_parity.py finds out why)"
    assert np.array_equal(ref_e, ker_e) and np.array_equal(ref.event_artifacts, ker.event_artifacts)
    assert len(ref.after) == len(ker.after) == len(ref_e)
    for e in range(len(ref_e)):
        assert ker.expanded_after(e) == ref.expanded_after(e), (
            f"event {e}: kernel {ker.expanded_after(e)} reference {ref.expanded_after(e)}; {policy.to_dict()}")
    assert len(ref.shown) == len(ker.shown) == len(ref_l) == len(sent)
    assert np.array_equal(ref.rows, ker.rows) or not len(ref_l)  # (no call: no position is read)
    view = PromptView.lowered(ker, inp, cfg, params, excluded)
    mains = set(main_calls(ker_l).tolist())
    for k in range(len(ref_l)):
        r = int(ref_l[k, LEDGER.request])
        assert ker.expanded(k) == ref.expanded(k), (
            f"call {k} (request {r}): kernel {ker.expanded(k)} reference {ref.expanded(k)}; {policy.to_dict()}")
        assert view.items(k, r) == sent[k], f"call {k} (request {r}) read back differs; {policy.to_dict()}"
        if k in mains:
            assert view.sent_tokens(k, r) == ref_l[k, LEDGER.context_after]
            assert ref_l[k, LEDGER.call_kind] == E.CallKind.MAIN


@given(first=st.integers(0, 3000), chunks=st.lists(chunk_st, min_size=20, max_size=80),
       window=st.sampled_from([1000, 4000, 15_000, 60_000]), data=st.data())
@_settings(60)
def test_record_on_hand_built_continuities(first, chunks, window, data):
    inp = with_prefix(tiny_input(first, expand(chunks)), data, window)
    assert_recorded(inp, data.draw(policies(window), label="policy"), window,
                    **data.draw(accounting, label="accounting"))


@given(profile=st.sampled_from(PROFILES), events=st.sampled_from([200, 500, 1000]), seed=st.integers(0, 3),
       window=st.sampled_from([8000, 30_000, 120_000]), data=st.data())
@_settings(8)
def test_record_on_generated_continuities(profile, events, seed, window, data):
    inp = with_prefix(generated(profile, events, seed), data, window)
    assert_recorded(inp, data.draw(policies(window), label="policy"), window,
                    **data.draw(accounting, label="accounting"))


@pytest.mark.parametrize("window", [200_000, 20_000])
def test_record_of_every_preset(window):
    from workbench.engine.presets import PRESETS

    inp = replace(generated("coding", 600, 1), prefix_tokens=0)
    for policy in PRESETS.values():
        assert_recorded(inp, policy, window)


def test_a_masked_output_is_recorded_as_a_placeholder():
    """A hand-checked case: masking after one turn shows the first request's tool result as a
    placeholder in the third request's prompt, and the record says so."""
    events = [("U", 100, 0, 0, 0, 5), ("C", 10, 1, 0, 0, 5), ("R", 50, 1, 0, 0, 5), ("A", 20, 1, 0, 0, 5),
              ("U", 5, 1, 0, 0, 5), ("A", 20, 1, 0, 0, 5), ("U", 5, 1, 0, 0, 5), ("A", 20, 1, 0, 0, 5)]
    inp = tiny_input(0, events)
    policy = Policy("m", masking=Masking(after_turns=1, placeholder_tokens=3))
    assert_recorded(inp, policy, 10_000)
    cfg, params = policy.lower(10_000, int(E.CacheMode.EXPLICIT), 300_000.0, 1)
    ledger, _, rec = replay_kernel(inp, cfg, params, record=True)
    view = PromptView.lowered(rec, inp, cfg, params, None)
    last = int(main_calls(ledger)[-1])
    result_row = int(np.flatnonzero(inp.is_tool_result)[0])
    assert result_row not in view.full_rows(last, inp.n_requests - 1).tolist()
    assert ("row", result_row, 3) in view.items(last, inp.n_requests - 1)


def test_a_run_read_back_replays_the_same_records(tmp_path):
    """A run read from its directory has no record stored: it replays them (kernel), and they
    are the records the run itself kept (whatever engine it ran)."""
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.rundir.read import load_run
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    ds = generate_dataset(GeneratorConfig(profile="coding", events=600, seed=3), tmp_path / "ds")
    small = {"provider.context_window": 20_000}
    res = simulate(ds, [get_policy("observation-masking", small), get_policy("rip-adr0011", small)],
                   engine="reference")
    back, _ = load_run(res.write(tmp_path / "run"))
    assert res.prompts and not back.prompts
    for (name, cid), rec in res.prompts.items():
        again = back.prompt_record(name, cid)
        assert len(rec.shown) == len(again.shown) > 0
        assert [rec.expanded(k) for k in range(len(rec.shown))] == [again.expanded(k) for k in range(len(again.shown))]
