"""ADR-0011: compiling a request's context costs the events since the last checkpoint, not
the continuity. Measured without a clock: the reference engine's visible rows are counted
as they are walked (iterated or listed), and the rows walked per request must stay the same
when the continuity is ten times longer (the cut comes every 50 messages in both)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.engine.prepare import prepare_continuity
from workbench.engine.presets import get_policy
from workbench.engine.reference import _Replay
from workbench.synth.generate import GeneratorConfig, build_continuity


class CountingRows(np.ndarray):
    """Visible rows that count how many of them are walked."""

    walked = 0

    def __iter__(self):
        CountingRows.walked += len(self)
        return super().__iter__()

    def tolist(self):
        CountingRows.walked += len(self)
        return super().tolist()


def rows_walked_per_request(events: int) -> float:
    c = build_continuity(GeneratorConfig(profile="chat", events=events, seed=5, facts=0, secrets=0,
                                         hard_negatives=0))
    inp = prepare_continuity(pl.from_arrow(c.events), continuity=0, continuity_id="chat", tokenizer="cl100k")
    policy = get_policy("rip-adr0011", {"trigger.every_messages": 50})
    cfg, params = policy.lower(200_000, 1, 300_000.0, 1)
    replay = _Replay(inp, cfg, params, np.zeros(inp.n, bool))
    replay.visible_rows = replay.visible_rows.view(CountingRows)
    CountingRows.walked = 0
    replay.run()
    assert replay.compactions >= events // 100  # cuts all along: the tail stays short
    return CountingRows.walked / inp.n_requests


@pytest.mark.parametrize("short,long", [(2_000, 20_000)])
def test_compile_walks_the_events_since_the_last_cut_not_the_continuity(short, long):
    per_short, per_long = rows_walked_per_request(short), rows_walked_per_request(long)
    assert per_long <= 1.5 * per_short, (per_short, per_long)  # walking the whole list: ~10x
