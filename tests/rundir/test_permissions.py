"""Output files and directories follow the user's umask (issue 26, finding 10): under umask
022 a dataset, a run or a report is readable by the group and others, under 077 by the
user alone; a directory the workbench did not create keeps its permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.rundir import Kind, adding, replace_dir, write_file
from workbench.util.atomic import atomic_write_bytes

runner = CliRunner()
UMASKS = [0o022, 0o077]


@pytest.fixture(params=UMASKS, ids=lambda m: f"umask{m:03o}")
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _modes_below(root: Path) -> dict[str, int]:
    found = {".": _mode(root)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            found[str(p.relative_to(root))] = _mode(p)
    return found


def _expected(path: Path, umask: int) -> int:
    return (0o777 if path.is_dir() else 0o666) & ~umask


def test_a_generated_dataset_follows_the_umask(tmp_path, umask):
    out = tmp_path / "d"
    r = runner.invoke(app, ["generate", "--events", "300", "--seed", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    modes = _modes_below(out)
    assert ".workbench.json" in modes and "events.parquet" in modes
    wrong = {name: oct(m) for name, m in modes.items() if m != _expected(out / name, umask)}
    assert not wrong, f"not {0o666 & ~umask:o} / {0o777 & ~umask:o} under umask {umask:03o}: {wrong}"


def test_report_files_and_their_directory_follow_the_umask(tmp_path, umask):
    # a report is written file by file into a directory (html, png, the marker)
    with adding(tmp_path / "reports" / "r", Kind.REPORT, "report test") as out:
        write_file(out, "x.html", b"<html></html>")
        write_file(out, "x-figure.png", b"\x89PNG")
    atomic_write_bytes(tmp_path / "reports" / "loose.json", b"{}")
    for path in [tmp_path / "reports", out, out / "x.html", out / "x-figure.png", out / ".workbench.json",
                 tmp_path / "reports" / "loose.json"]:
        assert _mode(path) == _expected(path, umask), f"{path}: {_mode(path):o} under umask {umask:03o}"


def test_a_replaced_directory_follows_the_umask(tmp_path, umask):
    with replace_dir(tmp_path / "run", Kind.RUN) as tmp:
        (tmp / "config.json").write_text("{}")
    assert _mode(tmp_path / "run") == 0o777 & ~umask
    assert _mode(tmp_path / "run" / ".workbench.json") == 0o666 & ~umask


@pytest.mark.parametrize("user_mode", [0o755, 0o750, 0o700], ids=lambda m: f"dir{m:o}")
def test_a_users_empty_directory_keeps_its_permissions(tmp_path, umask, user_mode):
    # the finding: --out through a symbolic link to a user's empty 0755 directory made it 0700
    user = tmp_path / "shared"
    user.mkdir()
    os.chmod(user, user_mode)
    link = tmp_path / "link"
    link.symlink_to(user)
    r = runner.invoke(app, ["generate", "--events", "300", "--seed", "1", "--out", str(link)])
    assert r.exit_code == 0, r.output
    assert (user / "events.parquet").is_file()
    assert _mode(user) == user_mode, f"{_mode(user):o}, was {user_mode:o}"
    # written again (now a workbench directory): still the user's permissions
    r = runner.invoke(app, ["generate", "--events", "300", "--seed", "2", "--out", str(link)])
    assert r.exit_code == 0, r.output
    assert _mode(user) == user_mode
    # and a directory files are added to is never re-moded either
    reports = tmp_path / "reports"
    reports.mkdir()
    os.chmod(reports, user_mode)
    with adding(reports, Kind.REPORT, "report test") as out:
        write_file(out, "x.html", b"<html></html>")
    assert _mode(reports) == user_mode
