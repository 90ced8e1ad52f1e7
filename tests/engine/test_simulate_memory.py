"""What the memory-lean paths of ``simulate`` give is what the plain ones give: events read
a column at a time from a Parquet file of many row groups prepare like one read, and
``simulate(keep_inputs=False)`` (the command line without ``--evaluate``) writes the same
ledger, events and summary as ``keep_inputs=True``."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    from bundled_logs import BUNDLED_LOGS

    from workbench.sources.importer import import_paths

    ds = import_paths([BUNDLED_LOGS], tmp_path_factory.mktemp("bundled") / "ds")
    assert ds.continuities().height > 1
    return ds


def _rewritten(ds, out, **write_options):
    """A copy of ``ds`` whose events.parquet is rewritten (the manifest recording it anew)."""
    import orjson

    from workbench.util.atomic import sha256_file

    out.mkdir()
    for f in ds.path.iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    pl.read_parquet(ds.path / "events.parquet").write_parquet(out / "events.parquet", **write_options)
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    manifest["files"]["events.parquet"] = {"sha256": sha256_file(out / "events.parquet"),
                                           "bytes": (out / "events.parquet").stat().st_size}
    (out / "manifest.json").write_bytes(orjson.dumps(manifest))
    return out


def _same_inputs(a, b):
    assert a.continuity_id == b.continuity_id
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        elif isinstance(x, pl.Series):
            assert x.cast(pl.String).to_list() == y.cast(pl.String).to_list(), f.name
        elif f.name != "tool_names":  # codes may number names otherwise; compared by row below
            assert x == y, f.name
    assert [a.tool_name(i) for i in range(a.n)] == [b.tool_name(i) for i in range(b.n)]


def test_many_row_groups_prepare_like_one(bundled, tmp_path):
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.prepare import prepare_continuity
    from workbench.engine.run import _read_columns, prepare_dataset

    chunked = load_dataset(_rewritten(bundled, tmp_path / "chunked", row_group_size=97))
    assert chunked.events(columns=["seq"])["seq"].n_chunks() > 1
    frame = _read_columns(chunked, ["seq", "kind", "name"])
    assert frame["seq"].n_chunks() == 1 and frame["kind"].n_chunks() == 1
    assert frame["name"].cast(pl.String).to_list() == chunked.events(columns=["name"])["name"].to_list()
    for a, b in zip(prepare_dataset(load_dataset(bundled.path), "cl100k"), prepare_dataset(chunked, "cl100k"),
                    strict=True):
        _same_inputs(a, b)
    # the columns as read (one array each, strings categorical) prepare like the stored frame
    stored = pl.read_parquet(bundled.path / "events.parquet")
    read = _read_columns(chunked, stored.columns)
    for row in bundled.continuities().head(3).iter_rows(named=True):
        def prepared(events, row=row):
            part = events.filter(pl.col("continuity") == row["continuity"]).sort("seq")
            return prepare_continuity(part, continuity=row["continuity"], continuity_id=row["continuity_id"],
                                      tokenizer="cl100k", model=row["model"], provider=row["provider"],
                                      context_window=row["context_window"])

        _same_inputs(prepared(stored), prepared(read))


def test_freeing_inputs_changes_no_output(bundled):
    from workbench.engine.run import simulate

    policies = ["claude-code", "observation-masking", "anthropic-clear-tool-uses", "as-recorded"]
    kept = simulate(bundled, policies)
    freed = simulate(bundled, policies, keep_inputs=False)
    from workbench.sources.compaction_calls import parents_of_calls

    # every continuity but the compaction calls (their parent's compaction's call, never replayed)
    replayed = bundled.continuities().height - len(parents_of_calls(bundled.manifest))
    assert freed.inputs == {} and len(kept.inputs) == replayed == 121
    for name in ("ledger", "events", "summary"):
        assert_frame_equal(getattr(freed, name), getattr(kept, name))
    assert freed.config["policies"] == kept.config["policies"]
