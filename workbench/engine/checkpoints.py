"""ADR-0011 checkpoint selection for ``summaries_recent_messages_v1``.

Given the checkpoint frames appended to a continuity (in stream order) and the compile
cut point ``from_seq``, pick the latest valid checkpoint: the greatest ``to_seq <=
from_seq``; ties broken by the checkpoint frame's own ``seq``, the latest frame winning.
Background jobs may race to summarize the same cut point; the stream order arbitrates,
so the selection depends only on the frames, never on completion order or caches.

>>> frames = [Checkpoint(frame_seq=10, from_seq=0, to_seq=5, artifact_id="a"),
...           Checkpoint(frame_seq=12, from_seq=0, to_seq=5, artifact_id="b"),
...           Checkpoint(frame_seq=11, from_seq=0, to_seq=9, artifact_id="c")]
>>> select_checkpoint(frames, from_seq=7).artifact_id
'b'
>>> select_checkpoint(frames, from_seq=4) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from workbench.rundir import wire as W


@dataclass(frozen=True)
class Checkpoint:
    frame_seq: int  # seq of the checkpoint frame itself in the continuity stream
    from_seq: int
    to_seq: int  # the cut: a message event, inclusive
    artifact_id: str | None


def select_checkpoint(frames: Iterable[Checkpoint], from_seq: int) -> Checkpoint | None:
    best: Checkpoint | None = None
    for f in frames:
        if f.to_seq > from_seq:
            continue
        if best is None or (f.to_seq, f.frame_seq) > (best.to_seq, best.frame_seq):
            best = f
    return best


def checkpoints_from_events(events) -> list[Checkpoint]:
    """Checkpoint frames of one continuity x policy from an ``events.parquet`` frame."""
    import polars as pl

    cp = events.filter(pl.col("event_type") == W.CHECKPOINT_EVENT)
    return [Checkpoint(int(r["frame_seq"]), int(r["from_seq"]), int(r["to_seq"]), r["summary_artifact_id"])
            for r in cp.iter_rows(named=True)]
