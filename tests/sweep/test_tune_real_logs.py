"""`workbench tune` on an imported dataset: retention and task-state retention are measured
on the log's own facts (issue 27), so they can constrain the choice."""

from __future__ import annotations

from bundled_logs import BUNDLED_LOGS
from typer.testing import CliRunner

from workbench.cli import app


def test_tune_on_an_imported_log_constrains_retention_and_task_state(tmp_path):
    from workbench.sources.importer import import_paths

    import_paths([BUNDLED_LOGS / "claude-code" / "session-624a4a58.jsonl"], tmp_path / "real")
    spec = tmp_path / "real.yaml"
    spec.write_text("""
name: real-threshold
description: the Claude Code reserve on a real log
dataset:
  path: real
base: claude-code
parameters:
  trigger.reserve_tokens: [33000, 100000]
mode: product
seeds: [0]
evaluate: {summarizer: calibrated}
engine: kernel
tokenizer: cl100k
""")
    r = CliRunner().invoke(app, ["tune", str(spec), "--root", str(tmp_path), "--executor", "serial",
                                 "--constraint", "overflows==0", "--constraint", "task_retention>=0.5",
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    import json

    rows = json.loads(r.output[r.output.index("["): r.output.rindex("]") + 1])
    assert len(rows) == 2
    for row in rows:
        assert 0.0 < row["retention"] <= 1.0 and 0.0 < row["task_retention"] <= 1.0
    # an impossible task-state constraint is reported as such, not assumed met
    r = CliRunner().invoke(app, ["tune", str(spec), "--root", str(tmp_path), "--no-run",
                                 "--constraint", "task_retention>=1.01"])
    assert r.exit_code == 1 and "no configuration satisfies every constraint" in r.output
