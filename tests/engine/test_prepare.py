"""prepare_continuity's vectorised derivations against a row-by-row oracle: tool-call
pairing and open calls, tool names on calls and their results, output tokens per
request, exclusion masks, message ids by row."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.continuity.enums import EventFlag, EventKind
from workbench.engine.prepare import prepare_continuity
from workbench.synth.generate import GeneratorConfig, build_continuity


def _oracle(ev: pl.DataFrame, visible: np.ndarray, req_first_row: np.ndarray) -> dict:
    rows = ev.to_dicts()
    row_of_seq = {r["seq"]: i for i, r in enumerate(rows)}
    open_after, names, open_now = [], [None] * len(rows), 0
    closes: dict[int, int] = {}
    for i, r in enumerate(rows):
        j = row_of_seq.get(r["pair_seq"], -1) if r["pair_seq"] >= 0 else -1
        call = visible[i] and r["kind"] == EventKind.TOOL_CALL
        if call:
            names[i] = r["name"]
            if j >= 0:
                names[j] = r["name"]
            if j > i:
                open_now += 1
                closes[j] = closes.get(j, 0) + 1
        open_now -= closes.pop(i, 0)
        open_after.append(open_now)
    req_of_first = {int(ev["request"][int(f)]): k for k, f in enumerate(req_first_row)}
    out_tok = [0] * len(req_first_row)
    for i, r in enumerate(rows):
        if visible[i] and r["flags"] & EventFlag.OUTPUT and r["request"] in req_of_first:
            out_tok[req_of_first[r["request"]]] += r["tokens_cl100k"]
    return {"open_after": open_after, "names": names, "out_tok": out_tok}


@given(profile=st.sampled_from(["coding", "chat", "long-running", "multi-actor"]),
       events=st.integers(50, 1500), seed=st.integers(0, 50))
@settings(max_examples=25, deadline=None)
def test_vectorised_derivations_match_the_oracle(profile, events, seed):
    c = build_continuity(GeneratorConfig(profile=profile, events=events, seed=seed, facts=0, secrets=0,
                                         hard_negatives=0))
    ev = pl.from_arrow(c.events)
    inp = prepare_continuity(ev, continuity=0, continuity_id="x", tokenizer="cl100k")
    want = _oracle(ev, inp.visible, inp.req_first_row)
    assert inp.open_after.tolist() == want["open_after"]
    assert [inp.tool_name(i) for i in range(inp.n)] == want["names"]
    assert inp.req_output_tokens.tolist() == want["out_tok"]
    used = sorted({n for n in want["names"] if n})
    for tools in ((), tuple(used[:1]), tuple(used), ("no-such-tool",)):
        mask = inp.excluded_mask(tools)
        assert mask.tolist() == [n is not None and n in tools for n in want["names"]]
    ids = ev["message_id"].to_list()
    assert all(inp.message_id[i] == ids[i] for i in range(0, inp.n, max(1, inp.n // 50)))


def test_pairs_pointing_outside_the_continuity_are_unpaired():
    ev = pl.DataFrame({
        "seq": [0, 1, 2, 5], "kind": [EventKind.MESSAGE, EventKind.TOOL_CALL, EventKind.TOOL_RESULT,
                                       EventKind.TOOL_CALL],
        "role": [1, 2, 3, 2], "flags": [0, EventFlag.OUTPUT, 0, EventFlag.OUTPUT],
        "request": [0, 0, 1, 1], "ts_ms": [0, 1, 2, 3], "pair_seq": [-1, 2, 1, 9],
        "name": [None, "bash", None, "read"], "message_id": ["m0", None, None, None],
        "tokens_cl100k": [5, 7, 11, 13]})
    inp = prepare_continuity(ev, continuity=0, continuity_id="x", tokenizer="cl100k")
    assert [inp.tool_name(i) for i in range(4)] == [None, "bash", "bash", "read"]
    assert inp.open_after.tolist() == [0, 1, 0, 0]  # seq 9 does not exist: the last call never opens
    assert inp.req_output_tokens.tolist() == [7, 13]


def test_continuities_are_sliced_when_sorted_and_sorted_when_not():
    from workbench.engine.run import _sorted_bounds

    ev = pl.DataFrame({"continuity": [0, 0, 0, 1, 1, 3], "seq": [0, 1, 5, 0, 2, 0]})
    bounds = _sorted_bounds(ev)
    assert bounds is not None and [bounds(c) for c in (0, 1, 3)] == [(0, 3), (3, 5), (5, 6)]
    assert _sorted_bounds(ev.reverse()) is None
    assert _sorted_bounds(ev.with_columns(seq=pl.Series([0, 1, 1, 0, 2, 0]))) is None  # a repeated seq


def test_shuffled_events_prepare_like_sorted_ones(tmp_path):
    import dataclasses

    from bundled_logs import BUNDLED_LOGS

    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import prepare_dataset
    from workbench.sources.importer import import_paths

    ds = import_paths([BUNDLED_LOGS], tmp_path / "ds")  # every bundled log
    assert ds.continuities().height > 1
    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    for f in ds.path.iterdir():
        (shuffled / f.name).write_bytes(f.read_bytes())
    pl.read_parquet(ds.path / "events.parquet").sample(fraction=1.0, shuffle=True, seed=1) \
        .write_parquet(shuffled / "events.parquet")
    # the manifest records each file's size and hash: a rewritten file is recorded anew
    import orjson

    from workbench.util.atomic import sha256_file

    manifest = orjson.loads((shuffled / "manifest.json").read_bytes())
    manifest["files"]["events.parquet"] = {"sha256": sha256_file(shuffled / "events.parquet"),
                                           "bytes": (shuffled / "events.parquet").stat().st_size}
    (shuffled / "manifest.json").write_bytes(orjson.dumps(manifest))
    for a, b in zip(prepare_dataset(load_dataset(ds.path), "cl100k"),
                    prepare_dataset(load_dataset(shuffled), "cl100k"), strict=True):
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if isinstance(x, np.ndarray):
                assert np.array_equal(x, y), f.name
            elif isinstance(x, pl.Series):
                assert x.equals(y), f.name
            else:
                assert x == y, f.name
