"""A UTF-8 byte order mark at the start of a file: detection and parsing see the text
without it, the events are those of the file without it plus one leading META ``bom``
event whose raw is the BOM, and the round trip puts it back."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from workbench.continuity.enums import EventKind, Origin
from workbench.errors import SourceError
from workbench.sources import load_formats
from workbench.sources.base import ParseContext
from workbench.sources.detect import detect_format
from workbench.sources.importer import import_paths

BOM = b"\xef\xbb\xbf"

# recorded file -> (format, container): every format, JSONL / JSON document / text
CASES = {
    "claude-code/short.jsonl": ("claude_code", "jsonl"),
    "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": ("codex", "jsonl"),
    "openhands-sdk/events.jsonl": ("openhands_sdk", "jsonl"),
    "openhands-sdk/litellm_proxy__anthropic__claude-sonnet-4-20250514-1757015046.707.json": ("openhands_sdk", "json"),
    "openhands-sdk/fncall-llm-message.json": ("openai_messages", "json"),
    "swe-agent/pydicom__pydicom-1458.traj": ("swe_agent", "json"),
    "mini-swe-agent/github_issue.traj.json": ("mini_swe_agent", "json"),
    "openhands/basic_gui_mode.json": ("openhands", "json"),
    "gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json": ("gemini_cli", "json"),
    "aider/complex-change.md": ("aider", "text"),
}


def _parse(path: Path, fmt: str, on_error: str = "fail"):
    ctx = ParseContext(path=path, on_error=on_error)
    return load_formats()[fmt].parse(ctx), ctx


def _with_bom(src: Path, tmp: Path) -> Path:
    dst = tmp / src.parent.name / src.name  # the directory name may be the continuity id
    dst.parent.mkdir(exist_ok=True)
    dst.write_bytes(BOM + src.read_bytes())
    return dst


@pytest.mark.parametrize("rel", sorted(CASES))
def test_bom_is_stripped_for_detection_and_parsing(recorded_dir, tmp_path, rel):
    fmt, container = CASES[rel]
    src = recorded_dir / rel
    path = _with_bom(src, tmp_path)
    data = path.read_bytes()
    got, _ = detect_format(path, data[:65536])
    assert got.name == fmt

    plain, _ = _parse(src, fmt)
    conts, ctx = _parse(path, fmt)
    assert ctx.bom and ctx.skipped == []
    assert len(conts) == len(plain)
    # one leading META "bom" event, in the first continuity only; the rest is unchanged
    first = conts[0].rows.cols
    assert (first["kind"][0], first["name"][0], first["raw"][0], first["origin"][0]) == (
        EventKind.META, "bom", "\ufeff", Origin.HARNESS)
    assert first["text"][0] is None and first["source_line"][0] == 1
    for k, (c, p) in enumerate(zip(conts, plain, strict=True)):
        skip = 1 if k == 0 else 0
        assert c.continuity_id == p.continuity_id and c.meta == p.meta and c.model == p.model
        for col, values in p.rows.cols.items():
            mine = c.rows.cols[col][skip:]
            if col == "pair_seq":  # row indices: shifted by the leading event
                mine = [v - skip if v >= 0 else v for v in mine]
            assert mine == values, col

    # the round trip restores the BOM (documents: the parsed value, which has none)
    mod = importlib.import_module(f"workbench.sources.{fmt}")
    rebuilt = mod.roundtrip([r for c in conts for r in c.rows.cols["raw"]])
    if container == "jsonl":
        want = BOM + b"\n".join(ln for ln in data[len(BOM):].split(b"\n") if ln.strip())
        assert rebuilt.encode("utf-8") == want
    elif container == "text":
        assert rebuilt.encode("utf-8") == data
    else:
        assert rebuilt == json.loads(data.decode("utf-8-sig"))


def test_bom_import_is_recorded_in_the_manifest(recorded_dir, tmp_path):
    jsonl = _with_bom(recorded_dir / "claude-code/short.jsonl", tmp_path)
    doc = _with_bom(recorded_dir / "gemini-cli/session-2026-01-16T11-01-file-ops-37b7abef.json", tmp_path)
    plain = recorded_dir / "openhands/basic_gui_mode.json"
    ds = import_paths([jsonl, doc, plain], tmp_path / "out", tokenizers=())
    files = ds.manifest["source"]["files"]
    assert [f.get("bom", False) for f in files] == [True, True, False]
    assert [f["format"] for f in files] == ["claude_code", "gemini_cli", "openhands"]
    assert ds.manifest["validation"]["events"] == ds.events().height
    ev = ds.events(["continuity", "seq", "kind", "name", "raw"])
    boms = ev.filter(ev["name"] == "bom")
    assert boms["continuity"].to_list() == [0, 1] and boms["seq"].to_list() == [0, 0]
    assert set(boms["raw"].to_list()) == {"\ufeff"}
    # the import still maps every record back to its line (short.jsonl: 15 lines)
    assert ev.filter(ev["continuity"] == 0).height == 15 + 1


def test_bom_on_a_jsonl_file_with_a_bad_first_line_is_skipped_not_lost(tmp_path, recorded_dir):
    src = recorded_dir / "claude-code/short.jsonl"
    lines = src.read_bytes().split(b"\n")
    path = tmp_path / "s.jsonl"
    path.write_bytes(BOM + b"\n".join([b"{not json", *lines[1:]]))
    with pytest.raises(SourceError, match=r"s\.jsonl:1: line is not valid JSON"):
        _parse(path, "claude_code")
    (cont,), ctx = _parse(path, "claude_code", on_error="skip")
    assert ctx.skipped[0]["line"] == 1
    raws = cont.rows.cols["raw"]
    assert raws[0] == "\ufeff" and raws[1] == "{not json"
    from workbench.sources.claude_code import roundtrip

    assert roundtrip(raws).encode() == BOM + b"\n".join(ln for ln in path.read_bytes()[3:].split(b"\n") if ln.strip())


@pytest.mark.parametrize("content", [BOM, BOM + b"\n \n"])
def test_a_file_holding_only_a_bom_is_empty(tmp_path, content):
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(SourceError, match="file is empty|file holds only whitespace"):
        import_paths([path], tmp_path / "out", tokenizers=())
    for fmt in load_formats():  # forced formats say so too
        with pytest.raises(SourceError, match="empty|no aider chat structure"):
            _parse(path, fmt)


def test_only_the_leading_bom_is_stripped(tmp_path):
    """A second BOM is content (the first line's text), never silently dropped."""
    path = tmp_path / "m.jsonl"
    path.write_bytes(BOM + BOM + b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "ok"}\n')
    with pytest.raises(SourceError, match=":1: "):
        _parse(path, "openai_messages")
    (cont,), ctx = _parse(path, "openai_messages", on_error="skip")
    from workbench.sources.openai_messages import roundtrip

    raws = cont.rows.cols["raw"]
    assert raws[:2] == ["\ufeff", '\ufeff{"role": "user", "content": "hi"}']
    assert roundtrip(raws).encode() == path.read_bytes().rstrip(b"\n")
