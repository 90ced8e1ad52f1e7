"""mini-swe-agent trajectories: the bundled real run (hand counts) and the object / list
forms with their format errors."""

from __future__ import annotations

import json

from format_checks import (
    check_structure,
    event_rows,
    parse,
    stats,
)

from workbench.sources import load_formats


def test_mini_swe_agent(recorded_dir):
    [c], _ = parse(recorded_dir / "mini-swe-agent/github_issue.traj.json", "mini_swe_agent")
    s = stats(c)
    # 22 messages: system 1, user 11, assistant 10 (json Counter on role)
    # every assistant message has exactly one ```mswea_bash_command block (re.findall)
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 10}
    # 9 user messages with <returncode> + the final submission output = 10 observations
    assert s["kinds"]["TOOL_CALL"] == 10 and s["kinds"]["TOOL_RESULT"] == 10 and s["pairs"] == 10
    assert s["error_results"] == 2  # <returncode>1</returncode> twice
    assert s["requests"] == 10
    assert s["events"] == 2 + 12 + 20
    cols = c.rows.cols
    i = cols["call_id"].index("mswea-2")
    assert cols["name"][i] == "bash" and cols["text"][i] == "ls -la"
    check_structure(c)


def test_mini_swe_agent_object_form_and_format_errors(tmp_path):
    doc = {"trajectory_format": "mini-swe-agent-1",
           "info": {"exit_status": "Submitted", "model_stats": {"instance_cost": 0.5, "api_calls": 3},
                    "config": {"model": {"model_name": "anthropic/claude-sonnet-4"}}},
           "messages": [
               {"role": "system", "content": "sys"},
               {"role": "user", "content": "task"},
               {"role": "assistant", "content": "two\n```bash\nls\n```\n```bash\npwd\n```"},
               {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."},
               {"role": "assistant", "content": "ok", "extra": {"actions": [{"command": "cat a"}],
                                                                "response": {"usage": {"prompt_tokens": 50, "completion_tokens": 5}}}},
               {"role": "user", "content": "<returncode>0</returncode>\n<output>\nA\n</output>"},
           ]}
    p = tmp_path / "run.traj.json"
    p.write_text(json.dumps(doc))
    [c], _ = parse(p, "mini_swe_agent")
    rows = event_rows(c)[2:]
    assert [(k, r, q) for k, r, q, *_ in rows] == [
        ("MESSAGE", "SYSTEM", 0), ("MESSAGE", "USER", 0), ("MESSAGE", "ASSISTANT", 0),
        ("MESSAGE", "USER", 1),  # format error feedback: no action, so not a tool result
        ("MESSAGE", "ASSISTANT", 1), ("TOOL_CALL", "ASSISTANT", 1), ("TOOL_RESULT", "TOOL", -1)]
    assert rows[5][5] == "cat a" and rows[5][3] == "mswea-1"
    assert c.model == "anthropic/claude-sonnet-4" and c.meta["model_stats"]["api_calls"] == 3
    assert c.meta["run_usage"] == {"source": "info.model_stats", "tokens_sent": None, "tokens_received": None,
                                   "api_calls": 3, "cost_usd": 0.5}
    assert c.rows.cols["usage_input"][6] == 50 and c.continuity_id == "run"
    from workbench.sources import mini_swe_agent

    assert mini_swe_agent.roundtrip(c.rows.cols["raw"]) == doc
    assert load_formats()["mini_swe_agent"].sniff(p, p.read_bytes()).score >= 0.95
