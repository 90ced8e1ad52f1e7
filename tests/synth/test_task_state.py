"""The generator option that plants an evolving task state (a todo list whose items move from
open to done, and the next step) as facts of kind ``task``: off by default (every dataset
draws what it drew before), on with ``task_state=True``."""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench.continuity.enums import EventKind
from workbench.synth.generate import GeneratorConfig, _generator_record, build_continuity
from workbench.synth.task_state import SHOWN_DONE, plan_updates


def _facts(c) -> pl.DataFrame:
    return pl.from_arrow(c.facts)


def test_off_by_default_and_left_out_of_the_record():
    cfg = GeneratorConfig(events=6000, seed=1)
    plain = build_continuity(cfg)
    assert "task" not in set(_facts(plain)["kind"].to_list())
    assert "task_state" not in _generator_record(cfg.resolved())
    assert _generator_record(GeneratorConfig(events=6000, seed=1, task_state=True).resolved())["task_state"] is True


def test_on_adds_task_facts_in_tool_calls_and_changes_no_other_label_or_event():
    plain = build_continuity(GeneratorConfig(events=6000, seed=1))
    tasked = build_continuity(GeneratorConfig(events=6000, seed=1, task_state=True))
    f = _facts(tasked)
    others = f.filter(pl.col("kind") != "task")
    assert others.equals(_facts(plain)) and tasked.secrets.equals(plain.secrets)
    tasks = f.filter(pl.col("kind") == "task")
    assert tasks.height >= 3 * 4  # at least 3 updates, each with an opened item and a next step
    texts = tasked.events["text"].to_pylist()
    kinds = tasked.events["kind"].to_numpy()
    for r in tasks.iter_rows(named=True):
        assert texts[r["seq"]][r["start"]:r["end"]] == r["answer"]
        assert kinds[r["seq"]] == EventKind.TOOL_CALL
    changed = [i for i, (a, b) in enumerate(zip(plain.events["text"].to_pylist(), texts, strict=True)) if a != b]
    assert changed == sorted(set(tasks["seq"].to_list()))


def test_items_move_from_open_to_done_and_each_update_names_the_next_step():
    tasks = _facts(build_continuity(GeneratorConfig(events=9000, seed=4, task_state=True))).filter(
        pl.col("kind") == "task")
    opened = {r["answer"]: r["seq"] for r in tasks.iter_rows(named=True)
              if not r["answer"].startswith(("[x] ", "Next step: "))}
    done = [(r["answer"].removeprefix("[x] "), r["seq"]) for r in tasks.iter_rows(named=True)
            if r["answer"].startswith("[x] ")]
    assert done, "no item was ever marked done"
    for item, seq in done:
        assert opened[item] < seq, f"{item!r} done before it was opened"
    steps = tasks.filter(pl.col("answer").str.starts_with("Next step: "))
    assert steps["seq"].n_unique() == tasks["seq"].n_unique() == steps.height  # one step per update
    assert steps["answer"].n_unique() == steps.height


def test_a_plan_by_hand():
    ups = plan_updates(np.random.default_rng(0), 9)
    # 3 items opened first, then each update closes the oldest open item and opens one
    assert [len(u.opened) for u in ups] == [3] + [1] * 8
    assert [len(u.done) for u in ups] == [0] + [1] * 8
    assert ups[1].done == (ups[0].opened[0],) and ups[2].done == (ups[0].opened[1],)
    last = ups[-1].text
    assert f"({8 - SHOWN_DONE} earlier items done)" in last and last.count("- [x] ") == SHOWN_DONE
    assert last.count("- [ ] ") == 3
    assert last.rsplit("\n", 1)[1].startswith(f"Next step: start '{ups[6].opened[0]}'")


def test_inspect_shows_the_task_state_apart_from_the_planted_facts(tmp_path):
    from workbench.continuity.inspect import inspect_dataset
    from workbench.synth.generate import generate_dataset

    ds = generate_dataset(GeneratorConfig(events=6000, seed=1, facts=5, task_state=True), tmp_path / "ds")
    lab = inspect_dataset(ds.path)["labels"]
    tasks = ds.facts().filter(pl.col("kind") == "task")
    assert lab["facts"]["total"] == 5 and "task" not in lab["facts"]["by_kind"]
    by = lab["task_state"]["by_kind"]
    assert lab["task_state"]["total"] == tasks.height == by["open"] + by["done"] + by["next_step"]
    assert by["next_step"] == tasks["seq"].n_unique() and by["open"] == by["done"] + 3  # 3 opened first
