"""The command line says what it did (issue 19): honest exit codes, no silent substitution,
full numbers when piped, short errors, the HTTP summarizer without a key on argv, and
workers that die with their parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import psutil
import pytest
from cli_runs import cli_dataset
from typer.testing import CliRunner

from workbench.cli import app

runner = CliRunner()
BUNDLED = Path(__file__).resolve().parents[1] / "datasets" / "bundled"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return cli_dataset(tmp_path_factory.mktemp("syn") / "d", 1500)


@pytest.fixture(scope="module")
def run_dir(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "r"
    r = runner.invoke(app, ["simulate", "--dataset", str(synthetic), "--policy", "claude-code",
                            "--policy", "observation-masking", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


# ---- no silent substitution ---------------------------------------------------------------------
def test_unknown_model_is_an_error_naming_close_ones(synthetic, tmp_path):
    r = runner.invoke(app, ["simulate", "--dataset", str(synthetic), "--policy", "claude-code",
                            "--model", "claude-sonet-4-5", "--out", str(tmp_path / "r")])
    assert r.exit_code == 2
    assert "unknown model 'claude-sonet-4-5'" in r.output and "claude-sonnet-4-5" in r.output
    assert "--model-price-as" in r.output and not (tmp_path / "r").exists()


def test_an_explicit_stand_in_is_recorded_and_said(synthetic, tmp_path):
    out = tmp_path / "r"
    r = runner.invoke(app, ["simulate", "--dataset", str(synthetic), "--policy", "claude-code",
                            "--model", "gpt-9-imaginary", "--model-price-as", "gpt-5", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "warning: gpt-9-imaginary is not in genai-prices; priced as gpt-5" in r.output
    cfg = orjson.loads((out / "config.json").read_bytes())
    assert cfg["model_price_as"] == "gpt-5"
    assert cfg["notes"][0]["note"].startswith("gpt-9-imaginary is not in genai-prices")
    from workbench.report.verdict import build_verdict

    html = build_verdict(out).to_html()
    assert "Note" in html and "priced as gpt-5" in html and "(in 1 of 1 replays (policy × continuity))" in html


def test_leakage_without_labels_is_not_measured(tmp_path):
    ds = tmp_path / "rec"
    r = runner.invoke(app, ["import", str(BUNDLED / "claude-code" / "short.jsonl"), "--out", str(ds)])
    assert r.exit_code == 0, r.output
    run = tmp_path / "run"
    assert runner.invoke(app, ["simulate", "--dataset", str(ds), "--policy", "claude-code",
                               "--out", str(run)]).exit_code == 0
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run), "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert "not measured (no labels):" in r.output and "redactor findings carried into derived text" in r.output
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run), "--format", "json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)[0]  # stdout is the document alone (messages: stderr)
    assert row["leaks"].startswith("not measured (no labels): ") and row["leaks"].endswith(
        " redactor findings carried into derived text")
    ev = orjson.loads((run / "evaluation.json").read_bytes())
    assert ev["leaks_measured"] is False and ev["policies"]["claude-code"]["leaks"] is None
    from workbench.report.verdict import build_verdict

    assert build_verdict(run).leaks["text"].startswith("not measured (no labels):")


# ---- exit codes and messages ---------------------------------------------------------------------
def test_report_with_an_unknown_continuity_names_the_valid_ones(run_dir, tmp_path):
    r = runner.invoke(app, ["report", "policy-comparison", "--run", str(run_dir), "--out", str(tmp_path / "rep"),
                            "--continuity", "nope"])
    assert r.exit_code == 2 and "StopIteration" not in r.output
    assert "'nope' is not a continuity" in r.output and "synthetic-coding-s2" in r.output


def test_long_errors_are_cut_and_debug_shows_them(tmp_path):
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "x.json").write_text('{"a": 1}')
    r = runner.invoke(app, ["import", str(junk), "--out", str(tmp_path / "d")])
    line = [ln for ln in r.output.splitlines() if ln.startswith("error:")][0]
    assert r.exit_code == 2 and len(line) < 500 and line.endswith("(the whole message: --debug)")
    r = runner.invoke(app, ["--debug", "import", str(junk), "--out", str(tmp_path / "d")])
    assert r.exit_code == 2 and "(the whole message: --debug)" not in r.output
    assert "Traceback" in r.output


def test_an_unforeseen_error_is_one_line_and_exit_1(monkeypatch, tmp_path):
    import workbench.continuity.inspect as insp

    def boom(path):
        raise KeyError("no_such_key")

    monkeypatch.setattr(insp, "inspect_dataset", boom)
    r = runner.invoke(app, ["inspect", str(tmp_path)])
    assert r.exit_code == 1 and "internal error KeyError" in r.output and "Traceback" not in r.output


# ---- tables keep every number when piped -----------------------------------------------------------
def test_piped_tables_are_not_cut(run_dir, synthetic, tmp_path):
    out = tmp_path / "wide"
    r = subprocess.run([sys.executable, "-m", "workbench.cli", "simulate", "--dataset", str(synthetic),
                        "--policy", "claude-code", "--policy", "anthropic-clear-tool-uses", "--out", str(out)],
                       capture_output=True, text=True, env={**os.environ, "COLUMNS": "60"})
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout and "anthropic-clear-tool-uses" in r.stdout and "compactions" in r.stdout
    assert "truncations" in r.stdout  # counted apart from compactions (issue 15)


def test_piped_inspect_is_not_cut(synthetic):
    # `inspect` printed its own rich tables at 80 columns: `synthetic-…`, `claude-son…` when piped
    r = subprocess.run([sys.executable, "-m", "workbench.cli", "inspect", str(synthetic)],
                       capture_output=True, text=True, env={**os.environ, "COLUMNS": "60"})
    assert r.returncode == 0, r.stderr
    info = json.loads(subprocess.run([sys.executable, "-m", "workbench.cli", "inspect", str(synthetic), "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    assert "…" not in r.stdout
    for c in info["continuities"]:
        assert c["continuity_id"] in r.stdout and c["model"] in r.stdout
    pairs = [f"{k} {v}" for k, v in info["labels"]["secrets"]["by_kind"].items()]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("│ secrets"))
    assert len(pairs) > 3 and all(p in line for p in pairs)  # one line, not folded


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown"])
def test_policies_in_every_format(fmt):
    r = runner.invoke(app, ["policies", "--format", fmt])
    assert r.exit_code == 0, r.output
    if fmt == "json":
        rows = json.loads(r.output)
        assert {row["preset"] for row in rows} >= {"claude-code", "rip-adr0011"}
    elif fmt == "csv":
        assert r.output.splitlines()[0] == "preset,harness,trigger,strategy,flush,masking,at_overflow,description,source"
    else:
        assert r.output.startswith("| preset | harness | trigger |")


def test_each_preset_says_what_happens_at_overflow():
    """Issue 15: the overflow's last resort is a truncation, not a compaction; `policies`
    says what each preset does at overflow, and a preset that can only truncate says so
    in its description."""
    from workbench.engine.presets import PRESETS, VERSIONS, get_policy

    r = runner.invoke(app, ["policies", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = {row["preset"]: row for row in json.loads(r.output)}
    lines = {v.name for versions in VERSIONS.values() for v in versions.values()}
    assert set(rows) == set(PRESETS) | lines  # every preset and the release lines under theirs
    for name, row in rows.items():
        p = get_policy(name)
        forced = p.compaction.kind in ("summary", "opaque") and p.emergency == "compact"
        assert row["at_overflow"].startswith("forced compaction") == forced, name
        assert "truncat" in row["at_overflow"] and "not a compaction" in row["at_overflow"], name
        if not forced:
            assert "on overflow the oldest events are truncated" in row["description"], name


# ---- the HTTP summarizer from the command line -------------------------------------------------------
class _Stub:
    def __init__(self):
        self.auth: list[str | None] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                self.rfile.read(n)
                stub.auth.append(self.headers.get("Authorization"))
                body = json.dumps({"id": "c1", "object": "chat.completion", "model": "stub",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": "A summary."}}],
                                   "usage": {"prompt_tokens": 10, "completion_tokens": 3}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_http_summarizer_from_the_cli_reads_its_key_from_the_environment(run_dir, tmp_path, monkeypatch):
    key = "sk-cli-test-0123456789abcdefghijklmnop"
    stub = _Stub()
    try:
        r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--summarizer", "http"])
        assert r.exit_code == 2 and "--summarizer-base-url" in r.output
        r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--summarizer", "http",
                                "--summarizer-base-url", stub.url, "--summarizer-key-env", "WB_TEST_KEY"])
        assert r.exit_code == 2 and "WB_TEST_KEY is not set" in r.output
        monkeypatch.setenv("WB_TEST_KEY", key)
        cassette = tmp_path / "cassette.jsonl"
        r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--summarizer", "http",
                                "--summarizer-base-url", stub.url, "--summarizer-key-env", "WB_TEST_KEY",
                                "--summarizer-model", "stub-model", "--summarizer-cassette", str(cassette)])
        assert r.exit_code == 0, r.output
        assert stub.auth and all(a == f"Bearer {key}" for a in stub.auth)
        ev = orjson.loads((run_dir / "evaluation.json").read_bytes())
        assert ev["summarizer"] == "http" and ev["summarizer_settings"]["model"] == "stub-model"
        for path in [*(p for p in run_dir.rglob("*") if p.is_file()), cassette]:
            assert key.encode() not in path.read_bytes(), path
        # offline replay from the cassette: the server is gone, the answers are not
        stub.server.shutdown()
        stub.server.server_close()
        n = len(stub.auth)
        r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--summarizer", "http",
                                "--summarizer-base-url", stub.url, "--summarizer-model", "stub-model",
                                "--summarizer-cassette", str(cassette)])
        assert r.exit_code == 0, r.output
        assert len(stub.auth) == n
    finally:
        stub.server.server_close()


# ---- worker processes die with their parent ----------------------------------------------------------
_POOL = """
import sys, time
from workbench.sweep.executors import ProcessExecutor
ex = ProcessExecutor(2)
pool = ex._ensure()
futs = [pool.submit(time.sleep, 60) for _ in range(2)]
time.sleep(1.5)
print(" ".join(str(p) for p in pool._processes), flush=True)
time.sleep(120)
"""


def test_sigkill_of_the_parent_leaves_no_worker():
    p = subprocess.Popen([sys.executable, "-c", _POOL], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(x) for x in p.stdout.readline().split()]
        assert len(pids) == 2 and all(psutil.pid_exists(x) for x in pids)
        p.send_signal(signal.SIGKILL)
        p.wait(10)
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(x) for x in pids):
            time.sleep(0.1)
        assert not any(_alive(x) for x in pids)
    finally:
        p.kill()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# ---- bad values name themselves and what is allowed ----------------------------------------------------
@pytest.mark.parametrize("args, says", [
    (["simulate", "--policy", "claude-code", "--engine", "foo"], ["'foo'", "kernel"]),
    (["simulate", "--policy", "nope-preset"], ["'nope-preset'", "claude-code"]),
    (["simulate", "--policy", "claude-code", "--evaluate", "--summarizer", "foo"], ["'foo'", "modelled"]),
    (["simulate", "--policy", "claude-code", "--evaluate", "--summarizer", "http",
      "--summarizer-base-url", "http://127.0.0.1:9/v1", "--summarizer-mode", "foo"], ["'foo'", "chat"]),
    (["simulate", "--policy", "claude-code", "--summarizer-base-url", "http://x"], ["--summarizer-base-url",
                                                                                    "--summarizer http"]),
    (["simulate", "--policy", "claude-code", "--summarizer-timeout", "600"], ["--summarizer-timeout",
                                                                              "--summarizer http"]),
])
def test_bad_simulate_options_fail_before_any_work(args, says, synthetic, tmp_path):
    out = tmp_path / "r"
    r = runner.invoke(app, [*args, "--dataset", str(synthetic), "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert all(s in r.output for s in says), r.output
    assert not out.exists()


def test_reports_check_their_inputs_before_starting_a_kernel(run_dir, tmp_path):
    for kind, says in (("threshold-sweep", "not a sweep directory"), ("fidelity", "audit fidelity"),
                       ("determinism-audit", "audit determinism")):
        r = runner.invoke(app, ["report", kind, "--run", str(run_dir), "--out", str(tmp_path / kind)])
        assert r.exit_code == 2 and says in r.output and "failed in cell" not in r.output, r.output


def test_audits_name_what_they_read(synthetic, run_dir, tmp_path):
    r = runner.invoke(app, ["audit", "conformance", "--run", str(synthetic)])
    assert r.exit_code == 2 and "is a dataset directory, not a run" in r.output
    r = runner.invoke(app, ["audit", "fidelity", "--dataset", str(synthetic), "--out", str(tmp_path / "f")])
    assert r.exit_code == 2 and "nothing to compare" in r.output
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--summarizer", "recorded"])
    assert r.exit_code == 2 and "no recorded summary for artifact" in r.output


def test_the_http_summarizers_timeout_reaches_its_backend():
    """A small local model on a busy CPU answers in minutes: ``--summarizer-timeout`` is the
    HTTP backend's wait for one answer (unless given: 900 s for a server on this machine, a
    loopback address, and 60 s for any other)."""
    from workbench.cli.summarizer import summarizer_options
    from workbench.summarize import get_summarizer

    given = summarizer_options("http", base_url="http://127.0.0.1:9/v1", timeout=600)
    assert get_summarizer("http", **given["summarizer_options"]).timeout == 600.0
    local = summarizer_options("http", base_url="http://127.0.0.1:9/v1")
    assert get_summarizer("http", **local["summarizer_options"]).timeout == 900.0
    hosted = summarizer_options("http", base_url="https://api.example.com/v1")
    assert get_summarizer("http", **hosted["summarizer_options"]).timeout == 60.0
