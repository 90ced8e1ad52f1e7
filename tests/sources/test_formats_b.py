"""Importers part B: SWE-agent, mini-swe-agent, OpenHands (v0 + SDK), Gemini CLI,
OpenAI message lists and aider, on the real recorded logs.

The golden numbers were counted by hand with a throwaway script that reads the files
with plain ``json``/``re`` (no workbench code); each literal says how it was counted.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from pathlib import Path

import pytest

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources import load_formats
from workbench.sources.base import ParseContext

B_FORMATS = ("swe_agent", "mini_swe_agent", "openhands", "openhands_sdk", "gemini_cli",
             "openai_messages", "aider")

# file (relative to the recorded dir) -> its format
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
}
JSONL = {"openhands-sdk/events.jsonl"}
TEXT = {"aider/complex-change.md"}


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


def _check_structure(cont) -> None:
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


# ----------------------------------------------------------------------- golden tests


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
    assert s["usage"] == NO_USAGE
    assert c.continuity_id == "pydicom__pydicom-1458"
    # the demonstration is harness-injected
    demo = [i for i in range(s["events"]) if c.rows.cols["name"][i] == "demonstration"]
    assert len(demo) == 1 and c.rows.cols["flags"][demo[0]] & EventFlag.META
    _check_structure(c)


def test_swe_agent_marshmallow_function_calling(recorded_dir):
    [c], _ = parse(recorded_dir / "swe-agent/marshmallow-code__marshmallow-1867.traj", "swe_agent")
    s = stats(c)
    # history roles: system 1, user 1, assistant 13, tool 13 (json Counter)
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 13}
    # 13 tool_calls entries, 13 tool_call_ids; ids are reused by the demo, so pairs were
    # counted sequentially (a result closes the latest open call of its id): 13
    assert s["kinds"]["TOOL_CALL"] == 13 and s["kinds"]["TOOL_RESULT"] == 13 and s["pairs"] == 13
    assert s["requests"] == 13 == c.meta["model_stats"]["api_calls"]
    assert s["kinds"]["SIDE_EFFECT"] == 13  # len(trajectory)
    assert c.model == "replay"  # replay_config.agent.model.name
    assert s["usage"] == NO_USAGE
    first_call = c.rows.cols["kind"].index(EventKind.TOOL_CALL)
    assert c.rows.cols["call_id"][first_call] == "call_9diWc1DYm4RLmPfHgIaP2wd"
    assert c.rows.cols["name"][first_call] == "bash"
    assert c.rows.cols["text"][first_call] == '{"command":"ls -F"}'
    _check_structure(c)


def test_swe_agent_ctf_demo(recorded_dir):
    [c], _ = parse(recorded_dir / "swe-agent/i_got_id_demo.traj", "swe_agent")
    s = stats(c)
    # history: system 1, user 21 (task + 20 observations), assistant 21 (json Counter)
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 21}
    assert s["kinds"]["TOOL_CALL"] == 21 and s["kinds"]["TOOL_RESULT"] == 20 and s["pairs"] == 20
    assert s["requests"] == 21 and s["kinds"]["SIDE_EFFECT"] == 21
    assert c.meta["model_stats"]["api_calls"] == 0  # demonstration: zeroed stats
    _check_structure(c)


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
    _check_structure(c)


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
    _check_structure(c)


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
    _check_structure(c)


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
    _check_structure(c)


def test_openai_messages_fncall(recorded_dir):
    [c], _ = parse(recorded_dir / "openhands-sdk/fncall-llm-message.json", "openai_messages")
    s = stats(c)
    # 14 messages: system 1, user 1, assistant 6 (one with empty content), tool 6
    assert s["message_roles"] == {"SYSTEM": 1, "USER": 1, "ASSISTANT": 5}
    assert s["kinds"]["TOOL_CALL"] == 6 and s["kinds"]["TOOL_RESULT"] == 6 and s["pairs"] == 6
    assert s["requests"] == 6  # one per assistant message
    assert s["usage"] == NO_USAGE
    _check_structure(c)


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
    _check_structure(c)


def test_aider_complex_change(recorded_dir):
    conts, _ = parse(recorded_dir / "aider/complex-change.md", "aider")
    assert len(conts) == 1  # no '# aider chat started at' header (grep)
    [c] = conts
    s = stats(c)
    # 10 '#### ' lines = 10 single-line user inputs, 1 of them '/add ...' with no reply
    # after it; 9 user turns are followed by a reply (one request each)
    assert s["message_roles"] == {"USER": 9, "ASSISTANT": 9}
    assert s["requests"] == 9
    # 10 groups of consecutive '> ' lines: 9 outputs + 1 '^C KeyboardInterrupt'; + the /add command
    assert s["kinds"]["SIDE_EFFECT"] == 11
    # 16 <div>/</div> lines: 1 inside the preamble (front matter + intro), 15 markup chunks
    assert s["kinds"]["OPAQUE"] == 16
    assert s["kinds"].get("USAGE", 0) == 0 and s["usage"] == NO_USAGE  # no Tokens lines
    assert c.continuity_id == "complex-change"
    _check_structure(c)


# --------------------------------------------------------------- lossless round trip


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


# ---------------------------------------------------------------------------- sniffing


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(64 * 1024)


@pytest.mark.parametrize("rel", sorted(FILES))
def test_sniff_picks_own_format(recorded_dir, rel):
    path = recorded_dir / rel
    formats = load_formats()
    scores = {name: f.sniff(path, _head(path)) for name, f in formats.items()}
    best = max(scores, key=lambda n: scores[n].score)
    assert best == FILES[rel], {n: (d.score, d.reason) for n, d in scores.items()}
    mine = sorted((scores[n].score for n in B_FORMATS), reverse=True)
    assert mine[0] >= 0.5 and mine[0] > mine[1], "the winner must be unambiguous"
    assert scores[FILES[rel]].reason


def test_sniff_leaves_claude_code_and_codex_alone(recorded_dir):
    formats = load_formats()
    paths = sorted((recorded_dir / "claude-code").rglob("*.jsonl")) + sorted((recorded_dir / "codex").glob("*.jsonl"))
    assert paths
    for path in paths:
        head = _head(path)
        for name in B_FORMATS:
            det = formats[name].sniff(path, head)
            assert det.score < 0.1, (path.name, name, det)


def test_sniff_reason_names_what_it_saw(recorded_dir):
    from workbench.sources import swe_agent

    det = swe_agent.sniff(recorded_dir / "swe-agent/pydicom__pydicom-1458.traj",
                          _head(recorded_dir / "swe-agent/pydicom__pydicom-1458.traj"))
    assert det.score >= 0.9 and "history" in det.reason and "info.model_stats" in det.reason


def test_sniff_never_raises(tmp_path):
    formats = load_formats()
    missing = tmp_path / "nope.json"
    for name in B_FORMATS:
        assert formats[name].sniff(missing, b"\x00\xff{[").score >= 0.0
        assert formats[name].sniff(missing, b"").score == 0.0


# ------------------------------------------------------------ synthetic format cases


def test_aider_sessions_tokens_and_commands(tmp_path):
    text = (
        "\n# aider chat started at 2024-05-01 10:00:00\n\n"
        "> /usr/bin/aider --model gpt-4o  \n> Aider v0.50.0  \n\n"
        "#### add a hello function  \n#### to hello.py  \n\n"
        "Here is the change:\n\n```python\n> not tool output, inside a fence\n#### nor a user line\n```\n\n"
        "> Tokens: 4.2k sent, 1.2k received. Cost: $0.02 message, $0.05 session.  \n"
        "> Applied edit to hello.py  \n\n"
        "#### /add foo.py  \n\n> Added foo.py to the chat  \n\n"
        "#### /ask why?  \n\nBecause.\n\n"
        "> Tokens: 12k sent, 1.5k cache write, 3.2k cache hit, 245 received. Cost: $0.01 message.  \n\n"
        "# aider chat started at 2024-05-01 11:30:00\n\n"
        "#### again  \n\nSure, partial reply\n```python\nprint(1)\n\n> ^C KeyboardInterrupt  \n\n"
        "#### thanks  \n\nWelcome.\n\n> Tokens: 1.5M sent, 12 received.  \n"
    )
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(text, encoding="utf-8")
    conts, _ = parse(path, "aider")
    assert [c.continuity_id for c in conts] == ["aider-2024-05-01T10:00:00", "aider-2024-05-01T11:30:00"]
    from workbench.sources import aider

    assert aider.roundtrip([r for c in conts for r in c.rows.cols["raw"]]) == text
    a, b = conts
    ca = a.rows.cols
    users = [ca["text"][i] for i in range(len(a.rows)) if ca["kind"][i] == EventKind.MESSAGE and ca["role"][i] == Role.USER]
    assert users == ["add a hello function\nto hello.py", "/ask why?"]
    cmd = [i for i in range(len(a.rows)) if ca["name"][i] == "command"]
    assert [ca["kind"][i] for i in cmd] == [EventKind.SIDE_EFFECT, EventKind.MESSAGE]
    reply = next(i for i in range(len(a.rows)) if ca["role"][i] == Role.ASSISTANT)
    assert "#### nor a user line" in ca["text"][reply]
    usage = [(ca["request"][i], ca["usage_input"][i], ca["usage_cache_read"][i], ca["usage_cache_write"][i],
              ca["usage_output"][i]) for i in range(len(a.rows)) if ca["kind"][i] == EventKind.USAGE]
    # sent includes the cache tokens: 12,000 - 3,200 hit - 1,500 write = 7,300 uncached
    assert usage == [(0, 4200, -1, -1, 1200), (1, 7300, 3200, 1500, 245)]
    assert stats(a)["requests"] == 2
    s = stats(b)
    assert s["requests"] == 2 and s["usage"]["usage_input"] == 1_500_000 and s["usage"]["usage_output"] == 12
    cb = b.rows.cols
    intr = [i for i in range(len(b.rows)) if cb["name"][i] == "interrupt"]
    assert len(intr) == 1 and cb["flags"][intr[0]] & EventFlag.ERROR  # the unclosed fence ended there


def test_aider_tokens_line_parsing():
    from workbench.sources.aider import parse_tokens_line

    assert parse_tokens_line("> Tokens: 4.2k sent, 1.2k received. Cost: $0.02 message, $0.05 session.") == (4200, -1, -1, 1200)
    assert parse_tokens_line("> Tokens: 950 sent, 12 received.") == (950, -1, -1, 12)
    assert parse_tokens_line("> Tokens: 12k sent, 3.1k cache write, 8.0k cache hit, 1.1k received.") == (900, 8000, 3100, 1100)
    assert parse_tokens_line("> Tokens: 2.5M sent, 1k received.") == (2_500_000, -1, -1, 1000)


def test_aider_bad_tokens_line_fails_or_skips(tmp_path):
    path = tmp_path / "h.md"
    path.write_text("# aider chat started at 2024-01-01 00:00:00\n\n#### hi\n\nhello\n\n> Tokens: lots sent\n")
    with pytest.raises(SourceError) as exc:
        parse(path, "aider")
    assert ":7:" in str(exc.value) and "lots" in str(exc.value)
    conts, ctx = parse(path, "aider", on_error="skip")
    assert len(ctx.skipped) == 1 and ctx.skipped[0]["line"] == 7
    c = conts[0].rows.cols
    assert c["flags"][-1] & EventFlag.SKIPPED and c["raw"][-1] == "> Tokens: lots sent\n"


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


def test_malformed_records_name_the_place(tmp_path):
    p = tmp_path / "x.traj"
    p.write_text(json.dumps({"history": [{"role": "system", "content": "s"},
                                         {"role": "assistant", "content": "a", "tool_calls": [{"function": []}]}],
                             "trajectory": []}))
    with pytest.raises(SourceError) as exc:
        parse(p, "swe_agent")
    msg = str(exc.value)
    assert "history[1].tool_calls[0].function" in msg and "expected" in msg
    conts, ctx = parse(p, "swe_agent", on_error="skip")
    assert len(ctx.skipped) == 1
    from workbench.sources import swe_agent

    assert swe_agent.roundtrip(conts[0].rows.cols["raw"]) == json.loads(p.read_text())

    q = tmp_path / "events.jsonl"
    q.write_text('{"kind": "ActionEvent", "id": "a", "tool_call": []}\n')
    with pytest.raises(SourceError) as exc:
        parse(q, "openhands_sdk")
    assert ":1:" in str(exc.value) and "tool_call" in str(exc.value)

    r = tmp_path / "session.json"
    r.write_text('{"sessionId": "s", "messages": [{"type": "gemini", "tokens": {"input": "many"}}]}')
    with pytest.raises(SourceError, match=r"messages\[0\]\.tokens\.input"):
        parse(r, "gemini_cli")


@pytest.mark.parametrize("fmt", B_FORMATS)
def test_wrong_top_level_shape_is_a_source_error(tmp_path, fmt):
    p = tmp_path / "weird.json"
    p.write_text("42")
    with pytest.raises(SourceError):
        parse(p, fmt)
    p.write_text("")
    with pytest.raises(SourceError, match="empty"):
        parse(p, fmt)


def _rows(c):
    """(kind name, role name, request, call_id, name, text) per event, for readable asserts."""
    cols = c.rows.cols
    return [(EventKind(cols["kind"][i]).name, Role(cols["role"][i]).name, cols["request"][i],
             cols["call_id"][i], cols["name"][i], cols["text"][i]) for i in range(len(c.rows))]


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
    rows = _rows(c)
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
    _check_structure(c)


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
    rows = _rows(c)[2:]  # after META document + layout
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
    _check_structure(c)


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
    rows = _rows(c)[2:]
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
    rows = _rows(c)[2:]
    assert [(k, r, q) for k, r, q, *_ in rows] == [
        ("MESSAGE", "SYSTEM", 0), ("MESSAGE", "USER", 0), ("MESSAGE", "ASSISTANT", 0),
        ("MESSAGE", "USER", 1),  # format error feedback: no action, so not a tool result
        ("MESSAGE", "ASSISTANT", 1), ("TOOL_CALL", "ASSISTANT", 1), ("TOOL_RESULT", "TOOL", -1)]
    assert rows[5][5] == "cat a" and rows[5][3] == "mswea-1"
    assert c.model == "anthropic/claude-sonnet-4" and c.meta["model_stats"]["api_calls"] == 3
    assert c.rows.cols["usage_input"][6] == 50 and c.continuity_id == "run"
    from workbench.sources import mini_swe_agent

    assert mini_swe_agent.roundtrip(c.rows.cols["raw"]) == doc
    assert load_formats()["mini_swe_agent"].sniff(p, p.read_bytes()).score >= 0.95
