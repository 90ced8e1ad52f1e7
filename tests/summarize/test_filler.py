"""The modelled summarizer's filler drawn from per-text candidate arrays is the filler of
the plain implementation (every summary rescanning its events), item for item and draw for
draw: on spans of a generated coding continuity (small rooms, spans big enough to be read
through a random subset, planted labels and their text elsewhere) and on random spans."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.continuity.dataset import load_dataset
from workbench.evaluate.dataset_text import DatasetText
from workbench.summarize import filler as F
from workbench.summarize.base import SpanEvent
from workbench.summarize.modelled import ModelledSummarizer
from workbench.synth.generate import GeneratorConfig, generate_dataset


def both(seed, events, spans_by_seq, needles, room, titles=F._TITLES, max_chars=240):
    out = []
    for impl in (F.reference_fill, F.fill):
        rng = np.random.default_rng(seed)
        present: set[str] = set()
        items = impl(rng, events, spans_by_seq, needles, room, present, titles, max_chars)
        out.append(([(it.section, it.key, it.text) for it in items], sorted(present),
                    rng.bit_generator.state["state"]))  # the same draws were made
    return out


@pytest.fixture(scope="module")
def coding(tmp_path_factory):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=7, secrets=60, facts=20),
                          tmp_path_factory.mktemp("filler") / "ds")
    return DatasetText(load_dataset(ds.path))


@pytest.mark.parametrize("room", [0, 300, 4_000, 40_000])
def test_generated_spans(coding, room):
    n = len(coding.by_cont[0]["seq"])
    for start, length in ((0, 40), (100, 900), (1200, 1800), (n - 400, 400)):
        rows = list(range(start, min(n, start + length)))
        events = coding.span_events(0, rows)
        labels = coding.labels(0, rows)
        spans_by_seq, needles = F.label_guards(labels)
        ref, new = both(start + room, events, spans_by_seq, needles, room)
        assert new == ref, (start, length, room)


def test_label_strings_elsewhere_are_guarded(coding):
    """A label's text repeated in an event without the label is kept out of the filler."""
    rows = list(range(0, 300))
    events = list(coding.span_events(0, rows))
    events[5] = SpanEvent(events[5].seq, "message", "assistant",
                          "We decided the port is 6432 and the owner is Kemi Duarte. " * 3)
    needles = ["6432", "Kemi Duarte", "43"]
    ref, new = both(3, tuple(events), {}, needles, 20_000)
    assert new == ref
    assert not any("6432" in text for _, _, text in new[0])


WORDS = ["error", "failed", "we decided", "next step", "use", "TODO", "src/app/main.py", "./a/b.txt",
         "../x/y.md", "6432", "the", "cache", "layer", "returns", "early", "Kemi", "a/b/c.tar.gz",
         "timed out", "plan", "later", "\u2026", "done."]


@st.composite
def spans(draw):
    n = draw(st.integers(1, 12))
    events = []
    for seq in range(n):
        kind, role = draw(st.sampled_from([("message", "user"), ("message", "assistant"),
                                           ("tool_result", "tool"), ("reasoning", "assistant")]))
        sentences = []
        for _ in range(draw(st.integers(0, 6))):
            words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
            sentences.append(" ".join(words).capitalize() + draw(st.sampled_from([".", "!", "\n", ". "])))
        events.append(SpanEvent(seq, kind, role, " ".join(sentences)))
    spans_by_seq: dict[int, list] = {}
    for _ in range(draw(st.integers(0, 3))):
        seq = draw(st.integers(0, n - 1))
        a = draw(st.integers(0, 60))
        spans_by_seq.setdefault(seq, []).append((a, a + draw(st.integers(1, 30)), f"l{seq}"))
    needles = draw(st.lists(st.sampled_from(["6432", "Kemi", "cache layer", "src/app/main.py", "a", " "]),
                            max_size=3))
    return tuple(events), spans_by_seq, needles


@settings(max_examples=300, deadline=None)
@given(spans(), st.integers(0, 3000), st.integers(0, 2**32))
def test_random_spans(span, room, seed):
    events, spans_by_seq, needles = span
    ref, new = both(seed, events, spans_by_seq, needles, room, max_chars=60)
    assert new == ref


def test_summaries_are_unchanged_end_to_end(coding, monkeypatch):
    """Whole summaries (labels copied, cut, hallucinated, carried forward) with either filler."""
    import workbench.summarize.modelled as M

    rows = list(range(200, 1400))
    events, labels = coding.span_events(0, rows), coding.labels(0, rows)
    from workbench.summarize.base import SummaryRequest

    reqs = [SummaryRequest("c", f"art-{i}", events[0].seq, events[-1].seq, events, prev, target,
                           labels=labels, purpose=purpose)
            for i, (prev, target, purpose) in enumerate([(None, 2000, "compaction"), ("- carried line\n- other", 500, "flush"),
                                                         (None, 40, "compaction")])]
    s = ModelledSummarizer(seed=2, p_copy_secret=0.5, p_partial_secret=0.3, p_hallucinate=0.5, p_marker_leak=0.5)
    new = [s.summarize(r) for r in reqs]
    def reference_columns(rng, ev, sp, nd, room, present, titles, mx):
        items = F.reference_fill(rng, ev, sp, nd, room, present, titles, mx)
        return F.FillerColumns([it.section for it in items], [it.key[0] for it in items],
                               [it.key[1] for it in items], [it.text for it in items])

    monkeypatch.setattr(M, "fill_columns", reference_columns)
    assert [s.summarize(r) for r in reqs] == new


def test_an_index_that_starts_afresh_keeps_every_summary_whole(coding):
    """Past its limit the index empties itself before a summary gathers its texts, never while
    (a summary's text ids stay valid): summaries drawn through a tiny index equal the reference."""
    index = F.CandidateIndex(240, limit=50)
    for start in (0, 700, 30, 1500, 0):
        rows = list(range(start, start + 120))
        events, labels = coding.span_events(0, rows), coding.labels(0, rows)
        spans_by_seq, needles = F.label_guards(labels)
        got = []
        for impl in (F.reference_fill, lambda *a: F.fill(*a, index=index)):
            rng = np.random.default_rng(start)
            items = impl(rng, events, spans_by_seq, needles, 6_000, set(), F._TITLES, 240)
            got.append([(it.section, it.key, it.text) for it in items])
        assert got[0] == got[1] and got[0], start
        assert len(index.recs) <= 50 + 120


def _plain_subset(rng, events, room, keep):
    limit = max(F.SCAN_MIN_CHARS, F.SCAN_FACTOR * room)
    if sum(len(ev.text) for ev in events) <= limit:
        return list(events)
    chosen, got = [], 0
    for i in rng.permutation(len(events)).tolist():
        if got >= limit:
            break
        chosen.append(i)
        got += len(events[i].text)
    idx = set(chosen) | {i for i, ev in enumerate(events) if ev.seq in keep}
    return [events[i] for i in sorted(idx)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 90_000), min_size=1, max_size=40), st.integers(0, 20_000), st.integers(0, 2**32))
def test_the_scanned_subset_is_the_events_taken_while_under_the_limit(sizes, room, seed):
    events = tuple(SpanEvent(i, "message", "user", "x" * n) for i, n in enumerate(sizes))
    keep = (0, len(sizes) - 1)
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    assert F.scan_subset(a, events, room, keep) == _plain_subset(b, events, room, keep)
    assert a.bit_generator.state == b.bit_generator.state
