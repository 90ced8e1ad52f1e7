"""Fuzzing the importers of the document, event-stream and markdown formats (Claude Code
and Codex are fuzzed in test_bad_input.py): arbitrary input may only ever raise SourceError.

Three kinds of input per format: random bytes, random JSON, and JSON/markdown *shaped*
like the format (right container, record keys from the format's vocabulary, random
values), which reaches the deep code paths. When a parse succeeds in ``fail`` mode the
raw column must reproduce the input, and the events must pass the canonical validator.
"""

from __future__ import annotations

import importlib
import json
import tempfile
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import SourceError
from workbench.sources import load_formats
from workbench.sources.base import ParseContext

FILE_FORMATS = ("swe_agent", "mini_swe_agent", "openhands", "openhands_sdk", "gemini_cli",
             "openai_messages", "aider")
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

KEYS = [
    # shared / OpenAI
    "role", "content", "tool_calls", "tool_call_id", "tool_call_ids", "name", "id", "type",
    "function", "arguments", "reasoning_content", "function_call", "text", "usage",
    # SWE-agent / mini
    "action", "thought", "agent", "message_type", "is_demo", "observation", "response",
    "extra", "actions", "command", "info", "model_stats",
    # OpenHands v0
    "timestamp", "source", "message", "args", "extras", "cause", "tool_call_metadata",
    "function_name", "model_response", "choices", "prompt_tokens", "completion_tokens",
    "cache_read_input_tokens", "cache_creation_input_tokens", "prompt_tokens_details",
    "cached_tokens", "success", "summary",
    # SDK
    "kind", "llm_message", "llm_response_id", "tool_name", "tool_call", "key", "value",
    "usage_to_metrics", "accumulated_token_usage", "cache_read_tokens", "cache_write_tokens",
    "model_name", "system_prompt", "thinking_blocks", "forgotten_event_ids", "is_error",
    "error", "rejection_reason", "context_window",
    # Gemini
    "tokens", "input", "output", "cached", "thoughts", "tool", "toolCalls", "result",
    "functionResponse", "status", "subject", "description", "model",
]
VALUES = [
    "system", "user", "assistant", "tool", "developer", "function", "gemini", "info", "error",
    "message", "run", "edit", "condensation", "system", "agent", "environment", "condense",
    "null", "stats", "default", "MessageEvent", "ActionEvent", "ObservationEvent",
    "SystemPromptEvent", "Condensation", "CondensationSummaryEvent", "AgentErrorEvent",
    "UserRejectObservation", "ConversationStateUpdateEvent", "PauseEvent", "success",
    "```mswea_bash_command\nls\n```", "<returncode>1</returncode>", "[]", "{}", "c1",
    "2025-01-20T20:29:13.519638", "2026-01-16T11:01:22.281Z", "not a date",
]

leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
                 st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
                 st.sampled_from(VALUES))
json_any = st.recursive(leaf, lambda c: st.one_of(
    st.lists(c, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), c, max_size=6)),
    max_leaves=12)
record = st.dictionaries(st.sampled_from(KEYS), json_any, max_size=6)
records = st.lists(record, max_size=5)


def _shaped(fmt: str):
    """Containers the format expects, with vocabulary-keyed random records inside."""
    if fmt == "swe_agent":
        return st.fixed_dictionaries({"history": records, "trajectory": st.lists(json_any, max_size=3)},
                                     optional={"info": json_any, "replay_config": json_any}).map(lambda d: ("json", d))
    if fmt == "mini_swe_agent":
        return st.one_of(records, st.fixed_dictionaries({"messages": records}, optional={"info": json_any})).map(lambda d: ("json", d))
    if fmt == "openhands":
        return records.map(lambda d: ("json", d))
    if fmt == "openhands_sdk":
        return st.one_of(
            st.lists(record, min_size=1, max_size=6).map(lambda d: ("jsonl", d)),
            st.fixed_dictionaries({"messages": records, "response": record},
                                  optional={"context_window": json_any, "cost": json_any}).map(lambda d: ("json", d)))
    if fmt == "gemini_cli":
        return st.fixed_dictionaries({"sessionId": json_any, "messages": records}).map(lambda d: ("json", d))
    if fmt == "openai_messages":
        return st.one_of(records.map(lambda d: ("json", d)),
                         st.fixed_dictionaries({"messages": records}).map(lambda d: ("json", d)),
                         st.lists(record, min_size=1, max_size=6).map(lambda d: ("jsonl", d)))
    raise AssertionError(fmt)


AIDER_LINES = [
    "# aider chat started at 2024-01-01 00:00:00", "#### hi  ", "####", "#### /add x.py  ",
    "> out  ", ">", "> Tokens: 1.2k sent, 3 received. Cost: $0.01 message.",
    "> Tokens: 9k sent, 1k cache write, 2k cache hit, 7 received.", "> Tokens: x sent",
    "> Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session.  ",
    "> Tokens: 194 sent, 9,474 cached, 7 received. Cost: $0.000057 message, $0.000057 session, cache costs not available.",
    "> Tokens: 529 sent, 90 received, cache costs not included. Cost: $0.00024 message, $0.00024 session.",
    "> Tokens: 5,24 sent, 1 received.", "> Tokens: 1 sent, 2 received. Cost: lots", "> Aider v0.47.2-dev  ",
    "> ^C KeyboardInterrupt  ", "```", "```python", "~~~", "<div class=\"chat-transcript\">",
    "</div>", "", "  ", "some reply text", "---",
]
aider_text = st.lists(st.one_of(st.sampled_from(AIDER_LINES), st.text(max_size=20)), max_size=25).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n"]).map(lambda eol: eol.join(lines)))


def _run(fmt: str, data: bytes, on_error: str):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / ("input.md" if fmt == "aider" else "input.json")
        path.write_bytes(data)
        formats = load_formats()
        det = formats[fmt].sniff(path, data[:65536])
        assert 0.0 <= det.score <= 1.0 and isinstance(det.reason, str)
        try:
            return formats[fmt].parse(ParseContext(path=path, on_error=on_error))
        except SourceError as exc:
            assert "internal error" not in str(exc), str(exc)  # a parser bug, not bad input
            return None


def _validate(conts) -> None:
    import pyarrow as pa

    from workbench.continuity.validate import validate_events

    for c in conts:
        cols = c.rows.cols
        n = len(c.rows)
        table = pa.table({
            "continuity": pa.array(np.zeros(n, np.int32)), "seq": pa.array(np.arange(n, dtype=np.int64)),
            "kind": pa.array(np.asarray(cols["kind"], np.int8)), "flags": pa.array(np.asarray(cols["flags"], np.int32)),
            "pair_seq": pa.array(np.asarray(cols["pair_seq"], np.int64)),
        })
        validate_events(table)
        for name in ("call_id", "message_id", "name", "text", "raw"):
            assert all(v is None or isinstance(v, str) for v in cols[name]), name
        pa.array(cols["text"], type=pa.large_string())  # storable
        pa.array(cols["raw"], type=pa.large_string())


def _check_roundtrip(fmt: str, conts, data: bytes, container: str) -> None:
    mod = importlib.import_module(f"workbench.sources.{fmt}")
    raws = [r for c in conts for r in c.rows.cols["raw"]]
    rebuilt = mod.roundtrip(raws)
    if container == "text":
        assert rebuilt == data.decode("utf-8")
    elif container == "jsonl":
        assert rebuilt.encode("utf-8") == b"\n".join(ln for ln in data.split(b"\n") if ln.strip())
    else:
        assert rebuilt == orjson.loads(data)


@pytest.mark.parametrize("fmt", [*FILE_FORMATS, "atif"])
@SETTINGS
@given(data=st.binary(max_size=400))
def test_random_bytes(fmt, data):
    _run(fmt, data, "fail")
    _run(fmt, data, "skip")


@pytest.mark.parametrize("fmt", [*FILE_FORMATS, "atif"])
@SETTINGS
@given(value=json_any, indent=st.booleans())
def test_random_json(fmt, value, indent):
    data = json.dumps(value, indent=2 if indent else None).encode()
    conts = _run(fmt, data, "fail")
    if conts is not None:
        _validate(conts)
    _run(fmt, data, "skip")


@pytest.mark.parametrize("fmt", [f for f in FILE_FORMATS if f != "aider"])
@SETTINGS
@given(st.data())
def test_shaped_json(fmt, data):
    container, value = data.draw(_shaped(fmt))
    if container == "jsonl":
        raw = b"\n".join(orjson.dumps(v) for v in value) + b"\n"
    else:
        raw = json.dumps(value, indent=data.draw(st.sampled_from([None, 1]))).encode()
    conts = _run(fmt, raw, "fail")
    if conts is not None:
        _validate(conts)
        _check_roundtrip(fmt, conts, raw, container)
    skipped = _run(fmt, raw, "skip")
    if skipped is not None:
        _validate(skipped)
        _check_roundtrip(fmt, skipped, raw, container)  # skipped records keep their raw


@SETTINGS
@given(text=aider_text)
def test_shaped_aider(text):
    data = text.encode("utf-8")
    conts = _run("aider", data, "fail")
    if conts is not None:
        _validate(conts)
        _check_roundtrip("aider", conts, data, "text")
    skipped = _run("aider", data, "skip")
    if skipped is not None:
        _check_roundtrip("aider", skipped, data, "text")


# ---------------------------------------------------------- logs spread over several files

UI_SAYS = ["api_req_started", "api_req_finished", "text", "task", "user_feedback", "reasoning", "tool",
           "command", "command_output", "condense_context", "completion_result", "checkpoint_created", None]
block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image", "weird", None])},
    optional={"text": json_any, "id": st.sampled_from(["t1", "t2", None, 3]), "name": json_any,
              "input": json_any, "tool_use_id": st.sampled_from(["t1", "t2", None]), "content": json_any,
              "thinking": json_any, "is_error": json_any})
history_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", None])},
    optional={"content": st.one_of(st.text(max_size=10), st.lists(block, max_size=3), json_any),
              "ts": json_any, "isSummary": st.booleans()})
request_text = st.one_of(st.text(max_size=8), st.fixed_dictionaries(
    {}, optional={"tokensIn": json_any, "tokensOut": st.integers(0, 10**6), "cacheReads": json_any,
                  "cacheWrites": st.integers(0, 10**6), "cost": json_any,
                  "apiProtocol": st.sampled_from(["anthropic", "openai", 3])}).map(json.dumps))
ui_message = st.fixed_dictionaries(
    {"type": st.sampled_from(["say", "ask", "other", None])},
    optional={"say": st.sampled_from(UI_SAYS), "ask": st.sampled_from(["tool", "followup", "command", None]),
              "text": st.one_of(request_text, json_any), "ts": json_any, "partial": json_any,
              "conversationHistoryIndex": st.one_of(st.integers(-1, 6), json_any),
              "contextCondense": json_any, "modelInfo": json_any})


def _parse_dir(fmt: str, primary: Path, on_error: str):
    formats = load_formats()
    det = formats[fmt].sniff(primary, primary.read_bytes()[:65536])
    assert 0.0 <= det.score <= 1.0
    ctx = ParseContext(path=primary, on_error=on_error)
    try:
        return formats[fmt].parse(ctx), ctx
    except SourceError as exc:
        assert "internal error" not in str(exc), str(exc)
        return None, ctx


@pytest.mark.parametrize("fmt", ["cline", "roo_code"])
@SETTINGS
@given(history=st.one_of(st.lists(history_message, max_size=5), json_any),
       ui=st.one_of(st.none(), st.lists(ui_message, max_size=7), json_any),
       metadata=st.one_of(st.none(), json_any), ui_only=st.booleans())
def test_shaped_cline_task(fmt, history, ui, metadata, ui_only):
    from workbench.sources import cline

    with tempfile.TemporaryDirectory() as d:
        task = Path(d) / "1760000000000"
        task.mkdir()
        files = {}
        if not (ui_only and ui is not None):
            files[cline.HISTORY] = json.dumps(history).encode()
        if ui is not None:
            files[cline.UI] = json.dumps(ui).encode()
        if metadata is not None:
            files[cline.METADATA] = json.dumps(metadata).encode()
        for name, data in files.items():
            (task / name).write_bytes(data)
        primary = task / (cline.HISTORY if cline.HISTORY in files else cline.UI)
        for on_error in ("fail", "skip"):
            conts, ctx = _parse_dir(fmt, primary, on_error)
            if conts is None:
                continue
            _validate(conts)
            if on_error == "fail":  # every file is rebuilt from the raws
                assert cline.roundtrip(conts[0].rows.cols["raw"]) == {n: orjson.loads(v) for n, v in files.items()}


part = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "reasoning", "tool", "step-start", "step-finish", "compaction", "file",
                              "patch", "retry", "strange", None])},
    optional={"text": json_any, "callID": json_any, "tool": json_any, "auto": json_any, "synthetic": json_any,
              "state": st.one_of(json_any, st.fixed_dictionaries(
                  {"status": st.sampled_from(["completed", "error", "pending", "nope"])},
                  optional={"input": json_any, "output": json_any, "error": json_any, "time": json_any})),
              "tokens": st.one_of(json_any, st.fixed_dictionaries(
                  {"input": st.integers(0, 10**6), "output": json_any},
                  optional={"cache": st.fixed_dictionaries({"read": json_any, "write": st.integers(0, 9)})})),
              "cost": json_any, "mime": json_any, "id": st.text(max_size=4)})
oc_info = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", None])},
    optional={"id": st.text(max_size=4), "time": json_any, "tokens": json_any, "cost": json_any,
              "summary": json_any, "modelID": json_any, "providerID": json_any})


@SETTINGS
@given(messages=st.lists(st.fixed_dictionaries({"info": st.one_of(oc_info, json_any), "parts": st.lists(part, max_size=4)}),
                         max_size=4), info=st.one_of(st.fixed_dictionaries({"id": st.text(max_size=4)}), json_any))
def test_shaped_opencode_export(messages, info):
    from workbench.sources import opencode

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "export.json"
        data = json.dumps({"info": info, "messages": messages}).encode()
        path.write_bytes(data)
        for on_error in ("fail", "skip"):
            conts, _ = _parse_dir("opencode", path, on_error)
            if conts is not None:
                _validate(conts)
                assert opencode.roundtrip([r for c in conts for r in c.rows.cols["raw"]]) == orjson.loads(data)


@SETTINGS
@given(session=st.one_of(st.fixed_dictionaries({"id": st.just("ses_1"), "time": json_any}), json_any),
       messages=st.lists(st.tuples(st.one_of(oc_info, json_any, st.just("not json")),
                                   st.lists(st.one_of(part, st.just("not json")), max_size=3)), max_size=3))
def test_shaped_opencode_storage(session, messages):
    from workbench.sources import opencode

    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "storage"
        expected = {}

        def write(rel: str, value) -> None:
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            data = value.encode() if value == "not json" else json.dumps(value).encode()
            p.write_bytes(data)
            expected[rel] = value

        write("session/proj/ses_1.json", session)
        (root / "message").mkdir(exist_ok=True)
        for i, (info, parts) in enumerate(messages):
            write(f"message/ses_1/msg_{i}.json", info)
            for j, p in enumerate(parts):
                write(f"part/msg_{i}/prt_{j}.json", p)
        assert opencode.primary_of(root / "message/ses_1/msg_0.json") in (None, root / "session/proj/ses_1.json")
        for on_error in ("fail", "skip"):
            conts, _ = _parse_dir("opencode", root / "session/proj/ses_1.json", on_error)
            if conts is None:
                continue
            _validate(conts)
            if on_error == "fail":
                rebuilt = opencode.roundtrip([r for c in conts for r in c.rows.cols["raw"]])
                assert rebuilt == {k: v for k, v in expected.items()}
