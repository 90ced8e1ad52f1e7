"""The modelled summarizer's decisions as numbers (workbench.summarize.decisions): the compiled
uniforms against Python's own generator, order independence of batched draws, and the text
written from a decision record holding exactly what the record says."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_summarize_modelled import make_request

from workbench.summarize.decisions import (
    ACTIONS,
    FACT_DROP,
    FACT_KEEP,
    FACT_PARAPHRASE,
    NEGATIVE_KEEP,
    SECRET_COPY,
    SECRET_OMIT,
    SECRET_PARTIAL,
    draw_label_decisions,
    label_generator,
    label_uniforms,
)
from workbench.summarize.modelled import ModelledSummarizer


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), min_size=1, max_size=20))
def test_compiled_uniforms_are_pythons_first_draws(seeds):
    got = label_uniforms(np.array(seeds, dtype=np.uint64))
    assert got.tolist() == [random.Random(s).random() for s in seeds]


def test_uniforms_of_small_and_word_edge_seeds():
    seeds = [0, 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**63 - 1, 2**64 - 1]
    assert label_uniforms(np.array(seeds, dtype=np.uint64)).tolist() == [random.Random(s).random() for s in seeds]


def _model(**kw):
    return ModelledSummarizer(seed=5, p_retain_fact=0.5, p_paraphrase_fact=0.3, p_copy_secret=0.4,
                              p_partial_secret=0.3, p_keep_negative=0.5, **kw)


def _same(a, b):
    assert a.labels == b.labels and a.written == b.written and a.action.tolist() == b.action.tolist()


def test_drawn_together_or_alone_in_any_order_the_decisions_are_the_same():
    reqs = [make_request(i, n_facts=4, n_secrets=4) for i in range(40)]
    model = _model()
    together = draw_label_decisions(model, reqs)
    order = list(range(len(reqs)))
    random.Random(1).shuffle(order)
    shuffled = draw_label_decisions(model, [reqs[i] for i in order])
    for k, i in enumerate(order):
        _same(shuffled[k], together[i])
        _same(draw_label_decisions(model, [reqs[i]])[0], together[i])
        # the labels' order in the request does not matter
        rev = dataclasses.replace(reqs[i], labels=tuple(reversed(reqs[i].labels)))
        _same(draw_label_decisions(model, [rev])[0], together[i])
    counts = sum(np.bincount(d.action, minlength=len(ACTIONS)) for d in together)
    # every action of facts and secrets happens at these probabilities
    for action in (FACT_KEEP, FACT_PARAPHRASE, FACT_DROP, SECRET_COPY, SECRET_PARTIAL, SECRET_OMIT):
        assert counts[action] > 0, ACTIONS[action]


def test_each_action_is_the_label_generators_first_draw_against_the_probabilities():
    reqs = [make_request(i, n_facts=3, n_secrets=3) for i in range(30)]
    model = _model()
    for req, dec in zip(reqs, draw_label_decisions(model, reqs), strict=True):
        for lb, action in zip(dec.labels, dec.action.tolist(), strict=True):
            u = label_generator(model.seed, req.continuity_id, req.draw, lb.label_id).random()
            if lb.is_fact:
                assert (action == FACT_KEEP) == (u < 0.5)
            else:
                assert action == (SECRET_COPY if u < 0.4 else SECRET_PARTIAL if u < 0.4 + 0.3 else SECRET_OMIT)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_facts=st.integers(0, 5), n_secrets=st.integers(0, 5),
       target=st.sampled_from([60, 400, 2000]), copy_form=st.sampled_from(["surface", "value"]))
def test_the_text_written_from_the_decisions_holds_exactly_what_they_say(seed, n_facts, n_secrets, target,
                                                                         copy_form):
    req = make_request(seed, n_facts=n_facts, n_secrets=n_secrets, target_tokens=target)
    model = _model(copy_form=copy_form, p_hallucinate=0.0, p_marker_leak=0.0)
    dec = model.decide(req)
    text = model.write(req, dec).text
    assert model.summarize(req).text == text  # summarize is decide, then write
    for lb, action, written in zip(dec.labels.labels, dec.labels.action.tolist(), dec.labels.written, strict=True):
        if lb.is_fact:
            # a kept fact's answer is in the text; a paraphrased one only in its other form;
            # a dropped one nowhere (filler never carries a label's text)
            assert (lb.value in text) == (action == FACT_KEEP), (ACTIONS[action], lb)
            if action == FACT_PARAPHRASE:
                assert written in text
            continue
        copied = model.copied_form(lb)
        if action == SECRET_COPY:
            assert copied in text
        elif action == SECRET_PARTIAL:
            assert written in text and written != copied and copied not in text
        elif action == SECRET_OMIT:
            assert copied not in text and lb.surface not in text
        else:
            assert action == NEGATIVE_KEEP or lb.surface not in text
    assert model.write(req, dec).retained == dec.retained() == tuple(
        lb.label_id for lb, a in zip(dec.labels.labels, dec.labels.action.tolist(), strict=True)
        if a in (FACT_KEEP, SECRET_COPY))


def test_hallucinations_and_marker_leaks_are_written_as_decided():
    model = ModelledSummarizer(seed=3, p_copy_secret=0.5, p_hallucinate=0.5, p_marker_leak=0.7)
    seen = set()
    for i in range(60):
        req = make_request(i, n_facts=2, n_secrets=3)
        dec = model.decide(req)
        res = model.write(req, dec)
        h, m = dec.hallucinated, dec.marker
        assert res.diagnostics["hallucinated"] == (h is not None)
        if h is not None:
            assert h["text"] in res.text or (m is not None and m["target"] is not None)
            assert not any(h["text"] in ev.text for ev in req.events)  # never in the source
        if m is not None:
            assert m["text"] in res.text
            seen.add(m["source"])
            if m["source"] == "copied":
                assert m["target"] in dec.labels.ids(SECRET_COPY)
        assert res.diagnostics["marker_leaks"] == ([] if m is None else [
            {k: v for k, v in m.items() if k not in ("replaces", "target")}])
    assert seen == {"copied", "hallucinated", "fresh"}
