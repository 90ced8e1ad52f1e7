import orjson
from typer.testing import CliRunner

from workbench.cli import app

runner = CliRunner()

INSPECT_KEYS = {"schema_version", "name", "path", "source_format", "text", "continuities", "events",
                "requests", "tokens", "recorded_usage", "compactions", "summaries", "tool_events", "labels"}


def test_generate_then_inspect_json(tmp_path):
    out = tmp_path / "demo"
    r = runner.invoke(app, ["generate", "--profile", "coding", "--events", "5000", "--seed", "3", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "5,000 events" in r.output
    r = runner.invoke(app, ["inspect", str(out), "--json"])
    assert r.exit_code == 0, r.output
    info = orjson.loads(r.output)
    assert set(info) >= INSPECT_KEYS
    assert info["events"]["total"] == 5000
    assert set(info["tokens"]) == {"cl100k", "approx"}
    assert info["labels"]["secrets"]["total"] > 0 and info["labels"]["facts"]["total"] > 0
    assert info["recorded_usage"]["requests_with_usage"] == 0
    r = runner.invoke(app, ["inspect", str(out)])
    assert r.exit_code == 0 and "Planted labels" in r.output


def test_bad_input_exits_2_with_a_message(tmp_path):
    r = runner.invoke(app, ["inspect", str(tmp_path)])
    assert r.exit_code == 2 and "not a dataset" in r.output
    r = runner.invoke(app, ["generate", "--profile", "poetry", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "unknown profile" in r.output


def test_simulate_writes_a_run(tmp_path):
    ds = tmp_path / "ds"
    runner.invoke(app, ["generate", "--profile", "chat", "--events", "800", "--out", str(ds)])
    r = runner.invoke(app, ["simulate", "--dataset", str(ds), "--policy", "claude-code", "--policy",
                            "observation-masking", "--out", str(tmp_path / "run"), "--engine", "reference"])
    assert r.exit_code == 0, r.output
    for f in ("ledger.parquet", "events.parquet", "summary.parquet", "config.json"):
        assert (tmp_path / "run" / f).is_file()
    cfg = orjson.loads((tmp_path / "run" / "config.json").read_bytes())
    assert {"run_id", "seed", "git_revision", "versions", "policies"} <= set(cfg)


def test_policies_of_one_harness_with_its_release_lines():
    from typer.testing import CliRunner

    from workbench.cli import app

    res = CliRunner().invoke(app, ["policies", "--harness", "claude-code", "--format", "csv"])
    assert res.exit_code == 0, res.output
    names = [line.split(",", 1)[0] for line in res.output.strip().splitlines()[1:]]
    assert names == ["claude-code", "claude-code@2.0", "claude-code@2.1", "claude-code-microcompact"]
    res = CliRunner().invoke(app, ["policies", "--harness", "codex", "--format", "csv"])
    assert [line.split(",", 1)[0] for line in res.output.strip().splitlines()[1:]] == ["codex-local", "codex-remote"]
    res = CliRunner().invoke(app, ["policies", "--harness", "vim"])
    assert res.exit_code == 2 and "harnesses: " in res.output
