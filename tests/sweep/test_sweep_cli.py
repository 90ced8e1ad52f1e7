"""`workbench sweep` and `workbench tune` end to end (serial executor, small dataset)."""

from __future__ import annotations

import tomllib

import yaml
from typer.testing import CliRunner

from workbench.cli import app

runner = CliRunner()


def test_sweep_then_tune_prints_a_codex_config(small_dataset, tmp_path):
    spec = tmp_path / "codex.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "codex-cli-test", "dataset": str(small_dataset), "base": "codex-local",
        "parameters": {"trigger.fraction": [0.5, 0.7, 0.9], "provider.context_window": 200_000},
        "seeds": [0]}))
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"])
    assert r.exit_code == 0, r.output
    assert "3 runs (3 configurations): 3 completed" in r.output
    assert (out / "runs.parquet").is_file()

    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--objective", "cost_usd",
                            "--constraint", "overflows==0", "--harness", "codex"])
    assert r.exit_code == 0, r.output
    assert "best: configuration" in r.output
    toml_text = r.output.split("## ~/.codex/config.toml (toml)\n", 1)[1].split("\n## ", 1)[0]
    cfg = tomllib.loads(toml_text)
    assert cfg["model_context_window"] == 200_000
    assert cfg["model_auto_compact_token_limit"] in {100_000, 140_000, 180_000}

    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--constraint", "overflows<0"])
    assert r.exit_code == 1 and "no configuration satisfies" in r.output
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--constraint", "leaks=0"])
    assert r.exit_code == 2 and "bad constraint" in r.output
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--constraint", "leaks==0"])
    assert r.exit_code == 2 and "evaluate: true" in r.output


def test_truncations_are_a_metric_tune_can_constrain(small_dataset, tmp_path):
    """Issue 15: an overflow's truncation is counted apart from compactions, in the sweep's
    tables too, and `--constraint 'truncations==0'` chooses by it."""
    import json

    spec = tmp_path / "masking.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "trunc-cli-test", "dataset": str(small_dataset), "base": "observation-masking",
        "parameters": {"provider.context_window": [20_000, 200_000]}, "seeds": [0]}))
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--constraint", "truncations==0",
                            "--format", "json"])
    assert r.exit_code == 0, r.output
    table, _ = json.JSONDecoder().raw_decode(r.output)  # the table, then the "best:" line
    rows = {row["provider.context_window"]: row for row in table}
    small, large = rows[20_000], rows[200_000]
    assert small["truncations"] > 0 and small["compactions"] == 0  # masking never compacts
    assert large["truncations"] == 0 and large["feasible"] and not small["feasible"]
    assert "best: configuration 1" in r.output and "provider.context_window=200000" in r.output
