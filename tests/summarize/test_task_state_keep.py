"""The task state's own keep probability: the calibrated profile's ``task`` coefficient for a
planted task-state fact (workbench.synth.task_state), and certainty under a task-state
checkpoint (the policy's compaction.task_state_tokens -> the summarizer's ``task_state``)."""

from __future__ import annotations

import pytest

from workbench.summarize.base import SpanEvent, SpanLabel, SummaryRequest
from workbench.summarize.calibrated import CalibratedSummarizer
from workbench.summarize.modelled import ModelledSummarizer
from workbench.summarize.retention_profile import load_profiles, profile_for

TEXT = ("update_plan: the plan as it stands\n- [x] Fix the invoice totals rounding on staging\n"
        "- [ ] Add the feature flag loader for the EU region\n"
        "Next step: start 'Add the feature flag loader for the EU region' (open a draft PR)")


def _label(answer: str, kind: str = "task") -> SpanLabel:
    i = TEXT.index(answer)
    return SpanLabel(f"task-{i}", kind, 3, i, i + len(answer), answer, answer, True)


def _request(*labels: SpanLabel) -> SummaryRequest:
    return SummaryRequest("c", "a", 3, 4, (SpanEvent(3, "tool_call", "assistant", TEXT),
                                           SpanEvent(4, "message", "user", "go on")), None, 400, labels=labels)


def test_a_planted_task_fact_takes_the_profiles_task_probability():
    lab = _label("[x] Fix the invoice totals rounding on staging")
    profile = profile_for(load_profiles(), "claude_code")
    got = CalibratedSummarizer(seed=1, harness="claude_code").keep_probability(lab, _request(lab))
    assert got == pytest.approx(profile.keep_probability("task", 1, 0))
    assert got != pytest.approx(profile.keep_probability("path", 1, 0))


@pytest.mark.parametrize("backend", [ModelledSummarizer, CalibratedSummarizer])
def test_a_task_state_checkpoint_keeps_every_task_fact_in_its_own_section(backend):
    labels = [_label("[x] Fix the invoice totals rounding on staging"),
              _label("Next step: start 'Add the feature flag loader for the EU region' (open a draft PR)")]
    req = _request(*labels)
    on = backend(seed=1, task_state=True)
    assert all(on.keep_probability_of(lb, req) == 1.0 for lb in labels)
    for seed in range(20):
        res = backend(seed=seed, task_state=True).summarize(req)
        assert set(res.retained) == {lb.label_id for lb in labels}
        section = res.text.split("### Task state", 1)[1].split("\n### ", 1)[0]
        assert all(lb.value in section for lb in labels)
    off = ModelledSummarizer(seed=1, p_retain_fact=0.3)
    assert off.keep_probability_of(labels[0], req) == 0.3
    kept = sum(len(ModelledSummarizer(seed=s, p_retain_fact=0.3).summarize(req).retained) for s in range(20))
    assert kept < 40  # without the checkpoint the task facts are drawn like any other


def test_a_task_state_checkpoint_carries_the_previous_task_state_whole():
    first = ModelledSummarizer(seed=1, task_state=True).summarize(_request(_label("[x] Fix the invoice totals "
                                                                                  "rounding on staging")))
    later = SummaryRequest("c", "b", 5, 6, (SpanEvent(5, "message", "user", "and the docs?"),
                                            SpanEvent(6, "message", "assistant", "Done.")),
                           first.text, 400)
    for seed in range(20):
        carried = ModelledSummarizer(seed=seed, p_retain_fact=0.0, task_state=True).summarize(later).text
        assert "[x] Fix the invoice totals rounding on staging" in carried.split("### Task state", 1)[1]
    assert "[x] Fix" not in ModelledSummarizer(seed=1, p_retain_fact=0.0).summarize(later).text
