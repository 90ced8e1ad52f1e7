"""User-written policy and sweep specs are validated before any work: errors name the file,
the dotted field, the value and what is allowed; random specs raise nothing else (issue 15)."""

from __future__ import annotations

import contextlib

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from workbench.cli import app
from workbench.engine.policy_schema import check_field, check_window, policy_schema
from workbench.engine.presets import PRESETS, get_policy, load_policy_file, policy_from_spec
from workbench.errors import PolicyError, WorkbenchError
from workbench.sweep.spec import SweepSpec

runner = CliRunner()


def _spec(tmp_path, overrides, name="p.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"preset": "claude-code", "name": "mine", "overrides": overrides}))
    return path


@pytest.mark.parametrize("field, value, allowed", [
    ("trigger.reserve_tokens", -5000, "an integer >= 0"),
    ("trigger.reserve_tokens", "lots", "an integer >= 0"),
    ("trigger.reserve_tokens", True, "an integer >= 0"),
    ("trigger.fraction", 1.5, "a number from 0.0 to 1.0"),
    ("compaction.kind", "magic", "one of clear_tool_uses, none, opaque, recorded, summary, truncate"),
    ("flush.enabled", "yes", "true or false"),
    ("provider.context_window", 0, "an integer >= 1 or null"),
    ("compaction.exclude_tools", "Read", "a list of strings"),
])
def test_a_bad_field_names_file_field_value_and_what_is_allowed(tmp_path, field, value, allowed):
    path = _spec(tmp_path, {field: value})
    with pytest.raises(PolicyError) as err:
        load_policy_file(path)
    assert str(err.value) == f"{path}: {field}: {value!r} is not allowed ({allowed})"
    # the command line: exit 2, one line, no traceback, before any work
    r = runner.invoke(app, ["simulate", "--dataset", str(tmp_path / "nowhere"), "--policy", str(path),
                            "--out", str(tmp_path / "run")])
    assert r.exit_code == 2 and "Traceback" not in r.output and field in r.output


def test_relations_are_checked():
    with pytest.raises(PolicyError, match=r"compaction.floor \(50,000\) exceeds compaction.cap \(12,000\)"):
        get_policy("claude-code", {"compaction.floor": 50_000})
    with pytest.raises(PolicyError, match="outside the 30,000-token context window"):
        check_window(get_policy("claude-code"), 30_000)  # window - 33k reserve < 0
    with pytest.raises(PolicyError, match="trigger.tokens puts the compaction threshold at 150,000"):
        check_window(get_policy("anthropic-compact"), 100_000)
    check_window(get_policy("claude-code"), 200_000)


def test_the_schema_is_json_schema_and_covers_every_field():
    import jsonschema

    schema = policy_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    for p in PRESETS.values():
        jsonschema.validate(p.to_dict(), schema)  # every preset is valid
        for section, values in p.to_dict().items():
            if isinstance(values, dict):
                for k, v in values.items():
                    check_field(f"{section}.{k}", v)


def test_integral_floats_become_ints():
    p = policy_from_spec({"name": "x", "trigger": {"kind": "tokens", "reserve_tokens": 20_000.0}})
    assert p.trigger.reserve_tokens == 20_000 and isinstance(p.trigger.reserve_tokens, int)


values = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                   st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))
fields = st.sampled_from(sorted(f"{s}.{k}" for s, sec in policy_schema()["properties"].items()
                                if isinstance(sec, dict) and "properties" in sec for k in sec["properties"])
                         + ["emergency", "name", "bogus", "trigger.bogus"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(overrides=st.dictionaries(fields, values, max_size=4))
def test_random_policy_specs_raise_only_policy_errors(overrides):
    with contextlib.suppress(PolicyError):
        policy_from_spec({"preset": "claude-code", "name": "r", "overrides": overrides})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.fixed_dictionaries({"dataset": st.one_of(st.text(max_size=5), values), "base": st.one_of(
    st.sampled_from(["claude-code", "codex-local", "nope"]), values)},
    optional={"name": st.one_of(st.text(max_size=10), values), "parameters": st.dictionaries(fields, st.one_of(
        values, st.lists(values, max_size=3)), max_size=3), "mode": st.one_of(st.sampled_from(["product", "zip"]), values),
        "seeds": st.one_of(values, st.lists(st.integers(), max_size=3)), "evaluate": values,
        "engine": st.one_of(st.sampled_from(["kernel", "batch"]), values), "tokenizer": values}))
def test_random_sweep_specs_raise_only_workbench_errors(spec):
    with contextlib.suppress(WorkbenchError):
        SweepSpec.from_dict(spec)


def test_a_changed_policy_describes_its_own_parameters():
    from workbench.engine.presets import get_policy

    base = get_policy("claude-code")
    changed = get_policy("claude-code", {"trigger.reserve_tokens": 50_000}, rename="claude-code-50k")
    assert "167k" not in changed.description
    assert "trigger.reserve_tokens=50000" in changed.description and "~150k of" in changed.description
    windowed = get_policy("claude-code", {"provider.context_window": 100_000})
    assert "~67k of a 100k window" in windowed.description
    assert get_policy("claude-code", rename="same").description == base.description  # only renamed
    assert get_policy("claude-code", {"description": "mine", "trigger.reserve_tokens": 1}).description == "mine"


def test_a_described_override_keeps_the_digest_of_its_parameters():
    from workbench.engine.policy import Policy
    from workbench.engine.presets import get_policy, policy_from_spec

    changed = get_policy("claude-code", {"trigger.reserve_tokens": 50_000}, rename="claude-code-50k")
    # the digest (run and artifact ids, summarizer seeds) hashes the preset's description, as before
    worded = get_policy("claude-code", {"trigger.reserve_tokens": 50_000,
                                        "description": get_policy("claude-code").description}, rename="claude-code-50k")
    assert changed.digest() == worded.digest() and changed.description != worded.description
    again = Policy.from_dict(changed.to_dict())
    assert again.description == changed.description and again.digest() == changed.digest()
    assert policy_from_spec(changed.to_dict()).digest() == changed.digest()
    assert "base_description" not in get_policy("claude-code").to_dict()


def test_a_share_is_bounded_by_its_annotation():
    """A field annotated ``policy.Share`` is a share in [0, 1] in the schema, with no rule of
    its own in ``RULES``: a new share field needs no schema edit."""
    import dataclasses

    from workbench.engine.policy import SECTIONS
    from workbench.engine.policy_schema import RULES, field_schema

    shares = [f"{section}.{f.name}" for section, cls in SECTIONS.items() for f in dataclasses.fields(cls)
              if str(f.type) == "Share"]
    assert "trigger.ttl_early_fraction" in shares and "compaction.ratio" in shares
    for dotted in shares:
        schema = field_schema(dotted)
        assert (schema["type"], schema["minimum"], schema["maximum"]) == ("number", 0.0, 1.0), dotted
        assert dotted not in RULES, dotted
