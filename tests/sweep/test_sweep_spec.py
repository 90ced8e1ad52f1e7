"""Spec expansion: scalars fixed, lists swept (product / zip), seeds as an axis, stable ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.sweep.spec import SpecError, SweepSpec, runs_frame

FILES = {"events.parquet": "a" * 64, "continuities.parquet": "b" * 64}
SIMULATIONS = Path(__file__).resolve().parents[2] / "simulations"


def spec(**over):
    d = {"dataset": "d", "base": "openclaw-flush",
         "parameters": {"flush.soft_threshold_tokens": [2000, 4000, 8000],
                        "trigger.reserve_tokens": [13_000, 20_000],
                        "provider.model": "claude-sonnet-4-5"},
         "seeds": [0, 1]}
    d.update(over)
    return SweepSpec.from_dict(d)


def test_product_fixes_scalars_and_sweeps_lists_with_seeds_as_an_axis():
    s = spec()
    configs = s.configurations()
    assert len(configs) == 6
    assert all(c["provider.model"] == "claude-sonnet-4-5" for c in configs)
    assert [(c["flush.soft_threshold_tokens"], c["trigger.reserve_tokens"]) for c in configs] == [
        (2000, 13_000), (2000, 20_000), (4000, 13_000), (4000, 20_000), (8000, 13_000), (8000, 20_000)]
    runs = s.runs(FILES)
    assert len(runs) == 12
    assert [r.seed for r in runs[:4]] == [0, 1, 0, 1]
    assert [r.config_index for r in runs[:4]] == [0, 0, 1, 1]
    assert len({r.run_id for r in runs}) == 12
    assert len({r.config_id for r in runs}) == 6
    # the two seeds of a configuration share its config id and policy digest
    assert runs[0].config_id == runs[1].config_id and runs[0].policy_digest == runs[1].policy_digest


def test_zip_pairs_lists_and_needs_equal_lengths():
    s = spec(mode="zip", parameters={"flush.soft_threshold_tokens": [2000, 4000],
                                     "trigger.reserve_tokens": [13_000, 20_000]}, seeds=[3])
    assert [(c["flush.soft_threshold_tokens"], c["trigger.reserve_tokens"]) for c in s.configurations()] == [
        (2000, 13_000), (4000, 20_000)]
    with pytest.raises(SpecError, match="equal length"):
        spec(mode="zip")


def test_scalar_only_spec_is_one_configuration_and_seed_may_be_a_scalar():
    s = spec(parameters={"trigger.reserve_tokens": 20_000}, seeds=7)
    assert s.configurations() == [{"trigger.reserve_tokens": 20_000}]
    assert [r.seed for r in s.runs(FILES)] == [7]


def test_ids_are_stable_and_depend_on_what_they_should():
    a = [r.run_id for r in spec().runs(FILES)]
    assert a == [r.run_id for r in spec().runs(FILES)]
    # the same values spelled differently in YAML hash the same (20000.0 for an int field)
    assert a == [r.run_id for r in spec(parameters={"flush.soft_threshold_tokens": [2000.0, 4000, 8000],
                                                    "trigger.reserve_tokens": [13_000.0, 20_000],
                                                    "provider.model": "claude-sonnet-4-5"}).runs(FILES)]
    # dataset bytes, engine, tokenizer and seed are part of the id
    assert a[0] not in [r.run_id for r in spec().runs({**FILES, "events.parquet": "c" * 64})]
    assert a[0] not in [r.run_id for r in spec(engine="reference").runs(FILES)]
    assert a[0] not in [r.run_id for r in spec(tokenizer="approx").runs(FILES)]
    assert a[0] not in [r.run_id for r in spec(seeds=[5]).runs(FILES)]
    # a configuration keeps its id when other configurations are added around it
    wider = spec(parameters={"flush.soft_threshold_tokens": [1000, 2000, 4000, 8000],
                             "trigger.reserve_tokens": [13_000, 20_000, 40_000],
                             "provider.model": "claude-sonnet-4-5"})
    assert set(a) <= {r.run_id for r in wider.runs(FILES)}


def test_tied_keys_take_the_same_values():
    s = spec(parameters={"trigger.reserve_tokens,flush.reserve_tokens": [13_000, 20_000]}, seeds=[0])
    assert s.configurations() == [{"trigger.reserve_tokens": 13_000, "flush.reserve_tokens": 13_000},
                                  {"trigger.reserve_tokens": 20_000, "flush.reserve_tokens": 20_000}]
    assert s.parameter_keys() == ["trigger.reserve_tokens", "flush.reserve_tokens"]
    frame = runs_frame(s, s.runs(FILES), "d")
    assert frame["flush.reserve_tokens"].to_list() == [13_000, 20_000]


def test_tuple_parameters_are_values_unless_a_list_of_lists():
    s = spec(base="anthropic-clear-tool-uses", parameters={"compaction.exclude_tools": ["Read", "Grep"]}, seeds=[0])
    assert s.configurations() == [{"compaction.exclude_tools": ("Read", "Grep")}]
    s = spec(base="anthropic-clear-tool-uses", parameters={"compaction.exclude_tools": [["Read"], []]}, seeds=[0])
    assert [c["compaction.exclude_tools"] for c in s.configurations()] == [("Read",), ()]
    frame = runs_frame(s, s.runs(FILES), "d")
    assert frame["compaction.exclude_tools"].to_list() == ['["Read"]', "[]"]


def test_invalid_configuration_gets_a_stable_id_and_its_error():
    s = spec(parameters={"compaction.floor": [100, 10**9]}, seeds=[0])  # above the cap: a relation
    good, bad = s.runs(FILES)
    assert good.error is None and bad.error is not None and "compaction.floor" in bad.error
    assert bad.policy_digest.startswith("invalid_")
    assert bad.run_id == s.runs(FILES)[1].run_id


def test_run_table_has_every_parameter():
    s = spec()
    frame = runs_frame(s, s.runs(FILES), "d")
    assert frame.height == 12
    assert {"run_id", "config_id", "seed", "flush.soft_threshold_tokens", "trigger.reserve_tokens",
            "provider.model", "policy_digest", "engine", "tokenizer", "dataset"} <= set(frame.columns)
    assert frame["trigger.reserve_tokens"].dtype.is_integer()


@pytest.mark.parametrize(("bad", "message"), [
    ({"parameters": {"trigger.nonsense": [1, 2]}}, "unknown policy parameter"),
    ({"parameters": {"trigger.fraction": []}}, "empty list"),
    ({"mode": "grid"}, "mode must be"),
    ({"seeds": [1, 1]}, "seeds repeat"),
    ({"seeds": ["a"]}, "seeds must be"),
    ({"engine": "gpu"}, "engine must be"),
    ({"base": "no-such-preset"}, "base"),
    ({"evaluate": "yes"}, "evaluate must be"),
    ({"surprise": 1}, "unknown spec key"),
    ({"dataset": {"path": "d", "generate": {"events": 10, "colour": "red"}}}, "unknown dataset.generate"),
])
def test_bad_specs_are_rejected_with_a_message(bad, message):
    with pytest.raises(SpecError, match=message):
        spec(**bad)


def test_duplicate_configurations_are_rejected():
    with pytest.raises(SpecError, match="same policy"):
        spec(parameters={"trigger.reserve_tokens": [20_000, 20_000.0]}).runs(FILES)


def test_shipped_specs_load_and_expand():
    paths = sorted(SIMULATIONS.glob("*.yaml"))
    assert {p.stem for p in paths} >= {"claude-code-threshold", "openclaw-flush", "codex-limit"}
    for p in paths:
        s = SweepSpec.load(p)
        assert s.dataset.generate is not None, p
        runs = s.runs(FILES)
        assert len(runs) == len(s.configurations()) * len(s.seeds) and all(r.error is None for r in runs), p
