"""OpenHands: the v0 event stream and the SDK (v1) event stream and LLM-call log, on the
bundled real files (hand counts) and on synthetic events of every kind."""

from __future__ import annotations

import json

import pytest
from format_checks import (
    check_structure,
    event_rows,
    nonblank_lines,
    parse,
    stats,
    write_jsonl,
)

from workbench.continuity.enums import CompactTrigger, EventFlag, Origin


def test_openhands_basic_gui_mode(recorded_dir):
    [c], _ = parse(recorded_dir / "openhands/basic_gui_mode.json", "openhands")
    s = stats(c)
    # 18 events (SOURCES.md); Counter over action/observation types:
    # agent_state_changed 4, null 3, change_agent_state 1 -> 8 side effects;
    # message 2 (user, agent); run 2 + edit 2 actions (4 with a thought), 4 results
    assert s["kinds"] == {"META": 2, "SIDE_EFFECT": 8, "MESSAGE": 6, "TOOL_CALL": 4, "TOOL_RESULT": 4}
    assert s["message_roles"] == {"USER": 1, "ASSISTANT": 5}
    assert s["pairs"] == 4 and s["error_results"] == 1  # one observation with success: false
    # 4 distinct model_response ids + 1 agent message without metadata
    assert s["requests"] == 5
    # sums over the 4 distinct responses: prompt 17,297 = 22 uncached + 11,793 read + 5,482 write; completion 2,024
    assert s["usage"] == {"usage_input": 22, "usage_cache_read": 11_793,
                          "usage_cache_write": 5_482, "usage_output": 2_024}
    assert c.model == "claude-3-5-sonnet-20241022"
    cols = c.rows.cols
    i = cols["call_id"].index("toolu_01W9Z8jBctr8X2frZV9p1RYs")
    assert cols["text"][i] == '{"command": "mkdir -p /workspace/todo-app"}'  # the model's own arguments
    first_out = next(j for j in range(s["events"]) if cols["flags"][j] & EventFlag.OUTPUT)
    assert (cols["usage_input"][first_out], cols["usage_cache_read"][first_out],
            cols["usage_cache_write"][first_out], cols["usage_output"][first_out]) == (4, 0, 3435, 104)
    check_structure(c)


def test_openhands_sdk_events(recorded_dir):
    [c], _ = parse(recorded_dir / "openhands-sdk/events.jsonl", "openhands_sdk")
    s = stats(c)
    # 10 lines: ConversationStateUpdateEvent 5 (stats 4, execution_status 1), ObservationEvent 3,
    # ActionEvent 2 (both with reasoning_content and thought text)
    assert s["kinds"] == {"SIDE_EFFECT": 1, "USAGE": 4, "REASONING": 2, "MESSAGE": 2,
                          "TOOL_CALL": 2, "TOOL_RESULT": 3}
    assert s["raws"] == 10
    # one observation's action is not in the file; two observations have is_error
    assert s["pairs"] == 2 and s["unpaired_results"] == 1 and s["error_results"] == 2
    # 4 stats updates, each a change of the accumulated counters (delta p+c == per_turn_token)
    assert s["requests"] == 4
    # deltas: prompt 596+35299+35579+35984 = 107,458, cache_read 1,115+33,421+33,657 = 68,193,
    # completion 1,347 -> uncached input 107,458 - 68,193 = 39,265
    assert s["usage"] == {"usage_input": 39_265, "usage_cache_read": 68_193,
                          "usage_cache_write": 0, "usage_output": 1_347}
    assert c.model == "litellm_proxy/minimax-m2.7"
    assert c.meta["model_stats"]["condenser"]["accumulated_token_usage"]["prompt_tokens"] == 0
    assert s["kinds"].get("COMPACTION", 0) == 0  # the "condenser" entry is metrics, not a compaction
    check_structure(c)


def test_openhands_sdk_llm_call_log(recorded_dir):
    path = recorded_dir / "openhands-sdk/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json"
    [c], _ = parse(path, "openhands_sdk")
    s = stats(c)
    # request messages: system 1, user 1, assistant 5 (one with empty content), tool 5;
    # response: one assistant message with content and one tool call (finish)
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 5}
    assert s["kinds"]["TOOL_CALL"] == 6 and s["kinds"]["TOOL_RESULT"] == 5
    assert s["pairs"] == 5 and s["unpaired_calls"] == 1
    assert s["requests"] == 1
    # response.usage: prompt 6,729 (no cache), completion 199
    assert s["usage"] == {"usage_input": 6_729, "usage_cache_read": 0,
                          "usage_cache_write": 0, "usage_output": 199}
    assert c.context_window == 200_000
    assert c.meta["cost"] == pytest.approx(0.023172)
    assert c.model == "litellm_proxy/claude-sonnet-4-20250514"
    outs = [i for i in range(s["events"]) if c.rows.cols["flags"][i] & EventFlag.OUTPUT]
    assert len(outs) == 2 and outs[-1] == s["events"] - 1  # the response is the output, last
    check_structure(c)


def test_openhands_sdk_event_kinds(tmp_path):
    def stats_ev(p, c, r, cond=0):
        acc = lambda pt, ct, rd: {"prompt_tokens": pt, "completion_tokens": ct, "cache_read_tokens": rd,  # noqa: E731
                                  "cache_write_tokens": 0, "context_window": 128000}
        return {"kind": "ConversationStateUpdateEvent", "id": f"s{p}", "source": "environment", "key": "stats",
                "value": {"usage_to_metrics": {
                    "default": {"model_name": "m1", "accumulated_token_usage": acc(p, c, r)},
                    "condenser": {"model_name": "m1", "accumulated_token_usage": acc(cond, cond, 0)}}}}

    recs = [
        {"kind": "SystemPromptEvent", "id": "0", "source": "agent", "system_prompt": {"type": "text", "text": "SYS"}},
        {"kind": "MessageEvent", "id": "1", "source": "user",
         "llm_message": {"role": "user", "content": [{"type": "text", "text": "do it"}]}},
        stats_ev(100, 10, 0),
        {"kind": "ActionEvent", "id": "2", "source": "agent", "llm_response_id": "r1", "thought": [],
         "thinking_blocks": [{"type": "thinking", "thinking": "hmm"}], "tool_name": "terminal",
         "tool_call_id": "t1", "tool_call": {"id": "t1", "name": "terminal", "arguments": "{\"command\": \"ls\"}"}},
        {"kind": "ActionEvent", "id": "3", "source": "agent", "llm_response_id": "r1", "thought": [],
         "tool_name": "terminal", "tool_call_id": "t2", "tool_call": {"id": "t2", "arguments": {"command": "pwd"}}},
        {"kind": "ObservationEvent", "id": "4", "source": "environment", "tool_call_id": "t1", "tool_name": "terminal",
         "observation": {"content": [{"type": "text", "text": "a b"}], "is_error": False}},
        {"kind": "AgentErrorEvent", "id": "5", "source": "agent", "tool_call_id": "t2", "tool_name": "terminal", "error": "boom"},
        {"kind": "Condensation", "id": "6", "source": "environment", "forgotten_event_ids": ["1", "2"], "summary": "S1"},
        {"kind": "CondensationSummaryEvent", "id": "7", "source": "environment", "summary": "S2"},
        stats_ev(250, 30, 90, cond=5),  # the condenser's call and the agent's next call
        {"kind": "MessageEvent", "id": "8", "source": "agent", "llm_response_id": "r2",
         "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "done"}], "reasoning_content": "why"}},
        {"kind": "UserRejectObservation", "id": "9", "source": "user", "tool_call_id": "t3", "rejection_reason": "no"},
        {"kind": "PauseEvent", "id": "10", "source": "user"},
        {"kind": "SomethingNew", "id": "11", "source": "agent"},
        stats_ev(20, 2, 0),  # counters reset (a new LLM object): the update counts from zero
    ]
    p = write_jsonl(tmp_path / "events.jsonl", recs)
    [c], _ = parse(p, "openhands_sdk")
    rows = event_rows(c)
    assert [(k, r, q) for k, r, q, *_ in rows] == [
        ("MESSAGE", "SYSTEM", 0), ("MESSAGE", "USER", 0),
        ("USAGE", "NONE", 0), ("REASONING", "ASSISTANT", 0), ("TOOL_CALL", "ASSISTANT", 0),
        ("TOOL_CALL", "ASSISTANT", 0),  # same llm_response_id: same request
        ("TOOL_RESULT", "TOOL", 1), ("TOOL_RESULT", "TOOL", 1),
        ("COMPACTION", "NONE", 1), ("SUMMARY", "USER", 1), ("SUMMARY", "USER", 1),
        ("USAGE", "NONE", 1), ("USAGE", "NONE", 2),  # the condenser's call, then the agent's
        ("REASONING", "ASSISTANT", 2), ("MESSAGE", "ASSISTANT", 2),  # r2 follows the agent's usage
        ("TOOL_RESULT", "TOOL", 3), ("SIDE_EFFECT", "NONE", 3), ("OPAQUE", "NONE", 3),
        ("USAGE", "NONE", 3),
    ]
    cols = c.rows.cols
    assert rows[3][5] == "hmm" and rows[5][5] == '{"command":"pwd"}'
    u = [(cols["usage_input"][i], cols["usage_cache_read"][i], cols["usage_output"][i])
         for i in range(len(rows)) if rows[i][0] == "USAGE"]
    assert u == [(100, 0, 10), (5, 0, 5), (60, 90, 20), (20, 0, 2)]
    assert cols["origin"][11] == Origin.BACKGROUND and cols["name"][11] == "stats:condenser"
    assert cols["compact_trigger"][8] == CompactTrigger.AUTO and rows[9][5] == "S1"
    s = stats(c)
    assert s["pairs"] == 2 and s["unpaired_results"] == 1 and s["error_results"] == 2
    assert c.model == "m1" and c.context_window == 128000
    from workbench.sources import openhands_sdk

    assert openhands_sdk.roundtrip(cols["raw"]).encode() == b"\n".join(nonblank_lines(p))
    check_structure(c)


def test_openhands_v0_other_events(tmp_path):
    def mr(rid, calls):
        return {"id": rid, "model": "gpt-4o", "choices": [{"message": {"content": "x", "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "execute_bash", "arguments": f'{{"command": "{cid}"}}'}}
            for cid in calls]}}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 600}}}

    events = [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "SYS", "tools": []}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "hi"}},
        {"id": 2, "source": "agent", "action": "run", "args": {"command": "a", "thought": "two at once"},
         "tool_call_metadata": {"tool_call_id": "a", "function_name": "execute_bash", "model_response": mr("R1", ["a", "b"])}},
        {"id": 3, "source": "agent", "action": "run", "args": {"command": "b", "thought": ""},
         "tool_call_metadata": {"tool_call_id": "b", "function_name": "execute_bash", "model_response": mr("R1", ["a", "b"])}},
        {"id": 4, "source": "agent", "observation": "run", "cause": 2, "content": "A",
         "tool_call_metadata": {"tool_call_id": "a", "function_name": "execute_bash"}},
        {"id": 5, "source": "agent", "observation": "error", "cause": 3, "content": "B failed"},
        {"id": 6, "source": "agent", "action": "read", "args": {"path": "/x", "thought": "old style"}},
        {"id": 7, "source": "agent", "observation": "read", "cause": 6, "content": "file"},
        {"id": 8, "source": "agent", "observation": "error", "content": "agent stuck"},
        {"id": 9, "source": "agent", "action": "condensation", "args": {"forgotten_event_ids": [1, 2], "summary": "SUM"}},
        {"id": 10, "source": "environment", "observation": "condense", "content": "SUM2"},
        {"id": 11, "source": "user", "action": "run", "args": {"command": "ls"}},
        {"id": 12, "timestamp": "2025-01-01T00:00:00", "source": "agent", "message": "bye", "action": "message", "args": {}},
        {"id": 13, "source": "agent"},
    ]
    p = tmp_path / "trajectory.json"
    p.write_text(json.dumps(events))
    [c], _ = parse(p, "openhands")
    rows = event_rows(c)[2:]  # after META document + layout
    assert [(k, r, q, cid) for k, r, q, cid, *_ in rows] == [
        ("MESSAGE", "SYSTEM", 0, None), ("MESSAGE", "USER", 0, None),
        ("MESSAGE", "ASSISTANT", 0, None), ("TOOL_CALL", "ASSISTANT", 0, "a"),
        ("TOOL_CALL", "ASSISTANT", 0, "b"),  # parallel call: same response, same request
        ("TOOL_RESULT", "TOOL", 1, "a"), ("TOOL_RESULT", "TOOL", 1, "b"),  # by cause
        ("MESSAGE", "ASSISTANT", 1, None), ("TOOL_CALL", "ASSISTANT", 1, "oh-6"),
        ("TOOL_RESULT", "TOOL", 2, "oh-6"),
        ("MESSAGE", "USER", 2, None),  # error fed back to the model
        ("COMPACTION", "NONE", 2, None), ("SUMMARY", "USER", 2, None), ("SUMMARY", "USER", 2, None),
        ("SIDE_EFFECT", "NONE", 2, None),  # a user-initiated command
        ("MESSAGE", "ASSISTANT", 2, None), ("OPAQUE", "NONE", -1, None),
    ]
    cols = c.rows.cols
    assert rows[3][5] == '{"command": "a"}'  # the model's arguments
    assert rows[8][5] == '{"path":"/x"}'  # no metadata: the args without the thought
    first = 4  # row of the first output of R1 (after 2 META rows and 2 inputs)
    assert (cols["usage_input"][first], cols["usage_cache_read"][first], cols["usage_output"][first]) == (400, 600, 10)
    assert sum(1 for v in cols["usage_output"] if v >= 0) == 1  # R1 counted once
    assert c.model == "gpt-4o" and cols["ts_ms"][-2] == 1_735_689_600_000
    err = [i for i in range(len(cols["kind"])) if cols["flags"][i] & EventFlag.ERROR]
    assert len(err) == 2  # error observation as result of 'b', and the stuck message
    from workbench.sources import openhands

    assert openhands.roundtrip(cols["raw"]) == events
    check_structure(c)
