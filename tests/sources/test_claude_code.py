"""Claude Code importer: golden numbers on the recorded logs, round trip, semantics.

The golden numbers below were counted by hand, outside the importer, with a throwaway
script using only the standard ``json`` module (one ``json.loads`` per non-blank line):

* ``records``: non-blank lines; ``with_usage``: assistant records whose message has usage;
* ``user``/``assistant``: user records with string content (not ``isCompactSummary``) plus
  ``text`` blocks of user records, and ``text`` blocks of assistant records;
* ``reasoning``: thinking blocks; ``calls``/``results``: tool_use / tool_result blocks;
  ``errors``: tool_result blocks with ``is_error: true``; ``pairs``: tool_use ids that a
  tool_result names;
* ``requests``: distinct ``message.id`` of assistant records; ``usage``: per message id,
  the usage of its *last* record, summed: (input, cache_read, cache_creation, output);
* ``boundaries``: (``compactMetadata.trigger``, ``preTokens``) of compact_boundary records;
  ``summaries``: ``isCompactSummary`` records; ``legacy``: ``type: summary`` records;
* ``side``: progress, file-history-snapshot, queue-operation and non-boundary system records.

They agree with SOURCES.md (ae4a77f8: 2,385 records, 408 with usage, one manual boundary
at 142,431; 624a4a58: 222 records, 132 with usage, one auto boundary at 155,979).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Role

MAIN = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"

GOLDEN = {
    f"{MAIN}.jsonl": dict(
        records=2385, with_usage=408, requests=217, user=6, assistant=160, reasoning=6,
        calls=242, results=242, errors=12, pairs=242, usage=(242, 16_553_628, 237_121, 49_467),
        boundaries=[(CompactTrigger.MANUAL, 142_431)], summaries=1, legacy=0, side=1727, meta=2,
        session=MAIN),
    f"{MAIN}/subagents/agent-aac57f5.jsonl": dict(
        records=40, with_usage=15, requests=3, user=1, assistant=3, reasoning=0,
        calls=12, results=12, errors=0, pairs=12, usage=(2408, 29_274, 18_814, 7),
        boundaries=[], summaries=0, legacy=0, side=12, meta=0, session=MAIN),
    f"{MAIN}/subagents/agent-acompact-946d2b.jsonl": dict(
        records=2, with_usage=1, requests=1, user=1, assistant=1, reasoning=0,
        calls=0, results=0, errors=0, pairs=0, usage=(3, 17_842, 121_689, 8),
        boundaries=[], summaries=0, legacy=0, side=0, meta=0, session=MAIN),
    "session-624a4a58.jsonl": dict(
        records=222, with_usage=132, requests=55, user=20, assistant=29, reasoning=55,
        calls=48, results=48, errors=0, pairs=48, usage=(642, 4_277_174, 1_629_516, 69_127),
        boundaries=[(CompactTrigger.AUTO, 155_979)], summaries=1, legacy=0, side=20, meta=1,
        session="624a4a58-b34c-462d-a70d-13421c8125a8"),
    "session-9eda1058.jsonl": dict(
        records=40, with_usage=12, requests=5, user=4, assistant=5, reasoning=4,
        calls=3, results=3, errors=1, pairs=3, usage=(47, 22_912, 147_267, 4509),
        boundaries=[], summaries=0, legacy=16, side=5, meta=0,
        session="9eda1058-9706-484a-b992-d03f9cfa2546"),
    "short.jsonl": dict(
        records=15, with_usage=5, requests=1, user=2, assistant=2, reasoning=1,
        calls=2, results=2, errors=2, pairs=2, usage=(3, 11_515, 13_835, 13),
        boundaries=[], summaries=0, legacy=0, side=6, meta=0,
        session="55604662-cf2a-4331-851a-ec234028f8ca"),
    "tool_heavy.jsonl": dict(
        records=39, with_usage=9, requests=4, user=7, assistant=2, reasoning=1,
        calls=6, results=6, errors=0, pairs=6, usage=(54, 88_231, 17_696, 212),
        boundaries=[], summaries=0, legacy=0, side=17, meta=1,
        session="d6e0bada-1959-4eec-a9d2-0bfade768d8f"),
}


def _events_of(ds, rel: str) -> pl.DataFrame:
    conts = ds.continuities()
    idx = conts.filter(pl.col("source_file").str.ends_with(rel))["continuity"]
    assert len(idx) == 1, rel
    return ds.events().filter(pl.col("continuity") == idx[0]).sort("seq")


def _n(ev, **eq) -> int:
    expr = pl.lit(True)
    for k, v in eq.items():
        expr = expr & (pl.col(k) == int(v))
    return ev.filter(expr).height


@pytest.mark.parametrize("rel", sorted(GOLDEN))
def test_golden_counts(imported, rel):
    g = GOLDEN[rel]
    ev = _events_of(imported, rel)
    K = EventKind
    # every record gives at least one event; in these logs exactly one (one block each)
    assert ev["source_line"].n_unique() == g["records"]
    assert ev.height == g["records"]
    out = ev.filter((pl.col("flags") & int(EventFlag.OUTPUT)) != 0)
    assert out["source_line"].n_unique() == g["with_usage"]
    assert _n(ev, kind=K.MESSAGE, role=Role.USER) == g["user"]
    assert _n(ev, kind=K.MESSAGE, role=Role.ASSISTANT) == g["assistant"]
    assert _n(ev, kind=K.REASONING) == g["reasoning"]
    assert _n(ev, kind=K.TOOL_CALL) == g["calls"]
    assert _n(ev, kind=K.TOOL_RESULT) == g["results"]
    assert ev.filter((pl.col("kind") == int(K.TOOL_RESULT))
                     & ((pl.col("flags") & int(EventFlag.ERROR)) != 0)).height == g["errors"]
    assert ev.filter((pl.col("kind") == int(K.TOOL_CALL)) & (pl.col("pair_seq") >= 0)).height == g["pairs"]
    assert (ev["flags"] & int(EventFlag.UNPAIRED)).sum() == 0
    assert _n(ev, kind=K.SIDE_EFFECT) == g["side"]
    assert _n(ev, kind=K.OPAQUE) == 0
    assert ev.filter((pl.col("kind") == int(K.SUMMARY)) & (pl.col("name") == "compact_summary")).height == g["summaries"]
    assert ev.filter((pl.col("kind") == int(K.SUMMARY)) & (pl.col("name") == "legacy_summary")).height == g["legacy"]
    assert ev.filter((pl.col("flags") & int(EventFlag.META)) != 0).height == g["meta"]
    # requests: distinct assistant message ids, numbered in order
    assert sorted(out["request"].unique().to_list()) == list(range(g["requests"]))
    assert out["message_id"].n_unique() == g["requests"]
    # usage: exactly once per request
    usage = ev.filter(pl.col("usage_input") >= 0)
    assert usage.height == g["requests"]
    assert usage["request"].n_unique() == g["requests"]
    sums = tuple(int(usage[c].sum()) for c in ("usage_input", "usage_cache_read",
                                               "usage_cache_write", "usage_output"))
    assert sums == g["usage"]
    comp = ev.filter(pl.col("kind") == int(K.COMPACTION))
    assert list(zip(comp["compact_trigger"].to_list(), comp["compact_pre_tokens"].to_list(),
                    strict=True)) == [(int(t), p) for t, p in g["boundaries"]]


RETENTION_SESSIONS = {"4d5611e5-241a-462a-8d15-5122611a9569": ("agent-a2898e3", "agent-acompact-e1f845"),
                      "fa812bfe-b295-4cca-9c2f-fdf01028cb46": ("agent-a93ccab", "agent-aa84377",
                                                               "agent-acompact-70d8e7")}


def test_continuities_and_subagents(imported):
    conts = imported.continuities()
    by_file = {r["source_file"].split("claude-code/")[-1]: r for r in conts.to_dicts()
               if r["source_format"] == "claude_code"}
    # the hand-counted files, and the two spotter sessions bundled for the retention fit
    # (SOURCES.md; their compactions are counted by hand in tests/engine/test_recorded.py)
    added = {f"{s}.jsonl" for s in RETENTION_SESSIONS} | {
        f"{s}/subagents/{a}.jsonl" for s, agents in RETENTION_SESSIONS.items() for a in agents}
    assert set(by_file) == set(GOLDEN) | added
    main = by_file[f"{MAIN}.jsonl"]
    assert main["continuity_id"] == MAIN and main["parent"] == -1
    for rel in (f"{MAIN}/subagents/agent-aac57f5.jsonl", f"{MAIN}/subagents/agent-acompact-946d2b.jsonl"):
        sub = by_file[rel]
        assert sub["parent"] == main["continuity"]
        assert sub["continuity_id"].startswith(MAIN + "/agent-a")
        assert sub["continuity"] > main["continuity"]  # session before its subagents
    for rel, g in GOLDEN.items():
        if "subagents" not in rel:
            assert by_file[rel]["continuity_id"] == g["session"]
        assert by_file[rel]["provider"] == "anthropic"
        assert by_file[rel]["profile"] == "claude-code"
    assert by_file["session-624a4a58.jsonl"]["model"] == "claude-sonnet-4-5-20250929"
    assert by_file["short.jsonl"]["model"] == "claude-opus-4-6"
    # ae4a77f8 switched models: opus for 22 requests... the continuity keeps the most used
    meta = imported.manifest["import"]["continuities"][MAIN]
    assert sum(meta["models"].values()) == 217
    assert set(meta["models"]) == {"claude-opus-4-6", "claude-haiku-4-5-20251001"}


@pytest.mark.parametrize("rel", sorted(GOLDEN))
def test_raw_round_trip(cc_dir, src, rel):
    path = cc_dir / rel
    (cont,), ctx = src.parse(path, "claude_code")
    assert src.joined_raw(cont.rows) == b"\n".join(src.nonblank_lines(path))
    assert ctx.skipped == []
    # the raw line sits on the first event of its record
    lines = cont.rows.cols["source_line"]
    raws = cont.rows.cols["raw"]
    for i in range(len(lines)):
        first = i == 0 or lines[i - 1] != lines[i]
        assert (raws[i] is not None) == first


def test_raw_round_trip_through_dataset(imported, cc_dir, src):
    ev = _events_of(imported, f"{MAIN}.jsonl")
    raws = [r for r in ev["raw"].to_list() if r is not None]
    assert "\n".join(raws).encode() == b"\n".join(src.nonblank_lines(cc_dir / f"{MAIN}.jsonl"))


def test_usage_is_last_record_of_message(imported):
    """msg_01AjAt... is written as 4 records with output_tokens 9, 9, 9, 209."""
    ev = _events_of(imported, f"{MAIN}.jsonl")
    rows = ev.filter(pl.col("message_id") == "msg_01AjAtmphJjr4oSLfTyzk8LA")
    assert rows["source_line"].to_list() == [8, 9, 10, 15]
    assert rows["request"].unique().to_list() == [0]
    first = rows.row(0, named=True)
    assert (first["usage_input"], first["usage_cache_read"], first["usage_cache_write"],
            first["usage_output"]) == (3, 17_842, 8_165, 209)
    assert (rows["usage_input"][1:] == -1).all()
    # the hook progress records between lines 10 and 15 and the tool results after line 15
    # are not outputs: they belong to the *next* request (the first one that can see them)
    between = ev.filter((pl.col("source_line") > 10) & (pl.col("source_line") < 15))
    assert set(between["name"].to_list()) == {"progress/hook_progress"}
    assert between["request"].unique().to_list() == [1]
    results = ev.filter((pl.col("kind") == int(EventKind.TOOL_RESULT)) & (pl.col("source_line") < 40))
    assert results["request"].to_list()[:2] == [1, 1]


def test_request_semantics(imported):
    cc = imported.continuities().filter(pl.col("source_format") == "claude_code")["continuity"]
    ev = imported.events(["continuity", "seq", "flags", "request", "usage_input"]).filter(
        pl.col("continuity").is_in(cc.implode()))
    for (_c,), g in ev.group_by(["continuity"]):
        g = g.sort("seq")
        is_out = ((g["flags"] & int(EventFlag.OUTPUT)) != 0).to_numpy()
        req = g["request"].to_numpy()
        if not is_out.any():
            continue
        first_seq = {}
        for s, r, o in zip(g["seq"].to_numpy(), req, is_out, strict=True):
            if o and r not in first_seq:
                first_seq[r] = s
        starts = np.array([first_seq[r] for r in sorted(first_seq)])
        assert (np.diff(starts) > 0).all()  # numbered in order of first appearance
        for s, r, o in zip(g["seq"].to_numpy(), req, is_out, strict=True):
            if not o:
                nxt = np.searchsorted(starts, s, side="right")
                assert r == (nxt if nxt < len(starts) else -1)
        # recorded usage sits on the first event of its request
        u = g.filter(pl.col("usage_input") >= 0)
        assert sorted(u["request"].to_list()) == sorted(first_seq)
        for s, r in zip(u["seq"], u["request"], strict=True):
            assert s == first_seq[r]


def test_timestamps_and_compaction(imported):
    ev = _events_of(imported, f"{MAIN}.jsonl")
    b = ev.filter(pl.col("kind") == int(EventKind.COMPACTION)).row(0, named=True)
    want = int(dt.datetime(2026, 2, 12, 14, 48, 36, 922000, tzinfo=dt.UTC).timestamp() * 1000)
    assert b["ts_ms"] == want
    assert b["source_line"] == 1481 and b["name"] == "compact_boundary"
    s = ev.filter(pl.col("kind") == int(EventKind.SUMMARY)).row(0, named=True)
    assert s["source_line"] == 1482 and s["role"] == int(Role.USER)
    assert s["text"].startswith("This session is being continued")
    # the snapshot record has no top-level timestamp: its snapshot's is used
    assert ev.row(0, named=True)["ts_ms"] == int(
        dt.datetime(2026, 2, 12, 14, 11, 57, 624000, tzinfo=dt.UTC).timestamp() * 1000)
    assert (ev["ts_ms"] > 0).all()


def test_tool_events_text(imported):
    ev = _events_of(imported, "tool_heavy.jsonl")
    call = ev.filter(pl.col("kind") == int(EventKind.TOOL_CALL)).row(0, named=True)
    assert call["name"] == "Bash" and call["call_id"] == "toolu_018GZVh9ymkrdx1TnR8reg5Y"
    assert call["text"].startswith('{"command":"mix phx.server"')
    res = ev.filter(pl.col("call_id") == call["call_id"]).filter(pl.col("kind") == int(EventKind.TOOL_RESULT))
    assert res.height == 1 and res["name"][0] == "Bash"
    assert res["pair_seq"][0] == call["seq"] and call["pair_seq"] == res["seq"][0]
    assert res["text"][0].startswith("Command running in background")


# ---------------------------------------------------------------- synthetic records

def _rec(t, **kw):
    base = {"type": t, "sessionId": "S1", "uuid": kw.pop("uuid", f"u-{t}"),
            "timestamp": "2026-01-01T00:00:00.000Z", "isSidechain": False}
    base.update(kw)
    return base


def _asst(mid, blocks, out_tokens, model="claude-x", **kw):
    return _rec("assistant", message={"id": mid, "model": model, "role": "assistant", "content": blocks,
                                      "usage": {"input_tokens": 5, "cache_read_input_tokens": 100,
                                                "cache_creation_input_tokens": 7,
                                                "output_tokens": out_tokens}}, **kw)


def test_multi_block_records(tmp_path, src):
    recs = [
        _rec("user", message={"role": "user", "content": [
            {"type": "text", "text": "look at this"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}]}),
        _asst("m1", [{"type": "thinking", "thinking": "hmm", "signature": "x"},
                     {"type": "text", "text": "ok"},
                     {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file": "a"}}], 1),
        _asst("m1", [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"file": "b"}}], 50),
        _rec("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "A"}]},
            {"type": "tool_result", "tool_use_id": "t2", "content": "B", "is_error": True}]}),
        _asst("m2", [{"type": "redacted_thinking", "data": "zzz"}, {"type": "mystery", "x": 1}], 3),
        _asst("synthetic-1", [{"type": "text", "text": "API Error"}], 0, model="<synthetic>"),
        {"type": "summary", "summary": "Title", "leafUuid": "L"},
        {"type": "brand-new-type", "sessionId": "S1", "uuid": "n1"},
        _rec("system", subtype="compact_boundary", content="Conversation compacted",
             compactMetadata={"trigger": "auto", "preTokens": 1234}),
        _rec("user", isCompactSummary=True, message={"role": "user", "content": "summary text"}),
        _rec("user", isMeta=True, message={"role": "user", "content": "<caveat>"}),
    ]
    path = src.write_jsonl(tmp_path / "s.jsonl", recs)
    (cont,), _ = src.parse(path, "claude_code")
    c = cont.rows.cols
    K = EventKind
    assert c["kind"] == [K.MESSAGE, K.MESSAGE, K.REASONING, K.MESSAGE, K.TOOL_CALL, K.TOOL_CALL,
                         K.TOOL_RESULT, K.TOOL_RESULT, K.REASONING, K.OPAQUE, K.MESSAGE, K.SUMMARY,
                         K.OPAQUE, K.COMPACTION, K.SUMMARY, K.MESSAGE]
    assert c["source_line"] == [1, 1, 2, 2, 2, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 11]
    assert c["text"][1] == "[image: image/png, 4 base64 chars]"
    assert c["text"][4] == '{"file":"a"}' and c["call_id"][4] == "t1" and c["name"][4] == "Read"
    assert c["text"][6] == "A" and c["name"][6] == "Read"
    assert c["flags"][7] & EventFlag.ERROR and not c["flags"][6] & EventFlag.ERROR
    assert c["request"] == [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1]
    # usage once, from the last record of m1 (output 50), on the request's first event
    assert [c["usage_output"][i] for i in range(len(cont.rows))] == [-1, -1, 50] + [-1] * 5 + [3] + [-1] * 7
    assert c["usage_cache_write"][2] == 7 and c["usage_cache_read"][2] == 100
    # synthetic assistant message: not a request, flagged META
    assert c["flags"][10] & EventFlag.META and not c["flags"][10] & EventFlag.OUTPUT
    assert c["name"][11] == "legacy_summary" and c["text"][11] == "Title"
    assert c["name"][12] == "brand-new-type"
    assert c["compact_trigger"][13] == CompactTrigger.AUTO and c["compact_pre_tokens"][13] == 1234
    assert c["name"][14] == "compact_summary"
    assert c["flags"][15] & EventFlag.META
    assert src.joined_raw(cont.rows) == b"\n".join(src.nonblank_lines(path))
    assert cont.model == "claude-x" and cont.meta["requests"] == 2


def test_subagent_parent_from_records(tmp_path, src):
    """Outside a subagents/ directory, the parent comes from sidechain records' sessionId."""
    recs = [_rec("user", isSidechain=True, agentId="a1", message={"role": "user", "content": "task"})]
    path = src.write_jsonl(tmp_path / "agent-a1.jsonl", recs)
    (cont,), _ = src.parse(path, "claude_code")
    assert cont.parent_id == "S1" and cont.continuity_id == "S1/agent-a1"
    assert cont.rows.cols["flags"][0] & EventFlag.SIDECHAIN


def test_sniff(cc_dir, codex_dir):
    from workbench.sources.claude_code import sniff

    for p in sorted(cc_dir.rglob("*.jsonl")):
        assert sniff(p, p.read_bytes()[:65536]).score >= 0.9, p
    for p in sorted(codex_dir.glob("*.jsonl")):
        assert sniff(p, p.read_bytes()[:65536]).score == 0.0, p
