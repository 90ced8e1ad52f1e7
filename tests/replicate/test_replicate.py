"""``workbench replicate``: the shipped Complexity Trap study, its published facts, the
table it writes, and the paper-setting ranking of the non-thinking configurations."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
import yaml

from workbench.replicate import (
    COLUMNS,
    SUMMARY_SHARE,
    StudyError,
    load_study,
    published_figures,
    replicate,
)

ROOT = Path(__file__).resolve().parents[2]
NON_THINKING = ("Qwen3-32B", "Qwen3-Coder-480B", "Gemini-2.5-Flash")


def test_the_presets_carry_the_papers_parameters():
    from workbench.engine.presets import PRESETS

    study = load_study("complexity-trap", ROOT)
    par = study.spec["parameters"]
    mask = PRESETS[study.strategies["observation-masking"]]
    summary = PRESETS[study.strategies["llm-summary"]]
    hybrid = PRESETS[study.strategies["hybrid"]]
    assert mask.masking.after_turns == par["observation-masking"]["M"] == 10
    assert (summary.trigger.kind, summary.trigger.every_turns, summary.trigger.keep_turns) == \
        ("turns", par["llm-summary"]["N"], par["llm-summary"]["M"]) == ("turns", 21, 10)
    assert (hybrid.trigger.every_turns, hybrid.trigger.keep_turns, hybrid.masking.after_turns) == \
        (par["hybrid"]["N"], par["hybrid"]["M"], par["hybrid"]["W"]) == (43, 10, 10)
    assert PRESETS[study.strategies["raw"]].compaction.kind == "none"


def test_published_figures_are_table_1_with_paired_intervals():
    figs = {(p.model, p.strategy): p for p in published_figures(load_study("complexity-trap", ROOT))}
    assert len(figs) == 5 * 2 + 5 + 2  # cost ratios, summary shares, hybrid comparisons
    qm = figs[("Qwen3-32B", "observation-masking")]
    assert qm.ratio == pytest.approx(0.55 / 1.12)
    assert (qm.low, qm.high) == (pytest.approx(1 - 0.7479 / 1.12), pytest.approx(1 - 0.3817 / 1.12))
    assert figs[("Qwen3-Coder-480B", SUMMARY_SHARE)].ratio == pytest.approx(0.072)
    assert figs[("Qwen3-Coder-480B", "hybrid-vs-observation-masking")].ratio == pytest.approx(0.93)
    assert figs[("Qwen3-Coder-480B", "hybrid-vs-llm-summary")].low is None
    assert all(p.source for p in figs.values())


def _tiny_study(root: Path, tasks: int = 6) -> str:
    """The shipped study on a few tasks and two models."""
    spec = yaml.safe_load((ROOT / "simulations/replications/complexity-trap.yaml").read_text())
    keep = ("Qwen3-32B", "Qwen3-Coder-480B")
    spec["dataset"]["continuities"] = tasks
    spec["models"] = {k: v for k, v in spec["models"].items() if k in keep}
    pub = spec["published"]
    for key in ("cost", "cost_diff_ci", "summary_share"):
        pub[key] = {k: v for k, v in pub[key].items() if k in keep}
    spec["trajectories"]["mean_turns"] = {k: v for k, v in spec["trajectories"]["mean_turns"].items() if k in keep}
    d = root / "simulations" / "replications"
    d.mkdir(parents=True)
    (d / "tiny.yaml").write_text(yaml.safe_dump(spec))
    return "tiny"


def test_replicate_writes_the_table_with_its_columns(tmp_path):
    name = _tiny_study(tmp_path)
    rows, ranks, out = replicate(name, root=tmp_path)
    assert out == tmp_path / "reports" / "replications" / name
    frame = pl.read_parquet(out / "replication.parquet")
    assert tuple(frame.columns) == COLUMNS
    assert frame.schema["within"] == pl.Boolean and frame.schema["measured_ratio"] == pl.Float64
    assert frame.height == 2 * (2 * 2 + 2 + 2)  # settings x (cost ratios, shares, hybrid)
    assert set(frame["setting"]) == {"paper", "cached"}
    assert frame["measured_ratio"].null_count() == 0
    no_interval = frame.filter(pl.col("published_low").is_null())
    assert no_interval["within"].null_count() == no_interval.height
    with_interval = frame.filter(pl.col("published_low").is_not_null())
    assert (with_interval["within"] == ((with_interval["measured_ratio"] >= with_interval["published_low"])
                                        & (with_interval["measured_ratio"] <= with_interval["published_high"]))).all()
    assert all(r["note"] for r in rows)
    doc = (out / "replication.json").read_text()
    assert "paired_ci_diffs_vs_raw.csv" in doc and "posthoc_compute_qwen_costs.py" in doc
    # a second run reuses the generated datasets and replaces its own output
    again, _, _ = replicate(name, root=tmp_path)
    assert [r["measured_ratio"] for r in again] == [r["measured_ratio"] for r in rows]


def test_replicate_refuses_a_directory_it_did_not_write(tmp_path):
    from workbench.rundir import OutputError

    name = _tiny_study(tmp_path, tasks=2)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    with pytest.raises(OutputError):
        replicate(name, mine, root=tmp_path)
    assert (mine / "notes.txt").read_text() == "keep"
    assert not (tmp_path / "datasets").exists()  # refused before any work


def test_a_study_is_named_not_pathed_and_bad_yaml_names_file_and_line(tmp_path):
    with pytest.raises(StudyError, match="lowercase"):
        load_study("../etc", tmp_path)
    with pytest.raises(StudyError, match="no such study"):
        load_study("absent", tmp_path)
    d = tmp_path / "simulations" / "replications"
    d.mkdir(parents=True)
    (d / "broken.yaml").write_text("study: x\nmodels: [\n")
    with pytest.raises(StudyError, match=r"broken\.yaml line \d+"):
        load_study("broken", tmp_path)


@pytest.mark.slow
def test_paper_setting_ranks_the_non_thinking_strategies_as_table_1(tmp_path):
    """The shipped study at its shipped size (seeded: the same figures every run)."""
    d = tmp_path / "simulations" / "replications"
    d.mkdir(parents=True)
    shutil.copy(ROOT / "simulations/replications/complexity-trap.yaml", d)
    rows, ranks, _ = replicate("complexity-trap", root=tmp_path)
    paper = {r["model"]: r for r in ranks if r["setting"] == "paper"}
    for model in NON_THINKING:
        assert paper[model]["same"], paper[model]
    figure = {(r["setting"], r["model"], r["strategy"]): r for r in rows}
    for model in NON_THINKING:  # every strategy is cheaper than the raw agent, within Table 1
        for strategy in ("observation-masking", "llm-summary"):
            assert figure[("paper", model, strategy)]["within"] is True
    # the hybrid is the cheapest on Qwen3-Coder-480B
    assert figure[("paper", "Qwen3-Coder-480B", "hybrid-vs-observation-masking")]["measured_ratio"] < 1
    assert figure[("paper", "Qwen3-Coder-480B", "hybrid-vs-llm-summary")]["measured_ratio"] < 1
    # every rank change under caching comes with its reason
    for r in ranks:
        if r["setting"] == "cached" and r["measured_order"] != paper[r["model"]]["measured_order"]:
            assert "read from the cache" in r["change"]


def test_cli_prints_one_document_on_stdout_and_messages_on_stderr(tmp_path, monkeypatch):
    import orjson
    from typer.testing import CliRunner

    from workbench.cli import app

    name = _tiny_study(tmp_path, tasks=3)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["replicate", name, "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = orjson.loads(r.stdout)
    assert [k for k in rows[0] if k != "note"] == list(COLUMNS)
    assert "replication.parquet" in r.stderr and "replication.parquet" not in r.stdout
    assert CliRunner().invoke(app, ["replicate", "no-such-study"]).exit_code == 2


def test_report_replication_renders_the_tables(tmp_path):
    from workbench.report.render import render_report

    name = _tiny_study(tmp_path, tasks=3)
    _, _, out = replicate(name, root=tmp_path)
    res = render_report("replication", out, tmp_path / "report", cwd=tmp_path)
    html = res.html.read_text()
    for heading in ("Published", "Measured against published", "prompt caching", "Rankings"):
        assert heading in html, heading
    assert "wb-yes" in html or "wb-no" in html  # the interval verdicts are coloured
