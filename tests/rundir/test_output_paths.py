"""The one rule for output paths (issue 19): nothing the workbench did not write is ever
replaced or deleted; a file is never replaced by a directory; replacing is atomic."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import orjson
import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.errors import WorkbenchError
from workbench.rundir import MARKER, Kind, OutputError, check_output, read_marker, replace_dir
from workbench.rundir.temp import clean, judge, make_temp_dir, remove_stale

runner = CliRunner()


def _gen(out, *extra):
    return runner.invoke(app, ["generate", "--events", "300", "--seed", "1", "--out", str(out), *extra])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("ds") / "d"
    r = _gen(path)
    assert r.exit_code == 0, r.output
    return path


def test_generate_refuses_a_directory_holding_user_files(tmp_path):
    # the finding: `generate --out datasets` replaced datasets/ (bundled logs, README, notes)
    datasets = tmp_path / "datasets"
    (datasets / "bundled").mkdir(parents=True)
    (datasets / "bundled" / "log.jsonl").write_text("{}\n")
    (datasets / "README.md").write_text("# mine\n")
    (datasets / "NOTES.txt").write_text("keep\n")
    r = _gen(datasets)
    assert r.exit_code == 2
    assert "NOTES.txt" in r.output and "did not write" in r.output
    assert (datasets / "NOTES.txt").read_text() == "keep\n"
    assert (datasets / "bundled" / "log.jsonl").is_file() and (datasets / "README.md").is_file()
    assert sorted(p.name for p in datasets.iterdir()) == ["NOTES.txt", "README.md", "bundled"]


def test_same_kind_is_replaced_other_kind_needs_force(tmp_path, dataset):
    out = tmp_path / "d"
    assert _gen(out).exit_code == 0
    assert read_marker(out).kind == Kind.DATASET
    before = (out / "events.parquet").read_bytes()
    manifest = (out / "manifest.json").read_bytes()
    time.sleep(1.1)  # a timestamp in the manifest would now differ
    assert _gen(out, "--seed", "1").exit_code == 0  # a dataset replaces a dataset
    assert (out / "events.parquet").read_bytes() == before  # same seed, same bytes ...
    assert (out / "manifest.json").read_bytes() == manifest  # ... the manifest included
    # a run pointed at a dataset is refused; with --force it replaces it
    args = ["simulate", "--dataset", str(dataset), "--policy", "claude-code", "--out", str(out)]
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and "dataset directory, not a run" in r.output and "--force" in r.output
    assert (out / "events.parquet").is_file()
    r = runner.invoke(app, [*args, "--force"])
    assert r.exit_code == 0, r.output
    assert read_marker(out).kind == Kind.RUN and (out / "events.parquet").read_bytes() != before


def test_a_user_file_inside_a_workbench_directory_blocks_replacement(tmp_path):
    out = tmp_path / "d"
    assert _gen(out).exit_code == 0
    (out / "my-notes.md").write_text("mine")
    r = _gen(out, "--force")
    assert r.exit_code == 2 and "my-notes.md" in r.output
    assert (out / "my-notes.md").read_text() == "mine"


def test_a_file_is_never_replaced_by_a_directory(tmp_path, dataset):
    target = tmp_path / "afile"
    target.write_text("data")
    for args in (["generate", "--events", "300", "--out", str(target), "--force"],
                 ["simulate", "--dataset", str(dataset), "--policy", "claude-code", "--out", str(target),
                  "--force"]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2 and "is a file" in r.output
        assert target.read_text() == "data"


def test_out_dot_is_refused_without_a_traceback(tmp_path, dataset, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("k")
    r = runner.invoke(app, ["simulate", "--dataset", str(dataset), "--policy", "claude-code", "--out", "."])
    assert r.exit_code == 2 and "Traceback" not in r.output and "keep.txt" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_symlinks_pointing_elsewhere(tmp_path):
    user = tmp_path / "user-data"
    user.mkdir()
    (user / "precious.txt").write_text("p")
    link = tmp_path / "link"
    link.symlink_to(user)
    assert _gen(link).exit_code == 2
    assert (user / "precious.txt").read_text() == "p"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    r = _gen(dangling)
    assert r.exit_code == 2 and "dangling" in r.output


def test_failed_write_keeps_the_old_copy_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "run"
    with replace_dir(target, Kind.RUN) as tmp:
        (tmp / "config.json").write_text("{}")
    with pytest.raises(RuntimeError), replace_dir(target, Kind.RUN) as tmp:
        (tmp / "config.json").write_text('{"new": 1}')
        raise RuntimeError("killed halfway")
    assert (target / "config.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_legacy_directories_are_recognised(tmp_path):
    legacy = tmp_path / "old"
    legacy.mkdir()
    (legacy / "manifest.json").write_bytes(orjson.dumps({"created_by": "continuity-workbench 0.1.0"}))
    (legacy / "events.parquet").write_bytes(b"x")
    assert check_output(legacy, Kind.DATASET).legacy
    (legacy / "other.csv").write_text("x")
    with pytest.raises(OutputError, match="other.csv"):
        check_output(legacy, Kind.DATASET)


def test_a_damaged_marker_proves_nothing(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / MARKER).write_text("not json")
    (d / "events.parquet").write_text("x")
    with pytest.raises(OutputError):
        check_output(d, Kind.DATASET)


def test_output_errors_are_workbench_errors():
    assert issubclass(OutputError, WorkbenchError)


# ---- temporaries of interrupted writes ----------------------------------------------------------
def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temporaries_are_removed_at_the_next_write(tmp_path):
    target = tmp_path / "d"
    stale = make_temp_dir(target)
    (stale / "events.parquet").write_text("half")
    owner = orjson.loads((stale / ".owner").read_bytes())
    owner["pid"] = _dead_pid()
    (stale / ".owner").write_bytes(orjson.dumps(owner))
    live = make_temp_dir(target)  # this process: still writing
    user = tmp_path / ".mine.tmp"
    user.write_text("not ours")
    assert judge(stale).stale and not judge(live).stale and judge(user) is None
    removed = remove_stale(tmp_path)
    assert [t.path for t in removed] == [stale]
    assert live.is_dir() and user.is_file() and not stale.exists()
    # and a write into that parent removes them too
    stale2 = make_temp_dir(target)
    owner["pid"] = _dead_pid()
    (stale2 / ".owner").write_bytes(orjson.dumps(owner))
    assert _gen(target).exit_code == 0
    assert not stale2.exists() and live.is_dir()


def test_workbench_clean_lists_and_removes(tmp_path, monkeypatch):
    nested = tmp_path / "runs"
    nested.mkdir()
    stale = make_temp_dir(nested / "r")
    owner = orjson.loads((stale / ".owner").read_bytes())
    owner["pid"] = _dead_pid()
    (stale / ".owner").write_bytes(orjson.dumps(owner))
    old_file = nested / f".summary.parquet.{_dead_pid()}.abcdefgh.tmp"
    old_file.write_text("x")
    past = time.time() - 7200
    os.utime(old_file, (past, past))
    r = runner.invoke(app, ["clean", str(tmp_path), "--dry-run"])
    assert r.exit_code == 0 and "would remove" in r.output and stale.exists()
    r = runner.invoke(app, ["clean", str(tmp_path)])
    assert r.exit_code == 0 and "removed" in r.output
    assert not stale.exists() and not old_file.exists()
    assert [t.path for t in clean(tmp_path)] == []
    r = runner.invoke(app, ["clean", str(tmp_path)])
    assert "no temporaries" in r.output


def test_refusals_name_the_kind_with_its_article(tmp_path):
    (tmp_path / "NOTES.txt").write_text("mine")
    with pytest.raises(OutputError, match="refusing to write an audit here"):
        check_output(tmp_path, Kind.AUDIT)
    with pytest.raises(OutputError, match="refusing to write a run here"):
        check_output(tmp_path, Kind.RUN)
