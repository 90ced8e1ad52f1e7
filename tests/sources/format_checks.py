"""Shared helpers of the per-format importer tests: the bundled files and their formats,
a parse helper, counts over a parsed continuity (compared with hand counts) and the
structural invariants every parser keeps."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from workbench.continuity.enums import EventFlag, EventKind, Role
from workbench.sources import load_formats
from workbench.sources.base import ParseContext

FILE_FORMATS = ("swe_agent", "mini_swe_agent", "openhands", "openhands_sdk", "gemini_cli",
                "openai_messages", "aider")


FILES = {
    "swe-agent/pydicom__pydicom-1458.traj": "swe_agent",
    "swe-agent/marshmallow-code__marshmallow-1867.traj": "swe_agent",
    "swe-agent/i_got_id_demo.traj": "swe_agent",
    "mini-swe-agent/github_issue.traj.json": "mini_swe_agent",
    "openhands/basic_gui_mode.json": "openhands",
    "openhands-sdk/events.jsonl": "openhands_sdk",
    "openhands-sdk/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json": "openhands_sdk",
    "openhands-sdk/fncall-llm-message.json": "openai_messages",
    "gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json": "gemini_cli",
    "aider/complex-change.md": "aider",
    "aider/chat-history-2024-08-05.md": "aider",
    "aider/chat-history-2024-08-13.md": "aider",
    "aider/chat-history-2024-08-19.md": "aider",
    "aider/chat-history-2024-08-20.md": "aider",
}


JSONL = {"openhands-sdk/events.jsonl"}


TEXT = {rel for rel, fmt in FILES.items() if fmt == "aider"}


def write_jsonl(path: Path, records) -> Path:
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    return path


def nonblank_lines(path: Path) -> list[bytes]:
    return [ln for ln in Path(path).read_bytes().split(b"\n") if ln.strip()]


def parse(path: Path, fmt: str, on_error: str = "fail"):
    ctx = ParseContext(path=Path(path), on_error=on_error)
    return load_formats()[fmt].parse(ctx), ctx


def stats(cont) -> dict:
    """Counts over one parsed continuity, for comparison with the hand counts."""
    c = cont.rows.cols
    n = len(cont.rows)
    kinds = Counter(EventKind(k).name for k in c["kind"])
    msg_roles = Counter(Role(c["role"][i]).name for i in range(n) if c["kind"][i] == EventKind.MESSAGE)
    calls = [i for i in range(n) if c["kind"][i] == EventKind.TOOL_CALL]
    results = [i for i in range(n) if c["kind"][i] == EventKind.TOOL_RESULT]
    usage = {}
    for col in ("usage_input", "usage_cache_read", "usage_cache_write", "usage_output"):
        vals = [v for v in c[col] if v >= 0]
        usage[col] = sum(vals) if vals else -1
    return {
        "events": n,
        "kinds": dict(kinds),
        "message_roles": dict(msg_roles),
        "requests": len({r for r in c["request"] if r >= 0}),
        "pairs": sum(1 for i in calls if c["pair_seq"][i] >= 0),
        "unpaired_calls": sum(1 for i in calls if c["flags"][i] & EventFlag.UNPAIRED),
        "unpaired_results": sum(1 for i in results if c["flags"][i] & EventFlag.UNPAIRED),
        "error_results": sum(1 for i in results if c["flags"][i] & EventFlag.ERROR),
        "usage": usage,
        "raws": sum(1 for r in c["raw"] if r is not None),
    }


NO_USAGE = {"usage_input": -1, "usage_cache_read": -1, "usage_cache_write": -1, "usage_output": -1}


def check_structure(cont) -> None:
    """Invariants every parser must keep: requests ordered, outputs flagged, pairs sane."""
    c = cont.rows.cols
    n = len(cont.rows)
    for col in c.values():
        assert len(col) == n
    out_reqs = [c["request"][i] for i in range(n) if c["flags"][i] & EventFlag.OUTPUT]
    assert out_reqs == sorted(out_reqs), "requests of outputs must not go backwards"
    assert all(r >= 0 for r in out_reqs)
    for i in range(n):
        if c["kind"][i] == EventKind.TOOL_RESULT and c["pair_seq"][i] >= 0:
            j = c["pair_seq"][i]
            assert j < i and c["kind"][j] == EventKind.TOOL_CALL and c["pair_seq"][j] == i
            assert c["call_id"][i] == c["call_id"][j]
        if c["kind"][i] in (EventKind.TOOL_CALL, EventKind.TOOL_RESULT) and c["pair_seq"][i] < 0:
            assert c["flags"][i] & EventFlag.UNPAIRED
    # usage is recorded once per request
    per_req = Counter(c["request"][i] for i in range(n) if c["usage_output"][i] >= 0 or c["usage_input"][i] >= 0)
    assert all(v == 1 for k, v in per_req.items() if k >= 0), per_req


def event_rows(c):
    """(kind name, role name, request, call_id, name, text) per event, for readable asserts."""
    cols = c.rows.cols
    return [(EventKind(cols["kind"][i]).name, Role(cols["role"][i]).name, cols["request"][i],
             cols["call_id"][i], cols["name"][i], cols["text"][i]) for i in range(len(c.rows))]
