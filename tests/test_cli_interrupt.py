"""Ctrl-C (issue 26, finding 7): one line on stderr, exit code 130, no partial output
directory, no traceback — including while papermill runs a kernel for `workbench report`.

A terminal's Ctrl-C signals the whole foreground process group: the tests start the command
in a session of its own and send SIGINT to that group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from cli_runs import cli_run

PROJECT = Path(__file__).resolve().parent.parent
NOISE = ("Traceback", "ZMQError", "Task exception was never retrieved", "DeadKernelError", "KeyboardInterrupt")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("ctrl-c"), 1000)


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(PROJECT), os.environ.get("PYTHONPATH"))))}
    return subprocess.Popen([sys.executable, "-m", "workbench.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def ctrl_c(proc: subprocess.Popen) -> tuple[str, str]:
    """SIGINT to the command's process group, as a terminal sends it; its output."""
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return out, err


def assert_one_line(proc, err: str) -> None:
    assert proc.returncode == 130, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: interrupted"), err
    assert not [n for n in NOISE if n in err], err


def _kernel_among(procs) -> bool:
    for p in procs:
        try:
            if any("ipykernel" in part for part in p.cmdline()):
                return True
        except psutil.Error:
            continue
    return False


def report_with_a_running_kernel(run_dir, tmp_path, out):
    """`workbench report` started and polled until papermill's kernel runs; its processes
    then (the command, papermill's child, the kernel)."""
    proc = start(["report", "policy-comparison", "--run", str(run_dir), "--out", str(out)], tmp_path)
    deadline = time.monotonic() + 300
    family: list[psutil.Process] = []
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        if _kernel_among(family):
            time.sleep(1.0)  # let it take the first cells
            return proc, [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        time.sleep(0.1)
    pytest.fail("the report never started its kernel")


def test_ctrl_c_while_the_report_kernel_runs(run_dir, tmp_path):
    out = tmp_path / "report"
    proc, family = report_with_a_running_kernel(run_dir, tmp_path, out)
    _, err = ctrl_c(proc)
    assert_one_line(proc, err)
    assert not out.exists(), "a partial report directory was left"
    assert not list(tmp_path.glob(f".{out.name}.*")), "the staging directory was left"
    gone, alive = psutil.wait_procs(family, timeout=20)
    assert not alive, f"left running: {[p.pid for p in alive]}"


def test_kill_9_of_a_report_leaves_no_process(run_dir, tmp_path):
    """papermill runs in a session of its own (so Ctrl-C reaches only the command): a
    `kill -9` of the command must still take it and its kernel along."""
    proc, family = report_with_a_running_kernel(run_dir, tmp_path, tmp_path / "report")
    assert len(family) >= 3, family  # the command, papermill's child, the kernel
    proc.kill()
    proc.communicate(timeout=60)
    gone, alive = psutil.wait_procs(family, timeout=8)  # long before the notebook could finish
    assert not alive, f"left running: {[(p.pid, p.name()) for p in alive]}"
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize("delay", [0.6, 2.0])
def test_ctrl_c_while_starting(run_dir, tmp_path, delay):
    """Early (imports, parsing) or late, the same one line."""
    proc = start(["report", "policy-comparison", "--run", str(run_dir), "--out", str(tmp_path / "x")], tmp_path)
    time.sleep(delay)
    _, err = ctrl_c(proc)
    assert_one_line(proc, err)
    assert not (tmp_path / "x").exists()


def test_a_staged_report_is_whole(run_dir, tmp_path):
    """The staging directory changes nothing of a finished report: HTML, notebook, PNGs and
    the constraints in the marker's files, nothing left beside it."""
    from workbench.report.render import render_report
    from workbench.rundir import read_marker
    from workbench.selection import Constraints

    res = render_report("policy-comparison", run_dir, tmp_path / "ok", constraints=Constraints(min_retention=0.5))
    marker = read_marker(tmp_path / "ok")
    assert marker.complete and res.html.is_file() and res.notebook.is_file() and res.figures
    assert {p.name for p in res.figures} | {res.html.name, res.notebook.name,
                                            "policy-comparison.constraints.json"} == set(marker.files)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # the executed notebook names the constraints file where it is kept, not the staging copy
    assert str((tmp_path / "ok" / "policy-comparison.constraints.json").resolve()) in res.notebook.read_text()
