"""Every harness preset and release line cites its source in a field of its own, and
`workbench policies --format json` prints it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from workbench.cli import app
from workbench.engine.presets import PRESETS, VERSIONS, source_of


def test_every_preset_and_release_line_has_a_source():
    listed = [*PRESETS.values(), *(v for lines in VERSIONS.values() for v in lines.values())]
    missing = [p.name for p in listed if not source_of(p).strip()]
    assert missing == []
    # a release line cites its own change where it has one
    assert "#12306" in source_of(VERSIONS["gemini-cli"]["0.11.3"])
    assert "openai_models.rs" in source_of(PRESETS["codex-local"])


def test_policies_json_prints_the_source():
    r = CliRunner().invoke(app, ["policies", "--format", "json", "--harness", "gemini-cli"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert {row["preset"] for row in rows} >= {"gemini-cli", "gemini-cli@0.17"}
    assert all(row["source"] for row in rows)
    assert next(r for r in rows if r["preset"] == "gemini-cli@0.17")["source"].startswith("google-gemini/gemini-cli#13079")
