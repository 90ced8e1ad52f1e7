"""ATIF (Harbor's trajectory format): a bundled Claude Code log exported and imported back,
a trajectory another tool wrote (hand-computed usage), malformed input named by file and
line, and the export's output-path rule."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from workbench.cli import app
from workbench.errors import SourceError
from workbench.rundir.output import OutputError
from workbench.sources.atif_export import export_dataset
from workbench.sources.detect import detect_format
from workbench.sources.importer import import_paths

COMPARED = ["kind", "role", "origin", "flags", "call_id", "message_id", "name", "text", "ts_ms",
            "compact_trigger", "compact_pre_tokens"]
USAGE = ["usage_input", "usage_cache_read", "usage_cache_write", "usage_output"]


def _events(ds, *, drop_layout: bool) -> pl.DataFrame:
    ev = ds.events().join(ds.continuities().select("continuity", "continuity_id"), on="continuity")
    ev = ev.sort("continuity", "seq")
    if drop_layout:  # the ATIF document's own lossless layout (META document/layout)
        ev = ev.filter(~((pl.col("kind") == 10) & pl.col("name").is_in(["document", "layout"])))
    return ev


def _request_usage(ev: pl.DataFrame) -> list[tuple]:
    return sorted(ev.filter(pl.col("usage_input") >= 0).group_by("request")
                  .agg(*(pl.col(c).sum() for c in USAGE)).rows())


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory, recorded_dir):
    tmp = tmp_path_factory.mktemp("atif")
    before = import_paths([recorded_dir / "claude-code"], tmp / "cc")
    r = CliRunner().invoke(app, ["export", str(tmp / "cc"), "--format", "atif", "--out", str(tmp / "atif")])
    assert r.exit_code == 0, r.output
    after = import_paths([tmp / "atif"], tmp / "back")
    return before, after, tmp


def test_claude_code_round_trip_keeps_requests_usage_and_events(round_trip):
    before, after, _ = round_trip
    assert {f["format"] for f in after.manifest["source"]["files"]} == {"atif"}
    ea, eb = _events(before, drop_layout=False), _events(after, drop_layout=True)
    ids = sorted(set(ea["continuity_id"]))
    assert ids == sorted(set(eb["continuity_id"])) and len(ids) == 14
    n_requests = 0
    for cid in ids:
        x, y = ea.filter(pl.col("continuity_id") == cid), eb.filter(pl.col("continuity_id") == cid)
        # same requests, each with the same recorded prompt/cache read/cache write/output
        assert _request_usage(x) == _request_usage(y), cid
        n_requests += len(_request_usage(x))
        outputs = [pl.col("flags") & 2 > 0]
        assert (x.filter(*outputs).group_by("request", maintain_order=True).agg(pl.col("kind"), pl.col("text")).rows()
                == y.filter(*outputs).group_by("request", maintain_order=True).agg(pl.col("kind"), pl.col("text")).rows())
        # every event comes back (kind, role, origin, flags, ids, name, text, timestamp), and
        # the events of each kind in their order; only events of different kinds interleave
        # otherwise (ATIF puts a call's result in its call's step)
        assert Counter(x.select(COMPARED).rows()) == Counter(y.select(COMPARED).rows()), cid
        for kind in range(11):
            assert (x.filter(pl.col("kind") == kind).select(COMPARED).rows()
                    == y.filter(pl.col("kind") == kind).select(COMPARED).rows()), (cid, kind)
    # the seven of marot/spotter's ae4a77f8 and codemie's logs, then the two spotter sessions
    # added for the retention fit with their subagents and compaction calls (SOURCES.md)
    assert n_requests == 217 + 55 + 5 + 4 + 3 + 1 + 1 + (139 + 12 + 1) + (157 + 11 + 9 + 1)
    parents = dict(zip(after.continuities()["continuity_id"], after.continuities()["parent"], strict=True))
    assert sum(p >= 0 for p in parents.values()) == 7  # the 7 subagents keep their session


def test_export_is_valid_atif_with_metrics_and_cost(round_trip):
    import atif

    before, _, tmp = round_trip
    doc = json.loads((tmp / "atif" / "55604662-cf2a-4331-851a-ec234028f8ca.json").read_text())
    atif.Trajectory.model_validate(doc)
    [step] = [s for s in doc["steps"] if "metrics" in s]
    m = step["metrics"]
    ev = _events(before, drop_layout=False).filter(pl.col("continuity_id") == doc["session_id"])
    [(_, ui, cr, cw, out)] = _request_usage(ev)
    # ATIF's prompt_tokens holds the cache (cached_tokens is a subset); cache writes ride in extra
    assert (m["prompt_tokens"], m["cached_tokens"], m["extra"]["cache_creation_input_tokens"],
            m["completion_tokens"]) == (ui + cr + cw, cr, cw, out)
    # by hand: 3 uncached, 11,515 read, 13,835 written, 13 out at Opus 4.6's $5 / $0.50 / $6.25 / $25 per M
    assert (ui, cr, cw, out) == (3, 11_515, 13_835, 13)
    assert m["cost_usd"] == pytest.approx((3 * 5 + 11_515 * 0.5 + 13_835 * 6.25 + 13 * 25) / 1e6)
    assert doc["final_metrics"]["total_cost_usd"] == pytest.approx(m["cost_usd"])
    assert doc["agent"]["model_name"] == "claude-opus-4-6"


def _write(path: Path, steps: list[str], head: str | None = None) -> Path:
    head = head or '"schema_version": "ATIF-v1.6", "session_id": "s1", "agent": {"name": "terminus", ' \
                   '"version": "2.0", "model_name": "claude-sonnet-4-5"}'
    path.write_text("{\n  " + head + ',\n  "steps": [\n    ' + ",\n    ".join(steps) + "\n  ]\n}\n")
    return path


FOREIGN = [
    '{"step_id": 1, "source": "system", "message": "You are an agent."}',
    '{"step_id": 2, "source": "user", "message": "List the files."}',
    '{"step_id": 3, "source": "agent", "message": "", "reasoning_content": "use ls",'
    ' "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "ls"}}],'
    ' "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]},'
    ' "metrics": {"prompt_tokens": 1000, "cached_tokens": 800, "completion_tokens": 50, "cost_usd": 0.001}}',
    '{"step_id": 4, "source": "agent", "message": "There is a.txt.",'
    ' "metrics": {"prompt_tokens": 1100, "cached_tokens": 1000, "completion_tokens": 7}}',
]


def test_foreign_trajectory_imports_with_hand_computed_usage(tmp_path):
    path = _write(tmp_path / "t.json", FOREIGN)
    assert detect_format(path)[0].name == "atif"
    ds = import_paths([path], tmp_path / "ds")
    ev = _events(ds, drop_layout=True)
    assert ev.select("kind", "role", "text").rows() == [
        (1, 1, "You are an agent."), (1, 2, "List the files."), (4, 3, "use ls"),
        (2, 3, '{"cmd":"ls"}'), (3, 4, "a.txt"), (1, 3, "There is a.txt.")]
    # prompt 1000 of which 800 cached -> input 200; prompt 1100, 1000 cached -> input 100
    assert _request_usage(ev) == [(0, 200, 800, 0, 50), (1, 100, 1000, 0, 7)]
    assert ev.filter(pl.col("kind") == 3)["pair_seq"].to_list() == ev.filter(pl.col("kind") == 2)["seq"].to_list()
    assert ds.continuities()["continuity_id"].to_list() == ["s1"]


def test_malformed_step_names_file_and_line(tmp_path):
    bad = FOREIGN[:3] + ['{"step_id": 4, "source": "agent", "message": "x", "metrics": {"prompt_tokens": "many"}}']
    path = _write(tmp_path / "bad.json", bad)
    with pytest.raises(SourceError) as err:
        import_paths([path], tmp_path / "ds")
    assert err.value.path == str(path) and err.value.line == 7
    assert "steps[3]" in str(err.value) and "prompt_tokens" in str(err.value)
    # skipped, it is counted with its line and kept as a SKIPPED event
    ds = import_paths([path], tmp_path / "ds2", on_error="skip")
    assert [s["line"] for s in ds.manifest["import"]["skipped"]] == [7]


def test_step_ids_out_of_order_and_bad_header(tmp_path):
    path = _write(tmp_path / "order.json", [FOREIGN[1].replace('"step_id": 2', '"step_id": 5')])
    with pytest.raises(SourceError) as err:
        import_paths([path], tmp_path / "ds")
    assert err.value.line == 4 and "step_id" in str(err.value)
    path = _write(tmp_path / "head.json", FOREIGN[:1], head='"schema_version": "ATIF-v1.6", "agent": {"name": "x"}')
    with pytest.raises(SourceError, match="agent.version"):
        import_paths([path], tmp_path / "ds3")


def test_export_writes_only_where_allowed(round_trip, tmp_path):
    _, _, tmp = round_trip
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "NOTES.txt").write_text("keep")
    with pytest.raises(OutputError):
        export_dataset(tmp / "cc", mine)
    assert (mine / "NOTES.txt").read_text() == "keep"
    # its own kind is replaced (a second export), a dataset is not without --force
    export_dataset(tmp / "cc", tmp / "atif")
    with pytest.raises(OutputError, match="dataset"):
        export_dataset(tmp / "cc", tmp / "back")


def test_embedded_subagent_becomes_its_own_continuity(tmp_path):
    sub = ('"subagent_trajectories": [{"schema_version": "ATIF-v1.8", "trajectory_id": "sub-1", '
           '"agent": {"name": "helper", "version": "1"}, "steps": [{"step_id": 1, "source": "agent", '
           '"message": "found it", "metrics": {"prompt_tokens": 40, "cached_tokens": 0, "completion_tokens": 3}}]}]')
    head = ('"schema_version": "ATIF-v1.8", "session_id": "s2", "agent": {"name": "x", "version": "1"}, ' + sub)
    path = _write(tmp_path / "sub.json", FOREIGN[:1], head=head)
    ds = import_paths([path], tmp_path / "ds")
    conts = ds.continuities().sort("continuity")
    assert conts["continuity_id"].to_list() == ["s2", "sub-1"] and conts["parent"].to_list() == [-1, 0]
    ev = _events(ds, drop_layout=True).filter(pl.col("continuity_id") == "sub-1")
    assert ev.select("kind", "text").rows() == [(1, "found it")]
    assert _request_usage(ev) == [(0, 40, 0, 0, 3)]


_json = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                     max_leaves=8)
_KEYS = ["step_id", "source", "message", "reasoning_content", "tool_calls", "observation", "metrics", "extra",
         "llm_call_count", "timestamp", "model_name"]


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(step=st.integers(0, 3), key=st.sampled_from(_KEYS), value=_json, on_error=st.sampled_from(["fail", "skip"]))
@example(step=0, key="message", value=[], on_error="fail")  # an empty part list once gave no event
def test_a_damaged_step_is_a_source_error_or_a_lossless_import(tmp_path_factory, step, key, value, on_error):
    from workbench.sources import load_formats
    from workbench.sources.base import ParseContext
    from workbench.sources.lossless import roundtrip

    doc = json.loads(_write(tmp_path_factory.mktemp("fz") / "t.json", FOREIGN).read_text())
    doc["steps"][step][key] = value
    path = tmp_path_factory.mktemp("fz") / "d.json"
    path.write_text(json.dumps(doc, indent=1))
    try:
        conts = load_formats()["atif"].parse(ParseContext(path=path, on_error=on_error))
    except SourceError as exc:
        assert exc.path == str(path)
        return
    assert roundtrip([r for c in conts for r in c.rows.cols["raw"]]) == doc


def test_every_bundled_format_round_trips(tmp_path, recorded_dir):
    """Not only Claude Code: every bundled log comes back with the same events and recorded
    usage (an OpenHands SDK tool call that no request made once broke the import)."""
    before = import_paths([recorded_dir], tmp_path / "all")
    r = CliRunner().invoke(app, ["export", str(tmp_path / "all"), "--format", "atif", "--out", str(tmp_path / "atif")])
    assert r.exit_code == 0, r.output
    after = import_paths([tmp_path / "atif"], tmp_path / "back")
    # whole-document formats keep their own layout records; the ATIF document has its own
    ea, eb = _events(before, drop_layout=True), _events(after, drop_layout=True)
    assert before.continuities().height == after.continuities().height
    for cid in sorted(set(ea["continuity_id"])):
        x, y = ea.filter(pl.col("continuity_id") == cid), eb.filter(pl.col("continuity_id") == cid)
        assert _request_usage(x) == _request_usage(y), cid
        assert Counter(x.select(COMPARED).rows()) == Counter(y.select(COMPARED).rows()), cid
