"""Issue 15, honest counts: ``compactions`` counts the policy's own compactions only; the
overflow's last resort (the oldest raw events dropped) is a truncation, with its own event
type, ledger flag and ``truncations`` column, and summary.parquet, events.parquet, the
verdict table and the sawtooth's panel titles give the same figures for every preset.

Every preset replays one small coding continuity on a 20k window (thresholds scaled), so
the non-compacting presets overflow and truncate while the others compact.
"""

from __future__ import annotations

import re

import polars as pl
import pytest
from scaled_presets import on_window

CP = "continuity_compaction_checkpoint_created"
NEVER_COMPACT = ("no-compaction", "as-recorded", "observation-masking")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from workbench.engine.presets import PRESETS
    from workbench.engine.run import simulate
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    root = tmp_path_factory.mktemp("counts")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=2000, seed=2), root / "ds")
    result = simulate(ds, [on_window(p, 20_000) for p in PRESETS.values()])
    return result.write(root / "run"), result


def _by_policy(frame) -> dict[str, dict]:
    from workbench.engine.metrics import policy_totals

    return {r["policy"]: r for r in policy_totals(frame).iter_rows(named=True)}


def test_an_overflow_truncation_is_counted_as_a_truncation_never_as_a_compaction(run):
    _, result = run
    rows = _by_policy(result.summary)
    for name in NEVER_COMPACT:
        r = rows[name]
        assert r["overflows"] > 0, f"{name} should overflow a 20k window on this continuity"
        assert (r["compactions"], r["truncations"]) == (0, r["overflows"]), name
    assert any(r["compactions"] > 0 for r in rows.values())
    ev, led = result.events, result.ledger
    for name, r in rows.items():
        mine = ev.filter(pl.col("policy") == name)
        assert mine.filter(pl.col("event_type") == CP).height == r["compactions"], name
        cuts = mine.filter(pl.col("event_type") == "context.truncated")
        assert cuts.height == r["truncations"], name
        assert cuts["frame_seq"].null_count() == cuts.height  # not a checkpoint frame
        main = led.filter((pl.col("policy") == name) & (pl.col("call_kind") == "main"))
        assert int(main["truncated"].sum()) == r["truncations"]  # at most one per request
    # the cache a truncation breaks is lost to the truncation, not to a compaction
    nc = led.filter((pl.col("policy") == "no-compaction") & (pl.col("call_kind") == "main"))
    assert "compaction" not in set(nc["cache_loss"])
    assert "truncation" in set(nc.filter(pl.col("truncated"))["cache_loss"])


def _title_counts(title: str) -> dict[str, int]:
    def count(word: str) -> int:
        m = re.search(rf"([\d,]+) {word}s?\b", title)
        return int(m.group(1).replace(",", "")) if m else 0

    return {c: count(c[:-1]) for c in ("compactions", "truncations", "overflows")}


def test_the_verdict_table_and_the_sawtooth_agree_for_every_preset(run):
    from workbench.report.figures import sawtooth
    from workbench.report.verdict import build_verdict
    from workbench.rundir.read import load_table

    run_dir, result = run
    table = build_verdict(run_dir).table
    assert {"compactions", "truncations", "overflows"} <= set(table.columns)
    summary, ledger = load_table(run_dir, "summary"), load_table(run_dir, "ledger")
    fig = sawtooth(ledger, summary=summary, overlay=False)
    titles = {ax.get_title().split(":")[0]: ax.get_title() for ax in fig.axes if ax.get_title()}
    assert set(titles) == set(table["policy"])
    for row in table.iter_rows(named=True):  # one continuity: the panel is the policy's total
        got = _title_counts(titles[row["policy"]])
        assert got == {c: row[c] for c in got}, (row["policy"], titles[row["policy"]])
    assert "0 compactions, " in titles["no-compaction"] and " truncation" in titles["no-compaction"]
