"""The modelled summarizer's paraphrases (facts written in an alternate form) and the
summarizer settings a policy carries (its prompt file and model)."""

from __future__ import annotations

import dataclasses

import pytest
from test_summarize_modelled import make_request

from workbench.engine.presets import get_policy
from workbench.summarize import SummarizerConfigError
from workbench.summarize.modelled import ModelledSummarizer
from workbench.summarize.settings import PROMPT_LIMIT, describe, load_prompt, policy_options
from workbench.synth.fact_forms import alternate_forms, form_pattern


def _facts(req):
    return [lb for lb in req.labels if lb.is_fact]


def test_no_paraphrase_by_default_and_the_draws_are_unchanged():
    # p_paraphrase_fact carves its share out of the dropped facts: at 0 nothing moves
    for seed in range(20):
        req = make_request(seed, n_facts=4)
        a = ModelledSummarizer(seed=seed).summarize(req)
        b = ModelledSummarizer(seed=seed, p_paraphrase_fact=0.0).summarize(req)
        assert a.text == b.text and a.retained == b.retained and b.diagnostics["paraphrased_facts"] == []


def test_paraphrased_facts_hold_a_form_and_never_the_answer():
    n = 0
    for seed in range(30):
        req = make_request(seed, n_facts=4)
        r = ModelledSummarizer(seed=seed, p_retain_fact=0.0, p_paraphrase_fact=1.0).summarize(req)
        assert not {lb.label_id for lb in _facts(req)} & set(r.retained)  # retained: exact answers only
        for lb in _facts(req):
            assert lb.label_id in r.diagnostics["paraphrased_facts"]
            assert lb.value not in r.text, (lb.kind, lb.value)
            assert form_pattern(lb.kind, lb.value).search(r.text), (lb.kind, lb.value)
            n += 1
    assert n >= 100


def test_a_share_is_paraphrased_and_retention_draws_are_those_of_the_default():
    kept = para = dropped = 0
    for seed in range(40):
        req = make_request(seed, n_facts=5)
        base = ModelledSummarizer(seed=seed).summarize(req)
        r = ModelledSummarizer(seed=seed, p_paraphrase_fact=0.15).summarize(req)
        assert r.diagnostics["retained_facts"] == base.diagnostics["retained_facts"]
        assert set(r.diagnostics["paraphrased_facts"]) <= set(base.diagnostics["dropped_facts"])
        kept += len(r.diagnostics["retained_facts"])
        para += len(r.diagnostics["paraphrased_facts"])
        dropped += len(r.diagnostics["dropped_facts"])
    total = kept + para + dropped
    assert 0.7 < kept / total < 0.9 and 0.07 < para / total < 0.25


def test_the_probabilities_are_checked():
    with pytest.raises(SummarizerConfigError, match="p_retain_fact \\+ p_paraphrase_fact must be <= 1"):
        ModelledSummarizer(p_retain_fact=0.9, p_paraphrase_fact=0.2)
    with pytest.raises(SummarizerConfigError, match="p_paraphrase_fact must be a probability"):
        ModelledSummarizer(p_paraphrase_fact=-0.1)


def test_a_kind_without_forms_is_dropped_not_kept():
    req = make_request(3, n_facts=2)
    odd = [dataclasses.replace(lb, kind="mystery") if lb.is_fact else lb for lb in req.labels]
    req = dataclasses.replace(req, labels=tuple(odd))
    assert all(alternate_forms(lb.kind, lb.value) == () for lb in _facts(req))
    r = ModelledSummarizer(seed=3, p_retain_fact=0.0, p_paraphrase_fact=1.0).summarize(req)
    assert r.diagnostics["paraphrased_facts"] == []
    assert sorted(r.diagnostics["dropped_facts"]) == sorted(lb.label_id for lb in _facts(req))


# ---- a policy's summarizer settings ---------------------------------------------------------
def test_prompt_files_are_read_inside_the_project_only(tmp_path):
    root = tmp_path / "project"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "terse.txt").write_text("  Summarize tersely; keep exact values.\n")
    assert load_prompt("prompts/terse.txt", root=root) == "Summarize tersely; keep exact values."
    assert load_prompt(str(root / "prompts" / "terse.txt"), root=root).startswith("Summarize")
    (tmp_path / "secret.txt").write_text("do not send me")
    for outside in ("../secret.txt", str(tmp_path / "secret.txt")):
        with pytest.raises(SummarizerConfigError, match="outside the project directory"):
            load_prompt(outside, root=root)
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(SummarizerConfigError, match="outside the project directory"):
        load_prompt("link.txt", root=root)
    with pytest.raises(SummarizerConfigError, match="is not a file"):
        load_prompt("prompts/missing.txt", root=root)
    (root / "big.txt").write_text("x" * (PROMPT_LIMIT + 1))
    with pytest.raises(SummarizerConfigError, match="at most 65,536"):
        load_prompt("big.txt", root=root)
    (root / "bin.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SummarizerConfigError, match="not UTF-8"):
        load_prompt("bin.txt", root=root)
    (root / "empty.txt").write_text(" \n")
    with pytest.raises(SummarizerConfigError, match="is empty"):
        load_prompt("empty.txt", root=root)


def test_policy_options_put_the_policy_on_top_of_the_run(tmp_path):
    (tmp_path / "p.txt").write_text("Keep every number.")
    run = {"base_url": "http://127.0.0.1:9/v1", "model": "run-model"}
    plain = get_policy("claude-code")
    assert policy_options("http", run, plain) == run
    assert policy_options("modelled", {"p_retain_fact": 0.5}, plain) == {"p_retain_fact": 0.5}
    p = get_policy("claude-code", {"summarizer.prompt": "p.txt", "summarizer.model": "policy-model"})
    assert policy_options("http", run, p, root=tmp_path) == {**run, "model": "policy-model",
                                                             "system_prompt": "Keep every number."}
    d = describe(p, root=tmp_path)
    assert d["model"] == "policy-model" and d["prompt"] == "p.txt" and len(d["prompt_sha256"]) == 64
    with pytest.raises(SummarizerConfigError, match="only the http summarizer sends to a model"):
        policy_options("modelled", {}, p, root=tmp_path)
