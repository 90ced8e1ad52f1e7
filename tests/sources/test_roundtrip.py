"""Lossless round trip: every bundled file of the document and text formats is rebuilt
from the raw column (``json.load`` equality for documents, bytes for JSONL and text)."""

from __future__ import annotations

import importlib
import json

import pytest
from format_checks import (
    FILES,
    JSONL,
    TEXT,
    nonblank_lines,
    parse,
)


@pytest.mark.parametrize("rel", sorted(FILES))
def test_roundtrip(recorded_dir, rel):
    path = recorded_dir / rel
    fmt = FILES[rel]
    conts, _ = parse(path, fmt)
    mod = importlib.import_module(f"workbench.sources.{fmt}")
    raws = [r for c in conts for r in c.rows.cols["raw"]]
    rebuilt = mod.roundtrip(raws)
    if rel in JSONL:
        assert rebuilt.encode("utf-8") == b"\n".join(nonblank_lines(path))
    elif rel in TEXT:
        assert rebuilt.encode("utf-8") == path.read_bytes()
    else:
        with open(path, encoding="utf-8") as fh:
            assert rebuilt == json.load(fh)
    # every record keeps its raw on exactly one event
    for c in conts:
        assert all(isinstance(r, str) for r in c.rows.cols["raw"] if r is not None)


def test_raw_is_on_the_first_event_of_a_record(recorded_dir):
    [c], _ = parse(recorded_dir / "openhands/basic_gui_mode.json", "openhands")
    cols = c.rows.cols
    # an agent run action -> MESSAGE (raw) + TOOL_CALL (raw None)
    i = cols["call_id"].index("toolu_01W9Z8jBctr8X2frZV9p1RYs")
    assert cols["raw"][i] is None and cols["raw"][i - 1] is not None
    assert json.loads(cols["raw"][i - 1])["id"] == 7
