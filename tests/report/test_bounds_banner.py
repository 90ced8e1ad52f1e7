"""Issue 26, item 1: a report flags, in red above every table, any policy whose figures break a
physical bound (a prompt over the window, a cache read over the prompt, negative tokens)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from planted_tables import plant

from workbench.report import html as H

BANNER = 'class="wb-bounds"'


@pytest.fixture(autouse=True)
def _clean_flags():
    H._FLAGGED.clear()
    yield
    H._FLAGGED.clear()


def test_a_table_whose_own_figures_break_a_bound_is_flagged_in_red():
    ok = pl.DataFrame({"policy": ["a"], "context_window": [200_000], "peak_context_tokens": [150_000]})
    over = ok.with_columns(pl.lit(459_198).alias("peak_context_tokens"))
    assert BANNER not in H.table_html(ok)
    shown = H.table_html(over)
    assert BANNER in shown and shown.index(BANNER) < shown.index("<table")
    assert "a: a request&#x27;s prompt exceeds its context window" in shown


def test_every_table_after_flag_bounds_names_the_run_s_offending_policies():
    summary = pl.DataFrame({"policy": ["good", "bad"], "continuity_id": ["c", "c"],
                            "context_window": [100, 100], "prompt_tokens": [50, 50],
                            "cached_input_tokens": [10, 70], "peak_context_tokens": [90, 90]})
    assert H.flag_bounds(summary) == {"bad": ["cache_read_over_prompt"]}
    unrelated = pl.DataFrame({"secret": ["x"], "leaked": [False]})  # a table with no figures of its own
    for shown in (H.table_html(unrelated), H.table_html(None)):
        assert BANNER in shown and "bad:" in shown and "good" not in shown
    H.flag_bounds(summary.filter(pl.col("policy") == "good"))
    assert BANNER not in H.table_html(unrelated)


def test_the_verdict_of_a_run_with_a_policy_over_its_window_is_flagged(tmp_path):
    from workbench.engine.run import simulate
    from workbench.report.verdict import build_verdict
    from workbench.rundir import names as N
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    dataset = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp_path / "d")
    run = Path(simulate(dataset, ["claude-code", "no-compaction"], engine="reference").write(tmp_path / "run"))
    assert BANNER not in build_verdict(run).to_html()
    summary = pl.read_parquet(run / N.SUMMARY)
    plant(run, N.SUMMARY, summary.with_columns(
        pl.when(pl.col("policy") == "no-compaction").then(pl.col("context_window") + 1)
        .otherwise(pl.col("peak_context_tokens")).alias("peak_context_tokens")))
    page = build_verdict(run).to_html()
    banner = page[page.index(BANNER):]
    assert banner.index("no-compaction") < banner.index("<table") and "claude-code:" not in banner
