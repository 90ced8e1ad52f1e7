"""Why every modelled summary's stored text is written (workbench.evaluate.texts): the next
summary of a folding policy carries lines of it forward, so its decisions read that text."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.evaluate.texts import derive_texts
from workbench.synth.generate import GeneratorConfig, generate_dataset

EARLIER = "### Earlier context"


@pytest.fixture(scope="module")
def folding_run(tmp_path_factory):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=1500, seed=4, secrets=40, facts=12),
                          tmp_path_factory.mktemp("chain") / "ds")
    policy = get_policy("llm-summary", {"provider.context_window": 25_000})
    assert not policy.compaction.accumulate and policy.redaction.sr1_carry_forward
    return ds, simulate(ds, [policy], engine="reference")


def _carried(text: str) -> list[str]:
    """The single-line units of a summary's *Earlier context* section."""
    if EARLIER not in text:
        return []
    section = text.split(EARLIER, 1)[1].split("\n\n", 1)[0]
    return [ln.removeprefix("- ") for ln in section.split("\n")[1:] if ln.startswith("- ")]


def test_each_summary_carries_lines_of_the_previous_stored_text(folding_run):
    ds, res = folding_run
    # every secret copied, every line carried: the redacted lines are carried too
    texts, _ = derive_texts(res, ds, summarizer_options={"p_copy_secret": 1.0, "p_partial_secret": 0.0,
                                                         "p_retain_fact": 1.0})
    summaries = texts.filter(pl.col("kind") == "summary").sort("request")
    stored, raw = summaries["text"].to_list(), summaries["text_raw"].to_list()
    assert len(stored) >= 3
    carried = redacted = 0
    for previous, current in zip(stored, raw[1:], strict=False):  # what the summarizer wrote
        for line in _carried(current):
            assert line in previous, line  # the stored (after SR-1) text, not the raw one
            carried += 1
            redacted += "<REDACTED:" in line
    # the chain is exercised: a summary's stored text, redactions included, is an input of the next
    assert carried > 0 and redacted > 0
