"""OpenAI-style message lists (JSON list, object with ``messages``, JSONL)."""

from __future__ import annotations

import json

from format_checks import (
    NO_USAGE,
    check_structure,
    nonblank_lines,
    parse,
    stats,
    write_jsonl,
)


def test_openai_messages_fncall(recorded_dir):
    [c], _ = parse(recorded_dir / "openhands-sdk/fncall-llm-message.json", "openai_messages")
    s = stats(c)
    # 14 messages: system 1, user 1, assistant 6 (one with empty content), tool 6
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 5}
    assert s["kinds"]["TOOL_CALL"] == 6 and s["kinds"]["TOOL_RESULT"] == 6 and s["pairs"] == 6
    assert s["requests"] == 6  # one per assistant message
    assert s["usage"] == NO_USAGE
    check_structure(c)


def test_openai_messages_jsonl_and_object(tmp_path):
    recs = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "assistant", "content": None, "reasoning_content": "think",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
                        {"id": "c2", "type": "function", "function": {"name": "pwd", "arguments": {"a": 1}}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "/"},
        {"role": "tool", "tool_call_id": "c1", "content": "a b"},
        {"role": "assistant", "function_call": {"name": "legacy", "arguments": "{}"}},
        {"role": "function", "name": "legacy", "content": "ok"},
        {"role": "critic", "content": "?"},
        {"role": "assistant", "content": "done"},
    ]
    p = write_jsonl(tmp_path / "chat.jsonl", recs)
    [c], _ = parse(p, "openai_messages")
    s = stats(c)
    assert s["kinds"] == {"MESSAGE": 3, "REASONING": 1, "TOOL_CALL": 3, "TOOL_RESULT": 3, "OPAQUE": 1}
    assert s["pairs"] == 3 and s["requests"] == 3
    assert c.rows.cols["text"][1] == "hi"
    from workbench.sources import openai_messages

    assert openai_messages.roundtrip(c.rows.cols["raw"]).encode() == b"\n".join(nonblank_lines(p))
    # the same messages as {"messages": [...]} round-trip as a document
    q = tmp_path / "chat.json"
    q.write_text(json.dumps({"model": "gpt-x", "messages": recs}))
    [d], _ = parse(q, "openai_messages")
    assert d.model == "gpt-x" and stats(d)["pairs"] == 3
    assert openai_messages.roundtrip(d.rows.cols["raw"]) == json.loads(q.read_text())
