"""The modelled summarizer without filler (``filler=False``, ``--no-filler``): a summary is
its decided lines alone. Its decisions are the default's; its text is the default's without
the filler lines; an evaluation reads it with the same tables; the option is checked where
it is given (summarizer, CLI, sweep spec)."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.continuity.dataset import load_dataset
from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.pipeline import evaluate_run
from workbench.summarize import get_summarizer
from workbench.summarize.base import SummarizerConfigError, SummaryRequest
from workbench.summarize.modelled import ModelledSummarizer
from workbench.synth.generate import GeneratorConfig, generate_dataset

LEAKY = {"p_copy_secret": 0.5, "p_partial_secret": 0.3, "p_hallucinate": 0.5, "p_marker_leak": 0.5,
         "p_paraphrase_fact": 0.1}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=7, secrets=60, facts=24),
                            tmp_path_factory.mktemp("lean") / "ds")


def _requests(dataset, purpose: str) -> list[SummaryRequest]:
    dt = DatasetText(load_dataset(dataset.path))
    n = len(dt.by_cont[0]["seq"])
    out = []
    for k, (start, length, target) in enumerate(((0, 80, 400), (60, 900, 6_000), (700, 2_000, 20_000))):
        rows = list(range(start, min(n, start + length)))
        seqs = dt.by_cont[0]["seq"][rows]
        out.append(SummaryRequest("c0", f"art-{k}", int(seqs[0]), int(seqs[-1]), dt.span_events(0, rows), None,
                                  target, labels=dt.labels(0, rows), purpose=purpose))
    return out


@pytest.mark.parametrize("purpose", ["compaction", "flush"])
@pytest.mark.parametrize("options", [{}, LEAKY, {"task_state": True, "p_retain_fact": 0.5}],
                         ids=["default", "leaky", "task-state"])
def test_a_summary_without_filler_is_the_default_one_without_its_filler_lines(dataset, purpose, options):
    full, lean = ModelledSummarizer(seed=3, **options), ModelledSummarizer(seed=3, filler=False, **options)
    for req in _requests(dataset, purpose):
        a, b = full.summarize(req), lean.summarize(req)
        assert a.retained == b.retained
        decided = ("retained_facts", "paraphrased_facts", "dropped_facts", "copied_secrets", "partial_secrets",
                   "omitted_secrets", "kept_negatives", "hallucinated_secrets", "marker_leaks")
        assert {k: a.diagnostics[k] for k in decided} == {k: b.diagnostics[k] for k in decided}
        assert b.diagnostics["filler_items"] == 0 < a.diagnostics["filler_items"]
        assert len(b.text) < len(a.text)
        # every item line of the lean summary is in the full one; what the full one has more
        # is its filler (a line each, a joined section's sentences in one line)
        item = [x for x in b.text.split("\n") if x.startswith("- ")]
        assert set(item) <= set(a.text.split("\n"))
        assert b.text.split("\n")[0] == a.text.split("\n")[0]  # (the same header)


def test_a_summary_without_filler_carries_only_decided_lines(dataset):
    """Chained: the second summary carries lines of the first, and the first had no filler."""
    lean = ModelledSummarizer(seed=4, filler=False, p_retain_fact=1.0)
    first, second = _requests(dataset, "compaction")[1:]
    one = lean.summarize(first)
    two = lean.summarize(SummaryRequest(**{**second.__dict__, "previous_summary": one.text}))
    carried = [line for line in two.text.split("\n") if line.startswith("- ")]
    assert two.diagnostics["carried_lines"] > 0
    assert set(one.text.split("\n")) & set(carried)


def test_the_option_is_checked():
    with pytest.raises(SummarizerConfigError, match="filler must be true or false"):
        ModelledSummarizer(filler="no")
    assert get_summarizer("calibrated", filler=False).filler is False
    with pytest.raises(SummarizerConfigError, match="bad options for summarizer 'extractive'"):
        get_summarizer("extractive", filler=False)


def test_an_evaluation_without_filler_reads_the_same_tables_from_a_fraction_of_the_text(dataset):
    policy = get_policy("openclaw-flush", {"provider.context_window": 24_000, "trigger.reserve_tokens": 4_000,
                                           "flush.reserve_tokens": 4_000})
    result = simulate(dataset, [policy], engine="kernel")
    full = evaluate_run(result, dataset, compactions=True)
    lean = evaluate_run(result, dataset, summarizer_options={"filler": False}, compactions=True)
    for name in ("texts", "leakage", "retention", "compactions"):
        assert lean[name].columns == full[name].columns and lean[name].height == full[name].height, name
    chars = {k: int(ev["texts"]["text_raw"].str.len_chars().sum()) for k, ev in (("full", full), ("lean", lean))}
    assert chars["lean"] * 3 < chars["full"]
    # the decisions are the same draws: what each compaction copied and kept
    same = ("artifact_id", "copied_secrets")
    assert lean["texts"].select(same).equals(full["texts"].select(same))
    # a secret leaks into a lean summary only where the summarizer copied it (whole, in part, or
    # in a marker): the raw texts' leaks are the decided ones
    raw = lean["leakage"].filter(pl.col("channel").is_in(["summary", "memory"]) & pl.col("leaked_unredacted"))
    assert raw.height > 0


def test_the_cli_and_a_sweep_spec_take_it(dataset, tmp_path):
    import orjson
    from typer.testing import CliRunner

    from workbench.cli import app
    from workbench.rundir.names import EVALUATION
    from workbench.sweep.spec import SpecError, SweepSpec

    runner = CliRunner()
    base = ["simulate", "--dataset", str(dataset.path), "--policy", "openclaw-flush", "--evaluate"]
    r = runner.invoke(app, [*base, "--no-filler", "--out", str(tmp_path / "run")])
    assert r.exit_code == 0, r.output
    assert orjson.loads((tmp_path / "run" / EVALUATION).read_bytes())["summarizer_settings"] == {"filler": False}
    r = runner.invoke(app, [*base, "--summarizer", "extractive", "--no-filler", "--out", str(tmp_path / "bad")])
    assert r.exit_code == 2 and "'extractive' summarizer writes no filler" in r.output
    assert not (tmp_path / "bad").exists()
    spec = {"name": "s", "dataset": str(dataset.path), "base": "openclaw-flush",
            "parameters": {"trigger.reserve_tokens": [20_000]}}
    assert SweepSpec.from_dict({**spec, "evaluate": {"options": {"filler": False, "draws": "shared"}}})
    with pytest.raises(SpecError, match="filler must be true or false"):
        SweepSpec.from_dict({**spec, "evaluate": {"options": {"filler": "off"}}})
    with pytest.raises(SpecError, match="'extractive' summarizer writes no filler"):  # (not a failure per run)
        SweepSpec.from_dict({**spec, "evaluate": {"summarizer": "extractive", "options": {"filler": False}}})
    with pytest.raises(SpecError, match="bad options for summarizer 'modelled'"):  # (int("many"), not a traceback)
        SweepSpec.from_dict({**spec, "evaluate": {"options": {"max_item_chars": "many"}}})
