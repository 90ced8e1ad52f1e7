"""Tool-call pairing: the vectorised version agrees with the plain-Python oracle."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.continuity.enums import EventKind
from workbench.continuity.pairing import pair_tool_events_py
from workbench.continuity.validate import pair_tool_events

CALL, RESULT = int(EventKind.TOOL_CALL), int(EventKind.TOOL_RESULT)
IDS = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "", "toolu_01", "é", "a\x00b", "日本"]),
                st.text(max_size=4))
ROW = st.tuples(st.integers(0, 3),  # continuity
                st.sampled_from([CALL, CALL, RESULT, RESULT, int(EventKind.MESSAGE), int(EventKind.OPAQUE)]),
                IDS)


def _check(cont, seq, kind, ids) -> None:
    want_pair, want_unpaired = pair_tool_events_py(cont, seq, kind, ids)
    for call_ids in (ids, pa.array(ids, type=pa.string()), pa.array(ids, type=pa.large_string())):
        pair, unpaired = pair_tool_events(cont, seq, kind, call_ids)
        assert pair.dtype == np.int64 and unpaired.dtype == bool
        np.testing.assert_array_equal(pair, want_pair)
        np.testing.assert_array_equal(unpaired, want_unpaired)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(rows=st.lists(ROW, max_size=60), grouped=st.booleans(), seq_base=st.integers(0, 10**12))
def test_pairing_matches_the_oracle(rows, grouped, seq_base):
    if grouped:  # the importer's layout: continuities in order, seq from 0 in each
        rows = sorted(rows, key=lambda r: r[0])
    cont = np.array([r[0] for r in rows], dtype=np.int32)
    kind = np.array([r[1] for r in rows], dtype=np.int8)
    ids = [r[2] for r in rows]
    seq = seq_base + np.arange(len(rows), dtype=np.int64)
    _check(cont, seq, kind, ids)


@pytest.mark.parametrize("n", [1, 1000, 30_000])  # 30k: a Python list is Arrow-encoded too
def test_pairing_on_realistic_streams(n):
    """Calls answered soon after, reused ids, orphans, ids shared across continuities."""
    rng = np.random.default_rng(n)
    cont = np.sort(rng.integers(0, 7, n)).astype(np.int32)
    kind = rng.choice([CALL, RESULT, 1, 5], n, p=[0.3, 0.3, 0.3, 0.1]).astype(np.int8)
    ids = [f"call_{rng.integers(0, 40)}" if k in (CALL, RESULT) and rng.random() < 0.97 else None
           for k in kind.tolist()]
    _check(cont, np.arange(n, dtype=np.int64), kind, ids)


def test_sliced_arrow_input_and_empty():
    ids = pa.array(["x", "a", None, "a", "y"], type=pa.large_string()).slice(1, 3)
    pair, unpaired = pair_tool_events(np.zeros(3, np.int32), np.arange(3), np.array([CALL, CALL, RESULT]), ids)
    assert pair.tolist() == [2, -1, 0] and unpaired.tolist() == [False, True, False]
    pair, unpaired = pair_tool_events(np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int8), [])
    assert pair.size == 0 and unpaired.size == 0
