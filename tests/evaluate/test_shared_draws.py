"""Shared draws (common random numbers, workbench.summarize.settings): two policies that
compact a span alike write the same summary, so their figures differ only where their
policies do; by default each policy draws its own, as the goldens were drawn."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.evaluate.pipeline import evaluate_run
from workbench.summarize.base import SummarizerConfigError
from workbench.summarize.settings import split_draws
from workbench.synth.generate import GeneratorConfig, generate_dataset

FLUSH = {"provider.context_window": 24_000, "trigger.reserve_tokens": 4_000, "flush.reserve_tokens": 4_000}


@pytest.fixture(scope="module")
def twin_run(tmp_path_factory):
    """openclaw-flush twice, under two soft flush thresholds: the flushes move, the cuts do not."""
    ds = generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=2, secrets=40, facts=12),
                          tmp_path_factory.mktemp("twins") / "ds")
    early = get_policy("openclaw-flush", {**FLUSH, "flush.soft_threshold_tokens": 1_000}, rename="early")
    late = get_policy("openclaw-flush", {**FLUSH, "flush.soft_threshold_tokens": 4_000}, rename="late")
    return ds, simulate(ds, [early, late], engine="reference")


def _texts(ev, policy: str, kind: str) -> list[str]:
    t = ev["texts"].filter((pl.col("policy") == policy) & (pl.col("kind") == kind)).sort("request")
    return t["text"].to_list()


def test_shared_draws_write_the_same_summary_for_the_same_compaction(twin_run):
    ds, res = twin_run
    shared = evaluate_run(res, ds, summarizer_options={"draws": "shared"}, compactions=False)
    early, late = _texts(shared, "early", "summary"), _texts(shared, "late", "summary")
    assert len(early) >= 2 and early == late
    # what the policies do differently still differs: their flushes fall elsewhere
    assert _texts(shared, "early", "memory") != _texts(shared, "late", "memory")
    leaks = shared["leakage"].filter(pl.col("channel").is_in(["summary", "context"]))
    by_policy = {p: leaks.filter(pl.col("policy") == p).drop("policy", "run_id").sort("secret_id", "channel")
                 for p in ("early", "late")}
    assert by_policy["early"].equals(by_policy["late"])
    # each policy drawing its own (the default): the same compaction, another summary
    own = evaluate_run(res, ds, compactions=False)
    assert _texts(own, "early", "summary") != _texts(own, "late", "summary")


def test_the_default_is_each_policys_own_draws(twin_run):
    ds, res = twin_run
    default = evaluate_run(res, ds, compactions=False)
    explicit = evaluate_run(res, ds, summarizer_options={"draws": "policy"}, compactions=False)
    assert default["texts"].equals(explicit["texts"])
    assert default["leakage"].equals(explicit["leakage"])


def test_draws_is_checked():
    assert split_draws("modelled", None) == ("policy", {})
    assert split_draws("calibrated", {"draws": "shared", "harness": "codex"}) == ("shared", {"harness": "codex"})
    with pytest.raises(SummarizerConfigError, match="one of policy, shared"):
        split_draws("modelled", {"draws": "common"})
    with pytest.raises(SummarizerConfigError, match="draws nothing per compaction"):
        split_draws("extractive", {"draws": "shared"})


def test_a_sweep_spec_with_a_bad_draws_option_is_refused_before_any_run(tmp_path):
    from workbench.sweep.spec import SpecError, SweepSpec

    spec = {"name": "s", "dataset": str(tmp_path / "d"), "base": "claude-code",
            "parameters": {"trigger.reserve_tokens": [20_000]}}
    with pytest.raises(SpecError, match="evaluate.options: draws must be one of"):
        SweepSpec.from_dict({**spec, "evaluate": {"options": {"draws": "sometimes"}}})
    with pytest.raises(SpecError, match="draws nothing per compaction"):
        SweepSpec.from_dict({**spec, "evaluate": {"summarizer": "extractive", "options": {"draws": "shared"}}})


def test_the_cli_records_shared_draws_with_the_evaluation(twin_run, tmp_path):
    import orjson
    from typer.testing import CliRunner

    from workbench.cli import app
    from workbench.rundir.names import EVALUATION

    ds, _ = twin_run
    runner = CliRunner()
    r = runner.invoke(app, ["simulate", "--dataset", str(ds.path), "--policy", "openclaw-flush", "--evaluate",
                            "--draws", "shared", "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    report = orjson.loads((tmp_path / "run" / EVALUATION).read_bytes())
    assert report["summarizer_settings"] == {"draws": "shared"}
    r = runner.invoke(app, ["simulate", "--dataset", str(ds.path), "--policy", "openclaw-flush", "--evaluate",
                            "--summarizer", "extractive", "--draws", "shared", "--out", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "draws nothing per compaction" in r.output
    assert not (tmp_path / "bad").exists()
