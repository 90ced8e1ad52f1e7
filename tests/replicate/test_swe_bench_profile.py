"""The swe-bench profile follows the published shape it cites, and --continuities makes
task-sized continuities (one SWE-bench instance each) without moving one-continuity output."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.continuity.enums import EventKind, Role
from workbench.synth.generate import GeneratorConfig, build_continuities, build_continuity
from workbench.synth.profiles import PROFILES
from workbench.synth.swe_bench import SHAPE

TASKS = 400


@pytest.fixture(scope="module")
def tasks():
    cfg = GeneratorConfig(profile="swe-bench", continuities=TASKS, seed=11, facts=0, secrets=0,
                          hard_negatives=0, tokenizers=("cl100k",), text="labels-only")
    return build_continuities(cfg)


def _turns(c) -> int:
    request = c.events.column("request").to_numpy()
    return int(np.unique(request[request >= 0]).size)


def test_turns_per_instance_follow_the_published_distribution(tasks):
    turns = np.array([_turns(c) for c in tasks])
    assert abs(np.median(turns) / SHAPE["turns_median"].value - 1) < 0.2
    assert abs(turns.mean() / SHAPE["turns_mean"].value - 1) < 0.15
    assert abs(np.quantile(turns, 0.9) / SHAPE["turns_p90"].value - 1) < 0.2
    assert abs(np.quantile(turns, 0.1) / SHAPE["turns_p10"].value - 1) < 0.35
    assert abs(np.log(turns).std() - SHAPE["turns_log_sd"].value) < 0.15
    assert turns.max() <= SHAPE["step_limit"].value
    assert abs((turns >= SHAPE["step_limit"].value).mean() - SHAPE["at_step_limit"].value) < 0.03


def test_observations_are_the_published_share_of_a_turn_and_nothing_thinks(tasks):
    obs = out = 0
    for c in tasks:
        kind = c.events.column("kind").to_numpy()
        role = c.events.column("role").to_numpy()
        tokens = c.events.column("tokens_cl100k").to_numpy()
        assert not (kind == EventKind.REASONING).any()  # a non-thinking profile
        work = (kind == EventKind.TOOL_RESULT) | (kind == EventKind.TOOL_CALL) | \
               ((kind == EventKind.MESSAGE) & (role == Role.ASSISTANT))
        obs += int(tokens[kind == EventKind.TOOL_RESULT].sum())
        out += int(tokens[work & (kind != EventKind.TOOL_RESULT)].sum())
    share = obs / (obs + out)
    assert abs(share - SHAPE["observation_share"].value) < 0.02
    turns = sum(_turns(c) for c in tasks)
    assert abs(out / turns / SHAPE["output_tokens_per_turn"].value - 1) < 0.2


def test_every_statistic_names_its_source():
    assert all(f.source and f.note for f in SHAPE.values())
    profile = PROFILES["swe-bench"]
    assert profile.steps_max + 1 == SHAPE["step_limit"].value
    assert profile.work_turns and all(len(t) == 3 for t in profile.work_turns)


def test_task_sized_continuities_are_one_episode_each_and_numbered(tasks):
    ids = [c.config.continuity_id for c in tasks]
    assert len(set(ids)) == TASKS
    for i, c in enumerate(tasks[:20]):
        kind = c.events.column("kind").to_numpy()
        role = c.events.column("role").to_numpy()
        assert set(c.events.column("continuity").to_numpy().tolist()) == {i}
        assert int(((kind == EventKind.MESSAGE) & (role == Role.USER)).sum()) == 1  # one task
        assert c.events.column("seq").to_numpy()[0] == 0


def test_continuities_default_is_the_single_continuity_generator():
    cfg = GeneratorConfig(profile="coding", events=800, seed=5)
    [one] = build_continuities(cfg)
    assert one.events.equals(build_continuity(cfg).events)


def test_generate_writes_many_continuities_and_keeps_the_old_manifest(tmp_path):
    from workbench.synth.generate import generate_dataset

    many = generate_dataset(GeneratorConfig(profile="swe-bench", continuities=5, seed=2), tmp_path / "many")
    assert many.manifest["counts"]["continuities"] == 5
    assert many.manifest["source"]["generator"]["continuities"] == 5
    one = generate_dataset(GeneratorConfig(profile="coding", events=400, seed=2), tmp_path / "one")
    assert "continuities" not in one.manifest["source"]["generator"]


def test_continuities_below_one_is_refused():
    from workbench.errors import WorkbenchError

    with pytest.raises(WorkbenchError, match="--continuities"):
        GeneratorConfig(profile="swe-bench", continuities=0).resolved()


def test_generate_command_takes_continuities(tmp_path):
    from typer.testing import CliRunner

    from workbench.cli import app

    r = CliRunner().invoke(app, ["generate", "--profile", "swe-bench", "--continuities", "3", "--seed", "1",
                                 "--out", str(tmp_path / "d")])
    assert r.exit_code == 0, r.output
    assert "3 continuities" in r.output
    assert CliRunner().invoke(app, ["generate", "--continuities", "0", "--out", str(tmp_path / "e")]).exit_code == 2
