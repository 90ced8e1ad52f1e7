"""Task-state retention on a synthetic dataset planted with a task state (issue 27 item 5),
reported apart from the other facts, and issue 31's task-state checkpoint in evaluation: its
summaries keep every task-state fact, the other facts as the stock summary would."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.evaluate.pipeline import evaluate_run
from workbench.evaluate.retention import task_retention
from workbench.summarize.base import SummarizerConfigError
from workbench.synth.generate import GeneratorConfig, generate_dataset

SMALL = {"provider.context_window": 25_000, "trigger.reserve_tokens": 4_125}  # claude-code's 33k on 25k
BLOCK = 400


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=6_000, seed=2, facts=12, secrets=8,
                                          hard_negatives=4, task_state=True), tmp_path_factory.mktemp("ts") / "ds")
    policies = [get_policy("claude-code", SMALL, rename="stock"),
                get_policy("claude-code", {**SMALL, "compaction.task_state_tokens": BLOCK}, rename="task-state")]
    result = simulate(ds, policies)
    return ds, result, evaluate_run(result, ds, summarizer="modelled", compactions=False)


def test_task_state_is_reported_apart(evaluated):
    _, _, ev = evaluated
    by = {r["policy"]: r for r in ev["retention_by_policy"].iter_rows(named=True)}
    probes = ev["retention"]
    for name in ("stock", "task-state"):
        mine = probes.filter((pl.col("policy") == name) & (pl.col("fact_kind") == "task"))
        assert by[name]["task_probes"] == mine.height > 0
        assert by[name]["task_retention"] == pytest.approx((mine["status"] != "lost").mean())
        assert ev["report"]["policies"][name]["task_retention"] == pytest.approx(by[name]["task_retention"])
    assert task_retention(probes) == {n: pytest.approx(by[n]["task_retention"]) for n in ("stock", "task-state")}


def test_a_task_state_checkpoint_keeps_every_task_fact_and_costs_its_block(evaluated):
    ds, result, ev = evaluated
    tasks = ds.facts().filter(pl.col("kind") == "task")
    summaries = ev["texts"].filter(pl.col("kind") == "summary")
    dropped = {}
    for name in ("stock", "task-state"):
        rows = summaries.filter(pl.col("policy") == name)
        assert rows.height >= 2, "the dataset must compact more than once"
        missing = 0
        for r in rows.iter_rows(named=True):
            # the task state so far: every task fact of the spans this summary (and the ones it folds) replaced
            so_far = tasks.filter(pl.col("seq") <= r["to_seq"])["answer"].to_list()
            missing += sum(1 for a in so_far if a not in r["text"])
            if name == "task-state" and so_far:
                assert "### Task state" in r["text"]
        dropped[name] = missing
    heads = ev["report"]["policies"]
    assert heads["task-state"]["task_retention"] > heads["stock"]["task_retention"]
    ck = result.events.filter(pl.col("event_type") == "continuity_compaction_checkpoint_created")
    first = {p: ck.filter(pl.col("policy") == p)["item_tokens"][0] for p in ("stock", "task-state")}
    assert first["task-state"] == first["stock"] + BLOCK  # the same first span, the block on top


def test_a_summarizer_that_cannot_write_the_task_state_is_an_error():
    from workbench.summarize.settings import policy_options

    policy = get_policy("claude-code", {"compaction.task_state_tokens": BLOCK})
    assert policy_options("calibrated", {}, policy) == {"task_state": True}
    with pytest.raises(SummarizerConfigError, match="task-state checkpoint"):
        policy_options("extractive", {}, policy)
    assert policy_options("extractive", {}, get_policy("claude-code")) == {}
