"""Summary variance (--summary-samples K): the modelled summarizer's samples spread, the same
seed gives the same samples, the extractive summarizer's do not spread, and the command
line prints mean and spread."""

from __future__ import annotations

import json

import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.audits import redaction_audit
from workbench.cli import app
from workbench.engine.run import simulate
from workbench.synth.generate import GeneratorConfig, generate_dataset

POLICIES = ["claude-code", "llm-summary", "langchain-summarization"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("samples")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=4, facts=30), root / "ds")
    result = simulate(ds, POLICIES)
    return {"ds": ds, "result": result, "run": result.write(root / "run")}


def test_modelled_samples_spread_and_repeat(run):
    a = redaction_audit(run["result"], run["ds"], summary_samples=5)
    s = a.tables["summary_samples.parquet"]
    assert s.height == 5 * len(POLICIES) and sorted(set(s["sample"])) == [0, 1, 2, 3, 4]
    assert s.filter(pl.col("sample") > 0)["seed"].n_unique() == 4
    by = a.documents["evaluation.json"]["summary_samples"]["by_policy"]
    assert a.documents["evaluation.json"]["summary_samples"]["samples"] == 5
    assert any(by[p]["retention"]["std"] > 0 for p in POLICIES)
    assert all(by[p]["summary_tokens"]["max"] > by[p]["summary_tokens"]["min"] for p in POLICIES)
    # sample 0 is the run's own evaluation
    head = a.documents["evaluation.json"]["policies"]
    for r in s.filter(pl.col("sample") == 0).iter_rows(named=True):
        assert r["retention"] == head[r["policy"]]["retention"] and r["leaks"] == head[r["policy"]]["leaks"]
    again = redaction_audit(run["result"], run["ds"], summary_samples=5)
    assert again.tables["summary_samples.parquet"].equals(s)
    assert again.documents["evaluation.json"]["summary_samples"] == a.documents["evaluation.json"]["summary_samples"]


def test_extractive_samples_do_not_spread(run):
    a = redaction_audit(run["result"], run["ds"], summarizer="extractive", summary_samples=3)
    by = a.documents["evaluation.json"]["summary_samples"]["by_policy"]
    for p in POLICIES:
        assert by[p]["retention"]["std"] == 0.0 and by[p]["summary_tokens"]["std"] == 0.0


def test_a_different_run_seed_draws_other_samples(run):
    other = simulate(run["ds"], POLICIES, seed=7)
    s0 = redaction_audit(run["result"], run["ds"], summary_samples=2).tables["summary_samples.parquet"]
    s7 = redaction_audit(other, run["ds"], summary_samples=2).tables["summary_samples.parquet"]
    assert s0.filter(pl.col("sample") == 1)["seed"][0] != s7.filter(pl.col("sample") == 1)["seed"][0]


def test_cli_reports_the_spread_and_repeats_it(run):
    runner = CliRunner()
    outs = []
    for _ in range(2):
        r = runner.invoke(app, ["audit", "redaction", "--run", str(run["run"]), "--summary-samples", "5"])
        assert r.exit_code == 0, r.output
        assert "Over 5 summary samples" in r.output
        outs.append((pl.read_parquet(run["run"] / "summary_samples.parquet"),
                     json.loads((run["run"] / "evaluation.json").read_text())["summary_samples"]))
    assert outs[0][0].equals(outs[1][0]) and outs[0][1] == outs[1][1]
    assert any(v["retention"]["std"] > 0 for v in outs[0][1]["by_policy"].values())
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run["run"]), "--summary-samples", "0"])
    assert r.exit_code == 2
