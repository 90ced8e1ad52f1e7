"""The compiled round robin of the filler (:func:`workbench.summarize.take_nb.take_nb`) takes
what its plain twin :func:`workbench.summarize.filler._take` takes, in the same order, and
leaves the same sections with a heading: on random queues, costs, repeated texts, rooms and
sections already present."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.summarize import filler as F
from workbench.summarize.take_nb import take_nb


@st.composite
def queues(draw):
    """Per section a queue of text numbers; text ``k`` has its own length (equal numbers,
    equal texts)."""
    lengths = draw(st.lists(st.integers(3, 300), min_size=12, max_size=12))
    texts = [f"t{k}".ljust(n, "x") for k, n in enumerate(lengths)]
    return {name: draw(st.lists(st.integers(0, 11), max_size=15)) for name in F.DRAW_ORDER}, texts


@settings(max_examples=400, deadline=None)
@given(queues(), st.integers(-5, 3000), st.sets(st.sampled_from(F.DRAW_ORDER)))
def test_the_kernel_takes_what_the_twin_takes(drawn, room, present):
    qs, texts = drawn
    twin_present = set(present)
    want = F._take({s: [(s, k) for k in range(len(q))] for s, q in qs.items()}, room, twin_present, F._TITLES,
                   lambda s, ref: texts[qs[s][ref[1]]], lambda s, ref: ref)
    order = [s for s in F.FILL_ORDER if qs[s]]
    flat = [(s, k) for s in order for k in range(len(qs[s]))]
    costs = np.array([len(texts[qs[s][k]]) + 3 for s, k in flat], np.int64)
    tids = np.array([qs[s][k] for s, k in flat], np.int64)
    bounds = np.concatenate([[0], np.cumsum([len(qs[s]) for s in order])]).astype(np.int64)
    heading = np.array([len(F._TITLES[s]) + 7 for s in order], np.int64)
    had = np.array([s in present for s in order], dtype=np.bool_)
    got = take_nb(costs, tids, bounds, heading, had, room, len(texts))
    assert [flat[k] for k in got.tolist()] == want
    assert {s for s, h in zip(order, had.tolist(), strict=True) if h} | present == twin_present


def test_few_needles_and_the_automaton_find_the_same_regions(monkeypatch):
    texts = ["port 6432 and 64321 and x6432", "the token sk-abc is sk-abcd", "6432", "", "Kemi Duarte, Kemi"]
    needles = ["6432", "sk-abc", "Kemi", "Kemi Duarte", "32 a", "x"]
    one_by_one = F._guard_regions(texts, needles)
    monkeypatch.setattr(F, "FEW_NEEDLES", 0)
    automaton = F._guard_regions(texts, needles)
    assert {t: sorted(r) for t, r in one_by_one.items()} == {t: sorted(r) for t, r in automaton.items()}
    assert one_by_one["6432"] == [(0, 4)]
    assert one_by_one["the token sk-abc is sk-abcd"] == [(10, 16)]  # (sk-abcd: not a whole token)
