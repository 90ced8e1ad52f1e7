"""Calibration is only fitted where recorded usage is per request and the counted context
is what was sent; elsewhere the manifest says why, instead of giving a factor."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.sources.base import ParseContext
from workbench.sources.calibrate import (
    NOT_MEANINGFUL,
    PLAUSIBLE_FACTOR,
    calibrate_table,
    fit_report,
)
from workbench.sources.importer import import_paths

K = EventKind


def _table(rows: list[dict]) -> pa.Table:
    """An events table with the columns calibrate_table reads; defaults for the rest."""
    defaults = dict(continuity=0, kind=int(K.MESSAGE), role=0, origin=0, flags=0, request=-1, name=None,
                    usage_input=-1, usage_cache_read=-1, usage_cache_write=-1, tokens_cl100k=0)
    full = [{**defaults, **r} for r in rows]
    return pa.table({k: [r[k] for r in full] for k in defaults})


def _stream(n: int, *, a: float = 1_000, b: float = 1.2, anchored: bool = True, background_at: int | None = None):
    """A request per step: a tool result (input), then the output carrying the usage
    recorded as a + b * (context tokens so far)."""
    rows = []
    ctx = 0
    if anchored:
        rows += [dict(kind=int(K.MESSAGE), role=int(Role.SYSTEM), tokens_cl100k=300),
                 dict(kind=int(K.MESSAGE), role=int(Role.USER), tokens_cl100k=50)]
        ctx = 350
    for r in range(n):
        if r == background_at:  # a condenser call: its prompt is not this context
            rows.append(dict(kind=int(K.USAGE), origin=int(Origin.BACKGROUND), request=r, usage_input=77,
                             usage_cache_read=0, usage_cache_write=0))
            continue
        tok = 40 + 13 * r
        rows.append(dict(kind=int(K.TOOL_RESULT), role=int(Role.TOOL), request=r, tokens_cl100k=tok))
        ctx += tok
        rows.append(dict(kind=int(K.MESSAGE), role=int(Role.ASSISTANT), origin=int(Origin.AGENT),
                         flags=int(EventFlag.OUTPUT), request=r, tokens_cl100k=20,
                         usage_input=int(round(a + b * ctx)), usage_cache_read=0, usage_cache_write=0))
        ctx += 20
    return rows


def test_a_good_stream_fits():
    rep = calibrate_table(_table(_stream(12)), ["c"])["c"]
    assert rep["status"] == "ok" and rep["requests_with_usage"] == 12
    assert rep["factor"] == pytest.approx(1.2, abs=1e-3) and rep["intercept"] == pytest.approx(1_000, abs=1)
    assert "requests_excluded" not in rep and "reason" not in rep


def test_background_calls_are_left_out():
    rep = calibrate_table(_table(_stream(13, background_at=5)), ["c"])["c"]
    assert rep["status"] == "ok" and rep["factor"] == pytest.approx(1.2, abs=1e-3)
    assert rep["requests_with_usage"] == 13 and rep["requests_excluded"] == {"background_call": 1}


def test_context_not_in_the_log_is_not_meaningful():
    rep = calibrate_table(_table(_stream(12, anchored=False)), ["c"])["c"]
    assert rep["status"] == "not meaningful" and "factor" not in rep and "intercept" not in rep
    assert rep["requests_excluded"] == {"context_not_in_log": 12} and rep["requests_with_usage"] == 12
    assert "starts mid-conversation" in rep["reason"]


def test_an_implausible_factor_is_rejected():
    rep = calibrate_table(_table(_stream(12, a=15_000, b=41.0)), ["c"])["c"]
    assert rep["status"] == "not meaningful" and "factor" not in rep
    assert rep["rejected_fit"]["factor"] == pytest.approx(41.0, rel=1e-3)
    assert "not a plausible tokenizer factor" in rep["reason"]
    lo, hi = PLAUSIBLE_FACTOR
    xs = [100, 200, 300, 400]
    for b, status in ((hi * 1.05, "not meaningful"), (hi * 0.95, "ok"), (lo * 1.05, "ok"),
                      (lo * 0.95, "not meaningful")):
        assert fit_report(xs, [500 + b * x for x in xs])["status"] == status, b


def test_a_parser_reason_wins():
    rep = calibrate_table(_table(_stream(12)), ["c"], not_meaningful={"c": "usage is per session"})["c"]
    assert rep == {"requests_with_usage": 12, "status": "not meaningful", "reason": "usage is per session",
                   "tokenizer": "cl100k"}


def test_openhands_sdk_event_stream_is_not_calibrated(tmp_path, recorded_dir):
    """events.jsonl starts mid-conversation (no SystemPromptEvent, no user message): its four
    stats updates are per request (per_turn_token = delta prompt + completion) but the
    context they were sent with is not in the file (counted 0-481 tokens against 596-35,984
    recorded), which used to give b = 41 with 29 % error."""
    ds = import_paths([recorded_dir / "openhands-sdk/events.jsonl"], tmp_path / "sdk")
    rep = ds.manifest["import"]["calibration"]["openhands-sdk"]
    assert rep["status"] == "not meaningful" and "factor" not in rep
    assert rep["requests_with_usage"] == 4 and rep["requests_excluded"] == {"context_not_in_log": 4}
    assert NOT_MEANINGFUL not in ds.manifest["import"]["continuities"]["openhands-sdk"]

    # the same stream with a system prompt and a user message in front: now anchored, but
    # the counted context is still ~35k tokens short, so the fitted factor is implausible
    d = tmp_path / "anchored"
    d.mkdir()
    lines = (recorded_dir / "openhands-sdk/events.jsonl").read_text().splitlines()
    head = [{"kind": "SystemPromptEvent", "id": "s", "timestamp": "2026-06-16T05:39:18", "source": "agent",
             "system_prompt": {"type": "text", "text": "You are a helpful agent."}},
            {"kind": "MessageEvent", "id": "u", "timestamp": "2026-06-16T05:39:18", "source": "user",
             "llm_message": {"role": "user", "content": [{"type": "text", "text": "Post a comment."}]}}]
    (d / "events.jsonl").write_text("\n".join([*map(json.dumps, head), *lines]) + "\n")
    rep = import_paths([d / "events.jsonl"], tmp_path / "sdk2", tokenizers=("approx",)).manifest[
        "import"]["calibration"]["anchored"]
    assert rep["status"] == "not meaningful" and rep["rejected_fit"]["factor"] > PLAUSIBLE_FACTOR[1]


def _stats(n: int, prompt: int, completion: int, per_turn: int) -> dict:
    return {"kind": "ConversationStateUpdateEvent", "id": f"s{n}", "timestamp": "2026-01-01T00:00:00",
            "source": "environment", "key": "stats",
            "value": {"usage_to_metrics": {"default": {"model_name": "m", "accumulated_token_usage": {
                "prompt_tokens": prompt, "completion_tokens": completion, "cache_read_tokens": 0,
                "cache_write_tokens": 0, "per_turn_token": per_turn}}}}}


def test_openhands_sdk_updates_spanning_several_calls_are_flagged(tmp_path):
    from workbench.sources import load_formats

    def parse(recs) -> dict:
        p = tmp_path / "events.jsonl"
        p.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
        [c] = load_formats()["openhands_sdk"].parse(ParseContext(path=Path(p)))
        return c.meta

    one_call_each = [_stats(1, 100, 10, 110), _stats(2, 250, 30, 170)]
    assert NOT_MEANINGFUL not in parse(one_call_each)
    two_calls = [_stats(1, 100, 10, 110), _stats(2, 400, 50, 170)]  # delta 340 > the last call's 170
    meta = parse(two_calls)
    assert meta["stats_updates_spanning_calls"] == 1 and "not per request" in meta[NOT_MEANINGFUL]
