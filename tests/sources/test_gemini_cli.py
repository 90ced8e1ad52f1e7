"""Gemini CLI session JSON: the bundled real session (hand counts) and other message
types."""

from __future__ import annotations

import json

from format_checks import (
    check_structure,
    event_rows,
    parse,
    stats,
)

from workbench.continuity.enums import EventFlag


def test_gemini_cli(recorded_dir):
    [c], _ = parse(recorded_dir / "gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json", "gemini_cli")
    s = stats(c)
    # 14 messages: user 5, gemini 9; 14 toolCalls (all status success); no thoughts
    assert s["message_roles"] == {"USER": 5, "ASSISTANT": 9}
    assert s["kinds"]["TOOL_CALL"] == 14 and s["kinds"]["TOOL_RESULT"] == 14 and s["pairs"] == 14
    assert s["kinds"].get("REASONING", 0) == 0
    assert s["requests"] == 9
    # sums of tokens over gemini messages: input 87,418, cached 62,117, output 1,441,
    # thoughts 2,914, tool 0 -> input 87,418 - 62,117 = 25,301; output 1,441 + 2,914 = 4,355
    assert s["usage"] == {"usage_input": 25_301, "usage_cache_read": 62_117,
                          "usage_cache_write": 0, "usage_output": 4_355}
    assert c.model == "gemini-3-pro" and c.provider == "google"
    assert c.continuity_id == "37b7abef-713d-4522-85f0-8ff15a4e6d17"
    check_structure(c)


def test_gemini_other_message_types(tmp_path):
    doc = {"sessionId": "S", "messages": [
        {"id": "1", "type": "user", "content": "q"},
        {"id": "2", "type": "gemini", "content": "a", "model": "gemini-2.5-pro",
         "thoughts": [{"subject": "Plan", "description": "look", "timestamp": "2026-01-01T00:00:00Z"}],
         "tokens": {"input": 100, "output": 5, "cached": 40, "thoughts": 7, "tool": 3, "total": 115},
         "toolCalls": [{"name": "shell", "args": {"c": 1}, "status": "error",
                        "result": [{"functionResponse": {"response": {"error": "denied"}}}, {"x": 1}]}]},
        {"id": "3", "type": "info", "content": "saved"},
        {"id": "4", "type": "error", "content": "quota"},
        {"id": "5", "type": "hint", "content": "?"},
    ]}
    p = tmp_path / "session.json"
    p.write_text(json.dumps(doc))
    [c], _ = parse(p, "gemini_cli")
    rows = event_rows(c)[2:]
    assert [(k, q) for k, _, q, *_ in rows] == [
        ("MESSAGE", 0), ("REASONING", 0), ("MESSAGE", 0), ("TOOL_CALL", 0), ("TOOL_RESULT", -1),
        ("SIDE_EFFECT", -1), ("SIDE_EFFECT", -1), ("OPAQUE", -1)]
    assert rows[1][5] == "Plan\nlook" and rows[4][5] == 'denied\n{"x":1}' and rows[3][3] == "2-call-0"
    cols = c.rows.cols
    # usage on the request's first event (the reasoning): 100 - 40 + 3 tool, 40 read, 5 + 7 output
    assert (cols["usage_input"][3], cols["usage_cache_read"][3], cols["usage_cache_write"][3],
            cols["usage_output"][3]) == (63, 40, 0, 12)
    assert cols["flags"][6] & EventFlag.ERROR and cols["flags"][8] & EventFlag.ERROR
    assert c.model == "gemini-2.5-pro"
