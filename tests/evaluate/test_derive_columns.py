"""The derived-text loop's dataset access as columns (workbench/evaluate/dataset_text.py,
workbench/evaluate/texts.py): a span is handed to the summarizer as
:class:`~workbench.summarize.base.SpanEvents` (four array gathers, event objects only when
iterated), a span's labels are one gather, and what the loop keeps (memo keys, the span
event objects, the checkpoints' rows) does not hold a text or a Python int per row. The
event-at-a-time code they replace is kept here as the oracle."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.continuity.enums import KIND_NAMES, ROLE_NAMES
from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.texts import derive_texts
from workbench.summarize.base import SpanEvent, SpanEvents
from workbench.synth.generate import GeneratorConfig, generate_dataset


def oracle_span_events(dt: DatasetText, cont: int, rows) -> tuple[SpanEvent, ...]:
    """One SpanEvent per row, read row by row."""
    d = dt.by_cont[cont]
    return tuple(SpanEvent(seq=int(d["seq"][r]), kind=KIND_NAMES[int(d["kind"][r])],
                           role=ROLE_NAMES[int(d["role"][r])], text=dt.texts[int(d["code"][r])]) for r in rows)


def oracle_labels(dt: DatasetText, cont: int, rows) -> tuple:
    """The span's labels by a membership test per label, in the labels' order."""
    label_rows, labels = dt._cont_labels(cont)
    inside = set(int(r) for r in rows)
    return tuple(lb for r, lb in zip(label_rows.tolist(), list(labels), strict=True) if r in inside)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=1500, seed=4, secrets=40, facts=12),
                          tmp_path_factory.mktemp("cols") / "ds")
    return ds, DatasetText(ds)


def _rows(dt: DatasetText):
    """Row lists of a continuity: sorted, shuffled, repeated, empty."""
    n = len(dt.by_cont[0]["seq"])
    return st.lists(st.integers(0, n - 1), max_size=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_span_events_and_labels_equal_the_row_by_row_oracle(planted, data):
    _, dt = planted
    rows = data.draw(_rows(dt))
    if data.draw(st.booleans()):
        rows = sorted(set(rows))
    want = oracle_span_events(dt, 0, rows)
    got = dt.span_events(0, rows)
    assert isinstance(got, SpanEvents) and len(got) == len(want)
    # the columns, read without making an event object
    assert got.seqs.tolist() == [e.seq for e in want]
    assert got.texts == [e.text for e in want] and got.kinds == [e.kind for e in want]
    assert got.roles == [e.role for e in want]
    # and the sequence of events it stands for
    assert got == want and tuple(got) == want and list(reversed(got)) == list(reversed(want))
    assert hash(got) == hash(want) and pickle.loads(pickle.dumps(got)) == want
    if want:
        assert got[0] == want[0] and got[-1] == want[-1] and got[1:] == want[1:]
    assert dt.labels(0, rows) == oracle_labels(dt, 0, rows)


def test_every_label_row_is_found_and_unsorted_spans_keep_the_labels_order(planted):
    _, dt = planted
    label_rows, _ = dt._cont_labels(0)
    assert label_rows.size  # the dataset plants labels in continuity 0
    rows = np.unique(label_rows)[::-1].tolist()
    assert dt.labels(0, rows) == oracle_labels(dt, 0, rows) == tuple(dt._cont_labels(0)[1].tolist())
    assert dt.labels(0, []) == ()


def test_span_event_objects_are_shared_between_spans_and_released(planted):
    _, dt = planted
    a, b = dt.span_events(0, [3, 4, 5]), dt.span_events(0, [5, 6])
    assert a[2] is b[0]  # one object per event while the loop runs
    dt.release_span_events()
    assert not dt._span_events
    assert dt.span_events(0, [5])[0] == a[2]


@pytest.fixture(scope="module")
def folded(planted):
    ds, _ = planted
    policy = get_policy("llm-summary", {"provider.context_window": 25_000})
    assert not policy.compaction.accumulate  # each summary is folded into the next one
    res = simulate(ds, [policy], engine="reference")
    dt = DatasetText(ds)
    texts, checkpoints = derive_texts(res, ds, dataset_text=dt)
    return res, dt, texts, checkpoints


def test_the_derived_loop_keeps_no_text_in_memo_keys_and_no_span_event_objects(folded):
    _, dt, texts, _ = folded
    summaries = texts.filter(pl.col("kind") == "summary")
    assert summaries.height > 2  # so later summaries had a previous one
    for key in dt.summaries:
        assert not any(isinstance(part, str) and len(part) > 200 for part in key), key
    assert not dt._span_events  # released when the texts were derived


def test_checkpoint_rows_are_compact_and_the_rows_the_tracker_gave(folded):
    res, dt, _, checkpoints = folded
    assert checkpoints and any(len(c.dropped) for c in checkpoints)
    for c in checkpoints:
        for rows in (c.dropped, c.retained):
            assert rows.itemsize == 8 and sys.getsizeof(rows) < 100 + 8 * len(rows)
            assert all(isinstance(r, int) for r in rows) and list(rows) == sorted(rows)
    c = next(c for c in checkpoints if len(c.dropped))
    inp = res.inputs[c.continuity_id]
    assert inp.seq[list(c.dropped)].tolist() == inp.seq[np.asarray(c.dropped)].tolist()


def test_span_columns_read_alike_from_columns_and_from_event_objects(planted):
    from workbench.summarize.base import span_columns

    _, dt = planted
    rows = [7, 3, 3, 11, 0]
    got = dt.span_events(0, rows)
    assert span_columns(got) == span_columns(oracle_span_events(dt, 0, rows))
    assert got._events is None  # read without making an event object
    assert span_columns(()) == ([], [], [], [])


def test_the_modelled_summarizer_reads_a_span_by_its_columns(planted):
    """A dataset's span reaches the modelled summarizer's text as columns: writing a summary
    (labels, filler, hallucination source check) makes no event object, and the text is the
    one written from the event objects."""
    from workbench.summarize.base import SummaryRequest
    from workbench.summarize.modelled import ModelledSummarizer

    _, dt = planted
    rows = list(range(0, 1400))
    labels = dt.labels(0, rows)
    assert labels  # so the writer looks up the labelled events too
    got = dt.span_events(0, rows)

    def request(events):
        return SummaryRequest("c", "art-1", int(got.seqs[0]), int(got.seqs[-1]), events, None, 900,
                              labels=labels, purpose="compaction")

    model = ModelledSummarizer(seed=3, p_hallucinate=1.0)  # (its fresh secret reads the span's texts)
    text = model.summarize(request(got)).text
    assert got._events is None
    assert text == model.summarize(request(oracle_span_events(dt, 0, rows))).text
