"""opencode sessions (JSON storage directory and ``opencode export``), on the constructed
sessions of ``tests/sources/data/opencode`` (see its README). Expected numbers are read off
the fixture files by hand; each literal says where from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from format_checks import check_structure, event_rows, parse

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind
from workbench.errors import SourceError
from workbench.sources import opencode
from workbench.sources.importer import import_paths

DATA = Path(__file__).parent / "data" / "opencode"
STORAGE = DATA / "storage"
PROJECT = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
SES = "ses_6f01a2b3cffeQx7Kp2LmZr4Tw9"
CHILD = "ses_6f01a2b3dffeHn3Vb8Cq1Ys5Ue2"
SESSION_FILE = STORAGE / "session" / PROJECT / f"{SES}.json"

# step-finish tokens of the main session, in order (input, cache read, cache write, output):
# 3 steps of the first answer, 2 of the second, the summarizer's step, and the last answer's
# message tokens (it has no steps)
STEPS = [(12, 0, 14_200, 180), (8, 14_200, 900, 95), (5, 15_100, 150, 60), (6, 15_250, 120, 70),
         (4, 15_370, 80, 30), (3, 0, 15_500, 120), (900, 0, 0, 12)]


def usage_rows(c):
    cols = c.rows.cols
    return [(cols["request"][i], cols["usage_input"][i], cols["usage_cache_read"][i],
             cols["usage_cache_write"][i], cols["usage_output"][i])
            for i in range(len(c.rows)) if cols["kind"][i] == EventKind.USAGE]


def test_storage_directory(tmp_path):
    ds = import_paths([STORAGE], tmp_path / "ds", tokenizers=("approx",))
    files = ds.manifest["source"]["files"]
    assert [Path(f["path"]).name for f in files] == [f"{SES}.json", f"{CHILD}.json"]
    # main session: 8 message files, 28 part files (user 1 + 1 + 1 + 2; answers 12 + 7 + 3 + 1)
    # and the todo list; the child: 2 messages, 4 parts
    assert [len(f["companions"]) for f in files] == [8 + 28 + 1, 2 + 4]
    # the project file is not a log
    assert [Path(i["path"]).name for i in ds.manifest["import"]["ignored"]] == [f"{PROJECT}.json"]
    conts = ds.continuities()
    assert conts["continuity_id"].to_list() == [SES, CHILD]
    assert conts["parent"].to_list() == [-1, 0]  # the sub-agent session's parentID
    assert conts["model"].to_list() == ["claude-sonnet-4-5"] * 2

    [c], _ = parse(SESSION_FILE, "opencode")
    check_structure(c)
    assert usage_rows(c) == [(r, *u) for r, u in enumerate(STEPS)]
    rows = event_rows(c)
    assert [(r[4], r[2]) for r in rows if r[0] == "TOOL_CALL"] == [("bash", 0), ("read", 1), ("edit", 3)]
    results = [i for i, r in enumerate(rows) if r[0] == "TOOL_RESULT"]
    assert [rows[i][2] for i in results] == [1, 2, 4]  # each an input of the next step
    assert c.rows.cols["flags"][results[2]] & EventFlag.ERROR  # the edit failed
    assert c.meta["pruned_tool_outputs"] == 1  # the read output has state.time.compacted
    comp = next(i for i, r in enumerate(rows) if r[0] == "COMPACTION")
    assert rows[comp + 1][0] == "SUMMARY" and rows[comp + 1][5].startswith("## Summary")
    assert c.rows.cols["compact_trigger"][comp] == CompactTrigger.AUTO  # the compaction part's auto
    assert rows[comp][2] == 6  # the first request after the summarizer's (5)
    assert [r[5] for r in rows if r[0] == "MESSAGE" and r[1] == "USER"] == [
        "Why is the build failing?", "Please fix it.", "Thanks. Anything else?", "[file: image/png screenshot.png]"]
    assert c.meta["run_usage"] == {
        "source": "opencode step-finish tokens and costs",
        "tokens_sent": sum(i + r + w for i, r, w, _ in STEPS), "tokens_received": 567, "api_calls": 7,
        # step costs 0.056286 + 0.009369 + 0.006001 + 0.005 + 0.0055 + 0.060, then the step-less
        # answer's message cost 0.00288
        "cost_usd": 0.145036}


def test_storage_round_trip():
    [c], ctx = parse(SESSION_FILE, "opencode")
    rebuilt = opencode.roundtrip(c.rows.cols["raw"])
    read = [SESSION_FILE] + [Path(x["path"]) for x in ctx.companions]
    assert set(rebuilt) == {p.relative_to(STORAGE).as_posix() for p in read}
    for rel, value in rebuilt.items():
        assert value == json.loads((STORAGE / rel).read_text()), rel


def test_export_reads_like_the_storage():
    export = DATA / "export" / f"{SES}.json"
    [e], _ = parse(export, "opencode")
    [s], _ = parse(SESSION_FILE, "opencode")
    assert opencode.roundtrip(e.rows.cols["raw"]) == json.loads(export.read_text())

    def content(c):
        return [r for r in event_rows(c) if r[0] != "META"]

    assert content(e) == content(s)
    assert usage_rows(e) == usage_rows(s) and e.meta["run_usage"] == s.meta["run_usage"]
    assert e.meta["layout"] == "export" and s.meta["layout"] == "storage"


def test_companions_and_detection():
    msg = next((STORAGE / "message" / SES).glob("*.json"))
    part = next((STORAGE / "part" / msg.stem).glob("*.json"))
    for p in (msg, part, STORAGE / "todo" / f"{SES}.json"):
        assert opencode.primary_of(p) == SESSION_FILE
    assert opencode.primary_of(SESSION_FILE) is None
    assert opencode.primary_of(STORAGE / "project" / f"{PROJECT}.json") is None
    from workbench.sources.detect import detect_format

    assert detect_format(SESSION_FILE)[0].name == "opencode"
    assert detect_format(DATA / "export" / f"{SES}.json")[0].name == "opencode"


def test_bad_part_names_its_file(tmp_path):
    root = tmp_path / "storage"
    shutil.copytree(STORAGE, root)
    msg = sorted((root / "message" / SES).glob("*.json"))[1]  # the first answer
    part = sorted((root / "part" / msg.stem).glob("*.json"))[3]  # its bash tool part
    value = json.loads(part.read_text())
    value["state"]["status"] = "exploded"
    part.write_text(json.dumps(value))
    session = root / "session" / PROJECT / f"{SES}.json"
    with pytest.raises(SourceError) as exc:
        parse(session, "opencode")
    msg_text = str(exc.value)
    assert msg_text.startswith(str(part)) and ".state.status" in msg_text and "pending, running, completed or error" in msg_text
    [c], ctx = parse(session, "opencode", on_error="skip")
    assert [s["file"] for s in ctx.skipped] == [str(part)]
    assert opencode.roundtrip(c.rows.cols["raw"])[part.relative_to(root).as_posix()] == value


def test_not_an_opencode_file(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"id": "ses_1", "time": {}}))
    with pytest.raises(SourceError, match="neither an export"):
        parse(p, "opencode")
