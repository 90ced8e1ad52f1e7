"""The workbench and its test session leave nothing behind (issue 26, finding 6): a report's
kernel sockets never land in the working directory, a killed report's are removed by the
next one, a Dask sweep's scratch space goes with its cluster, and the test session fails
when a test leaves a file outside its temporary directories."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from workbench.cli import app

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parents[1]
WB = [sys.executable, "-m", "workbench.cli"]
runner = CliRunner()


def _sockets(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_socket()]


@pytest.fixture
def short_tmp():
    """A temporary directory short enough for a socket's path (``tmp_path`` may not be)."""
    path = Path(tempfile.mkdtemp(prefix="t"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.slow
def test_a_report_killed_with_its_kernel_leaves_no_socket_behind(tmp_path, short_tmp):
    cwd, tmp = tmp_path / "cwd", short_tmp
    cwd.mkdir()
    assert runner.invoke(app, ["generate", "--events", "600", "--seed", "1", "--out", str(cwd / "d")]).exit_code == 0
    assert runner.invoke(app, ["simulate", "--dataset", str(cwd / "d"), "--policy", "claude-code",
                               "--out", str(cwd / "r")]).exit_code == 0
    env = {**os.environ, "TMPDIR": str(tmp)}
    report = [*WB, "report", "policy-comparison", "--run", "r", "--out", "rep"]
    p = subprocess.Popen(report, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 180
        while time.time() < deadline and p.poll() is None and not _sockets(cwd, tmp):
            time.sleep(0.1)
        assert _sockets(cwd, tmp), "the report's kernel never opened its sockets"
        family = psutil.Process(p.pid).children(recursive=True)
    finally:
        p.send_signal(signal.SIGKILL)  # and the kernel with it: nobody is left to clean up
        p.wait()
    for child in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()
    psutil.wait_procs(family, timeout=30)
    # the kernel's sockets were in a directory of the report's own, never in the working
    # directory, where the killed writer left at most its lock (workbench.rundir.lock) and its
    # staging directory (`.rep.PID.*.tmp`: a report is complete or absent), no sockets
    assert not _sockets(cwd)
    left = sorted(p.name for p in cwd.iterdir() if p.name not in ("d", "r", "rep", ".rep.lock"))
    assert all(re.fullmatch(r"\.rep\.\d+\.\w+\.tmp", name) for name in left), left
    # the next report removes what the killed one left, and leaves nothing itself
    r = subprocess.run(report, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(p.name for p in cwd.iterdir()) == ["d", "r", "rep"]
    assert sorted(p.name for p in tmp.iterdir()) == []


def test_kernel_channels_fit_a_socket_path_or_use_tcp(tmp_path, short_tmp, monkeypatch):
    from workbench.report.render import kernel_config

    for where, transport in ((short_tmp, "ipc"), (tmp_path / ("deep" * 30), "tcp")):
        where.mkdir(exist_ok=True)
        monkeypatch.setattr(tempfile, "tempdir", str(where))
        with kernel_config() as config:
            manager = config.KernelManager
            assert manager.transport == transport
            assert Path(manager.connection_file).parent.parent == where
            if transport == "ipc":
                assert len(os.fsencode(manager.ip + "-10")) < 104
        assert list(where.iterdir()) == []


def test_a_dask_sweep_takes_its_scratch_space_with_it(tmp_path, monkeypatch):
    from workbench.sweep.executors import DaskExecutor

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    with DaskExecutor(workers=1) as ex:
        assert sorted(ex.imap_unordered(abs, [-2, 1, -3])) == [1, 2, 3]
    assert sorted(p.name for p in tmp.iterdir()) == []


# ---- the session-end check of tests/conftest.py -----------------------------------------------------
def _inner_session(pytester, monkeypatch, body: str):
    """A test session in a repository of its own (``pytester.path``, with our conftest in its
    ``tests/``), its temporary directory inside it too."""
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text((TESTS / "conftest.py").read_text())
    (tests / "test_inner.py").write_text(body)
    (pytester.path / "system-tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(pytester.path / "system-tmp"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "tests")


def test_a_session_that_leaves_nothing_passes_and_removes_its_directory(pytester, monkeypatch):
    r = _inner_session(pytester, monkeypatch, """
import tempfile
from pathlib import Path

def test_writes_only_temporaries(tmp_path):
    (tmp_path / "fine.txt").write_text("x")
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "also-fine").write_text("y")
""")
    assert r.ret == 0, r.stdout.str()
    assert "left behind" not in r.stdout.str()
    assert list((pytester.path / "system-tmp").iterdir()) == []


def test_a_file_left_in_the_temporary_directory_fails_the_session(pytester, monkeypatch):
    r = _inner_session(pytester, monkeypatch, """
import os
import tempfile

def test_forgets_a_temporary():
    fd, _ = tempfile.mkstemp(prefix="forgotten-")
    os.close(fd)
""")
    assert r.ret == 1, r.stdout.str()
    r.stdout.fnmatch_lines(["*files left behind*", "*/tmp/forgotten-*"])


def test_a_file_left_in_the_repository_fails_the_session(pytester, monkeypatch):
    r = _inner_session(pytester, monkeypatch, """
from pathlib import Path

def test_writes_beside_the_sources():
    (Path(__file__).resolve().parents[1] / "kernel-ipc-1").write_text("")
""")
    assert r.ret == 1, r.stdout.str()
    r.stdout.fnmatch_lines(["*files left behind*", f"*{pytester.path / 'kernel-ipc-1'}"])
