"""The modelled summarizer writes, from columns, the very summary its former writer wrote
(tests/modelled_oracle.py: one object per line, the summary rendered twice, the filler of
:func:`~workbench.summarize.filler.reference_fill`): text, retained labels and diagnostics,
on the spans of a generated dataset (chained: each summary carried into the next) and on
random spans, labels, budgets, purposes and previous summaries; and the carried lines of a
previous summary are the ones the former line-by-line split carried."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelled_oracle import oracle_carry, oracle_write

from workbench.continuity.dataset import load_dataset
from workbench.evaluate.dataset_text import DatasetText
from workbench.summarize.base import SpanEvent, SpanLabel, SummaryRequest
from workbench.summarize.modelled import ModelledSummarizer
from workbench.synth.generate import GeneratorConfig, generate_dataset


def _same_summary(s: ModelledSummarizer, req: SummaryRequest):
    """The summary written now and by the oracle (from the oracle's own carried lines)."""
    new = s.summarize(req)
    old_dec = dataclasses.replace(s.decide(req))
    rng = np.random.default_rng(0)
    assert s._carry(rng, req.previous_summary, 10**9) == oracle_carry(s, np.random.default_rng(0),
                                                                       req.previous_summary, 10**9)
    old = oracle_write(s, req, old_dec)
    assert new.text == old.text
    assert new == old
    return new


@pytest.fixture(scope="module")
def coding(tmp_path_factory):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=11, secrets=80, facts=30),
                          tmp_path_factory.mktemp("oracle") / "ds")
    return DatasetText(load_dataset(ds.path))


SUMMARIZERS = [
    ModelledSummarizer(seed=2, p_copy_secret=0.5, p_partial_secret=0.3, p_hallucinate=0.5, p_marker_leak=0.5),
    ModelledSummarizer(seed=5, p_retain_fact=0.4, p_paraphrase_fact=0.4, task_state=True, copy_form="value"),
    ModelledSummarizer(seed=9, max_item_chars=80, p_marker_leak=1.0, p_copy_secret=0.0),
]


@pytest.mark.parametrize("s", SUMMARIZERS, ids=["leaky", "task-state", "short-items"])
@pytest.mark.parametrize("purpose", ["compaction", "flush", "merge"])
def test_chained_summaries_of_a_generated_dataset(coding, s, purpose):
    n = len(coding.by_cont[0]["seq"])
    previous = None
    for k, (start, length, target) in enumerate(((0, 60, 300), (40, 700, 4_000), (500, 2500, 30_000),
                                                 (n - 300, 300, 0), (900, 1200, 12_000))):
        rows = list(range(start, min(n, start + length)))
        events = coding.span_events(0, rows)
        req = SummaryRequest("c", f"art-{k}", events[0].seq, events[-1].seq, events, previous, target,
                             labels=coding.labels(0, rows), purpose=purpose, draw_key=f"{purpose}-{k}")
        previous = _same_summary(s, req).text


WORDS = ["error", "failed", "we decided", "next step", "use", "TODO", "src/app/main.py", "./a/b.txt",
         "6432", "the", "cache", "layer", "returns", "early", "Kemi", "timed out", "plan", "later",
         "\u2026", "done.", "```", "#", "- ", "  ", "\t", "\u2028"]
LINES = ["- kept line one", "### Task state", "### Task state (done, remaining, next step)", "## Memory notes",
         "```", "```python", "print('x')", "", "   ", "  - indented item  ", "#not a heading?", "plain note",
         "- ", "\u00a0- odd space\u00a0", "### Earlier context"]


@st.composite
def requests(draw):
    n = draw(st.integers(0, 10))
    events = []
    for seq in range(n):
        kind, role = draw(st.sampled_from([("message", "user"), ("message", "assistant"),
                                           ("tool_result", "tool"), ("tool_call", "assistant"),
                                           ("reasoning", "assistant")]))
        sentences = []
        for _ in range(draw(st.integers(0, 6))):
            words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
            sentences.append(" ".join(words).capitalize() + draw(st.sampled_from([".", "!", "\n", ". "])))
        events.append(SpanEvent(10 + seq, kind, role, " ".join(sentences)))
    labels = []
    for k in range(draw(st.integers(0, 5)) if n else 0):
        ev = events[draw(st.integers(0, n - 1))]
        a = draw(st.integers(0, len(ev.text)))
        b = draw(st.integers(a, min(len(ev.text), a + 20)))
        surface = ev.text[a:b] if draw(st.booleans()) else "sk-" + "x" * draw(st.integers(0, 30))
        is_fact = draw(st.booleans())
        kind = draw(st.sampled_from(["port", "task", "aws_access_key", "uuid", "hex_digest"]))
        value = surface if is_fact else draw(st.sampled_from([surface, surface.upper(), "AKIA" + surface]))
        labels.append(SpanLabel(f"l{k}", kind, ev.seq + draw(st.sampled_from([0, 0, 0, 99])), a, b,
                                surface, value, is_fact))
    previous = "\n".join(draw(st.lists(st.sampled_from(LINES), max_size=14))) if draw(st.booleans()) else None
    return SummaryRequest("c", "art", 10, 10 + max(n - 1, 0), tuple(events), previous,
                          draw(st.integers(0, 1500)), labels=tuple(labels),
                          purpose=draw(st.sampled_from(["compaction", "flush", "merge"])),
                          draw_key=str(draw(st.integers(0, 10**6))))


@settings(max_examples=300, deadline=None)
@given(requests(), st.integers(0, 3), st.floats(0, 1), st.booleans(), st.sampled_from([40, 240]))
def test_random_requests(req, seed, p, task_state, max_chars):
    s = ModelledSummarizer(seed=seed, p_retain_fact=p, p_paraphrase_fact=(1 - p) / 2, p_copy_secret=0.4,
                           p_partial_secret=0.3, p_hallucinate=0.3, p_marker_leak=0.5, task_state=task_state,
                           max_item_chars=max_chars)
    _same_summary(s, req)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=30), st.integers(0, 400), st.integers(0, 2**32),
       st.booleans(), st.floats(0, 1))
def test_carried_lines(lines, limit, seed, task_state, p):
    s = ModelledSummarizer(p_retain_fact=p, task_state=task_state)
    previous = "\n".join(lines)
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    assert s._carry(a, previous, limit) == oracle_carry(s, b, previous, limit)
    assert a.bit_generator.state == b.bit_generator.state
