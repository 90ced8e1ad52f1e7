"""Progress of a live model's summaries (issue 33), and a stopped run that resumes from its
cassette. Against the local stub endpoint (tests/ab_stub.py), so these run everywhere;
tests/summarize/test_local_llm.py runs the same path against llama.cpp where the extra is
installed."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from ab_stub import SummarizingStub
from typer.testing import CliRunner

from workbench.summarize import progress as P

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "simulations" / "local-llm" / "small-spans.yaml"


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_every_interval_and_at_the_end():
    out, clock = io.StringIO(), _Clock()
    p = P.SummaryProgress(out, clock=clock, interval=30.0)
    p.expect(3)
    p.record(seconds=0.0, completion_tokens=0, live=False)  # replayed: nothing shown yet
    assert out.getvalue() == ""
    p.record(seconds=4.0, completion_tokens=20, live=True)
    clock.now = 10.0
    p.record(seconds=6.0, completion_tokens=30, live=True)  # the run's last: shown at once
    lines = out.getvalue().splitlines()
    assert lines == ["summaries 2/3 (1 asked live, 1 replayed), 5.0 tokens/s, 15.0 summaries/min, about 4 s left",
                     "summaries 3/3 (2 asked live, 1 replayed), 5.0 tokens/s, 12.0 summaries/min, about 0 s left"]
    # the next run counts afresh
    p.expect(5)
    assert (p.total, p.done, p.live) == (5, 0, 0)


def test_a_terminal_gets_a_bar_redrawn_in_place():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    p = P.SummaryProgress(out)
    p.expect(2)
    p.record(seconds=2.0, completion_tokens=10, live=True)
    p.record(seconds=2.0, completion_tokens=10, live=True)
    text = out.getvalue()
    assert "summaries" in text and "2/2" in text and "5.0 tokens/s" in text
    assert p._bar is None  # stopped when the run's summaries were done


def test_the_expected_count_is_every_summary_asked(tmp_path, monkeypatch):
    """Summaries, flushes, merges and a two-layer policy's local checkpoints: the count
    announced before the derivation is the number of summaries it then asks."""
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.evaluate.texts import materialize_texts
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    counted = P.SummaryProgress(stream=None)
    monkeypatch.setattr(P, "PROGRESS", counted)
    ds = generate_dataset(GeneratorConfig(profile="long-running", events=1200, seed=4), tmp_path / "d")
    small = {"provider.context_window": 24_000}
    policies = [get_policy("llm-summary", small), get_policy("openclaw-flush", {"provider.context_window": 40_000}),
                get_policy("holon-openai", {**small, "compaction.local_tokens": 4_000}),
                get_policy("letta", small)]
    result = simulate(ds, policies, engine="reference")
    texts = materialize_texts(result, ds)
    kinds = set(texts["kind"].to_list())
    assert {"summary", "memory"} <= kinds, kinds  # flushes were asked too
    assert counted.total == P.expected_summaries(result) > 0
    assert counted.done == counted.total
    assert counted.live == 0  # the modelled summarizer asks no endpoint: nothing shown


def _simulate_args(ds: Path, out: Path, base_url: str, cassette: Path) -> list[str]:
    return ["simulate", "--dataset", str(ds), "--policy", str(SPEC), "--out", str(out), "--evaluate",
            "--summarizer", "http", "--summarizer-base-url", base_url, "--summarizer-cassette", str(cassette)]


def _entries(cassette: Path) -> int:
    try:
        return sum(1 for line in cassette.read_text().splitlines() if line.strip())
    except FileNotFoundError:
        return 0


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    root = tmp_path_factory.mktemp("progress")
    return generate_dataset(GeneratorConfig(profile="coding", events=60, seed=3, facts=12, secrets=8), root / "ds").path


def test_a_live_run_shows_progress_and_a_replay_does_not(dataset, tmp_path):
    from workbench.cli import app

    cassette = tmp_path / "c.jsonl"
    with SummarizingStub() as stub:
        live = CliRunner().invoke(app, _simulate_args(dataset, tmp_path / "live", stub.base_url, cassette))
    assert live.exit_code == 0, live.output
    n = len(stub.requests)
    assert n >= 3
    assert f"summaries {n}/{n} ({n} asked live, 0 replayed)" in live.stderr
    again = CliRunner().invoke(app, _simulate_args(dataset, tmp_path / "again", "http://127.0.0.1:9/v1", cassette))
    assert again.exit_code == 0, again.output
    assert "summaries " not in again.stderr  # all replayed from the cassette: no endpoint, no progress


def test_a_stopped_run_resumes_from_its_cassette(dataset, tmp_path):
    """Ctrl-C part-way: the answers already recorded stay in the cassette; run again, only
    the rest are asked, and the texts are those of a run that was never stopped."""
    from workbench.cli import app

    cassette = tmp_path / "c.jsonl"

    with SummarizingStub() as stub:
        stub.delay = 1.0  # a model at a second a summary: time to stop it part-way
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
        proc = subprocess.Popen([sys.executable, "-m", "workbench.cli",
                                 *_simulate_args(dataset, tmp_path / "run", stub.base_url, cassette)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        deadline = time.monotonic() + 300
        while _entries(cassette) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    recorded = _entries(cassette)
    if proc.returncode == 0:
        pytest.fail(f"the run finished before it could be stopped ({recorded} answers recorded)")
    assert proc.returncode == 130, err
    # (the replay's tables were written before the evaluation was stopped: the same --out
    # takes the run again, it is one the workbench wrote)
    assert recorded >= 2
    with SummarizingStub() as stub:
        resumed = CliRunner().invoke(app, _simulate_args(dataset, tmp_path / "run", stub.base_url, cassette))
        asked = len(stub.requests)
    assert resumed.exit_code == 0, resumed.output
    total = _entries(cassette)
    assert asked == total - recorded > 0  # only the rest were asked
    assert f"summaries {total}/{total} ({asked} asked live, {recorded} replayed)" in resumed.stderr
    with SummarizingStub() as stub:
        args = _simulate_args(dataset, tmp_path / "whole", stub.base_url, tmp_path / "w.jsonl")
        whole = CliRunner().invoke(app, args)
    assert whole.exit_code == 0, whole.output
    assert (tmp_path / "w.jsonl").read_bytes() == cassette.read_bytes()
    cols = ["policy", "artifact_id", "text"]
    assert pl.read_parquet(tmp_path / "run" / "texts.parquet").select(cols).equals(
        pl.read_parquet(tmp_path / "whole" / "texts.parquet").select(cols))
    assert json.loads((tmp_path / "run" / "evaluation.json").read_text())["policies"] == \
        json.loads((tmp_path / "whole" / "evaluation.json").read_text())["policies"]


def test_a_server_on_this_machine_gets_minutes_to_answer():
    """In a fresh clone at load 12, the README's example failed: SmolLM2 wrote 0.2-0.5
    tokens/s, and the third summary timed out five times at the 60 s meant for a hosted API."""
    from workbench.summarize.http import LOOPBACK_TIMEOUT_S, HttpSummarizer

    assert LOOPBACK_TIMEOUT_S >= 600
    for url in ("http://127.0.0.1:8090/v1", "http://localhost:11434/v1", "http://[::1]:8080/v1"):
        assert HttpSummarizer(url, "m").timeout == LOOPBACK_TIMEOUT_S, url
    assert HttpSummarizer("https://api.openai.com/v1", "m").timeout == 60.0
    assert HttpSummarizer("http://127.0.0.1:8090/v1", "m", timeout=5).timeout == 5.0


def test_generate_plants_the_facts_and_secrets_asked_for(tmp_path):
    """The README's local-model example generates its dataset with --facts 12 --secrets 8:
    options `generate` did not have (the example failed in a fresh clone)."""
    from workbench.cli import app

    res = CliRunner().invoke(app, ["generate", "--profile", "coding", "--events", "60", "--seed", "3",
                                   "--facts", "12", "--secrets", "8", "--out", str(tmp_path / "ds")])
    assert res.exit_code == 0, res.output
    counts = json.loads((tmp_path / "ds" / "manifest.json").read_text())["counts"]
    assert (counts["facts"], counts["secrets"]) == (12, 8)
    assert "12 facts, 8 secrets" in res.output
