"""What keeps a 10 M-event ``workbench simulate`` under 2 GB (docs/targets.md), used by
:mod:`workbench.engine.run`:

* :func:`read_columns`: the events read a column at a time into one contiguous array each
  (a Parquet file of row groups reads as chunks, and every ``to_numpy`` of a chunked
  column copies it), strings categorical (4 bytes a row, not 16);
* :func:`output_view`: a prepared continuity without the arrays only replays read, for
  building its output frames once its last replay is done;
* :data:`LEDGER_FRAME_INTS`: the ledger's integer columns, typed whatever the engine's matrix.

>>> import numpy as np
>>> from workbench.engine.prepare import prepare_continuity
>>> from workbench.synth.generate import GeneratorConfig, build_continuity
>>> import polars as pl
>>> c = build_continuity(GeneratorConfig(events=300, seed=1, facts=0, secrets=0, hard_negatives=0))
>>> inp = prepare_continuity(pl.from_arrow(c.events), continuity=0, continuity_id="x", tokenizer="cl100k")
>>> slim = output_view(inp)
>>> slim.tokens.size, slim.n == inp.n, np.array_equal(slim.seq, inp.seq)
(0, True, True)
"""

from __future__ import annotations

import numpy as np

LEDGER_FRAME_INTS = ("call", "request", "source_request", "prompt_tokens", "input_tokens", "cached_input_tokens",
                     "cache_write_tokens", "output_tokens", "context_before", "context_after", "flags",
                     "cache_key", "ts_ms")

# what only the replays read; the output frames read seq, message ids, visibility and the
# request arrays
REPLAY_ONLY = ("kind", "tokens", "open_after", "msg_ordinal", "row_request", "tool_code",
               "recorded_summary_tokens", "is_boundary", "is_user_message", "is_tool_call", "is_tool_result")


def read_columns(ds, cols: list[str]):
    """The events' ``cols`` of dataset ``ds`` as one frame whose numeric columns are each
    one contiguous NumPy array (polars shares them), read a column at a time:
    ``prepare_continuity`` then reads them without copies, and they are freed with the
    frame."""
    import polars as pl

    series = []
    for c in cols:
        s = ds.events(columns=[c]).to_series()
        if s.n_chunks() > 1 and s.dtype.is_numeric() and s.null_count() == 0:
            s = pl.Series(c, np.concatenate([chunk.to_numpy() for chunk in s.get_chunks()]))
        elif s.dtype == pl.String:  # mostly null or repeated (tool names, message ids)
            s = s.cast(pl.Categorical)
        series.append(s)
    return pl.DataFrame(series)


def output_view(inp):
    """``inp`` (a ``ReplayInput``) with new empty arrays in place of those only replays
    read: what the ledger and events frames need, a third of the memory."""
    import dataclasses

    return dataclasses.replace(inp, **{f: np.empty(0, getattr(inp, f).dtype) for f in REPLAY_ONLY})
