"""A sweep spec is untrusted input: its name is a name, and it writes nowhere outside the
project root (issue 19)."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from workbench.cli import app
from workbench.sweep.spec import SpecError, SweepSpec

runner = CliRunner()


def _spec(path, **fields):
    spec = {"name": "t", "base": "claude-code", "parameters": {"trigger.reserve_tokens": [20_000, 40_000]}}
    spec.update(fields)
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.mark.parametrize("name", ["../../escaped", "/abs", "a/b", "..", ".hidden", "sp ace", "x" * 200])
def test_a_name_is_not_a_path(name):
    with pytest.raises(SpecError, match="not a plain name"):
        SweepSpec.from_dict({"name": name, "dataset": "d", "base": "claude-code"})


def test_escaping_name_writes_nothing_outside(tmp_path, small_dataset, monkeypatch):
    project = tmp_path / "a" / "b" / "project"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    spec = _spec(project / "s.yaml", name="../../escaped", dataset=str(small_dataset))
    r = runner.invoke(app, ["sweep", str(spec), "--executor", "serial"])
    assert r.exit_code == 2 and "not a plain name" in r.output
    assert not (tmp_path / "a" / "escaped").exists() and not (project / "runs").exists()


def test_generate_outside_the_project_is_refused(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    monkeypatch.chdir(project)
    for path in ("../victim", str(victim)):
        spec = _spec(project / "s.yaml", dataset={"path": path,
                                                  "generate": {"profile": "coding", "events": 300, "seed": 1}})
        r = runner.invoke(app, ["sweep", str(spec), "--executor", "serial"])
        assert r.exit_code == 2 and "outside the project" in r.output
        assert (victim / "keep.txt").read_text() == "keep" and sorted(p.name for p in victim.iterdir()) == ["keep.txt"]


def test_a_symlink_inside_the_project_pointing_out_is_refused(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "datasets").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "datasets" / "link").symlink_to(outside)
    monkeypatch.chdir(project)
    spec = _spec(project / "s.yaml", dataset={"path": "datasets/link/new",
                                              "generate": {"profile": "coding", "events": 300, "seed": 1}})
    r = runner.invoke(app, ["sweep", str(spec), "--executor", "serial"])
    assert r.exit_code == 2 and "outside the project" in r.output
    assert list(outside.iterdir()) == []


def test_generate_into_a_user_directory_inside_the_project_is_refused(tmp_path, monkeypatch):
    project = tmp_path / "project"
    mine = project / "datasets" / "mine"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("n")
    monkeypatch.chdir(project)
    spec = _spec(project / "s.yaml", dataset={"path": "datasets/mine",
                                              "generate": {"profile": "coding", "events": 300, "seed": 1}})
    r = runner.invoke(app, ["sweep", str(spec), "--executor", "serial"])
    assert r.exit_code == 2 and "notes.txt" in r.output
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_root_option_and_generation_inside_it(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    spec = _spec(tmp_path / "s.yaml", name="inside",
                 dataset={"path": "datasets/gen", "generate": {"profile": "coding", "events": 300, "seed": 1}})
    r = runner.invoke(app, ["sweep", str(spec), "--executor", "serial", "--root", str(project)])
    assert r.exit_code == 0, r.output
    assert (project / "datasets" / "gen" / "manifest.json").is_file()
    assert (project / "runs" / "sweeps" / "inside" / "runs.parquet").is_file()


# ---- exit codes ---------------------------------------------------------------------------------
def test_failed_configurations_exit_1_and_are_listed(tmp_path, small_dataset):
    spec = _spec(tmp_path / "s.yaml", dataset=str(small_dataset),
                 parameters={"compaction.floor": [1_500, 50_000]})  # 50k is above the summary cap
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"])
    assert r.exit_code == 1
    assert "configuration 1 failed" in r.output and "1 of 2 configurations failed" in r.output
    assert "compaction.floor (50,000) exceeds compaction.cap" in r.output


def test_all_failed_exits_1_with_the_first_error_and_tune_says_which(tmp_path, small_dataset):
    spec = _spec(tmp_path / "s.yaml", dataset=str(small_dataset),
                 parameters={"compaction.floor": [40_000, 50_000]})
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"])
    assert r.exit_code == 1 and "all 2 configurations failed" in r.output
    assert "exceeds compaction.cap" in r.output
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run"])
    assert r.exit_code == 1 and "unknown metric" not in r.output
    assert "configuration 0 failed" in r.output and "configuration 1 failed" in r.output


def test_a_bad_value_is_refused_before_any_work(tmp_path, small_dataset):
    spec = _spec(tmp_path / "s.yaml", dataset=str(small_dataset),
                 parameters={"compaction.ratio": [0.1, 2.0]})
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out"), "--executor", "serial"])
    assert r.exit_code == 2
    assert f"{spec}: parameters.compaction.ratio: 2.0 is not allowed (a number from 0.0 to 1.0)" in r.output
    assert not (tmp_path / "out").exists()
