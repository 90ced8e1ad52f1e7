"""`--format json|csv` (issue 26, finding 3): stdout is exactly one document, whatever the
command; what it says besides (`wrote …`, `PASS: …`, `best: …`, notes) goes to stderr.

Each command runs once per format on a small run; `json.loads(stdout)` must succeed and the
CSV must be one table (every row as wide as the header)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from cli_runs import cli_dataset
from typer.testing import CliRunner

from workbench.cli import app

runner = CliRunner()
BUNDLED = Path(__file__).resolve().parent.parent / "datasets" / "bundled"
FORMATS = ("json", "csv")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return cli_dataset(tmp_path_factory.mktemp("mo-syn") / "d", 1200)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two real Claude Code logs: usage to compare (fidelity) and lines to fit (calibrate)."""
    path = tmp_path_factory.mktemp("mo-rec") / "rec"
    logs = [str(BUNDLED / "claude-code" / n) for n in ("short.jsonl", "tool_heavy.jsonl")]
    r = runner.invoke(app, ["import", *logs, "--out", str(path)])
    assert r.exit_code == 0, r.output
    return path


@pytest.fixture(scope="module")
def run_dir(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("mo-run") / "r"
    r = runner.invoke(app, ["simulate", "--dataset", str(synthetic), "--policy", "claude-code",
                            "--policy", "observation-masking", "--engine", "reference", "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def spec(synthetic, tmp_path_factory):
    path = tmp_path_factory.mktemp("mo-spec") / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "mo", "dataset": str(synthetic), "base": "claude-code",
                                    "parameters": {"trigger.reserve_tokens": [13_000, 60_000]},
                                    "seeds": [0]}))
    return path


def one_document(r, fmt: str):
    """The parsed stdout of a finished command (0: done, 1: a failed check is a result too)."""
    assert r.exit_code in (0, 1), r.output
    if fmt == "json":
        return json.loads(r.stdout)
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows, "no CSV on stdout"
    widths = {len(row) for row in rows}
    assert widths == {len(rows[0])}, f"not one table: row widths {sorted(widths)}\n{r.stdout}"
    return rows


@pytest.mark.parametrize("fmt", FORMATS)
def test_simulate(synthetic, tmp_path, fmt):
    r = runner.invoke(app, ["simulate", "--dataset", str(synthetic), "--policy", "claude-code",
                            "--engine", "reference", "--out", str(tmp_path / "r"), "--format", fmt])
    doc = one_document(r, fmt)
    assert "wrote" in r.stderr and "wrote" not in r.stdout
    if fmt == "json":
        assert [row["policy"] for row in doc] == ["claude-code"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_audit_redaction(run_dir, fmt):
    doc = one_document(runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--format", fmt]), fmt)
    if fmt == "json":
        assert {row["policy"] for row in doc} == {"claude-code", "observation-masking"}


def test_audit_redaction_with_samples_is_one_document_of_two_tables(run_dir):
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--summary-samples", "2",
                            "--format", "json"])
    assert set(one_document(r, "json")) == {"evaluation", "summary_samples"}
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir), "--summary-samples", "2",
                            "--format", "csv"])
    rows = one_document(r, "csv")
    assert rows[0][0] == "table" and {row[0] for row in rows[1:]} == {"evaluation", "summary_samples"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_audit_conformance(run_dir, fmt):
    r = runner.invoke(app, ["audit", "conformance", "--run", str(run_dir), "--format", fmt])
    one_document(r, fmt)
    assert "PASS" in r.stderr or "FAIL" in r.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_audit_determinism(run_dir, fmt):
    r = runner.invoke(app, ["audit", "determinism", "--out", str(run_dir), "--engine", "reference",
                            "--format", fmt])
    doc = one_document(r, fmt)
    if fmt == "json":
        assert set(doc) == {"determinism", "drift"}
    # one count of checks everywhere (finding 5): the command and the report's verdict say
    # the same, skips apart from the checks
    import polars as pl

    from workbench.evaluate.determinism import check_counts, describe_checks
    from workbench.report.verdict import build_verdict

    count = describe_checks(check_counts(pl.read_parquet(run_dir / "determinism.parquet")), 2)
    assert "skipped" in count and count in r.stderr
    assert count in build_verdict(run_dir).determinism["text"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_audit_fidelity(recorded, tmp_path, fmt):
    r = runner.invoke(app, ["audit", "fidelity", "--dataset", str(recorded), "--out", str(tmp_path / "f"),
                            "--format", fmt])
    doc = one_document(r, fmt)
    if fmt == "json":
        assert "fidelity_continuities" in doc


@pytest.mark.parametrize("fmt", FORMATS)
def test_calibrate(recorded, tmp_path, fmt):
    r = runner.invoke(app, ["calibrate", str(recorded), "--out", str(tmp_path / "p.json"), "--format", fmt])
    doc = one_document(r, fmt)
    if fmt == "json":
        assert set(doc) == {"profiles", "logs"}
    else:
        assert doc[0][0] == "table"
    assert "wrote" in r.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_sweep_and_tune(spec, tmp_path, fmt):
    out = tmp_path / "sw"
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial", "--format", fmt])
    doc = one_document(r, fmt)
    assert len(doc) == 2 if fmt == "json" else len(doc) == 3
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--harness", "claude-code",
                            "--format", fmt])
    one_document(r, fmt)
    assert "best: configuration" in r.stderr


def test_tune_without_a_feasible_configuration_still_prints_its_table(spec, tmp_path):
    out = tmp_path / "sw"
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"]).exit_code == 0
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--constraint", "overflows<0",
                            "--format", "json"])
    assert r.exit_code == 1 and "no configuration satisfies" in r.stderr
    assert len(json.loads(r.stdout)) == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_policies_and_compactions(run_dir, fmt):
    one_document(runner.invoke(app, ["policies", "--format", fmt]), fmt)
    r = runner.invoke(app, ["audit", "redaction", "--run", str(run_dir)])
    assert r.exit_code == 0, r.output
    one_document(runner.invoke(app, ["compactions", "--run", str(run_dir), "--format", fmt]), fmt)


def test_json_switches_print_one_document_whatever_the_format(synthetic):
    assert json.loads(runner.invoke(app, ["policies", "--json", "--format", "csv"]).stdout)
    assert json.loads(runner.invoke(app, ["inspect", str(synthetic), "--json"]).stdout)["events"]


def test_an_unknown_format_is_refused_before_any_work(synthetic, tmp_path):
    r = runner.invoke(app, ["simulate", "--dataset", str(synthetic), "--policy", "claude-code",
                            "--out", str(tmp_path / "r"), "--format", "yaml"])
    assert r.exit_code == 2 and "--format yaml: unknown format" in r.stderr
    assert not (tmp_path / "r").exists()
