"""``wb.context_bundle``: a request's bundle compiled from a written run, its summaries read
from the run's artifact store; with the checkpoint frames or a blob missing (or a blob
rewritten), compiled from a replay of the truth (ADR-0011: caches are best-effort)."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

import workbench as wb
from workbench.errors import WorkbenchError
from workbench.rundir.artifacts import ARTIFACTS, BLOBS, artifact_id


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rb")
    ds = wb.generate("coding", events=700, seed=6, out=tmp / "ds")
    policy = wb.get_policy("llm-summary", {"provider.context_window": 25_000})
    return wb.simulate(ds, [policy]).write(tmp / "run")


def _late_request(run) -> int:
    ev = pl.read_parquet(run / "events.parquet")
    return int(ev.filter(pl.col("event_type") == "continuity_compaction_checkpoint_created")["request"].max())


def test_a_bundle_reads_its_summaries_from_the_run(run):
    r = _late_request(run)
    b = wb.context_bundle(run, "llm-summary", r)
    assert b["source"] == "run" and b["fallback_reason"] is None
    refs = [i["artifact_id"] for i in b["items"] if i["type"] == "summary_ref"]
    assert len(refs) == 1 and set(b["artifacts"]) == set(refs)
    assert artifact_id(b["artifacts"][refs[0]]) == refs[0]  # the blob is the document its id names
    kinds = [i["type"] for i in b["items"]]
    assert kinds.index("summary_ref") > 0 and b["items"][-1]["type"] != "summary_ref"
    with pytest.raises(WorkbenchError, match="request 1000000 is not one of"):
        wb.context_bundle(run, "llm-summary", 10**6)


@pytest.mark.parametrize("damage", ["blob removed", "blob rewritten", "frames removed"])
def test_a_missing_or_rewritten_cache_falls_back_to_truth_replay(run, tmp_path, damage):
    r = _late_request(run)
    before = wb.context_bundle(run, "llm-summary", r)
    (art,) = before["artifacts"]
    copy = shutil.copytree(run, tmp_path / "copy")
    blob = copy / ARTIFACTS / BLOBS / art
    if damage == "blob removed":
        blob.unlink()
    elif damage == "blob rewritten":
        blob.write_bytes(blob.read_bytes().replace(b"Modelled", b"Rewritten"))
    else:
        (copy / "events.parquet").unlink()
    after = wb.context_bundle(copy, "llm-summary", r)
    assert after["source"] == "truth replay", after["fallback_reason"]
    reason = {"blob removed": "cannot be read", "blob rewritten": "rewritten",
              "frames removed": "no events table"}[damage]
    assert reason in after["fallback_reason"]
    # the replay compiles the same context, and rebuilds the same document under the same id
    assert after["items"] == before["items"] and after["artifacts"] == before["artifacts"]
