"""`--help` at 80 columns, piped (issue 26, finding 9): every option's name printed whole
(the rich panels cut them to `--model-price-…`, `--summarizer-b…`), switches shown as
switches (no `<bool>` value), no line wider than the terminal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer

from workbench.cli import app

ROOT = typer.main.get_command(app)


def commands(group=ROOT, path: tuple[str, ...] = ()):
    """Every command and group, by path (typer carries its own copy of click: duck typing)."""
    for name, cmd in sorted(group.commands.items()):
        yield (*path, name), cmd
        if hasattr(cmd, "commands"):
            yield from commands(cmd, (*path, name))


ALL = list(commands())


def test_every_command_is_listed():
    names = {" ".join(p) for p, _ in ALL}
    assert {"simulate", "audit redaction", "audit determinism", "tune", "report"} <= names


@pytest.mark.parametrize("path,cmd", ALL, ids=[" ".join(p) for p, _ in ALL])
def test_help_at_80_columns_names_every_option_whole(path, cmd):
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    r = subprocess.run([sys.executable, "-m", "workbench.cli", *path, "--help"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    for param in cmd.params:
        if param.param_type_name != "option":
            continue
        for name in (*param.opts, *param.secondary_opts):
            assert name in text.replace("\n", " ").split() or f"{name}," in text or f"{name}/" in text, \
                f"{' '.join(path)}: {name} not printed whole:\n{text}"
    assert "<bool>" not in text and "…" not in text
    wide = [line for line in text.splitlines() if len(line) > 80]
    assert not wide, wide
