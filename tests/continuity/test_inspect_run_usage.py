"""``workbench inspect`` shows the run-level usage a log records (SWE-agent's
``info.model_stats``, aider's costs, ...) next to its per-request usage."""

from __future__ import annotations

import orjson
from typer.testing import CliRunner

from workbench.cli import app

runner = CliRunner()


def test_swe_agent_model_stats_appear_in_inspect(tmp_path, recorded_dir):
    ds = tmp_path / "ds"
    r = runner.invoke(app, ["import", str(recorded_dir / "swe-agent"), "--out", str(ds)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["inspect", str(ds), "--json"])
    info = orjson.loads(r.output)
    # the three bundled trajectories have no per-request usage ...
    assert info["recorded_usage"]["requests_with_usage"] == 0
    # ... and pydicom's info.model_stats (SOURCES.md: 122,612 sent, 1,369 received, 12 calls,
    # $1.26719); the two demonstrations' stats are zeroed, so they have none
    assert info["run_usage"] == {
        "continuities": 1, "tokens_sent": 122_612, "tokens_received": 1_369, "api_calls": 12,
        "cost_usd": 1.26719, "by_continuity": [{
            "continuity_id": "pydicom__pydicom-1458", "source": "info.model_stats", "tokens_sent": 122_612,
            "tokens_received": 1_369, "api_calls": 12, "cost_usd": 1.26719}]}
    text = " ".join(runner.invoke(app, ["inspect", str(ds)]).output.split())  # rich wraps lines
    assert "run-level usage of 1 continuities: tokens sent 122,612, received 1,369, calls 12, cost $1.2672" in text


def test_aider_sessions_sum_up(tmp_path, recorded_dir):
    ds = tmp_path / "ds"
    runner.invoke(app, ["import", str(recorded_dir / "aider/chat-history-2024-08-05.md"), "--out", str(ds)])
    ru = orjson.loads(runner.invoke(app, ["inspect", str(ds), "--json"]).output)["run_usage"]
    # 3 of the 12 sessions print '> Tokens:' lines: 1 + 1 + 8 lines, $0.02 + $0.0019 + $0.40
    assert (ru["continuities"], ru["api_calls"], ru["tokens_sent"], ru["tokens_received"]) == (3, 10, 128_288, 5_120)
    assert ru["cost_usd"] == 0.4219


def test_a_generated_dataset_has_no_run_level_usage(tmp_path):
    ds = tmp_path / "ds"
    runner.invoke(app, ["generate", "--profile", "chat", "--events", "300", "--out", str(ds)])
    ru = orjson.loads(runner.invoke(app, ["inspect", str(ds), "--json"]).output)["run_usage"]
    assert ru == {"continuities": 0, "tokens_sent": None, "tokens_received": None, "api_calls": None,
                  "cost_usd": None, "by_continuity": []}
