"""The threshold-sweep report's section on the policies no harness ships: it finds each
family's specs under simulations/, says which are missing or not run, marks the base preset as
shipped, and draws the trade-off (the rendered report, on a tiny project)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.report.policy_sweeps import FAMILIES, find_policy_sweeps, tradeoff

ENGINE = "kernel"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project with one lower-threshold-1m spec swept (claude-code's reserve: its own 33,000,
    half and 80 % of a 60k window) and one spec of the same family not run."""
    from workbench.sweep import runner
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    root = tmp_path_factory.mktemp("project")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=2500, seed=3), root / "datasets" / "tiny")
    sims = root / "simulations"
    sims.mkdir()
    spec = sims / "lower-threshold-1m-tiny.yaml"
    spec.write_text(f"""
name: lower-threshold-1m-tiny
dataset: {ds.path}
base: claude-code
parameters:
  trigger.reserve_tokens: [33000, 30000, 48000]
  provider.context_window: 60000
seeds: [0]
evaluate: true
engine: {ENGINE}
tokenizer: cl100k
""")
    (sims / "lower-threshold-1m-unrun.yaml").write_text(spec.read_text().replace("-tiny\n", "-unrun\n", 1))
    # a spec whose base is not a preset (here: a branch's preset not merged yet)
    (sims / "task-state-checkpoints-broken.yaml").write_text(
        spec.read_text().replace("base: claude-code", "base: no-such-preset"))
    runner.run_sweep(spec, runner.default_out(runner.SweepSpec.load(spec), root), executor="serial")
    return root


def test_each_family_is_found_or_said_missing(project):
    found = find_policy_sweeps(project)
    by_family = {}
    for s in found:
        by_family.setdefault(s.family, []).append(s)
    assert list(by_family) == list(FAMILIES)
    for family in ("ttl-aware", "compaction-call-prefix"):
        (missing,) = by_family[family]
        assert missing.status == "no spec" and f"simulations/{family}-*.yaml" in missing.message()
    (broken,) = by_family["task-state-checkpoints"]
    assert broken.status == "invalid spec" and "no-such-preset" in broken.message()
    swept, unrun = by_family["lower-threshold-1m"]
    assert unrun.status == "not run" and "workbench sweep simulations/lower-threshold-1m-unrun.yaml" in unrun.message()
    assert swept.status == "results" and swept.base == "claude-code" and swept.swept == ("trigger.reserve_tokens",)
    t = swept.table
    # the preset as shipped is the configuration at claude-code's own reserve, 33,000, and only it
    assert t["shipped"].to_list() == [True, False, False]
    assert t["config"].to_list() == ["reserve_tokens=33,000", "reserve_tokens=30,000", "reserve_tokens=48,000"]
    assert {"cost_usd", "retention", "task_retention"} <= set(t.columns)
    # compacting at 12k of 60k costs summaries the default never pays
    assert t["compactions"][2] > t["compactions"][0]


def test_the_trade_off_figure_draws_every_swept_configuration(project):
    import dataclasses

    import polars as pl

    entries = [s for s in find_policy_sweeps(project) if s.family == "lower-threshold-1m"]
    # the tiny session plants no task state: one panel, fact retention
    assert entries[0].table["task_retention"].drop_nulls().len() == 0
    axes = tradeoff(entries, title="lower-threshold-1m").get_axes()
    assert [a.get_ylabel() for a in axes] == ["fact retention"]
    assert sum(len(c.get_offsets()) for c in axes[0].collections) == 3 + 1  # 3 configurations + the star
    # with task-state figures, a second panel draws them
    planted = dataclasses.replace(entries[0], table=entries[0].table.with_columns(
        pl.Series("task_retention", [0.9, 0.8, 0.5])))
    axes = tradeoff([planted, entries[1]], title="lower-threshold-1m").get_axes()
    assert [a.get_ylabel() for a in axes] == ["fact retention", "task-state retention"]
    assert sorted(axes[1].collections[0].get_offsets()[:, 1].tolist()) == [0.5, 0.8, 0.9]
    # a sweep that did not evaluate retention (a switch that moves cost only): its cost per
    # configuration, the one as shipped named
    costs_only = dataclasses.replace(entries[0], table=entries[0].table.drop("retention", "task_retention"))
    ax = tradeoff([costs_only], title="compaction-call-prefix").get_axes()[0]
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert names == ["lower-threshold-1m-tiny: reserve_tokens=33,000 (as shipped)",
                     "lower-threshold-1m-tiny: reserve_tokens=30,000", "lower-threshold-1m-tiny: reserve_tokens=48,000"]
    widths = sorted(round(p.get_width(), 6) for p in ax.patches if p.get_facecolor()[3] > 0)
    assert widths == sorted(round(c, 6) for c in entries[0].table["cost_usd"].to_list())
    # a family with no results: a message, not an empty plot
    empty = tradeoff([s for s in find_policy_sweeps(project) if s.family == "ttl-aware"], title="ttl-aware")
    assert "no sweep results" in empty.get_axes()[0].texts[0].get_text()


def test_the_rendered_report_draws_the_section(project):
    from workbench.report.render import render_report

    out = project / "reports" / "sweep"
    res = render_report("threshold-sweep", project / "runs" / "sweeps" / "lower-threshold-1m-tiny", out, cwd=project)
    html = Path(res.html).read_text(encoding="utf-8")
    assert "The policies no harness ships" in html
    assert "no sweep spec simulations/ttl-aware-*.yaml" in html
    assert "task-state-checkpoints-broken.yaml" in html and "no-such-preset" in html
    assert "lower-threshold-1m-unrun.yaml: no results" in html
    assert "reserve_tokens=48,000" in html
    assert any("new-policy-lower-threshold-1m" in p.name for p in res.figures)
