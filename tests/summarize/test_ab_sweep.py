"""A/B of the compaction prompt and model (issue 17 item 4): a 2 x 2 sweep of
``summarizer.prompt`` x ``summarizer.model`` against a local OpenAI-compatible stub
(127.0.0.1), its answers recorded in a cassette; the same sweep replayed offline from the
cassette gives the same tables; ``tune`` picks the prompt that keeps the facts; the
comparison renders; summary samples of an HTTP summarizer are requests of their own."""

from __future__ import annotations

import json

import pytest
import yaml
from ab_stub import SummarizingStub, closed_port_url
from typer.testing import CliRunner

from workbench.cli import app
from workbench.sweep.runner import aggregate, collect

KEEP = "prompts/keep-values.txt"
BRIEF = "prompts/brief.txt"
METRICS = ["retention", "leaks", "secrets", "fact_probes", "cost_usd", "compactions"]


def _spec(path, *, base_url: str, mode: str) -> None:
    path.write_text(yaml.safe_dump({
        "name": path.stem,
        "dataset": {"path": "datasets/ab", "generate": {"profile": "coding", "events": 2500, "seed": 3,
                                                          "facts": 30}},
        "base": "llm-summary",
        "parameters": {"summarizer.prompt": [KEEP, BRIEF], "summarizer.model": ["stub-large", "stub-small"]},
        "seeds": [0],
        "evaluate": {"summarizer": "http",
                     "options": {"base_url": base_url, "cassette": "cassettes/ab.jsonl", "cassette_mode": mode}},
    }))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("ab")
    (root / "prompts").mkdir()
    (root / KEEP).write_text("Summarize the conversation for the agent. Keep exact values: names, dates, ports, "
                             "versions, paths, tickets, hosts.\n")
    (root / BRIEF).write_text("Summarize the conversation in a few words: what the user asked.\n")
    return root


@pytest.fixture(scope="module")
def recorded(project):
    import os

    old = os.getcwd()
    os.chdir(project)
    try:
        with SummarizingStub() as stub:
            _spec(project / "ab.yaml", base_url=stub.base_url, mode="auto")
            r = CliRunner().invoke(app, ["sweep", "ab.yaml", "--executor", "serial", "--format", "json"])
            requests = list(stub.requests)
        _spec(project / "ab-offline.yaml", base_url=closed_port_url(), mode="replay")
        cassette = (project / "cassettes" / "ab.jsonl").read_bytes()
        offline = CliRunner().invoke(app, ["sweep", "ab-offline.yaml", "--executor", "serial"])
        tuned = CliRunner().invoke(app, ["tune", "ab-offline.yaml", "--no-run", "--objective", "retention",
                                         "--maximize", "--constraint", "leaks<=100"])
    finally:
        os.chdir(old)
    return {"record": r, "requests": requests, "offline": offline, "tune": tuned, "cassette": cassette,
            "root": project}


def test_the_sweep_asks_the_endpoint_with_each_prompt_and_model(recorded):
    assert recorded["record"].exit_code == 0, recorded["record"].output
    seen = {(b["model"], b["messages"][0]["content"].split(":")[0]) for b in recorded["requests"]}
    assert {m for m, _ in seen} == {"stub-large", "stub-small"}
    assert {p for _, p in seen} == {"Summarize the conversation for the agent. Keep exact values",
                                    "Summarize the conversation in a few words"}
    assert len(recorded["requests"]) == len((recorded["root"] / "cassettes" / "ab.jsonl").read_text().splitlines())


def test_it_replays_offline_from_the_cassette_with_the_same_tables(recorded):
    assert recorded["offline"].exit_code == 0, recorded["offline"].output
    root = recorded["root"]
    a = aggregate(collect(root / "runs" / "sweeps" / "ab"))
    b = aggregate(collect(root / "runs" / "sweeps" / "ab-offline"))
    cols = ["summarizer.prompt", "summarizer.model", *METRICS]
    assert a.height == 4 and a.select(cols).equals(b.select(cols))
    assert (root / "cassettes" / "ab.jsonl").read_bytes() == recorded["cassette"]  # nothing recorded anew
    # the prompts differ in what they keep; the models in how much
    by = {(r["summarizer.prompt"], r["summarizer.model"]): r["retention"] for r in a.iter_rows(named=True)}
    assert by[(KEEP, "stub-large")] > by[(BRIEF, "stub-large")]
    assert by[(KEEP, "stub-small")] > by[(BRIEF, "stub-small")]
    assert by[(KEEP, "stub-large")] > by[(KEEP, "stub-small")]  # the larger model keeps more
    # every run recorded the sha256 of the prompt it was written with
    meta = json.loads(next((root / "runs" / "sweeps" / "ab" / "results").glob("*.json")).read_text())
    assert set(meta["evaluate"]["prompts"]) == {KEEP, BRIEF} and all(meta["evaluate"]["prompts"].values())


def test_tune_picks_the_prompt_that_keeps_the_facts(recorded):
    out = recorded["tune"]
    assert out.exit_code == 0, out.output
    best = next(line for line in out.output.splitlines() if line.startswith("best:"))
    assert f"summarizer.prompt={KEEP}" in best and "summarizer.model=stub-large" in best


def test_the_comparison_renders(recorded, tmp_path):
    from workbench.audits import redaction_audit
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import simulate
    from workbench.report.render import render_report

    root = recorded["root"]
    sweep = root / "runs" / "sweeps" / "ab"
    res = render_report("threshold-sweep", sweep, tmp_path / "sweep-report")
    html = res.html.read_text(encoding="utf-8")
    assert "summarizer.prompt" in html and KEEP in html and BRIEF in html and "stub-small" in html
    result = simulate(root / "datasets" / "ab", ["llm-summary"])
    run = result.write(tmp_path / "run")
    redaction_audit(result, load_dataset(root / "datasets" / "ab")).write(run)
    res = render_report("compaction-inspector", run, tmp_path / "inspector", ab_sweep=sweep)
    html = res.html.read_text(encoding="utf-8")
    assert "Best by retention" in html and f"summarizer.prompt={KEEP}" in html


def test_http_summary_samples_are_requests_of_their_own(recorded, tmp_path):
    from workbench.audits import redaction_audit
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import simulate

    ds = load_dataset(recorded["root"] / "datasets" / "ab")  # the sweep generated it
    result = simulate(ds, ["llm-summary"])
    cassette = tmp_path / "samples.jsonl"
    with SummarizingStub() as stub:
        opts = {"base_url": stub.base_url, "cassette": str(cassette)}
        a = redaction_audit(result, ds, summarizer="http", summarizer_options=opts, summary_samples=3)
        bodies = list(stub.requests)
    assert {b.get("seed") for b in bodies} == {None, 1, 2}
    assert all(b["temperature"] == 1.0 for b in bodies if b.get("seed"))
    samples = a.tables["summary_samples.parquet"]
    assert samples["summary_tokens"].n_unique() > 1  # the stub's shuffled samples differ
    offline = {"base_url": closed_port_url(), "cassette": str(cassette), "cassette_mode": "replay"}
    b = redaction_audit(result, ds, summarizer="http", summarizer_options=offline, summary_samples=3)
    assert b.tables["summary_samples.parquet"].drop("run_id").equals(samples.drop("run_id"))


def test_llm_judged_probes_ask_the_summary_and_replay_offline(recorded, tmp_path):
    from workbench.audits import redaction_audit
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate

    project = recorded["root"]
    ds = load_dataset(project / "datasets" / "ab")  # the sweep generated it
    result = simulate(ds, [get_policy("llm-summary", {"summarizer.prompt": KEEP}, rename="keep"),
                           get_policy("llm-summary", {"summarizer.prompt": BRIEF}, rename="brief")])
    cassette = tmp_path / "judged.jsonl"
    with SummarizingStub() as stub:
        opts = {"base_url": stub.base_url, "cassette": str(cassette)}
        a = redaction_audit(result, ds, summarizer="http", summarizer_options=opts, judge_probes=True, root=project)
        asked = [b for b in stub.requests if b["messages"][0]["content"].startswith("You answer questions")]
    probes = a.tables["probes.parquet"]
    compactions = a.tables["compactions.parquet"]
    assert probes.height == compactions.filter("readable")["facts_in_span"].sum() > 0
    assert 0 < len(asked) <= probes.height  # a question asked twice of the same summary: the cassette answers
    share = a.documents["evaluation.json"]["judged_probes"]
    assert share["keep"]["answerable"] > share["brief"]["answerable"]
    # a lost fact's answer is nowhere in the summary: the judge cannot find it there
    assert not probes.filter(probes["status"] == "lost")["answerable"].any()
    assert probes.filter(probes["status"] == "kept")["answerable"].any()
    offline = {"base_url": closed_port_url(), "cassette": str(cassette), "cassette_mode": "replay"}
    b = redaction_audit(result, ds, summarizer="http", summarizer_options=offline, judge_probes=True, root=project)
    assert b.tables["probes.parquet"].equals(probes)
    # not asked for: an empty table (no stale judgement beside the run), and only with http
    assert redaction_audit(result, ds, summarizer="http", summarizer_options=offline,
                           root=project).tables["probes.parquet"].height == 0
    from workbench.summarize import SummarizerConfigError

    plain = simulate(ds, ["llm-summary"])
    with pytest.raises(SummarizerConfigError, match="judged probes ask the summarizer's endpoint"):
        redaction_audit(plain, ds, judge_probes=True)
