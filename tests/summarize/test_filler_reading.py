"""The filler reads one event text as the plain reading did (tests/modelled_oracle.py): the
sentences split in one call (:func:`~workbench.summarize.base.sentence_bounds`), each
sentence's section found on the lowercase of an ASCII text and only for the patterns whose
words it holds (:func:`~workbench.summarize.filler_text.section_finder`), and every path and
sentence a text offers (:class:`~workbench.summarize.filler_text.TextCandidates`): on random
texts (any case, sentence ends, blank and unicode-space lines, characters that fold to
ASCII letters) and on every text of a generated coding dataset. The span read through its
codes finds the events labels point at as the events do (:func:`~workbench.summarize.base.events_at`),
and one index shared by two datasets' spans fills as the reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelled_oracle import oracle_iter_sentences, oracle_text_candidates

from workbench.continuity.dataset import load_dataset
from workbench.evaluate.dataset_text import DatasetText
from workbench.summarize import filler as F
from workbench.summarize import filler_text as FT
from workbench.summarize.base import SpanEvent, events_at, sentence_bounds
from workbench.synth.generate import GeneratorConfig, generate_dataset

# the patterns' words in several cases, near misses, and characters a case-insensitive match
# folds to ASCII letters (the Kelvin sign to k, the long s to s, the dotted I to i)
WORDS = ["error", "ERRORS", "Exception", "errorx", "xerror", "traceback", "Failed", "timed out", "timed  out",
         "can't", "couldn't", "todo", "TODO:", "next step", "follow-up", "follow up", "followup", "then",
         "Then.", "later", "not yet", "decided", "decision", "we'll", "let's", "use", "user", "uses",
         "reuse", "switching", "plan", "plans", "must", "should", "prefer", "instead",
         "\u212aeep", "\u017fhould", "mu\u017ft", "u\u017fe", "\u0130nstead", "caf\u00e9", "src/app/main.py",
         "the", "cache", "layer", "returns", "early", "x", "a1", "B2", "(note)", "`code`", "*", "-"]
ENDS = [" ", "  ", ". ", "! ", "? ", ".\n", "\n", "\n\n", " \n", "\t", "\u00a0", "\u2028", "\u3000", ".\u2029",
        "\r\n", "... ", "?\"", ".)"]
KINDS = [("message", "user"), ("message", "assistant"), ("tool_result", "tool"), ("tool_call", "assistant"),
         ("reasoning", "assistant"), ("summary", "system")]


@st.composite
def texts(draw):
    parts = []
    for _ in range(draw(st.integers(0, 30))):
        word = draw(st.sampled_from(WORDS))
        parts.append(word.capitalize() if draw(st.booleans()) else word)
        parts.append(draw(st.sampled_from(ENDS)))
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(texts(), st.sampled_from([0, 1, 5, 20]))
def test_sentences_are_split_as_before(text, min_chars):
    assert sentence_bounds(text, min_chars) == list(oracle_iter_sentences(text, min_chars=min_chars))


@settings(max_examples=400, deadline=None)
@given(texts(), st.sampled_from(KINDS))
def test_sections_are_found_as_before(text, kind_role):
    kind, role = kind_role
    section = FT.section_finder(text, kind, role)
    for a, b in sentence_bounds(text, 1):
        assert section(a, b) == F._CODE[F.sentence_section(text[a:b], kind, role)], text[a:b]


def _offered(text: str, kind: str, role: str, max_chars: int) -> dict:
    rec = FT.TextCandidates(text, kind, role, max_chars, lambda xs: list(range(len(xs))))
    paths = [(a, b, rec.path_text(k)) for k, (a, b) in
             enumerate(zip(rec.path_start.tolist(), rec.path_end.tolist(), strict=True))]
    sentences = list(zip(rec.sent_start.tolist(), rec.sent_end.tolist(), rec.sent_section.tolist(), rec.lines,
                         strict=True))
    assert rec.sent_len.tolist() == [len(x) for x in rec.lines]
    assert rec.path_len.tolist() == [len(p) for _, _, p in paths]
    return {"paths": paths, "sentences": sentences}


@settings(max_examples=300, deadline=None)
@given(texts(), st.sampled_from(KINDS), st.sampled_from([30, 240]))
def test_a_text_offers_what_it_offered(text, kind_role, max_chars):
    assert _offered(text, *kind_role, max_chars) == oracle_text_candidates(text, *kind_role, max_chars)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    out = []
    for seed in (3, 4):
        ds = generate_dataset(GeneratorConfig(profile="coding", events=2000, seed=seed, secrets=40, facts=20),
                              tmp_path_factory.mktemp("reading") / f"ds{seed}")
        out.append(DatasetText(load_dataset(ds.path)))
    return out


def test_every_text_of_a_generated_dataset_offers_what_it_offered(datasets):
    from workbench.continuity.enums import KIND_NAMES, ROLE_NAMES

    dt = datasets[0]
    d = dt.by_cont[0]
    seen = set()
    for code, kind, role in zip(d["code"].tolist(), d["kind"].tolist(), d["role"].tolist(), strict=True):
        if (code, kind, role) in seen:
            continue
        seen.add((code, kind, role))
        key = (dt.texts[code], KIND_NAMES[kind], ROLE_NAMES[role])
        assert _offered(*key, 240) == oracle_text_candidates(*key, 240), key
    assert len(seen) > 100


def test_the_events_labels_point_at_are_read_as_the_events_say(datasets):
    dt = datasets[0]
    rows = list(range(100, 700))
    span = dt.span_events(0, rows)
    seqs = {span[0].seq, span[17].seq, span[-1].seq, -5}
    plain = tuple(span)
    want = ({ev.seq: ev.kind for ev in plain if ev.seq in seqs}, {ev.seq: ev.text for ev in plain if ev.seq in seqs})
    assert events_at(span, seqs) == want == events_at(plain, seqs)
    assert events_at(span, set()) == ({}, {})
    # of events sharing a seq, the last
    twice = (SpanEvent(1, "message", "user", "first"), SpanEvent(1, "tool_result", "tool", "second"))
    assert events_at(twice, {1}) == ({1: "tool_result"}, {1: "second"})


def test_one_index_read_by_two_datasets_fills_as_the_reference(datasets):
    """The index keeps the code triples of one dataset's table at a time: spans of two
    datasets in turn (codes meaning different texts) still fill as the reference."""
    index = F.CandidateIndex(240)
    for k, (dt, start) in enumerate([(datasets[0], 0), (datasets[1], 0), (datasets[0], 900), (datasets[1], 300),
                                     (datasets[0], 0)]):
        rows = list(range(start, start + 400))
        events, labels = dt.span_events(0, rows), dt.labels(0, rows)
        spans_by_seq, needles = F.label_guards(labels)
        got = []
        for impl in (F.reference_fill, lambda *a: F.fill(*a, index=index), F.fill):
            rng = np.random.default_rng(k)
            items = impl(rng, events, spans_by_seq, needles, 5_000, set(), F._TITLES, 240)
            got.append([(it.section, it.key, it.text) for it in items])
        assert got[0] == got[1] == got[2] and got[0], k
