"""Bad input: clear errors naming file and line, --on-error skip, and fuzzing.

The parsers may only ever raise :class:`~workbench.errors.SourceError` (a
:class:`~workbench.errors.WorkbenchError`), whatever bytes they are given.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import polars as pl
import pytest
from format_checks import FILE_FORMATS, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.continuity.enums import EventFlag, EventKind
from workbench.continuity.validate import validate_events
from workbench.errors import SourceError, WorkbenchError
from workbench.sources import load_formats
from workbench.sources.base import ParseContext
from workbench.sources.importer import ParsedFile, ParseResult, build_tables, import_paths

FORMATS = ("claude_code", "codex")


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _with_bad_middle_line(src_path: Path, dst: Path, line_no: int, bad: bytes) -> Path:
    lines = _lines(src_path)
    lines[line_no - 1] = bad
    dst.write_bytes(b"\n".join(lines))
    return dst


# ---------------------------------------------------------------- malformed records

def test_malformed_middle_line_fails_naming_file_and_line(tmp_path, cc_dir):
    path = _with_bad_middle_line(cc_dir / "short.jsonl", tmp_path / "s.jsonl", 5, b'{"type":"assistant","mess')
    with pytest.raises(SourceError) as ei:
        import_paths([path], tmp_path / "out", tokenizers=())
    msg = str(ei.value)
    assert msg.startswith(f"{path}:5: line is not valid JSON")
    assert "(expected one complete JSON object per line)" in msg
    assert ei.value.path == str(path) and ei.value.line == 5
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_skip_imports_the_rest_and_reports(tmp_path, cc_dir, src):
    bad = b'{"type":"assistant","mess'
    path = _with_bad_middle_line(cc_dir / "short.jsonl", tmp_path / "s.jsonl", 5, bad)
    ds = import_paths([path], tmp_path / "out", on_error="skip", tokenizers=())
    imp = ds.manifest["import"]
    assert imp["on_error"] == "skip" and imp["skipped_total"] == 1
    (sk,) = imp["skipped"]
    assert sk["file"] == str(path) and sk["line"] == 5 and "not valid JSON" in sk["error"]
    assert ds.manifest["source"]["files"][0]["skipped"] == 1
    ev = ds.events()
    skipped = ev.filter((pl.col("flags") & int(EventFlag.SKIPPED)) != 0)
    assert skipped.height == 1
    row = skipped.row(0, named=True)
    assert row["kind"] == int(EventKind.OPAQUE) and row["raw"] == bad.decode() and row["source_line"] == 5
    # the other 14 records are there, and the raw column still round-trips
    assert ev["source_line"].n_unique() == 15
    raws = [r for r in ev.sort("seq")["raw"].to_list() if r is not None]
    assert "\n".join(raws).encode() == b"\n".join(src.nonblank_lines(path))


@pytest.mark.parametrize("bad, expected", [
    (b'{"type":"assistant","message":"oops"}', "a 'assistant' record with a message object"),
    (b'{"type":"user","message":{"role":"user","content":42}}', "message.content as a string or a list"),
    (b"[1, 2, 3]", "a Claude Code record"),
    (b'{"no_type": true}', "a Claude Code record"),
    (b'{"type":"assistant","message":{"id":"m","model":"x","content":[],"usage":{"input_tokens":"many"}}}',
     "usage token counts as non-negative integers"),
])
def test_structurally_wrong_claude_code_record(tmp_path, cc_dir, bad, expected):
    path = _with_bad_middle_line(cc_dir / "short.jsonl", tmp_path / "s.jsonl", 6, bad)
    with pytest.raises(SourceError, match=r":6: ") as ei:
        import_paths([path], tmp_path / "out", tokenizers=())
    assert expected in str(ei.value)


@pytest.mark.parametrize("bad, expected", [
    (b'{"timestamp":"x","type":"response_item","payload":"oops"}', "a 'response_item' record with a payload object"),
    (b'{"timestamp":"x","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":[]}}}',
     "info.last_token_usage with input_tokens"),
    (b'"just a string"', "a Codex rollout record"),
])
def test_structurally_wrong_codex_record(tmp_path, codex_dir, bad, expected):
    name = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    path = _with_bad_middle_line(codex_dir / name, tmp_path / name, 20, bad)
    with pytest.raises(SourceError, match=r":20: ") as ei:
        import_paths([path], tmp_path / "out", tokenizers=())
    assert expected in str(ei.value)
    ds = import_paths([path], tmp_path / "out", on_error="skip", tokenizers=())
    assert ds.manifest["import"]["skipped"][0]["line"] == 20


def test_non_utf8_line(tmp_path, cc_dir):
    path = _with_bad_middle_line(cc_dir / "short.jsonl", tmp_path / "s.jsonl", 7, b'{"type":"user","x":"\xff\xfe"}')
    with pytest.raises(SourceError, match=r"s\.jsonl:7: line is not UTF-8 text"):
        import_paths([path], tmp_path / "out", tokenizers=())


def test_truncated_last_line(tmp_path, cc_dir):
    data = (cc_dir / "short.jsonl").read_bytes().rstrip(b"\n")
    path = tmp_path / "t.jsonl"
    path.write_bytes(data[:-40])  # cut the last record short, no newline
    with pytest.raises(SourceError) as ei:
        import_paths([path], tmp_path / "out", tokenizers=())
    assert str(ei.value).startswith(f"{path}:15: last line is truncated")
    ds = import_paths([path], tmp_path / "out", on_error="skip", tokenizers=())
    assert ds.manifest["import"]["skipped"][0]["line"] == 15
    assert ds.events()["source_line"].n_unique() == 15


@pytest.mark.parametrize("content, message", [
    (b"", "file is empty"),
    (b"\n  \n\n", "file holds only whitespace"),
    (b"\x00\x01\x02binary\xff" * 10, "binary file (NUL byte at offset 0)"),
    (b"\xff\xd8\xff\xe0JFIF" + b"x" * 100, "not UTF-8 text"),
])
def test_empty_and_binary_files(tmp_path, content, message):
    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    with pytest.raises(SourceError) as ei:
        import_paths([path], tmp_path / "out", tokenizers=())
    assert str(ei.value).startswith(f"{path}: ") and message in str(ei.value)
    # a forced format does not get past these checks either
    with pytest.raises(SourceError, match="empty|whitespace|binary|UTF-8"):
        import_paths([path], tmp_path / "out", fmt="claude_code", tokenizers=())


@pytest.mark.parametrize("name, content", [
    ("data.csv", "id,name,value\n1,a,2.5\n2,b,3.5\n"),
    ("README", "# Continuity\n\nSome notes about the project.\n"),
    ("other.jsonl", '{"event": "click", "x": 1}\n{"event": "scroll", "y": 2}\n'),
])
def test_wrong_format_lists_what_detection_saw(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(SourceError) as ei:
        import_paths([path], tmp_path / "out", tokenizers=())
    msg = str(ei.value)
    assert msg.startswith(f"{path}: format not recognised")
    assert "detection saw: " in msg
    for fmt in load_formats():  # every format's score and reason is listed
        assert f"{fmt} 0." in msg
    assert "0/2 leading lines are Claude Code records" in msg or "0/3 leading lines are Claude Code" in msg
    assert "(or pass --format)" in msg


def test_errors_are_workbench_errors():
    assert issubclass(SourceError, WorkbenchError)


# ---------------------------------------------------------------- fuzzing

def _parse_bytes(tmp: Path, data: bytes, fmt: str, on_error: str):
    path = tmp / "fuzz.jsonl"
    path.write_bytes(data)
    return load_formats()[fmt].parse(ParseContext(path=path, on_error=on_error))


def _check(tmp: Path, data: bytes) -> None:
    """Both parsers, both error modes: SourceError or a well-formed, lossless result."""
    for fmt in FORMATS:
        for on_error in ("fail", "skip"):
            try:
                conts = _parse_bytes(tmp, data, fmt, on_error)
            except SourceError:
                continue
            (cont,) = conts
            rows = cont.rows
            assert len(rows) >= 1
            n = len(rows)
            assert all(len(v) == n for v in rows.cols.values())
            if on_error == "skip":
                try:
                    want = b"\n".join(ln for ln in data.split(b"\n") if ln.strip()).decode("utf-8")
                except UnicodeDecodeError:
                    want = None
                if want is not None:
                    assert "\n".join(r for r in rows.cols["raw"] if r is not None) == want
            res = ParseResult(files=[ParsedFile(path=tmp / "fuzz.jsonl", fmt=fmt, sha256="", size=len(data),
                                                continuities=conts, skipped=[])])
            events, *_ = build_tables(res, ())
            validate_events(events)


# WORKBENCH_FUZZ_EXAMPLES=5000 for a long bug hunt; the default keeps the suite fast
FUZZ = settings(max_examples=int(os.environ.get("WORKBENCH_FUZZ_EXAMPLES", "120")), deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

VOCAB_KEYS = ["type", "message", "content", "usage", "payload", "info", "last_token_usage", "role", "id",
              "tool_use_id", "is_error", "subtype", "compactMetadata", "trigger", "preTokens",
              "isCompactSummary", "isMeta", "isSidechain", "timestamp", "sessionId", "uuid", "input", "text",
              "thinking", "model", "input_tokens", "output_tokens", "cached_input_tokens",
              "cache_read_input_tokens", "cache_creation_input_tokens", "call_id", "output", "arguments",
              "summary", "source", "data", "media_type", "encrypted_content", "base_instructions",
              "model_context_window", "replacement_history", "total_token_usage", "agentId", "name",
              "action", "snapshot", "leafUuid", "instructions"]
VOCAB_STR = ["user", "assistant", "system", "summary", "progress", "compact_boundary", "auto", "manual",
             "text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "session_meta",
             "turn_context", "response_item", "event_msg", "compacted", "token_count", "message",
             "reasoning", "function_call", "function_call_output", "web_search_call", "custom_tool_call",
             "local_shell_call", "web_search_end", "user_message", "compaction", "<synthetic>",
             "2026-01-01T00:00:00Z", "not-a-date", "", "input_text", "output_text", "summary_text",
             "file-history-snapshot", "queue-operation"]
LEAF = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12) | st.sampled_from(VOCAB_STR))
JSON = st.recursive(LEAF, lambda ch: st.lists(ch, max_size=4)
                    | st.dictionaries(st.sampled_from(VOCAB_KEYS) | st.text(max_size=6), ch, max_size=6),
                    max_leaves=30)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def real_records(recorded_dir) -> list:
    """Small real records of every shape, from both formats."""
    picked: dict[tuple, list] = {}
    for path in sorted((recorded_dir / "claude-code").rglob("*.jsonl")) + sorted((recorded_dir / "codex").glob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            if not line.strip() or len(line) > 6000:
                continue
            rec = json.loads(line)
            msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
            content = msg.get("content")
            block = content[0].get("type") if isinstance(content, list) and content else type(content).__name__
            pl_ = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
            key = (rec.get("type"), rec.get("subtype"), block, pl_.get("type"))
            if len(picked.setdefault(key, [])) < 2:
                picked[key].append(rec)
    out = [r for rs in picked.values() for r in rs]
    assert len(out) > 30
    return out


@FUZZ
@given(data=st.binary(max_size=300))
def test_fuzz_random_bytes(fuzz_dir, data):
    _check(fuzz_dir, data)


@FUZZ
@given(lines=st.lists(JSON, min_size=1, max_size=5))
def test_fuzz_random_json_lines(fuzz_dir, lines):
    _check(fuzz_dir, b"\n".join(json.dumps(v).encode() for v in lines) + b"\n")


def _mutate(node, data, depth=0):
    if isinstance(node, (dict, list)) and node and depth < 6 and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(list(node.keys()) if isinstance(node, dict) else list(range(len(node)))))
        node[key] = _mutate(node[key], data, depth + 1)
        return node
    action = data.draw(st.sampled_from(["replace", "delete", "wrap", "empty"]))
    if action == "delete" and isinstance(node, dict) and node:
        del node[data.draw(st.sampled_from(sorted(node)))]
        return node
    if action == "wrap":
        return data.draw(st.sampled_from([[node], {"type": node}, {"content": node}]))
    if action == "empty":
        return type(node)() if isinstance(node, (dict, list, str)) else None
    return data.draw(JSON)


@FUZZ
@given(data=st.data())
def test_fuzz_mutated_real_lines(fuzz_dir, real_records, data):
    recs = []
    for _ in range(data.draw(st.integers(1, 4))):
        rec = copy.deepcopy(data.draw(st.sampled_from(real_records)))
        for _ in range(data.draw(st.integers(0, 3))):
            rec = _mutate(rec, data)
        recs.append(rec)
    raw = b"\n".join(json.dumps(r, ensure_ascii=False).encode() for r in recs)
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(0, len(raw)))
        raw = raw[:cut]  # sometimes truncated anywhere
    else:
        raw += b"\n"
    _check(fuzz_dir, raw)


# ------------------------------------------------ document formats: malformed records


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


@pytest.mark.parametrize("fmt", [*FILE_FORMATS, "cline", "roo_code", "opencode"])
def test_wrong_top_level_shape_is_a_source_error(tmp_path, fmt):
    p = tmp_path / "weird.json"
    p.write_text("42")
    with pytest.raises(SourceError):
        parse(p, fmt)
    p.write_text("")
    with pytest.raises(SourceError, match="empty"):
        parse(p, fmt)
