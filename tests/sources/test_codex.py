"""Codex importer: golden numbers on the recorded rollouts, round trip, semantics.

Golden numbers were counted by hand with a throwaway script using only ``json``:
records = non-blank lines; counts of (type, payload.type); token_count events with a
non-null ``info``; sums of ``info.last_token_usage`` fields (which equal the last
``total_token_usage``: input 6,055,836, cached 4,929,536, output 9,118 of which reasoning
1,759); function_call + custom_tool_call ids and their outputs; roles of response_item
messages; ``turn_context.model``; ``model_context_window``. For the Desktop rollout
(no token_count) the requests were counted as runs of consecutive model outputs
(reasoning, function_call, assistant message), a run ending at a function_call_output or
user_message: 20 runs.
"""

from __future__ import annotations

import polars as pl
import pytest

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Role

CLI = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
DESKTOP = "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"

GOLDEN = {
    CLI: dict(records=386, requests=66, usage_rows=66,
              usage=(6_055_836 - 4_929_536, 4_929_536, 0, 9_118),
              calls=102, web_search=3, results=102, reasoning=25,
              roles={Role.DEVELOPER: 1, Role.USER: 3, Role.ASSISTANT: 13},
              meta=3, side=68, model="gpt-5.5", window=258_400,
              cid="019e1625-789d-76c0-80ab-3724b5ddb799"),
    DESKTOP: dict(records=99, requests=20, usage_rows=0, usage=(0, 0, 0, 0),
                  calls=38, web_search=0, results=38, reasoning=16,
                  roles={Role.USER: 3, Role.ASSISTANT: 3},  # user words from event_msg user_message
                  meta=1, side=0, model=None, window=-1,
                  cid="019e1695-0522-7c83-8b39-0dd379793f80"),
}


def _events_of(ds, name):
    conts = ds.continuities().filter(pl.col("source_file").str.ends_with(name))
    assert conts.height == 1
    return conts.row(0, named=True), ds.events().filter(pl.col("continuity") == conts["continuity"][0]).sort("seq")


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_counts(imported, name):
    g = GOLDEN[name]
    cont, ev = _events_of(imported, name)
    K = EventKind
    assert ev.height == g["records"] and ev["source_line"].n_unique() == g["records"]
    assert cont["continuity_id"] == g["cid"]
    assert cont["model"] == g["model"] and cont["context_window"] == g["window"]
    assert cont["provider"] == "openai" and cont["profile"] == "codex-local"
    out = ev.filter((pl.col("flags") & int(EventFlag.OUTPUT)) != 0)
    assert sorted(out["request"].unique().to_list()) == list(range(g["requests"]))
    usage = ev.filter(pl.col("usage_input") >= 0)
    assert usage.height == g["usage_rows"]
    assert (usage["kind"] == int(K.USAGE)).all()
    assert tuple(int(usage[c].sum()) for c in ("usage_input", "usage_cache_read", "usage_cache_write",
                                               "usage_output")) == g["usage"]
    calls = ev.filter(pl.col("kind") == int(K.TOOL_CALL))
    assert calls.height == g["calls"] + g["web_search"]
    assert ev.filter(pl.col("kind") == int(K.TOOL_RESULT)).height == g["results"]
    assert (ev["flags"] & int(EventFlag.UNPAIRED)).sum() == 0
    ws = calls.filter(pl.col("name") == "web_search")
    assert ws.height == g["web_search"]
    assert (ws["pair_seq"] == ws["seq"]).all()  # self-contained server-side call
    paired = calls.filter(pl.col("name") != "web_search")
    assert (paired["pair_seq"] > paired["seq"]).all()
    assert ev.filter(pl.col("kind") == int(K.REASONING)).height == g["reasoning"]
    msgs = ev.filter(pl.col("kind") == int(K.MESSAGE))
    assert {Role(r): n for r, n in msgs.group_by("role").len().iter_rows()} == g["roles"]
    assert ev.filter(pl.col("kind") == int(K.META)).height == g["meta"]
    assert ev.filter(pl.col("kind") == int(K.SIDE_EFFECT)).height == g["side"]
    assert ev.filter(pl.col("kind") == int(K.OPAQUE)).height == 0


def test_usage_rows_cli(imported):
    _, ev = _events_of(imported, CLI)
    u = ev.filter(pl.col("kind") == int(EventKind.USAGE))
    first, second = u.row(0, named=True), u.row(1, named=True)
    # line 10: input 18,703, cached 0, output 167 (62 of them reasoning)
    assert first["source_line"] == 10 and first["request"] == 0
    assert (first["usage_input"], first["usage_cache_read"], first["usage_cache_write"],
            first["usage_output"]) == (18_703, 0, 0, 167)
    # line 14: input 18,911 of which 18,304 cached, output 37
    assert second["source_line"] == 14 and second["request"] == 1
    assert (second["usage_input"], second["usage_cache_read"], second["usage_output"]) == (607, 18_304, 37)
    # outputs before line 10 are request 0; the function output at line 11 feeds request 1
    by_line = {r["source_line"]: r for r in ev.iter_rows(named=True)}
    assert by_line[8]["request"] == 0 and by_line[9]["request"] == 0
    assert by_line[8]["flags"] & EventFlag.OUTPUT and by_line[9]["kind"] == EventKind.TOOL_CALL
    assert by_line[11]["request"] == 1 and by_line[11]["kind"] == EventKind.TOOL_RESULT
    assert by_line[386]["request"] == -1  # task_complete: no request follows
    # the injected AGENTS.md user message is flagged META; the user's own words are not
    assert by_line[4]["flags"] & EventFlag.META and not by_line[6]["flags"] & EventFlag.META
    assert by_line[6]["text"] == "show tools"
    # session_meta carries the base instructions (the system prompt) as text
    assert by_line[1]["kind"] == EventKind.META and by_line[1]["text"].startswith("You are Codex")


def test_desktop_requests(imported):
    _, ev = _events_of(imported, DESKTOP)
    by_line = {r["source_line"]: r for r in ev.iter_rows(named=True)}
    assert by_line[2]["kind"] == EventKind.MESSAGE and by_line[2]["role"] == Role.USER
    assert by_line[2]["request"] == 0
    assert by_line[3]["request"] == 0 and by_line[4]["request"] == 0  # reasoning, call
    assert by_line[5]["request"] == 1  # function output feeds the next run


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_raw_round_trip(codex_dir, src, name):
    path = codex_dir / name
    (cont,), ctx = src.parse(path, "codex")
    assert src.joined_raw(cont.rows) == b"\n".join(src.nonblank_lines(path))
    assert ctx.skipped == []


def test_calibration_cli(imported):
    cal = imported.manifest["import"]["calibration"][GOLDEN[CLI]["cid"]]
    assert cal["status"] == "ok" and cal["requests_with_usage"] == 66
    assert 0.8 < cal["factor"] < 1.6
    assert cal["ape_median_pct"] < 10
    assert imported.manifest["import"]["calibration"][GOLDEN[DESKTOP]["cid"]]["status"] == "no recorded usage"


# ---------------------------------------------------------------- synthetic rollouts

def _r(t, payload, ts="2026-05-11T08:27:17.490Z"):
    return {"timestamp": ts, "type": t, "payload": payload}


def _tc(inp, cached, out, total):
    return _r("event_msg", {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out},
        "total_token_usage": {"input_tokens": total}, "model_context_window": 1000}})


def test_compacted_duplicates_and_local_shell(tmp_path, src):
    recs = [
        _r("session_meta", {"id": "S", "model_provider": "openai", "base_instructions": {"text": "sys"}}),
        _r("turn_context", {"model": "gpt-x", "model_context_window": 2000}),
        _r("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
        _r("response_item", {"type": "local_shell_call", "call_id": "c1", "action": {"command": ["ls"]}}),
        _tc(100, 40, 5, 100),
        _tc(100, 40, 5, 100),  # duplicate: same totals, nothing produced in between
        _r("response_item", {"type": "function_call_output", "call_id": "c1", "output": "a b"}),
        _r("compacted", {"message": "the summary"}),
        _r("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
        _r("response_item", {"type": "image_generation_call", "id": "ig"}),
        _r("event_msg", {"type": "user_message", "message": "hi"}),
    ]
    path = src.write_jsonl(tmp_path / "rollout-x.jsonl", recs)
    (cont,), _ = src.parse(path, "codex")
    c = cont.rows.cols
    K = EventKind
    assert c["kind"] == [K.META, K.META, K.MESSAGE, K.TOOL_CALL, K.USAGE, K.USAGE, K.TOOL_RESULT,
                         K.COMPACTION, K.SUMMARY, K.MESSAGE, K.OPAQUE, K.SIDE_EFFECT]
    assert c["source_line"] == [1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 10, 11]
    assert c["raw"][7] is not None and c["raw"][8] is None
    assert (c["usage_input"][4], c["usage_cache_read"][4], c["usage_output"][4]) == (60, 40, 5)
    assert c["usage_input"][5] == -1 and c["name"][5] == "token_count_duplicate"
    assert c["request"] == [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, -1, -1]
    assert c["compact_trigger"][7] == CompactTrigger.AUTO and c["text"][8] == "the summary"
    assert c["call_id"][3] == "c1" and c["call_id"][6] == "c1"
    assert cont.model == "gpt-x" and cont.context_window == 1000 and cont.continuity_id == "S"
    assert src.joined_raw(cont.rows) == b"\n".join(src.nonblank_lines(path))


def test_output_shapes(tmp_path, src):
    recs = [
        _r("session_meta", {"id": "S"}),
        _r("response_item", {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}),
        _r("response_item", {"type": "function_call_output", "call_id": "c1",
                             "output": {"content": "bad", "success": False}}),
        _r("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "S1"}],
                             "encrypted_content": "xxxx"}),
    ]
    path = src.write_jsonl(tmp_path / "r.jsonl", recs)
    (cont,), _ = src.parse(path, "codex")
    c = cont.rows.cols
    assert c["text"][2] == "bad" and c["flags"][2] & EventFlag.ERROR
    assert c["text"][3] == "S1" and cont.meta["encrypted_reasoning_chars"] == 4
    # no token_count: runs of outputs are requests
    assert c["request"] == [0, 0, 1, 1]


def test_sniff(codex_dir, cc_dir):
    from workbench.sources.codex import sniff

    for p in sorted(codex_dir.glob("*.jsonl")):
        assert sniff(p, p.read_bytes()[:65536]).score >= 0.9
    for p in sorted(cc_dir.rglob("*.jsonl")):
        assert sniff(p, p.read_bytes()[:65536]).score == 0.0
