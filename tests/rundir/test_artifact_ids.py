"""ADR-0011 summary artifacts are addressed by content: an artifact's id (the frames'
``summary_artifact_id``, ``memory.compacted``'s ``outputId``) is the hash of its canonical
``rip.compaction_summary.v1`` document, which is the blob ``artifacts/blobs/<id>``."""

from __future__ import annotations

import orjson
import polars as pl

from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.rundir.artifacts import ARTIFACTS, BLOBS, INDEX, artifact_id, blob_id
from workbench.rundir.summary_docs import SummaryDocs
from workbench.synth.generate import GeneratorConfig, generate_dataset

CHECKPOINT = "continuity_compaction_checkpoint_created"


def test_two_different_summaries_of_one_range_get_two_ids():
    row = {"event_type": CHECKPOINT, "continuity_id": "c", "policy": "p", "summary_kind": "llm_summary_v1",
           "item_tokens": 400, "from_seq": 3, "from_message_id": "m3", "to_seq": 90, "to_message_id": "m90",
           "actor_id": "workbench-compactor", "origin": "background"}
    same = artifact_id(SummaryDocs().add(row))
    assert artifact_id(SummaryDocs().add(dict(row))) == same
    # another size, another producer: other documents of the same range, other ids
    assert artifact_id(SummaryDocs().add({**row, "item_tokens": 401})) != same
    assert artifact_id(SummaryDocs().add({**row, "policy": "q"})) != same
    assert artifact_id(SummaryDocs(text=lambda r: "another text").add(row)) != same


def test_ids_are_the_blobs_of_the_run_and_stable_across_runs(tmp_path):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=600, seed=3), tmp_path / "d")
    # one stride, two summary sizes: the same ranges, summarized twice
    small = get_policy("rip-adr0011", {"trigger.every_messages": 40, "compaction.ratio": 0.05}, rename="small")
    large = get_policy("rip-adr0011", {"trigger.every_messages": 40, "compaction.ratio": 0.2}, rename="large")
    res = simulate(ds, [small, large], engine="reference")
    run = res.write(tmp_path / "run")
    frames = res.events.filter(pl.col("event_type") == CHECKPOINT)
    by = {p: frames.filter(pl.col("policy") == p) for p in ("small", "large")}
    assert by["small"].height > 1
    assert by["small"]["from_seq"].to_list() == by["large"]["from_seq"].to_list()
    assert by["small"]["to_seq"].to_list() == by["large"]["to_seq"].to_list()
    assert set(by["small"]["summary_artifact_id"]).isdisjoint(by["large"]["summary_artifact_id"])

    index = orjson.loads((run / ARTIFACTS / INDEX).read_bytes())
    outputs = res.events.filter(pl.col("event_type") == "memory.compacted")["outputId"].to_list()
    assert set(outputs) == set(frames["summary_artifact_id"]) == set(index)
    for art in index:
        assert index[art] == art and blob_id((run / ARTIFACTS / BLOBS / art).read_bytes()) == art

    # the same policy in another run (alone, the other engine): the same ids
    alone = simulate(ds, [small], engine="kernel").events.filter(pl.col("event_type") == CHECKPOINT)
    assert alone["summary_artifact_id"].to_list() == by["small"]["summary_artifact_id"].to_list()
