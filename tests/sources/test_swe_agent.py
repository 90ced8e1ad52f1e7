"""SWE-agent trajectories on the bundled real runs (golden numbers counted by hand with a
throwaway plain-``json`` script; each literal says how)."""

from __future__ import annotations

from format_checks import (
    NO_USAGE,
    check_structure,
    parse,
    stats,
)

from workbench.continuity.enums import EventFlag, EventKind


def test_swe_agent_pydicom(recorded_dir):
    [c], _ = parse(recorded_dir / "swe-agent/pydicom__pydicom-1458.traj", "swe_agent")
    s = stats(c)
    # history: 1 system, 13 user (1 is_demo, 1 task, 11 observations), 12 assistant (json Counter on role)
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 2, "ASSISTANT": 12}
    # 12 assistant messages with a non-empty 'action', no tool_calls -> 12 synthetic calls;
    # 11 of them are followed by a user observation (the last action is `submit`)
    assert s["kinds"]["TOOL_CALL"] == 12 and s["kinds"]["TOOL_RESULT"] == 11
    assert s["pairs"] == 11 and s["unpaired_calls"] == 1
    # len(trajectory) == 12 steps, each a SIDE_EFFECT; META document + layout
    assert s["kinds"]["SIDE_EFFECT"] == 12 and s["kinds"]["META"] == 2
    assert s["events"] == 2 + 15 + 12 + 11 + 12
    # one request per assistant message == info.model_stats.api_calls (12)
    assert s["requests"] == 12 == c.meta["model_stats"]["api_calls"]
    # SOURCES.md: tokens_sent 122,612, tokens_received 1,369, $1.27; totals only, no per-request usage
    assert c.meta["model_stats"]["tokens_sent"] == 122_612
    assert c.meta["model_stats"]["tokens_received"] == 1_369
    assert round(c.meta["model_stats"]["instance_cost"], 2) == 1.27
    # the same totals as run-level usage (info.model_stats.instance_cost 1.26719)
    assert c.meta["run_usage"] == {"source": "info.model_stats", "tokens_sent": 122_612,
                                   "tokens_received": 1_369, "api_calls": 12, "cost_usd": 1.26719}
    assert s["usage"] == NO_USAGE
    assert c.continuity_id == "pydicom__pydicom-1458"
    # the demonstration is harness-injected
    demo = [i for i in range(s["events"]) if c.rows.cols["name"][i] == "demonstration"]
    assert len(demo) == 1 and c.rows.cols["flags"][demo[0]] & EventFlag.META
    check_structure(c)


def test_swe_agent_marshmallow_function_calling(recorded_dir):
    [c], _ = parse(recorded_dir / "swe-agent/marshmallow-code__marshmallow-1867.traj", "swe_agent")
    s = stats(c)
    # history roles: system 1, user 1, assistant 13, tool 13 (json Counter)
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 13}
    # 13 tool_calls entries, 13 tool_call_ids; ids are reused by the demo, so pairs were
    # counted sequentially (a result closes the latest open call of its id): 13
    assert s["kinds"]["TOOL_CALL"] == 13 and s["kinds"]["TOOL_RESULT"] == 13 and s["pairs"] == 13
    assert s["requests"] == 13 == c.meta["model_stats"]["api_calls"]
    assert "run_usage" not in c.meta  # tokens and cost zeroed: nothing was recorded
    assert s["kinds"]["SIDE_EFFECT"] == 13  # len(trajectory)
    # replay_config.agent.model.name is "replay": SWE-agent replayed it, no model was called
    assert c.model is None and c.meta.get("model_stats") is not None
    assert s["usage"] == NO_USAGE
    first_call = c.rows.cols["kind"].index(EventKind.TOOL_CALL)
    assert c.rows.cols["call_id"][first_call] == "call_9diWc1DYm4RLmPfHgIaP2wd"
    assert c.rows.cols["name"][first_call] == "bash"
    assert c.rows.cols["text"][first_call] == '{"command":"ls -F"}'
    check_structure(c)


def test_swe_agent_ctf_demo(recorded_dir):
    [c], _ = parse(recorded_dir / "swe-agent/i_got_id_demo.traj", "swe_agent")
    s = stats(c)
    # history: system 1, user 21 (task + 20 observations), assistant 21 (json Counter)
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 21}
    assert s["kinds"]["TOOL_CALL"] == 21 and s["kinds"]["TOOL_RESULT"] == 20 and s["pairs"] == 20
    assert s["requests"] == 21 and s["kinds"]["SIDE_EFFECT"] == 21
    assert c.meta["model_stats"]["api_calls"] == 0  # demonstration: zeroed stats
    check_structure(c)
