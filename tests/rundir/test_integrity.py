"""Datasets and runs verify themselves; one writer per path; a killed command leaves either
the previous complete state or a directory marked incomplete (issue 15)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.rundir import Kind, read_marker
from workbench.rundir.lock import exclusive

runner = CliRunner()
WB = [sys.executable, "-m", "workbench.cli"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("ds") / "d"
    assert runner.invoke(app, ["generate", "--events", "1500", "--seed", "3", "--out", str(path)]).exit_code == 0
    return path


@pytest.fixture
def run(dataset, tmp_path):
    out = tmp_path / "run"
    r = runner.invoke(app, ["simulate", "--dataset", str(dataset), "--policy", "claude-code", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def _copy(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_a_truncated_events_file_is_named_with_a_remedy(dataset, tmp_path):
    broken = _copy(dataset, tmp_path / "broken")
    ev = broken / "events.parquet"
    ev.write_bytes(ev.read_bytes()[: ev.stat().st_size // 2])
    r = runner.invoke(app, ["simulate", "--dataset", str(broken), "--policy", "claude-code",
                            "--out", str(tmp_path / "r")])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"{ev} is damaged or incomplete" in r.output and "re-run `workbench generate`" in r.output
    # the same size but other bytes: the sizes pass, the Parquet reader's error is named
    ev.write_bytes(b"\0" * (dataset / "events.parquet").stat().st_size)
    r = runner.invoke(app, ["simulate", "--dataset", str(broken), "--policy", "claude-code",
                            "--out", str(tmp_path / "r")])
    assert r.exit_code == 2 and "is damaged or incomplete" in r.output and "events.parquet" in r.output


def test_inspect_verify_checks_every_hash(dataset, tmp_path):
    copy = _copy(dataset, tmp_path / "copy")
    r = runner.invoke(app, ["inspect", str(copy), "--verify"])
    assert r.exit_code == 0 and "every file matches" in r.output
    facts = copy / "facts.parquet"
    data = bytearray(facts.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one bit flipped
    facts.write_bytes(bytes(data))
    r = runner.invoke(app, ["inspect", str(copy), "--verify"])
    assert r.exit_code == 1 and "facts.parquet: sha256 differs" in r.output


def test_a_damaged_run_file_is_named(run, tmp_path):
    led = run / "ledger.parquet"
    led.write_bytes(led.read_bytes()[:100])
    r = runner.invoke(app, ["report", "policy-comparison", "--run", str(run), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 2 and "ledger.parquet is damaged or incomplete" in r.output


def test_two_writers_to_one_path_are_refused(dataset, tmp_path):
    out = tmp_path / "d2"
    code = ("import sys, time; from workbench.rundir.lock import exclusive\n"
            f"with exclusive({str(out)!r}):\n    print('locked', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        r = runner.invoke(app, ["generate", "--events", "300", "--out", str(out)])
        assert r.exit_code == 2 and f"pid {holder.pid}" in r.output and "is writing it" in r.output
        assert not out.exists()
        r = runner.invoke(app, ["simulate", "--dataset", str(dataset), "--policy", "claude-code", "--out", str(out)])
        assert r.exit_code == 2 and "is writing it" in r.output
    finally:
        holder.kill()
        holder.wait()
    # the holder was killed: its lock went with it
    assert runner.invoke(app, ["generate", "--events", "300", "--out", str(out)]).exit_code == 0
    assert not (tmp_path / ".d2.lock").exists()
    with exclusive(out), exclusive(out):  # re-entrant within a process
        pass


def test_an_interrupted_audit_marks_the_run_incomplete(run, tmp_path):
    from workbench.rundir.markers import update_marker

    update_marker(run, read_marker(run), writing="audit redaction")  # as a killed audit leaves it
    for args in (["report", "policy-comparison", "--run", str(run), "--out", str(tmp_path / "rep")],
                 ["audit", "conformance", "--run", str(run)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, r.output
        assert "is incomplete: `workbench audit redaction` stopped before it finished" in r.output
    # the remedy the message names: the stopped command, run again, reads its own run and
    # completes it (it refused to before, leaving only a new `simulate` to the user)
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run)])
    assert r.exit_code == 0, r.output
    assert read_marker(run).complete and (run / "evaluation.json").is_file()
    assert runner.invoke(app, ["audit", "conformance", "--run", str(run)]).exit_code in (0, 1)


def test_wb_evaluate_also_finishes_an_interrupted_redaction_audit(run):
    import workbench as wb
    from workbench.rundir.markers import update_marker
    from workbench.rundir.output import IncompleteError

    update_marker(run, read_marker(run), writing="audit redaction")
    wb.evaluate(run).write(run)
    assert read_marker(run).complete
    update_marker(run, read_marker(run), writing="audit conformance")
    with pytest.raises(IncompleteError, match="audit conformance"):
        wb.evaluate(run)


def test_another_command_still_refuses_and_a_running_writer_is_waited_for(run):
    from workbench.rundir.markers import update_marker
    from workbench.rundir.output import check_complete, rerunning

    update_marker(run, read_marker(run), writing="audit conformance")
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run)])
    assert r.exit_code == 2 and "`workbench audit conformance` stopped before it finished" in r.output
    with rerunning("audit conformance"):
        check_complete(run, read_marker(run))  # the stopped command itself may read it
    # ... but not while another process is writing it
    code = ("from pathlib import Path\nfrom workbench.rundir.markers import read_marker\n"
            "from workbench.rundir.output import check_complete, rerunning\n"
            f"run = Path({str(run)!r})\n"
            "with rerunning('audit conformance'):\n    check_complete(run, read_marker(run))\n")
    with exclusive(run):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "is writing it right now" in out.stderr
    assert runner.invoke(app, ["audit", "conformance", "--run", str(run)]).exit_code in (0, 1)
    assert read_marker(run).complete


def test_tune_refuses_an_interrupted_sweep(dataset, tmp_path):
    import yaml

    from workbench.rundir.markers import update_marker

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({"name": "s", "dataset": str(dataset), "base": "claude-code",
                                    "parameters": {"trigger.reserve_tokens": [20_000, 40_000]}}))
    out = tmp_path / "sw"
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"]).exit_code == 0
    update_marker(out, read_marker(out), writing="sweep")
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run"])
    assert r.exit_code == 2 and "is incomplete: `workbench sweep` stopped" in r.output
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"]).exit_code == 0
    assert runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run"]).exit_code == 0


# ---- SIGKILL at several points ----------------------------------------------------------------------
def _kill_after(args, delay: float, env=None) -> int:
    p = subprocess.Popen([*WB, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        p.wait(delay)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.wait()
    return p.returncode


def _state(path) -> str:
    """'absent', 'complete' (loads whole) or 'incomplete' (marked so); anything else fails."""
    if not path.exists():
        return "absent"
    marker = read_marker(path)
    assert marker is not None, f"{path} exists without a marker after a kill"
    if not marker.complete:
        return "incomplete"
    if marker.kind == Kind.DATASET:
        from workbench.continuity.dataset import load_dataset

        assert load_dataset(path).verify() == []
    elif marker.kind == Kind.RUN:
        from workbench.rundir.read import load_table

        for name in ("ledger", "events", "summary"):
            load_table(path, name, required=True)
    return "complete"


@pytest.mark.slow
def test_sigkill_leaves_the_previous_state_or_a_marked_incomplete_one(dataset, tmp_path):
    # what a killed command cannot remove (a report's kernel directory) stays in tmp_path
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp_path / "tmp")}
    seen: dict[str, set[str]] = {}
    run = tmp_path / "run"
    out_ds = tmp_path / "imported"
    logs = Path(__file__).resolve().parents[2] / "datasets" / "bundled" / "claude-code"
    sim = ["simulate", "--dataset", str(dataset), "--policy", "claude-code", "--policy", "observation-masking",
           "--out", str(run)]
    # a complete run first, so the audit and report kills have something to work on however
    # slow the machine is (a kill of the simulate below then leaves this one, or a new one)
    assert subprocess.run([*WB, *sim], capture_output=True).returncode == 0
    for delay in (0.8, 1.6, 2.4, 3.5):
        for what, args, target in (
            ("simulate", sim, run),
            ("import", ["import", str(logs), "--out", str(out_ds)], out_ds),
            ("audit", ["audit", "redaction", "--run", str(run)], run),
            ("report", ["report", "policy-comparison", "--run", str(run), "--out", str(tmp_path / "rep")],
             tmp_path / "rep"),
        ):
            _kill_after(args, delay, env)
            state = _state(target)
            seen.setdefault(what, set()).add(state)
            if state == "incomplete":
                # the remedy the message names works
                assert subprocess.run([*WB, *args], capture_output=True).returncode == 0
                assert _state(target) == "complete"
    print("states after a kill:", seen)
    assert seen["simulate"] == {"complete"}, seen  # the previous run, or the new one: never half
    assert seen["import"] <= {"absent", "complete"}, seen
    assert seen.get("audit", set()) <= {"complete", "incomplete"}, seen
    # a report is made beside its directory and added to it whole: a kill leaves none, or one
    # marked incomplete only when it falls while the finished files are being added
    assert seen.get("report", set()) <= {"absent", "complete", "incomplete"}, seen
    marker = orjson.loads((run / ".workbench.json").read_bytes())
    assert marker["kind"] == "run" and marker["writing"] is None
