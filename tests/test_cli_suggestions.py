"""Every command a report, an error or a message suggests runs as printed (issue 26,
finding 4: reports suggested `workbench audit determinism --out RUN_DIR`, which exited 2
with "Missing option '--dataset'").

The suggestions are read from the package's own text: each string literal of its modules
(f-string fields as placeholders, implicit concatenation joined, so a message split over
lines is read whole) and each cell of the report notebooks. A suggestion is a backticked
`workbench ...` after "run", "re-run" or "with". Each must parse: every required option
given, none unknown, no "..." to fill in; placeholders (RUN_DIR, DATASET, SPEC, {run_dir})
stand for what the reader substitutes. The audits a report asks for then run, as printed,
on a small run.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path

import pytest
import typer
from cli_runs import cli_run
from typer.testing import CliRunner

from workbench.cli import app

PROJECT = Path(__file__).resolve().parent.parent
SUGGESTION = re.compile(r"\b(?:re-run|run|with)\s+`(workbench\s[^`]+)`", re.I)
# a command named at run time (the one that wrote a directory): no fixed text to check
RUNTIME_NAMED = re.compile(r"^workbench \{")


def _literal_text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values)
    return None


def _code_texts(source: str) -> list[str]:
    tree = ast.parse(source)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    return [t for n in ast.walk(tree) if id(n) not in inner and (t := _literal_text(n)) is not None]


def texts() -> list[tuple[str, str]]:
    """(where, text) of every string literal in the package and every notebook cell."""
    found = []
    for path in sorted((PROJECT / "workbench").rglob("*.py")):
        found += [(str(path.relative_to(PROJECT)), t) for t in _code_texts(path.read_text())]
    for path in sorted((PROJECT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            source = "".join(cell["source"])
            where = f"{path.relative_to(PROJECT)} cell {i}"
            if cell["cell_type"] == "code":
                found += [(where, t) for t in _code_texts(source)]
            else:
                found.append((where, source))
    return found


def suggestions() -> list[tuple[str, str]]:
    found = set()
    for where, text in texts():
        for m in SUGGESTION.finditer(" ".join(text.split())):
            if not RUNTIME_NAMED.match(m.group(1)):
                found.add((where, m.group(1)))
    return sorted(found)


SUGGESTED = suggestions()


def arguments(command: str) -> list[str]:
    """The argv of a suggestion, placeholders filled: `{expr}` -> a path-like word."""
    return shlex.split(re.sub(r"\{[^}]*\}", "x", command))[1:]


def parse(args: list[str]) -> None:
    """Parse ``args`` as `workbench` would, raising click's usage errors (no command runs)."""
    group = typer.main.get_command(app)
    ctx = group.make_context("workbench", list(args))
    while hasattr(group, "commands"):
        name, cmd, rest = group.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        ctx = cmd.make_context(name, rest, parent=ctx)
        group = cmd


def test_the_suggestions_are_found():
    commands = {c for _, c in SUGGESTED}
    assert "workbench audit determinism --out RUN_DIR" in commands
    assert any(c.startswith("workbench audit redaction --run") for c in commands)
    assert len(SUGGESTED) >= 15


@pytest.mark.parametrize("where,command", SUGGESTED, ids=[f"{w}: {c}" for w, c in SUGGESTED])
def test_every_suggestion_parses(where, command):
    assert "..." not in command and "…" not in command, f"{where}: `{command}` is not a command to run"
    try:
        parse(arguments(command))
    except Exception as exc:  # click's UsageError and its kin
        pytest.fail(f"{where}: `{command}` does not run as printed: {exc}")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("suggested"), 1500)


@pytest.mark.slow  # the determinism audit as printed: the kernel engine, a cold numba cache
def test_the_audits_a_report_asks_for_run_as_printed(run_dir):
    """What the run report's verdict says to run when an audit is missing, run word for word
    with only RUN_DIR filled in."""
    from workbench.report.verdict import build_verdict

    html = build_verdict(run_dir).to_html()
    asked = sorted(set(re.findall(r"run <code>(workbench audit [^<]+)</code>|run `(workbench audit [^`]+)`", html)))
    commands = sorted({a or b for a, b in asked})
    assert "workbench audit determinism --out RUN_DIR" in commands, commands
    assert "workbench audit conformance --run RUN_DIR" in commands, commands
    for command in commands:
        args = [str(run_dir) if a == "RUN_DIR" else a for a in shlex.split(command)[1:]]
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 0, f"`{command}`: {r.output}"
    assert build_verdict(run_dir).determinism is not None


def test_the_command_a_missing_table_names_parses():
    """`runs/x/leakage.parquet is missing; `workbench audit redaction --run runs/x` writes it`."""
    from workbench.rundir.read import WRITTEN_BY, writer_command

    for name in WRITTEN_BY:
        parse(arguments(writer_command(name, "runs/x")))


def test_determinism_outside_a_run_says_what_it_needs(tmp_path):
    r = CliRunner().invoke(app, ["audit", "determinism", "--out", str(tmp_path / "new")])
    assert r.exit_code == 2, r.output
    assert "is not a run directory" in r.output and "give --dataset and --policy" in r.output
    assert not (tmp_path / "new").exists()
