"""The summarizer section of a policy (``summarizer.prompt``, ``summarizer.model``): a
parameter like any other (specs, overrides, sweeps, the schema), and invisible in the
digest while unset, so every run and artifact id of a policy without it stays as it was."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from workbench.engine.policy import SECTIONS, Policy, Summarizer
from workbench.engine.policy_schema import check_field, policy_schema
from workbench.engine.presets import PRESETS, get_policy, policy_from_spec
from workbench.errors import PolicyError
from workbench.sweep.spec import SpecError, SweepSpec


def _digest_without_section(p: Policy) -> str:
    """The digest as it was before the summarizer section, the pruning section (unset) and the
    fields added since (``policy._ADDED_FIELDS``, at their defaults) existed."""
    from workbench.engine.policy import _ADDED_FIELDS, Pruning

    d = p.to_dict()
    del d["summarizer"]
    if p.pruning == Pruning():  # a preset that prunes keeps the section in its digest
        del d["pruning"]
    for section, fields in _ADDED_FIELDS.items():
        for name, default in fields.items():
            if d[section][name] == default:  # a preset that sets one keeps it in its digest
                del d[section][name]
    return hashlib.sha256(orjson.dumps(d, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_an_unset_section_leaves_the_digest_as_it_was(name):
    p = PRESETS[name]
    assert p.summarizer == Summarizer()
    assert p.digest() == _digest_without_section(p)
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
