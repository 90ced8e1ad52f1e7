"""Planted facts: spans, kinds, determinism."""

from __future__ import annotations

import numpy as np

from workbench.synth.facts import FACT_KINDS, PlantedFact, plant_fact


def test_span_is_the_answer():
    rng = np.random.default_rng(0)
    for i in range(500):
        f = plant_fact(rng, i)
        assert isinstance(f, PlantedFact)
        assert f.text[f.start:f.end] == f.answer
        assert f.answer and f.answer.strip() == f.answer
        assert f.probe.endswith("?")
        assert f.fact_id == f"fact-{i:05d}"


def test_kinds_round_robin_and_diverse():
    rng = np.random.default_rng(1)
    facts = [plant_fact(rng, i) for i in range(4 * len(FACT_KINDS))]
    assert [f.kind for f in facts] == list(FACT_KINDS) * 4  # round robin, in the registry's order
    answers = {k: {f.answer for f in facts if f.kind == k} for k in FACT_KINDS}
    # diverse: each kind varies its answer, and no answer of one kind is one of another kind
    assert all(len(a) == 4 for a in answers.values()), answers
    assert len(set().union(*answers.values())) == sum(len(a) for a in answers.values())
    f = plant_fact(np.random.default_rng(1), 0, kind="port")
    assert f.kind == "port" and f.answer.isdigit()


def test_deterministic_and_varied():
    a = [plant_fact(np.random.default_rng(7), i) for i in range(30)]
    b = [plant_fact(np.random.default_rng(7), i) for i in range(30)]
    assert a == b
    rng = np.random.default_rng(8)
    answers = [plant_fact(rng, i).answer for i in range(300)]
    assert len(set(answers)) > 250
