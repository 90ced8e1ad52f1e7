"""One replay loop (issue 29): ``simulate`` and the summary path (``summarize_inputs`` /
``run_totals``, what sweeps run) resolve their jobs the same way (``run.replay_jobs``), so
``price_as`` and the notes of what was replayed otherwise than asked apply on both."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.engine.presets import get_policy
from workbench.engine.run import prepare_dataset, run_totals, simulate, summarize_inputs


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    return generate_dataset(GeneratorConfig(profile="coding", events=400, seed=2, tokenizers=("cl100k",)),
                            tmp_path_factory.mktemp("loop") / "ds")


@pytest.mark.parametrize("engine", ["kernel", "batch"])
def test_price_as_prices_the_summary_path_as_simulate(dataset, engine):
    pols = ["claude-code", "as-recorded"]
    sim = simulate(dataset, pols, model="gpt-9-imaginary", price_as="gpt-5")
    tot = run_totals(dataset, pols, engine=engine, model="gpt-9-imaginary", price_as="gpt-5")
    assert tot["run_id"].to_list() == sim.summary["run_id"].to_list()
    assert tot["model"].to_list() == sim.summary["model"].to_list() == ["gpt-9-imaginary"] * 2
    assert np.allclose(tot["cost_usd"].to_numpy(), sim.summary["cost_usd"].to_numpy(), rtol=1e-12, atol=0)
    assert (tot["cost_usd"].to_numpy() > 0).all()


def test_the_summary_path_takes_simulates_notes(dataset):
    sim = simulate(dataset, ["claude-code", "as-recorded"], model="gpt-9-imaginary", price_as="gpt-5")
    notes: dict[str, list[str]] = {}
    summarize_inputs(prepare_dataset(dataset, "cl100k"), [get_policy("claude-code"), get_policy("as-recorded")],
                     model="gpt-9-imaginary", price_as="gpt-5", notes=notes)
    assert notes == {n["note"]: n["where"] for n in sim.config["notes"]}
    assert any("priced as gpt-5" in n for n in notes) and any("replayed as no-compaction" in n for n in notes)
