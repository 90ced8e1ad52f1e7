"""The dataset text index (workbench/evaluate/dataset_text.py): every event's text by
(continuity, row), read dictionary-encoded (one string per distinct text)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from workbench.evaluate.dataset_text import DatasetText, _text_codes
from workbench.synth.generate import GeneratorConfig, generate_dataset


def test_text_codes_unify_the_chunks_dictionaries_and_read_null_as_empty():
    a = pa.array(["x", "y", None, "x"]).dictionary_encode()
    b = pa.array(["z", "x", "z"]).dictionary_encode()
    texts, codes = _text_codes(pa.chunked_array([a, b]))
    assert codes.dtype == np.int32
    assert [texts[c] for c in codes.tolist()] == ["x", "y", "", "x", "z", "x", "z"]
    assert len(texts) == len(set(texts))
    empty = pa.chunked_array([], type=pa.dictionary(pa.int32(), pa.string()))
    texts, codes = _text_codes(empty)
    assert texts == [] and codes.size == 0


@pytest.mark.parametrize("events", [1500])
def test_every_event_text_is_found_by_its_row(tmp_path, events):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=events, seed=3), tmp_path / "d")
    dt = DatasetText(ds)
    ev = ds.events(columns=["continuity", "seq", "text"]).sort("continuity", "seq")
    assert len(dt.texts) == ev["text"].fill_null("").n_unique()
    for (c,), part in ev.partition_by("continuity", as_dict=True, maintain_order=True).items():
        rows = list(range(part.height))
        assert dt.row_texts(int(c), rows) == part["text"].fill_null("").to_list()
        spans = dt.span_events(int(c), rows[::-1])
        assert [e.seq for e in spans] == part["seq"].to_list()[::-1]
        assert [e.text for e in spans] == part["text"].fill_null("").to_list()[::-1]
        assert dt.span_events(int(c), rows[:3]) == spans[::-1][:3]
        assert dt.span_events(int(c), []) == ()
    assert pl.Series(dt.texts).is_unique().all()
