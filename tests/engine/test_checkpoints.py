"""ADR-0011 checkpoint frames read back from a run's events (workbench.engine.checkpoints)."""

from __future__ import annotations

import polars as pl

from workbench.engine.checkpoints import Checkpoint, checkpoints_from_events, select_checkpoint


def test_checkpoints_from_events_reads_only_checkpoint_frames_in_stream_order():
    events = pl.DataFrame({
        "event_type": ["memory.compacted", "continuity_compaction_checkpoint_created", "context.truncated",
                       "continuity_compaction_checkpoint_created"],
        "frame_seq": [None, 101, None, 205], "from_seq": [None, 0, 3, 0], "to_seq": [None, 40, 9, 80],
        "summary_artifact_id": ["art_a", "art_a", None, "art_b"],
    })
    frames = checkpoints_from_events(events)
    assert frames == [Checkpoint(101, 0, 40, "art_a"), Checkpoint(205, 0, 80, "art_b")]
    assert [type(x) for x in (frames[0].frame_seq, frames[0].from_seq, frames[0].to_seq)] == [int, int, int]
    assert select_checkpoint(frames, 79).artifact_id == "art_a"
    assert select_checkpoint(frames, 80).artifact_id == "art_b"
