"""The import driver: discovery, manifest, source mapping, subagent linking, CLI."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workbench.continuity.enums import EventKind
from workbench.errors import SourceError
from workbench.sources.importer import collect_files, import_paths

MAIN = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
# the walk of datasets/bundled/claude-code: the sessions by name, then each one's sub-agents
CC_WALK = ("4d5611e5-241a-462a-8d15-5122611a9569.jsonl", f"{MAIN}.jsonl", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
           "session-624a4a58.jsonl", "session-9eda1058.jsonl", "short.jsonl", "tool_heavy.jsonl",
           "agent-a2898e3.jsonl", "agent-acompact-e1f845.jsonl", "agent-aac57f5.jsonl", "agent-acompact-946d2b.jsonl",
           "agent-a93ccab.jsonl", "agent-aa84377.jsonl", "agent-acompact-70d8e7.jsonl")


def test_manifest_lists_files(imported, recorded_dir):
    src = imported.manifest["source"]
    assert src["format"] == "mixed"
    files = src["files"]
    assert [Path(f["path"]).name for f in files] == [*CC_WALK,
        "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"]
    for f in files:
        data = Path(f["path"]).read_bytes()
        assert f["sha256"] == hashlib.sha256(data).hexdigest() and f["bytes"] == len(data)
        assert f["skipped"] == 0 and f["continuities"] == 1
        assert f["format"] == ("codex" if "rollout-" in f["path"] else "claude_code")
    imp = imported.manifest["import"]
    assert imp["on_error"] == "fail" and imp["skipped_total"] == 0 and imp["skipped"] == []
    assert imp["ignored"] == [] and imp["unresolved_parents"] == []
    assert imported.manifest["tokenizers"] == ["cl100k", "approx"]
    # 3,771 events of the two spotter sessions bundled for the retention fit (SOURCES.md)
    assert imported.manifest["counts"]["events"] == 2743 + 3771 + 386 + 99
    # requests: 217+3+1+55+5+1+4 (Claude Code message ids) + 66 (token counts) + 20 (runs),
    # then 139+12+1 and 157+11+9+1 of the two spotter sessions
    assert imported.manifest["counts"]["requests"] == 372 + 330
    assert imported.manifest["validation"] == {"events": 6999, "unpaired_calls": 0, "unpaired_results": 0}


def test_source_file_and_line_map_back_to_the_input(imported):
    files = [Path(f["path"]) for f in imported.manifest["source"]["files"]]
    lines = {i: p.read_bytes().split(b"\n") for i, p in enumerate(files)}
    ev = imported.events(["continuity", "source_file", "source_line", "raw"])
    conts = imported.continuities()
    for cont, sf in zip(conts["continuity"], conts["source_file"], strict=True):
        idx = ev.filter(pl.col("continuity") == cont)["source_file"].unique().to_list()
        assert [str(files[i]) for i in idx] == [sf]
    n = 0
    for _c, f, ln, raw in ev.filter(pl.col("raw").is_not_null()).iter_rows():
        assert lines[f][ln - 1].decode() == raw
        n += 1
    assert n == 6999  # one raw per record: every record of these logs is one event


def test_columns(imported):
    ev = imported.events()
    assert ev["seq"].to_list()[:3] == [0, 1, 2]
    text_len = ev["text"].str.len_chars().fill_null(0)
    assert (ev["chars"] == text_len).all()
    assert (ev["tokens_cl100k"] >= 0).all() and (ev["tokens_approx"] >= 0).all()
    assert ((ev["chars"] > 0) == (ev["tokens_cl100k"] > 0)).mean() > 0.99
    cont = ev["continuity"].to_numpy()
    assert (np.diff(cont) >= 0).all()


def test_calibration_report(imported):
    cal = imported.manifest["import"]["calibration"]
    assert set(cal) == set(imported.continuities()["continuity_id"])
    main = cal[MAIN]
    assert main["status"] == "ok" and main["requests_with_usage"] == 217
    assert 1.0 < main["factor"] < 2.5 and main["intercept"] > 10_000
    assert main["ape_median_pct"] < 15 and main["ape_p90_pct"] < 30
    assert main["cv_ape_median_pct"] < 15
    assert cal["55604662-cf2a-4331-851a-ec234028f8ca"]["status"].startswith("too few requests")
    for rep in cal.values():
        assert rep["tokenizer"] == "cl100k"


def test_explicit_session_file_brings_its_subagents(tmp_path, cc_dir):
    ds = import_paths([cc_dir / f"{MAIN}.jsonl"], tmp_path / "one", tokenizers=())
    conts = ds.continuities()
    assert conts["continuity_id"].to_list() == [MAIN, f"{MAIN}/agent-aac57f5", f"{MAIN}/agent-acompact-946d2b"]
    assert conts["parent"].to_list() == [-1, 0, 0]
    assert ds.manifest["source"]["format"] == "claude_code"
    assert ds.manifest["import"]["calibration"][MAIN]["status"] == "no tokenizer column to calibrate"


def test_subagent_alone_keeps_unresolved_parent(tmp_path, cc_dir):
    sub = cc_dir / MAIN / "subagents" / "agent-aac57f5.jsonl"
    ds = import_paths([sub], tmp_path / "sub", tokenizers=())
    assert ds.continuities()["parent"].to_list() == [-1]
    assert ds.manifest["import"]["unresolved_parents"] == [
        {"continuity": f"{MAIN}/agent-aac57f5", "parent_id": MAIN}]


def test_parent_found_by_file_stem(tmp_path, cc_dir):
    """A session file whose sessionId differs from its name still adopts its subagents."""
    d = tmp_path / "logs"
    (d / "mysession" / "subagents").mkdir(parents=True)
    shutil.copy(cc_dir / "short.jsonl", d / "mysession.jsonl")
    shutil.copy(cc_dir / MAIN / "subagents" / "agent-aac57f5.jsonl", d / "mysession" / "subagents")
    ds = import_paths([d], tmp_path / "out", tokenizers=())
    conts = ds.continuities()
    assert conts["continuity_id"].to_list() == ["55604662-cf2a-4331-851a-ec234028f8ca", "mysession/agent-aac57f5"]
    assert conts["parent"].to_list() == [-1, 0]


def test_directory_walk_ignores_non_logs(tmp_path, cc_dir):
    d = tmp_path / "mixed"
    d.mkdir()
    shutil.copy(cc_dir / "short.jsonl", d / "b.jsonl")
    (d / "README.md").write_text("# notes\n\nnot a log\n")
    (d / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (d / "empty.jsonl").write_bytes(b"")
    (d / ".hidden.jsonl").write_bytes(b"junk")
    ds = import_paths([d], tmp_path / "out", tokenizers=())
    assert [Path(f["path"]).name for f in ds.manifest["source"]["files"]] == ["b.jsonl"]
    ignored = {Path(i["path"]).name: i["reason"] for i in ds.manifest["import"]["ignored"]}
    assert set(ignored) == {"README.md", "a.png", "empty.jsonl"}
    assert "detection saw" in ignored["README.md"] and "binary" in ignored["a.png"]
    assert "empty" in ignored["empty.jsonl"]
    # a directory without any log is an error
    only = tmp_path / "only"
    only.mkdir()
    (only / "README.md").write_text("hello\n")
    with pytest.raises(SourceError, match="nothing to import"):
        import_paths([only], tmp_path / "out2", tokenizers=())


def test_walk_order_is_deterministic(cc_dir):
    names = [f.path.name for f in collect_files([cc_dir])]
    assert names == list(CC_WALK)
    # the same file named twice (and through its directory) is read once
    again = collect_files([cc_dir / "short.jsonl", cc_dir, cc_dir / "short.jsonl"])
    assert [f.path.name for f in again].count("short.jsonl") == 1 and again[0].explicit


def test_forced_format(tmp_path, cc_dir, codex_dir):
    ds = import_paths([cc_dir / "short.jsonl"], tmp_path / "f", fmt="claude-code", tokenizers=())
    assert ds.manifest["source"]["format"] == "claude_code"
    assert ds.manifest["source"]["files"][0]["format"] == "claude_code"
    with pytest.raises(SourceError, match="no Codex rollout records"):
        import_paths([cc_dir / "short.jsonl"], tmp_path / "g", fmt="codex", tokenizers=())
    with pytest.raises(SourceError, match="no Claude Code records"):
        import_paths([next(codex_dir.glob("*.jsonl"))], tmp_path / "h", fmt="claude_code", tokenizers=())
    with pytest.raises(SourceError, match="unknown format 'nope'; known: claude_code, codex"):
        import_paths([cc_dir / "short.jsonl"], tmp_path / "i", fmt="nope", tokenizers=())
    with pytest.raises(SourceError, match="on_error must be one of fail, skip"):
        import_paths([cc_dir / "short.jsonl"], tmp_path / "j", on_error="ignore", tokenizers=())
    with pytest.raises(SourceError, match="no such file"):
        import_paths([tmp_path / "missing.jsonl"], tmp_path / "k", tokenizers=())


def test_reimport_is_identical(tmp_path, cc_dir):
    a = import_paths([cc_dir / "tool_heavy.jsonl"], tmp_path / "a", tokenizers=("approx",))
    b = import_paths([cc_dir / "tool_heavy.jsonl"], tmp_path / "b", tokenizers=("approx",))
    assert a.events_table().equals(b.events_table())
    assert a.continuities().equals(b.continuities())
    assert a.manifest["import"] == b.manifest["import"]
    assert a.manifest["files"]["events.parquet"]["sha256"] == b.manifest["files"]["events.parquet"]["sha256"]


def test_cli_import(tmp_path, cc_dir):
    from typer.testing import CliRunner

    from workbench.cli import app

    out = tmp_path / "cli"
    res = CliRunner().invoke(app, ["import", str(cc_dir), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "14 continuities" in res.output and "6,514 events" in res.output and "0 records skipped" in res.output
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    res = CliRunner().invoke(app, ["import", str(bad), "--out", str(tmp_path / "x")])
    assert res.exit_code != 0
    assert "detection saw" in res.output


def test_kinds_cover_every_record(imported):
    """No record vanished: per file, the distinct source lines equal the non-blank lines."""
    ev = imported.events(["source_file", "source_line", "kind"])
    for i, f in enumerate(imported.manifest["source"]["files"]):
        nonblank = sum(1 for ln in Path(f["path"]).read_bytes().split(b"\n") if ln.strip())
        assert ev.filter(pl.col("source_file") == i)["source_line"].n_unique() == nonblank
    assert int(EventKind.OPAQUE) not in ev["kind"].unique().to_list()
