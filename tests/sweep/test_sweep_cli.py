"""`workbench sweep` and `workbench tune` end to end (serial executor, small dataset)."""

from __future__ import annotations

import tomllib

import pytest
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


@pytest.mark.slow
def test_sigkill_of_a_cli_sweep_leaves_no_process_behind(small_dataset, tmp_path):
    """`kill -9` of the `workbench sweep` process alone (not its group): every process it
    started (pool workers, the resource tracker) is gone soon after; none is left running."""
    import contextlib
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil
    import yaml

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "k", "dataset": str(small_dataset), "base": "claude-code", "evaluate": True,
        "parameters": {"trigger.reserve_tokens": [13_000, 23_000, 33_000, 43_000, 53_000, 60_000]},
        "seeds": [0, 1, 2]}))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "sweep", str(spec), "--out", str(out),
                             "--executor", "process", "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    parent = psutil.Process(proc.pid)
    try:
        children: list[psutil.Process] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            children = parent.children(recursive=True)
            if len([c for c in children if "spawn_main" in " ".join(_cmdline(c))]) >= 2:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the sweep ended before its workers were seen"
        children = parent.children(recursive=True)
        assert len(children) >= 2
        proc.send_signal(signal.SIGKILL)  # the parent only: its workers get no signal from us
        proc.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_running(c) for c in children):
            time.sleep(0.1)
        left = [(c.pid, _cmdline(c)) for c in children if _running(c)]
        assert not left, f"still running after the sweep was killed: {left}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the group, if the test failed
        proc.wait(10)


def _cmdline(p) -> list[str]:
    import psutil

    try:
        return p.cmdline()
    except psutil.Error:
        return []


def _running(p) -> bool:
    import psutil

    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


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
    table = json.loads(r.stdout)  # the table alone (the "best:" line: stderr)
    rows = {row["provider.context_window"]: row for row in table}
    small, large = rows[20_000], rows[200_000]
    assert small["truncations"] > 0 and small["compactions"] == 0  # masking never compacts
    assert large["truncations"] == 0 and large["feasible"] and not small["feasible"]
    assert "best: configuration 1" in r.output and "provider.context_window=200000" in r.output
