"""Datasets and runs made through the CLI, as a user makes them: the CLI tests' fixtures.

The seed stays 2 everywhere (the figures those tests read were measured on it); the size is
each test's own choice.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from workbench.cli import app


def cli_dataset(path: Path, events: int) -> Path:
    """``workbench generate --events N --seed 2 --out PATH``, which must succeed."""
    r = CliRunner().invoke(app, ["generate", "--events", str(events), "--seed", "2", "--out", str(path)])
    assert r.exit_code == 0, r.output
    return path


def cli_run(base: Path, events: int) -> Path:
    """A generated dataset (``base/d``) replayed by claude-code on the reference engine
    (``base/r``, returned)."""
    cli_dataset(base / "d", events)
    r = CliRunner().invoke(app, ["simulate", "--dataset", str(base / "d"), "--policy", "claude-code",
                                 "--engine", "reference", "--out", str(base / "r")])
    assert r.exit_code == 0, r.output
    return base / "r"
