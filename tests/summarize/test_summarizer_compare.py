"""Two summarizers on the same compactions (workbench.evaluate.summarizer_compare and
`workbench inspect RUN --against OTHER`): the figures are the compaction tables' own, one
compaction's two summaries are shown, and runs of different replays are refused."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.audits import redaction_audit
from workbench.engine.run import simulate
from workbench.errors import WorkbenchError
from workbench.evaluate.summarizer_compare import compaction_pair, compare_runs
from workbench.synth.generate import GeneratorConfig, generate_dataset

SPEC = Path(__file__).resolve().parents[2] / "simulations" / "local-llm" / "small-spans.yaml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=3, facts=12, secrets=8), root / "ds")
    result = simulate(ds, [str(SPEC)])
    out = {}
    for name, summarizer, samples in (("calibrated", "calibrated", 2), ("modelled", "modelled", 1)):
        audit = redaction_audit(result, ds, summarizer=summarizer, summary_samples=samples)
        out[name] = result.write(root / name)
        audit.write(out[name])
    other = simulate(ds, ["llm-summary"])
    audit = redaction_audit(other, ds)
    out["other"] = other.write(root / "other")
    audit.write(out["other"])
    return out


def test_the_figures_are_the_compaction_tables(runs):
    compared = compare_runs(runs["calibrated"], runs["modelled"])
    summary = compared["summary"]
    assert summary["summarizer"].to_list() == ["calibrated (calibrated)", "modelled (modelled)"]
    for name, row in zip(("calibrated", "modelled"), summary.iter_rows(named=True), strict=True):
        c = pl.read_parquet(runs[name] / "compactions.parquet").filter(pl.col("readable"))
        assert row["compactions"] == c.height > 3
        assert row["retention"] == pytest.approx(c["facts_kept"].sum() / c["facts_in_span"].sum())
        assert row["secret_copy_rate"] == pytest.approx(c["secrets_carried"].sum() / c["secrets_in_span"].sum())
        assert row["size_ratio"] == pytest.approx(c["summary_text_tokens"].sum() / c["dropped_tokens"].sum())
    # the calibrated summarizer keeps fewer facts than the plain modelled one on this set
    assert summary["retention"][0] != summary["retention"][1]
    assert summary["headline_retention_spread"][0].endswith("over 2 samples")
    assert summary["headline_retention_spread"][1] is None


def test_one_compaction_both_summaries(runs):
    compared = compare_runs(runs["calibrated"], runs["modelled"])
    pair = compaction_pair(compared)
    assert pair["facts_in_span"] > 0
    texts = {name: pl.read_parquet(runs[name] / "texts.parquet") for name in ("calibrated", "modelled")}
    for side, name in zip(pair["sides"], ("calibrated", "modelled"), strict=True):
        assert side["text"] in texts[name]["text"].to_list()
        assert len(side["kept"]) + len(side["lost"]) <= pair["facts_in_span"]
    with pytest.raises(WorkbenchError, match="readable compactions"):
        compaction_pair(compared, 10_000)


def test_inspect_against_prints_both(runs):
    from workbench.cli import app

    res = CliRunner().invoke(app, ["inspect", str(runs["calibrated"]), "--against", str(runs["modelled"])])
    assert res.exit_code == 0, res.output
    assert "calibrated (calibrated)" in res.output and "modelled (modelled)" in res.output
    assert "secret_copy_rate" in res.output and "kept" in res.output


def test_other_replays_are_refused(runs):
    from workbench.cli import app

    with pytest.raises(WorkbenchError, match="same compactions"):
        compare_runs(runs["calibrated"], runs["other"])
    res = CliRunner().invoke(app, ["inspect", str(runs["calibrated"]), "--against", str(runs["other"])])
    assert res.exit_code == 2 and "same compactions" in res.output


def test_the_inspector_report_shows_both(runs, tmp_path):
    from workbench.report.render import render_report
    from workbench.report.verdict import ReportError

    with pytest.raises(ReportError, match="compaction-inspector report only"):
        render_report("policy-comparison", runs["calibrated"], tmp_path / "no", against=runs["modelled"])
    with pytest.raises(WorkbenchError, match="same compactions"):
        render_report("compaction-inspector", runs["calibrated"], tmp_path / "no", against=runs["other"])
    res = render_report("compaction-inspector", runs["calibrated"], tmp_path / "report", against=runs["modelled"])
    html = res.html.read_text()
    section = html[html.index("Real against modelled"):]
    assert "calibrated (calibrated)" in section and "modelled (modelled)" in section
    assert "secrets copied" in section and "kept:" in section
