"""Harness calibration profiles (workbench.sources.profiles) and `workbench calibrate`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from workbench.cli import app
from workbench.errors import WorkbenchError
from workbench.sources.profiles import (
    PACKAGED,
    fit_profiles,
    load_profiles,
    model_family,
    profile_for,
)


def test_the_packaged_profiles_are_a_fit_of_the_bundled_logs(imported_bundle):
    """Not hand-edited: refitting datasets/bundled gives the shipped profiles and errors."""
    shipped = load_profiles()
    refit = fit_profiles(imported_bundle)
    assert refit["profiles"] == shipped["profiles"]
    assert refit["logs"] == shipped["logs"]
    assert shipped["_path"] == str(PACKAGED)


def test_leave_one_log_out_never_uses_the_log(imported_bundle):
    doc = fit_profiles(imported_bundle)
    with_loo = {cid: e for cid, e in doc["logs"].items() if e["loo"]}
    assert len(with_loo) >= 5
    for cid, e in with_loo.items():
        assert cid not in e["loo"]["fitted_on"]
        assert e["loo"]["profile"].startswith(e["harness"] + "/")
    # every log of a pooled profile is a log of that harness
    for harness, fams in doc["profiles"].items():
        for prof in fams.values():
            assert all(doc["logs"][cid]["harness"] == harness for cid in prof["logs"])


@pytest.mark.parametrize("model,family", [
    ("claude-opus-4-6", "claude-opus-4"), ("claude-3-5-sonnet-20241022", "claude-sonnet-3"),
    ("gpt-5.5", "gpt-5"), ("litellm_proxy/claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("gemini-3-pro", "gemini-3"), (None, "*")])
def test_model_families(model, family):
    assert model_family(model) == family


def test_profile_lookup_falls_back_to_the_pooled_one():
    doc = {"profiles": {"claude_code": {"*": {"prefix_tokens": 1, "factor": 1.5}}}}
    assert profile_for(doc, "claude_code", "claude-opus-4")[0] == "claude_code/*"
    assert profile_for(doc, "codex", "gpt-5") is None


def test_calibrate_writes_a_profiles_file_and_never_replaces_another_file(imported_bundle, tmp_path):
    out = tmp_path / "profiles.json"
    res = CliRunner().invoke(app, ["calibrate", str(imported_bundle.path), "--out", str(out), "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert "claude_code/*" in res.output and "loo_ape_median_pct" in res.output
    assert load_profiles(out)["profiles"]["claude_code"]
    # again: a profiles file the workbench wrote may be replaced
    assert CliRunner().invoke(app, ["calibrate", str(imported_bundle.path), "--out", str(out)]).exit_code == 0
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": true}')
    res = CliRunner().invoke(app, ["calibrate", str(imported_bundle.path), "--out", str(notes)])
    assert res.exit_code == 2 and "refusing to replace" in res.output
    assert json.loads(notes.read_text()) == {"mine": True}


def test_a_bad_profiles_file_is_named(tmp_path, imported_bundle):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "workbench.calibration-profiles.v1", "profiles": {"claude_code": {"*": {"factor": "x"}}}}')
    with pytest.raises(WorkbenchError, match="profiles.claude_code.\\* needs numeric"):
        load_profiles(bad)
    res = CliRunner().invoke(app, ["simulate", "--dataset", str(imported_bundle.path), "--policy", "claude-code",
                                   "--calibration", str(bad), "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and "bad.json" in res.output
    assert not (tmp_path / "run").exists()
