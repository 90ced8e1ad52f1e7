"""A conformance audit says how much it checked, and one that checked no checkpoint fails
instead of passing on nothing (issue 20: tests and audits that cannot fail)."""

from __future__ import annotations

from typer.testing import CliRunner

from workbench.audits import conformance_audit
from workbench.cli import app
from workbench.engine.run import simulate
from workbench.synth.generate import GeneratorConfig, generate_dataset


def test_a_run_without_checkpoints_fails_and_says_why(tmp_path):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp_path / "d")
    quiet = simulate(ds, ["no-compaction"], engine="reference").write(tmp_path / "quiet")
    res = conformance_audit(quiet)
    assert res.details["invariants_passed"] is True  # nothing was wrong: nothing was there
    assert res.details["checked"]["checkpoints"] == 0 and res.passed is False
    r = CliRunner().invoke(app, ["audit", "conformance", "--run", str(quiet)])
    assert r.exit_code == 1 and "no checkpoint to check" in r.output and "FAIL" in r.output, r.output

    busy = simulate(ds, ["llm-summary"], engine="reference").write(tmp_path / "busy")
    res = conformance_audit(busy)
    events = res.details["checked"]
    assert res.passed is True and events["checkpoints"] == events["memory_compacted"] > 0
    r = CliRunner().invoke(app, ["audit", "conformance", "--run", str(busy)])
    assert r.exit_code == 0 and f"checked {events['checkpoints']:,} checkpoints" in r.output, r.output
