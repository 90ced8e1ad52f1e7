"""Compaction calls recorded apart from the conversation (issue 28, deliverable 4): Claude
Code's ``agent-acompact`` subagents and Codex's compaction ``token_count`` are the parent's
compaction call, never a conversation replayed on its own. Hand-built logs."""

from __future__ import annotations

import polars as pl
import pytest

from tests.sources.conftest import parse_file, write_jsonl
from workbench.continuity.enums import EventKind, Origin

SID = "11111111-2222-3333-4444-555555555555"


def _cc(kind, i, ts, **extra):
    rec = {"type": kind, "sessionId": SID, "uuid": f"u{i}", "timestamp": ts, "version": "2.1.39", **extra}
    return rec


def _assistant(i, ts, mid, text, usage, side=False, agent=None):
    rec = _cc("assistant", i, ts, message={"id": mid, "model": "claude-sonnet-4-5", "role": "assistant",
                                           "content": [{"type": "text", "text": text}], "usage": usage})
    if side:
        rec.update(isSidechain=True, agentId=agent)
    return rec


def _usage(inp, read, write, out):
    return {"input_tokens": inp, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
            "output_tokens": out}


def _boundary(i, ts, pre):
    return _cc("system", i, ts, subtype="compact_boundary", content="Conversation compacted",
               compactMetadata={"trigger": "auto", "preTokens": pre})


def _summary(i, ts):
    return _cc("user", i, ts, isCompactSummary=True, message={"role": "user", "content": "summary of it all"})


def _user(i, ts, text, side=False, agent=None):
    rec = _cc("user", i, ts, message={"role": "user", "content": text})
    if side:
        rec.update(isSidechain=True, agentId=agent)
    return rec


def _session_with_two_compactions(root):
    """A session compacted twice, and the two summarizer subagents, each holding the whole
    conversation it summarised (big enough that a preset replaying it alone compacts at once)."""
    big = "lorem ipsum dolor sit amet " * 40_000  # ~200k cl100k tokens: over any preset's threshold
    root.mkdir(parents=True, exist_ok=True)
    main = root / f"{SID}.jsonl"
    write_jsonl(main, [
        _user(0, "2026-02-12T10:00:00.000Z", "start"),
        _assistant(1, "2026-02-12T10:00:05.000Z", "m1", "ok", _usage(3, 10_000, 500, 20)),
        _boundary(2, "2026-02-12T10:10:00.000Z", 150_000),
        _summary(3, "2026-02-12T10:10:00.000Z"),
        _user(4, "2026-02-12T10:11:00.000Z", "go on"),
        _assistant(5, "2026-02-12T10:11:05.000Z", "m2", "ok", _usage(4, 11_000, 900, 30)),
        _boundary(6, "2026-02-12T10:30:00.000Z", 160_000),
        _summary(7, "2026-02-12T10:30:00.000Z"),
        _user(8, "2026-02-12T10:31:00.000Z", "and on"),
        _assistant(9, "2026-02-12T10:31:05.000Z", "m3", "done", _usage(5, 12_000, 700, 40)),
    ])
    sub = root / SID / "subagents"
    sub.mkdir(parents=True)
    for name, (t0, t1), usage in (("agent-acompact-aaa111", ("10:08:00", "10:09:59"), _usage(3, 9_000, 120_000, 8)),
                                  ("agent-acompact-bbb222", ("10:28:00", "10:29:59"), _usage(2, 9_500, 130_000, 9))):
        agent = name.removeprefix("agent-")
        write_jsonl(sub / f"{name}.jsonl", [
            _user(20, f"2026-02-12T{t0}.000Z", big, side=True, agent=agent),
            _assistant(21, f"2026-02-12T{t1}.000Z", f"s-{agent}", "the summary", usage, side=True, agent=agent),
        ])
    return main


def test_claude_code_summarizer_subagents_are_the_parents_compaction_calls(tmp_path):
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import prepare_dataset
    from workbench.sources.compaction_calls import compaction_call_ids, compaction_calls
    from workbench.sources.importer import import_paths

    main = _session_with_two_compactions(tmp_path / "logs")
    ds = load_dataset(import_paths([main], tmp_path / "ds").path)
    first, second = f"{SID}/agent-acompact-aaa111", f"{SID}/agent-acompact-bbb222"
    assert compaction_call_ids(ds.manifest) == {first, second}
    calls = compaction_calls(ds.manifest)[SID]
    # each attached to the boundary that follows its last record (rows 2 and 6: a BOM-less
    # file, one event per record), with its recorded usage
    assert [(c["continuity_id"], c["boundary_seq"], c["request"]) for c in calls] == [
        (first, 2, 1), (second, 6, 2)]
    assert [(c["input"], c["cache_read"], c["cache_write"], c["output"], c["calls"]) for c in calls] == [
        (3, 9_000, 120_000, 8, 1), (2, 9_500, 130_000, 9, 1)]
    meta = ds.manifest["import"]["continuities"][first]["compaction_call_of"]
    assert meta == {"continuity_id": SID, "boundary_seq": 2, "request": 1}
    # never replayed on its own: a preset cannot compact it
    assert [inp.continuity_id for inp in prepare_dataset(ds, "cl100k")] == [SID]


def test_no_compaction_subagent_compacts_on_its_own_and_its_usage_is_the_compaction_call(tmp_path):
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import prepare_dataset
    from workbench.evaluate.fidelity import fidelity_table
    from workbench.evaluate.fidelity_predictive import preset_compactions
    from workbench.sources.importer import import_paths
    from workbench.sources.profiles import fit_profiles

    main = _session_with_two_compactions(tmp_path / "logs")
    ds = load_dataset(import_paths([main], tmp_path / "ds").path)
    preset = preset_compactions(ds, prepare_dataset(ds, "cl100k"), fit_profiles(ds))
    assert set(preset["continuity_id"]) == {SID}
    fid = fidelity_table(ds)
    comp = fid["compactions"].sort("boundary_seq")
    assert comp["recorded_summarizer_prompt"].to_list() == [3 + 9_000 + 120_000, 2 + 9_500 + 130_000]
    assert comp["recorded_summarizer_cache_read"].to_list() == [9_000, 9_500]
    notes = fid["requests"].filter(pl.col("continuity_id").str.contains("acompact"))["note"].to_list()
    assert len(notes) == 2 and all(n.startswith(f"compaction call of {SID}") for n in notes)


def _rollout(path, *, compaction_usage: bool):
    """A Codex rollout compacted once: request 0, auto compaction (its token_count repeats
    the previous total_token_usage, openai/codex#47003), request 1."""
    def tc(last, total):
        return {"timestamp": "2026-05-11T08:30:00.000Z", "type": "event_msg", "payload": {
            "type": "token_count", "info": {"last_token_usage": last, "total_token_usage": total,
                                            "model_context_window": 258_400}}}

    def u(inp, cached, out):
        return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                "total_tokens": inp + out}

    def item(payload):
        return {"timestamp": "2026-05-11T08:30:00.000Z", "type": "response_item", "payload": payload}

    recs = [
        {"timestamp": "2026-05-11T08:29:00.000Z", "type": "session_meta",
         "payload": {"id": "cx-1", "cli_version": "0.154.0", "model_provider": "openai"}},
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]}),
        tc(u(1000, 0, 10), u(1000, 0, 10)),
    ]
    if compaction_usage:
        recs.append(tc(u(900, 800, 300), u(1000, 0, 10)))
    recs += [
        {"timestamp": "2026-05-11T08:31:00.000Z", "type": "compacted",
         "payload": {"message": "summary of the work", "trigger": "auto"}},
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "sure"}]}),
        tc(u(400, 0, 5), u(1400, 0, 15)),
    ]
    return write_jsonl(path, recs)


def test_codex_compaction_usage_is_a_background_call_not_a_request(tmp_path):
    (with_call,), _ = parse_file(_rollout(tmp_path / "rollout-a.jsonl", compaction_usage=True), "codex")
    (without,), _ = parse_file(_rollout(tmp_path / "rollout-b.jsonl", compaction_usage=False), "codex")
    assert with_call.meta["requests"] == without.meta["requests"] == 2
    cols = with_call.rows.cols
    usage_rows = [i for i, u in enumerate(cols["usage_input"]) if u >= 0]
    assert len(usage_rows) == 3
    call = [i for i in usage_rows if cols["name"][i] == "token_count_compaction"]
    assert len(call) == 1 and cols["origin"][call[0]] == Origin.BACKGROUND
    (c,) = with_call.meta["compaction_calls"]
    boundary = cols["kind"].index(EventKind.COMPACTION)
    assert (c["source"], c["boundary_seq"], c["request"]) == ("token_count", boundary, 1)
    assert (c["input"], c["cache_read"], c["cache_write"], c["output"]) == (100, 800, 0, 300)
    # the conversation's requests keep their own usage (the compaction's is not summed in)
    main = [(cols["request"][i], cols["usage_input"][i]) for i in usage_rows if i not in call]
    assert main == [(0, 1000), (1, 400)]
    assert "compaction_calls" not in without.meta


def test_the_totals_price_the_recorded_compaction_call_apart(recorded_dir, tmp_path):
    """ae4a77f8's summarizer call (agent-acompact: input 3, cache read 17,842, cache write
    121,689, output 8) is its compaction's call in the totals, not a request of its own."""
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.pricing import price_table
    from workbench.engine.run import prepare_dataset
    from workbench.evaluate.fidelity_predictive import totals_table
    from workbench.sources.importer import import_paths

    main = recorded_dir / "claude-code" / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
    ds = load_dataset(import_paths([main], tmp_path / "ds").path)
    totals = totals_table(prepare_dataset(ds, "cl100k"), {"logs": {}}, manifest=ds.manifest)
    assert not totals["continuity_id"].str.contains("acompact").any()
    row = totals.filter(pl.col("continuity_id") == "ae4a77f8-aedd-4bc1-888f-c94edc91af04").row(0, named=True)
    p = price_table(row["model"])
    bill = 3 * p.input.base + 17_842 * p.cache_read.base + 121_689 * p.cache_write.base + 8 * p.output.base
    assert row["compaction_calls_recorded"] == 1 and row["compaction_calls_simulated"] == 1  # as-recorded
    assert row["recorded_compaction_cost_usd"] == pytest.approx(bill)
    assert row["simulated_compaction_cost_usd"] > 0


def test_a_recorded_compaction_costs_its_call_plus_the_rewrite_of_the_new_prefix(tmp_path):
    """Hand-computed from the records: the first compaction's call (input 3, cache read 9,000,
    write 120,000, output 8) and the request after it (input 4, read 11,000, write 900: the
    re-write costs 4 x (input - read) + 900 x (write - read) beyond reading all 11,904 back)."""
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.pricing import price_table_for
    from workbench.sources.compaction_calls import recorded_compaction_costs
    from workbench.sources.importer import import_paths

    main = _session_with_two_compactions(tmp_path / "logs")
    ds = load_dataset(import_paths([main], tmp_path / "ds").path)
    costs = recorded_compaction_costs(ds)
    assert sorted(costs) == [(SID, 1), (SID, 2)]
    first = costs[(SID, 1)]
    p = price_table_for(ds.continuities().filter(pl.col("continuity_id") == SID)["model"].item())[0]
    call = 3 * p.input.base + 9_000 * p.cache_read.base + 120_000 * p.cache_write.base + 8 * p.output.base
    rewrite = 4 * (p.input.base - p.cache_read.base) + 900 * (p.cache_write.base - p.cache_read.base)
    assert (first["calls"], first["call_cache_read"], first["call_cache_write"]) == (1, 9_000, 120_000)
    assert (first["next_prompt"], first["next_cache_read"], first["next_cache_write"]) == (11_904, 11_000, 900)
    assert first["call_usd"] == pytest.approx(call)
    assert first["rewrite_usd"] == pytest.approx(rewrite)
    assert first["compaction_usd"] == pytest.approx(call + rewrite)
