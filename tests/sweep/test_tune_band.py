"""The provider cache-miss band in `sweep`, `tune` and the threshold-sweep report (issue 28):
on a bundled Claude Code log each configuration's expected cost and p10-p90 are the figures
`simulate` gives the same configuration; a dataset of two logs adds them up (quantiles of the
summed draws); generated data says it has no band instead of printing zeros."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from bundled_logs import BUNDLED_LOGS
from typer.testing import CliRunner

from workbench.cli import app

runner = CliRunner()
RESERVES = [33_000, 100_000]  # claude-code ships 33,000: configuration 0 is the preset as shipped
SPEC = """
name: {name}
dataset:
  path: {dataset}
base: claude-code
parameters:
  trigger.reserve_tokens: [33000, 100000]
seeds: [0, 1]
engine: batch
tokenizer: cl100k
"""


def _sweep(root, name: str, dataset: str):
    from workbench.sweep.runner import default_out, run_sweep
    from workbench.sweep.spec import SweepSpec

    spec = root / f"{name}.yaml"
    spec.write_text(SPEC.format(name=name, dataset=dataset))
    out = default_out(SweepSpec.load(spec), root)
    run_sweep(spec, out, executor="serial", root=root)
    return spec, out


@pytest.fixture(scope="module")
def bedrock(tmp_path_factory):
    """The bundled Claude Code 2.0.76 session 624a4a58 (Bedrock: 13 of 55 requests missed the
    cache), alone and beside the 5-request 2.1 session 9eda1058, each swept over the reserve."""
    from workbench.sources.importer import import_paths

    root = tmp_path_factory.mktemp("band")
    one = import_paths([BUNDLED_LOGS / "claude-code" / "session-624a4a58.jsonl"], root / "one")
    two = import_paths([BUNDLED_LOGS / "claude-code" / f"session-{s}.jsonl" for s in ("624a4a58", "9eda1058")],
                       root / "two")
    spec_one, out_one = _sweep(root, "band-one", "one")
    spec_two, out_two = _sweep(root, "band-two", "two")
    return {"root": root, "one": one, "two": two, "spec_one": spec_one, "out_one": out_one,
            "spec_two": spec_two, "out_two": out_two}


def _simulated_bands(ds, reserve: int) -> dict[str, dict]:
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate

    res = simulate(ds, [get_policy("claude-code", {"trigger.reserve_tokens": reserve})])
    (entry,) = res.config["policies"].values()
    return entry["cost_bands"]


def _tune_json(spec, out, *extra):
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--format", "json", *extra])
    assert r.exit_code == 0, r.output
    return {row["config_index"]: row for row in json.loads(r.stdout)}, r.stderr


def test_tune_gives_each_configuration_the_band_simulate_gives(bedrock):
    """Hand-checked on 624a4a58 with the preset as shipped (reserve 33,000): $7.6776 with every
    read the TTL allows (the sweep's cost_usd), and the 2.0 Bedrock profile's misses re-write
    what the call would have read at 1.25x instead of 0.1x the input price: expected $8.7061,
    p10 $8.1306, p90 $9.2268 -- `simulate`'s `cost_bands` to the last bit, for both reserves."""
    rows, stderr = _tune_json(bedrock["spec_one"], bedrock["out_one"])
    assert sorted(rows) == [0, 1]
    for index, reserve in enumerate(RESERVES):
        (band,) = _simulated_bands(bedrock["one"], reserve).values()
        assert band["profile"]["source"] == "claude_code@2.0/anthropic-bedrock"
        row = rows[index]
        assert row["trigger.reserve_tokens"] == reserve
        assert (row["cost_expected_usd"], row["cost_p10_usd"], row["cost_p90_usd"]) == \
            (band["expected_usd"], band["p10_usd"], band["p90_usd"])
        assert row["cost_usd"] == pytest.approx(band["hits_usd"], rel=1e-12)
        assert row["cost_usd"] < row["cost_p10_usd"] < row["cost_expected_usd"] < row["cost_p90_usd"]
    shipped = rows[0]
    assert [round(shipped[c], 4) for c in ("cost_usd", "cost_expected_usd", "cost_p10_usd", "cost_p90_usd")] == \
        [7.6776, 8.7061, 8.1306, 9.2268]
    # the chosen configuration and the preset as shipped, each with its band
    assert "best: cost $5.1485 with every cached read; expected $7.4384 (p10 $6.6213" in stderr
    assert "as shipped (claude-code, configuration 0): cost $7.6776 with every cached read; " \
           "expected $8.7061 (p10 $8.1306 – p90 $9.2268" in stderr


def test_two_logs_add_up_their_draws(bedrock):
    """9eda1058 (5 requests) has no call that can miss: it adds its $0.6269 to every draw, so
    the two-log band is 624a4a58's shifted by that much; its expected cost is the sum of
    `simulate`'s per-log expected costs."""
    rows, _ = _tune_json(bedrock["spec_two"], bedrock["out_two"])
    one, _ = _tune_json(bedrock["spec_one"], bedrock["out_one"])
    for index, reserve in enumerate(RESERVES):
        bands = _simulated_bands(bedrock["two"], reserve)
        small = next(b for cid, b in bands.items() if "9eda1058" in cid)
        assert small["eligible"] == 0 and small["p10_usd"] == small["p90_usd"] == small["hits_usd"]
        assert round(small["hits_usd"], 4) == 0.6269
        row = rows[index]
        assert row["cost_expected_usd"] == pytest.approx(sum(b["expected_usd"] for b in bands.values()), rel=1e-12)
        for c in ("cost_p10_usd", "cost_p90_usd"):
            assert row[c] == pytest.approx(one[index][c] + small["hits_usd"], rel=1e-12)


def test_the_total_is_the_quantile_of_summed_draws_not_the_sum_of_quantiles():
    from workbench.engine.cache_miss import CostBand, total_band

    a = CostBand(1.0, 1.5, 1.0, 2.0, 0, 0, 0.5, 1, draws=np.array([1.0, 2.0] * 5))
    b = CostBand(1.0, 1.5, 1.0, 2.0, 0, 0, 0.5, 1, draws=np.array([2.0, 1.0] * 5))  # misses where a hits
    t = total_band([a, b])
    assert (t.expected_usd, t.p10_usd, t.p90_usd) == (3.0, 3.0, 3.0)  # the sum of quantiles: 2.0 to 4.0
    assert total_band([a]).as_dict() == a.as_dict()
    with pytest.raises(ValueError, match="draws"):
        total_band([CostBand(1.0, 1.0, 1.0, 1.0, 0, 0, 0, 0)])


def test_the_sweep_table_has_the_band_columns(bedrock):
    r = runner.invoke(app, ["sweep", str(bedrock["spec_one"]), "--out", str(bedrock["out_one"]),
                            "--executor", "serial", "--root", str(bedrock["root"]), "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [round(row["cost_expected_usd"], 4) for row in rows] == [8.7061, 7.4384]
    assert all(row["cost_p10_usd"] < row["cost_expected_usd"] < row["cost_p90_usd"] for row in rows)


def test_over_the_budget_only_the_asked_configurations_get_a_band(bedrock):
    from workbench.sweep.bands import sweep_bands
    from workbench.sweep.runner import aggregate, collect

    agg = aggregate(collect(bedrock["out_one"]))
    bands = sweep_bands(bedrock["out_one"], agg, only=[1], budget=10, shipped=True)
    assert sorted(bands.frame["config_index"].to_list()) == [0, 1]  # 1 asked, 0 the preset as shipped
    assert bands.shipped["config_index"] == 0 and round(bands.shipped["cost_expected_usd"], 4) == 8.7061
    bands = sweep_bands(bedrock["out_one"], agg, only=[1], budget=10)
    assert bands.frame["config_index"].to_list() == [1]
    assert bands.notes == ["cost band for 1 of 2 configurations (the ones shown): all of them would replay "
                           "444 events, over 10"]  # 2 configurations x 222 events


def test_ranking_on_the_expected_cost(bedrock):
    rows, stderr = _tune_json(bedrock["spec_one"], bedrock["out_one"], "--objective", "cost_expected_usd",
                              "--constraint", "cost_p90_usd<9")
    assert [r["config_index"] for r in sorted(rows.values(), key=lambda r: r["rank"])] == [1, 0]
    assert rows[1]["feasible"] and not rows[0]["feasible"]  # p90 $8.23 against $9.23


def test_generated_data_says_it_has_no_band(make_spec, tmp_path):
    """Generated continuities have no harness traffic to fit: no band columns (never zeros),
    a note naming the harness and provider instead; ranking on the band says why it cannot."""
    import yaml

    spec = tmp_path / "gen.yaml"
    spec.write_text(yaml.safe_dump(make_spec(seeds=[0], engine="batch")))
    out = tmp_path / "sw"
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"])
    assert r.exit_code == 0, r.output
    assert "note: no band: no miss profile for generated/anthropic" in r.stdout
    rows, stderr = _tune_json(spec, out)
    assert "note: no band: no miss profile for generated/anthropic" in stderr
    assert not any(c in row for row in rows.values() for c in ("cost_expected_usd", "cost_p10_usd"))
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run"])
    assert r.exit_code == 0 and "no band: no miss profile for generated/anthropic" in r.stdout
    assert "cost_p10_usd" not in r.stdout and "as shipped" not in r.stdout
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--objective", "cost_expected_usd"])
    assert r.exit_code == 2 and "cache-miss profile" in r.output


def test_the_threshold_sweep_report_draws_the_band(bedrock, tmp_path):
    from workbench.report.render import render_report

    res = render_report("threshold-sweep", bedrock["out_one"], tmp_path / "rep")
    html = res.html.read_text(encoding="utf-8")
    assert len(res.figures) == 2  # the metric panels with the band; the Pareto plot needs retention
    assert "expected cost $ (cache misses)" in html and "p10 $" in html and "8.7061" in html
    assert "7.4384" in html and "6.6213" in html and "8.2273" in html  # reserve 100,000


def test_the_figures_draw_the_band_where_present():
    from matplotlib.collections import PolyCollection

    from workbench.report import figures as F

    table = pl.DataFrame({"config": ["#0", "#1", "#2"], "trigger.reserve_tokens": [1, 2, 3],
                          "cost_usd": [1.0, 2.0, 3.0], "retention": [0.5, 0.6, 0.7],
                          "cost_expected_usd": [1.5, None, 3.5], "cost_p10_usd": [1.2, None, 3.1],
                          "cost_p90_usd": [1.9, None, 3.9], "feasible": [True] * 3})
    fig = F.metric_by_parameter(table, "trigger.reserve_tokens", metrics=("cost_usd",))
    ax = fig.axes[0]
    assert any(isinstance(c, PolyCollection) for c in ax.collections)  # the shaded p10-p90
    fig = F.pareto(table, label="config")
    bars = [c for c in fig.axes[0].containers if c.__class__.__name__ == "ErrorbarContainer"]
    assert len(bars) == 1 and len(bars[0].lines[0].get_xdata()) == 2  # the two rows with a band
    bare = table.drop("cost_expected_usd", "cost_p10_usd", "cost_p90_usd")
    assert not [c for c in F.pareto(bare, label="config").axes[0].containers
                if c.__class__.__name__ == "ErrorbarContainer"]
    ax = F.metric_by_parameter(bare, "trigger.reserve_tokens", metrics=("cost_usd",)).axes[0]
    assert not any(isinstance(c, PolyCollection) for c in ax.collections)


def test_the_policy_sweep_figures_draw_the_band_where_present(tmp_path):
    """The report's section on the policies no harness ships: a cost-only sweep's bars and a
    retention trade-off get the band of the configurations that have one."""
    from workbench.report.policy_sweeps import PolicySweep, tradeoff

    table = pl.DataFrame({"config": ["a", "b"], "shipped": [True, False], "cost_usd": [1.0, 2.0],
                          "cost_expected_usd": [1.5, None], "cost_p10_usd": [1.2, None], "cost_p90_usd": [1.9, None]})
    entry = PolicySweep("ttl-aware", "results", spec=tmp_path / "ttl-aware-x.yaml", base="claude-code", table=table)

    def bars(fig):
        return [c for ax in fig.axes for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]

    assert len(bars(tradeoff([entry], title="t"))) == 1  # cost only: one bar has a band
    entry.table = table.with_columns(pl.Series("retention", [0.5, 0.6]))
    (bar,) = bars(tradeoff([entry], title="t"))
    assert bar.lines[0].get_xdata().tolist() == [1.5]
    entry.table = table.drop("cost_expected_usd", "cost_p10_usd", "cost_p90_usd")
    assert not bars(tradeoff([entry], title="t"))


def test_a_configuration_whose_policy_changed_since_the_sweep_gets_no_band(bedrock):
    from workbench.sweep.bands import sweep_bands
    from workbench.sweep.runner import aggregate, collect

    agg = aggregate(collect(bedrock["out_one"]))
    agg = agg.with_columns(pl.when(pl.col("config_index") == 1).then(pl.lit("other"))
                           .otherwise(pl.col("policy_digest")).alias("policy_digest"))
    bands = sweep_bands(bedrock["out_one"], agg)
    assert bands.frame["config_index"].to_list() == [0]
    assert any("configuration(s) 1: the policy sweep.json gives is not the one its runs recorded" in n
               for n in bands.notes)
