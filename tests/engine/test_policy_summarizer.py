"""The summarizer section of a policy (``summarizer.prompt``, ``summarizer.model``): a
parameter like any other (specs, overrides, sweeps, the schema), and invisible in the
digest while unset, so every run and artifact id of a policy without it stays as it was."""

from __future__ import annotations

import pytest

from workbench.engine.policy import SECTIONS, Policy, Summarizer
from workbench.engine.policy_schema import check_field, policy_schema
from workbench.engine.presets import PRESETS, get_policy, policy_from_spec
from workbench.errors import PolicyError
from workbench.sweep.spec import SpecError, SweepSpec

# every preset's digest as recorded runs and artifact ids hold it. A section or field added
# since (the summarizer and pruning sections, ``policy._ADDED_FIELDS``) must leave these as
# they are while unset; only a change of a preset's own rule may move one (and says so)
PRESET_DIGESTS = {
    "aider": "2a36c036d0e3",
    "anthropic-clear-tool-uses": "76ae601f2ba5",
    "anthropic-compact": "1f4d772aea5d",
    "as-recorded": "6427c09902db",
    "claude-code": "591376410d48",
    "claude-code-microcompact": "37764ddd84c9",
    "cline": "ec82c1e647fa",
    "codex-local": "c5b77e50c0de",
    "codex-remote": "da9478f03a2d",
    "gemini-cli": "d560b839497c",
    "hermes": "9124d3e03f5f",
    "holon-openai": "fd95dfc3f61d",
    "hybrid": "8df0f4e99e61",
    "langchain-summarization": "e97c9f83aca2",
    "letta": "7945d3e77219",
    "llm-summary": "13b7d2b99ade",
    "no-compaction": "161807ffe45a",
    "observation-masking": "08285baf05e5",
    "openai-responses-compact": "543aaebb757b",
    "openclaw-flush": "b14017e25e36",
    "openclaw-pruning": "e010f9757dae",
    "openclaw-pruning-flush": "43cfa3d7527c",
    "opencode": "d3fbdfaaaa90",  # compaction.shares_cache = false (issue 28); the 2.0 rule (issue 31)
    "openhands-default": "de34a7647cce",
    "openhands-sdk": "58db02a5f80b",
    "rip-adr0011": "f93861df6ce4",
    "roo-code": "24a6a9c27ffb",
}


def test_every_preset_is_pinned():
    assert sorted(PRESET_DIGESTS) == sorted(PRESETS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_an_unset_section_leaves_the_digest_as_it_was(name):
    p = PRESETS[name]
    assert p.summarizer == Summarizer()
    assert p.digest() == PRESET_DIGESTS[name]
    # and the section is still part of the policy's mapping (round trip)
    assert Policy.from_dict(p.to_dict()) == p


def test_a_set_field_changes_the_digest_and_round_trips():
    base = get_policy("claude-code")
    a = get_policy("claude-code", {"summarizer.model": "qwen2.5-7b-instruct"})
    b = get_policy("claude-code", {"summarizer.prompt": "prompts/terse.txt"})
    assert len({base.digest(), a.digest(), b.digest()}) == 3
    assert a.summarizer.model == "qwen2.5-7b-instruct" and b.summarizer.prompt == "prompts/terse.txt"
    assert Policy.from_dict(b.to_dict()) == b
    spec = policy_from_spec({"name": "x", "summarizer": {"model": "m", "prompt": "p.txt"}})
    assert spec.summarizer == Summarizer(prompt="p.txt", model="m")


def test_the_schema_knows_the_section():
    assert "summarizer" in SECTIONS and "summarizer" in policy_schema()["properties"]
    check_field("summarizer.model", "gpt-4.1-mini")
    check_field("summarizer.prompt", None)
    with pytest.raises(PolicyError, match=r"summarizer.model: '' is not allowed \(a non-empty string or null\)"):
        check_field("summarizer.model", "")
    with pytest.raises(PolicyError, match="summarizer.prompt: 3 is not allowed"):
        get_policy("claude-code", {"summarizer.prompt": 3})
    with pytest.raises(PolicyError, match="unknown summarizer parameter 'temperature'"):
        policy_from_spec({"name": "x", "summarizer": {"temperature": 0.2}})


def test_a_sweep_sweeps_prompts_and_models():
    spec = SweepSpec.from_dict({"dataset": "d", "base": "claude-code",
                                "parameters": {"summarizer.prompt": ["a.txt", "b.txt"],
                                               "summarizer.model": ["m1", "m2"]}})
    configs = spec.configurations()
    assert len(configs) == 4
    assert {(c["summarizer.prompt"], c["summarizer.model"]) for c in configs} == {
        ("a.txt", "m1"), ("a.txt", "m2"), ("b.txt", "m1"), ("b.txt", "m2")}
    runs = spec.runs({"events.parquet": "0" * 64})
    assert len({r.policy_digest for r in runs}) == 4  # four policies, four run ids
    with pytest.raises(SpecError, match="summarizer.model"):
        SweepSpec.from_dict({"dataset": "d", "base": "claude-code", "parameters": {"summarizer.model": [""]}})
