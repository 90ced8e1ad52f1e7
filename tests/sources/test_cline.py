"""Cline and Roo Code task directories, on the constructed tasks of ``tests/sources/data``
(see its README; the real Cline and Roo Code tasks bundled in ``datasets/bundled`` are tested
in ``test_cline_recorded.py`` and ``test_roo_code_recorded.py``). The expected
numbers are read off the fixture files by hand; each literal says where from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from format_checks import check_structure, event_rows, parse

from workbench.continuity.enums import CompactTrigger, EventKind
from workbench.errors import SourceError
from workbench.sources import cline
from workbench.sources.importer import import_paths

DATA = Path(__file__).parent / "data"
CLINE_TASK = DATA / "cline/tasks/1760000000000"
ROO_TASK = DATA / "roo-code/tasks/0f8e6a52-3c1d-4b7e-9a2f-5d6c7b8a9e01"


def usage_rows(c) -> list[tuple[int, int, int, int, int]]:
    cols = c.rows.cols
    return [(cols["request"][i], cols["usage_input"][i], cols["usage_cache_read"][i],
             cols["usage_cache_write"][i], cols["usage_output"][i])
            for i in range(len(c.rows)) if cols["kind"][i] == EventKind.USAGE]


def test_cline_task(tmp_path):
    ds = import_paths([CLINE_TASK.parent], tmp_path / "ds", tokenizers=("approx",))
    [entry] = ds.manifest["source"]["files"]  # the panel and the metadata are part of the history's log
    assert Path(entry["path"]).name == cline.HISTORY and entry["format"] == "cline"
    assert [Path(c["path"]).name for c in entry["companions"]] == [cline.UI, cline.METADATA]
    assert [c["bytes"] for c in entry["companions"]] == [(CLINE_TASK / n).stat().st_size
                                                         for n in (cline.UI, cline.METADATA)]
    assert not ds.manifest["import"]["ignored"]
    conts = ds.continuities()
    assert conts["continuity_id"].to_list() == ["1760000000000"]
    assert conts["model"].to_list() == ["claude-sonnet-4-5-20250929"]  # modelInfo.modelId
    assert conts["provider"].to_list() == ["anthropic"]

    [c], _ = parse(CLINE_TASK / cline.HISTORY, "cline")
    check_structure(c)
    # 3 assistant messages in the history = 3 requests; the 3 api_req_started of the panel
    # (conversationHistoryIndex -1, 1, 3) give the usage of assistant messages 1, 3 and 5;
    # Cline's tokensIn is the uncached input
    assert usage_rows(c) == [(0, 3, 0, 9_500, 120), (1, 2, 9_500, 640, 310), (2, 2, 10_140, 380, 45)]
    rows = event_rows(c)
    calls = [r for r in rows if r[0] == "TOOL_CALL"]
    assert [r[4] for r in calls] == ["read_file", "replace_in_file", "attempt_completion"]
    assert [r[2] for r in calls] == [0, 1, 2]
    results = [r for r in rows if r[0] == "TOOL_RESULT"]
    assert [(r[3], r[2]) for r in results] == [("toolu_01A", 1), ("toolu_01B", 2)]  # inputs of the next request
    assert sum(1 for r in rows if r[0] == "REASONING") == 1
    # the panel's 12 messages are raw-only side effects; the metadata one META record
    assert sum(1 for r in rows if r[0] == "SIDE_EFFECT" and r[5] is None) == 12
    assert c.meta["harness"] == "cline" and c.meta["usage_convention"] == "uncached"
    # costs of the three api_req_started; sent = tokensIn + cacheReads + cacheWrites
    assert c.meta["run_usage"] == {"source": "ui_messages.json api_req_started",
                                   "tokens_sent": 9_503 + 10_142 + 10_522, "tokens_received": 475,
                                   "api_calls": 3, "cost_usd": 0.052488}


def test_cline_files_round_trip():
    [c], _ = parse(CLINE_TASK / cline.HISTORY, "cline")
    assert cline.roundtrip(c.rows.cols["raw"]) == {
        name: json.loads((CLINE_TASK / name).read_text()) for name in (cline.HISTORY, cline.UI, cline.METADATA)}


def test_roo_code_task_with_a_condensation():
    [c], ctx = parse(ROO_TASK / cline.HISTORY, "roo_code")
    check_structure(c)
    assert c.source_format == "roo_code" and c.meta["harness"] == "roo_code"
    # apiProtocol anthropic and tokensIn >= cacheReads + cacheWrites on every request: Roo
    # Code >= 3.30 totals, so input = tokensIn - reads - writes (12,000 - 11,990 = 10 ...)
    assert c.meta["usage_convention"] == "total"
    assert usage_rows(c) == [(0, 10, 0, 11_990, 200), (1, 10, 11_990, 600, 150), (2, 50, 0, 2_250, 90)]
    rows = event_rows(c)
    comp = [i for i, r in enumerate(rows) if r[0] == "COMPACTION"]
    assert len(comp) == 1 and rows[comp[0] + 1][0] == "SUMMARY"
    assert rows[comp[0] + 1][5].startswith("## Conversation Summary")
    cols = c.rows.cols
    assert cols["compact_pre_tokens"][comp[0]] == 13_400  # contextCondense.prevContextTokens
    assert cols["compact_trigger"][comp[0]] == CompactTrigger.OTHER
    assert cols["request"][comp[0]] == 2  # the first request after the boundary
    # three requests' costs plus the condensation's 0.0123
    assert c.meta["run_usage"]["cost_usd"] == pytest.approx(0.048 + 0.0081 + 0.0101 + 0.0123)
    assert c.meta["run_usage"]["tokens_sent"] == 12_000 + 12_600 + 2_300
    assert cline.roundtrip(c.rows.cols["raw"]) == {
        name: json.loads((ROO_TASK / name).read_text()) for name in (cline.HISTORY, cline.UI)}
    assert [Path(x["path"]).name for x in ctx.companions] == [cline.UI]


def test_older_roo_code_stores_the_uncached_part(tmp_path):
    task = tmp_path / "t"
    shutil.copytree(ROO_TASK, task)
    ui = json.loads((task / cline.UI).read_text())
    started = [m for m in ui if m.get("say") == "api_req_started"]
    infos = [json.loads(m["text"]) for m in started]
    infos[0]["tokensIn"] = 10  # below cacheWrites 11,990: an older Roo Code's uncached part
    infos[2]["apiProtocol"], infos[2]["tokensIn"] = "openai", 2_300  # OpenAI-style: includes the cache
    for m, info in zip(started, infos, strict=True):
        m["text"] = json.dumps(info)
    (task / cline.UI).write_text(json.dumps(ui))
    [c], _ = parse(task / cline.HISTORY, "roo_code")
    assert c.meta["usage_convention"] == "uncached-anthropic"
    assert usage_rows(c) == [(0, 10, 0, 11_990, 200), (1, 12_600, 11_990, 600, 150), (2, 50, 0, 2_250, 90)]


def test_panel_alone_is_its_own_log(tmp_path):
    task = tmp_path / "1760000000000"
    task.mkdir()
    shutil.copy(CLINE_TASK / cline.UI, task / cline.UI)
    ds = import_paths([task / cline.UI], tmp_path / "ds", tokenizers=("approx",))
    assert ds.continuities()["source_format"].to_list() == ["cline"]
    [c], _ = parse(task / cline.UI, "cline")
    check_structure(c)
    rows = event_rows(c)
    # the task line (a say:text before any request) is the user's; 3 api_req_started = 3 requests
    assert rows[3][:2] == ("MESSAGE", "USER") and rows[3][5] == "Add a --verbose flag to cli.py"
    assert usage_rows(c) == [(0, 3, 0, 9_500, 120), (1, 2, 9_500, 640, 310), (2, 2, 10_140, 380, 45)]
    outputs = [(r[0], r[2]) for r in rows if r[1] == "ASSISTANT"]
    # request 0: text + readFile tool; 1: reasoning, text, editedExistingFile; 2: completion
    # result + its ask
    assert outputs == [("MESSAGE", 0), ("TOOL_CALL", 0), ("REASONING", 1), ("MESSAGE", 1),
                       ("TOOL_CALL", 1), ("MESSAGE", 2), ("MESSAGE", 2)]
    assert cline.roundtrip(c.rows.cols["raw"]) == {cline.UI: json.loads((task / cline.UI).read_text())}


def test_named_panel_beside_its_history_is_imported_alone(tmp_path):
    ds = import_paths([CLINE_TASK / cline.UI], tmp_path / "ds", tokenizers=())
    [entry] = ds.manifest["source"]["files"]
    assert Path(entry["path"]).name == cline.UI and "companions" in entry  # it read the metadata


def test_older_cline_writes_the_counts_on_api_req_finished(tmp_path):
    task = tmp_path / "1700000000000"
    task.mkdir()
    (task / cline.HISTORY).write_text(json.dumps([
        {"role": "user", "content": [{"type": "text", "text": "<task>hi</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}]))
    (task / cline.UI).write_text(json.dumps([
        {"ts": 1, "type": "say", "say": "task", "text": "hi"},
        {"ts": 2, "type": "say", "say": "api_req_started", "text": json.dumps({"request": "<task>hi</task>"})},
        {"ts": 3, "type": "say", "say": "api_req_finished",
         "text": json.dumps({"tokensIn": 1200, "tokensOut": 5, "cacheWrites": 0, "cacheReads": 0, "cost": 0.0037})},
        {"ts": 4, "type": "say", "say": "text", "text": "Hello."}]))
    [c], _ = parse(task / cline.HISTORY, "cline")
    assert usage_rows(c) == [(0, 1200, 0, 0, 5)]
    assert c.meta["run_usage"]["cost_usd"] == 0.0037


def test_bad_panel_message_names_the_panel_file(tmp_path):
    task = tmp_path / "t"
    shutil.copytree(CLINE_TASK, task)
    ui = json.loads((task / cline.UI).read_text())
    ui[4]["type"] = "shout"
    (task / cline.UI).write_text(json.dumps(ui))
    with pytest.raises(SourceError) as exc:
        parse(task / cline.HISTORY, "cline")
    msg = str(exc.value)
    assert msg.startswith(str(task / cline.UI)) and "ui_messages.json[4].type" in msg and "'say' or 'ask'" in msg
    [c], ctx = parse(task / cline.HISTORY, "cline", on_error="skip")
    assert [s["file"] for s in ctx.skipped] == [str(task / cline.UI)]
    assert cline.roundtrip(c.rows.cols["raw"])[cline.UI] == ui  # the bad message kept its raw
    ui[4]["type"], ui[2]["text"] = "say", '{"tokensIn": "many"}'
    (task / cline.UI).write_text(json.dumps(ui))
    with pytest.raises(SourceError, match=r"ui_messages\.json\[2\]\.text\.tokensIn"):
        parse(task / cline.HISTORY, "cline")


def test_bad_history_message_names_its_index(tmp_path):
    task = tmp_path / "t"
    shutil.copytree(CLINE_TASK, task)
    hist = json.loads((task / cline.HISTORY).read_text())
    hist[3]["content"] = 7
    (task / cline.HISTORY).write_text(json.dumps(hist))
    with pytest.raises(SourceError, match=r"api_conversation_history\.json\[3\]\.content is a number"):
        parse(task / cline.HISTORY, "cline")


def test_detection_tells_cline_from_roo_code_and_from_openai_messages():
    from workbench.sources.detect import detect_format

    for path, fmt in ((CLINE_TASK / cline.HISTORY, "cline"), (CLINE_TASK / cline.UI, "cline"),
                      (ROO_TASK / cline.HISTORY, "roo_code"), (ROO_TASK / cline.UI, "roo_code")):
        found, seen = detect_format(path)
        assert found.name == fmt, seen
        assert dict(seen)["openai_messages"].score < seen[0][1].score
    assert cline.primary_of(CLINE_TASK / cline.UI) == CLINE_TASK / cline.HISTORY
    assert cline.primary_of(CLINE_TASK / cline.METADATA) == CLINE_TASK / cline.HISTORY
    assert cline.primary_of(CLINE_TASK / cline.HISTORY) is None


def test_a_tasks_directory_imports_each_task_once(tmp_path):
    ds = import_paths([DATA / "cline", DATA / "roo-code"], tmp_path / "ds", tokenizers=())
    conts = ds.continuities()
    assert sorted(conts["source_format"].to_list()) == ["cline", "roo_code"]
    assert len(ds.manifest["source"]["files"]) == 2
    runs = ds.manifest["import"]["continuities"]
    assert {k: v["run_usage"]["api_calls"] for k, v in runs.items()} == {
        "1760000000000": 3, "0f8e6a52-3c1d-4b7e-9a2f-5d6c7b8a9e01": 3}
