"""The shared importer helpers (``checks``, ``values``, ``lossless``, ``sniffing``, ``registration``) and the format registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.errors import SourceError
from workbench.sources import load_formats
from workbench.sources.base import Detection, ParseContext
from workbench.sources.checks import Malformed, opt_int, pick
from workbench.sources.importer import profile_of
from workbench.sources.lossless import roundtrip
from workbench.sources.registration import guard_parse
from workbench.sources.sniffing import sniff_safely
from workbench.sources.values import dumps, parse_ts


def test_every_format_declares_a_known_harness_profile():
    from workbench.engine.presets import PRESETS

    formats = load_formats()
    assert set(formats) == {"claude_code", "codex", "swe_agent", "mini_swe_agent", "openhands",
                            "openhands_sdk", "gemini_cli", "openai_messages", "aider", "cline", "roo_code",
                            "opencode", "atif"}
    for name, fmt in formats.items():
        assert fmt.profile in PRESETS, name
        assert profile_of(name) == fmt.profile
    assert profile_of("claude_code") == "claude-code" and profile_of("codex") == "codex-local"
    assert profile_of("openhands") == "openhands-default" and profile_of("openhands_sdk") == "openhands-sdk"
    assert profile_of("no_such_format") is None


def test_imported_continuities_carry_their_format_profile(tmp_path, recorded_dir):
    from workbench.sources.importer import import_paths

    paths = [recorded_dir / "openhands/basic_gui_mode.json", recorded_dir / "swe-agent/pydicom__pydicom-1458.traj",
             recorded_dir / "aider/complex-change.md"]
    conts = import_paths(paths, tmp_path / "out", tokenizers=()).continuities()
    assert conts["profile"].to_list() == ["openhands-default", "observation-masking", "as-recorded"]


def test_parse_ts():
    ms = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    for v in ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00",
              " 2026-01-01T02:00:00+02:00 ", 1_767_225_600, 1_767_225_600.0, ms):
        assert parse_ts(v) == ms, v
    assert parse_ts(1_767_225_600.0004) == ms  # rounded, not truncated
    for v in (None, "", "yesterday", 0, -5, float("nan"), float("inf"), True, [], 1e300):
        assert parse_ts(v) == -1, v


def test_dumps_falls_back_for_what_orjson_refuses():
    assert dumps({"a": [1, "é"]}) == '{"a":[1,"é"]}'
    deep = json.loads("[" * 300 + "]" * 300)  # orjson writes at most 255 levels
    assert json.loads(dumps(deep)) == deep
    assert dumps(2**70) == str(2**70)


def test_opt_int():
    assert opt_int(None, "x") is None and opt_int(5, "x") == 5 and opt_int(5.0, "x") == 5
    for bad in ("5", True, 1.5, -1, 2**62, float("nan")):
        with pytest.raises(Malformed):
            opt_int(bad, "x")
    with pytest.raises(Malformed, match="x: is a string") as ei:
        opt_int("many", "x", "usage token counts")
    assert ei.value.expected == "usage token counts"


def test_pick():
    d = {"a": 1, "b": True, "c": "s", "d": 1.5, "e": {}}
    assert pick(d, a=int, b=int, c=str, d=(int, float), e=dict, f=str) == {"a": 1, "c": "s", "d": 1.5, "e": {}}
    assert pick(d, b=bool) == {"b": True}
    assert pick(None, a=int) == {}


def test_roundtrip_containers():
    assert roundtrip(['{"a":1}', None, '{"b":2}']) == '{"a":1}\n{"b":2}'
    assert roundtrip(["\ufeff", "x\n", "y"], joiner="", documents=False) == "\ufeffx\ny"
    doc = {"messages": [{"role": "user"}], "k": 1}
    raws = [json.dumps({"messages": [], "k": 1}), json.dumps([{"array": "/messages", "count": 1}]),
            json.dumps({"role": "user"})]
    assert roundtrip(raws) == doc and roundtrip(["\ufeff", *raws]) == doc


def test_sniff_safely_and_guard_parse():
    def broken(path, head):
        raise KeyError("boom")

    det = sniff_safely(broken, Path("x.json"), b"{}")
    assert det.score == 0.0 and "could not inspect (KeyError" in det.reason
    assert sniff_safely(lambda p, h: 0.9, Path("x"), b"").reason == "sniffer returned float"
    seen = []
    sniff_safely(lambda p, h: seen.append(h) or Detection(1.0, "ok"), Path("x"), b"\xef\xbb\xbf{}")
    assert seen == [b"{}"]  # sniffers never see a BOM

    def deep(ctx):
        raise RecursionError("maximum recursion depth exceeded")

    def bug(ctx):
        return {}["missing"]

    ctx = ParseContext(path=Path("f.json"))
    with pytest.raises(SourceError, match="record nested too deeply for the fmt parser"):
        guard_parse("fmt", deep)(ctx)
    with pytest.raises(SourceError, match=r"internal error in the fmt importer \(KeyError"):
        guard_parse("fmt", bug)(ctx)
