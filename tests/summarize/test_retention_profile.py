"""Retention profiles fitted on the recorded summaries of the bundled logs, and the
calibrated summarizer that uses them."""

from __future__ import annotations

import math

import orjson
import pytest

from workbench.summarize import get_summarizer
from workbench.summarize.base import SpanEvent, SpanLabel, SummaryRequest
from workbench.summarize.retention_profile import PACKAGED, fit_profiles, load_profiles, profile_for


def test_packaged_profiles_are_the_fit_on_the_bundled_logs(imported_bundle):
    """No hand-written figure: the shipped file is what `workbench calibrate datasets/bundled
    --retention-out` writes (refit it when the bundled logs or the fact rules change)."""
    from workbench.evaluate.log_retention import dataset_retention

    facts, comps = dataset_retention(imported_bundle)
    doc = fit_profiles(facts, comps, fitted_from=imported_bundle.name)
    shipped = load_profiles()
    assert orjson.loads(orjson.dumps(doc)) == shipped
    assert set(shipped["profiles"]) == {"claude_code", "roo_code", "*"}
    # Claude Code's real summaries keep a file far more often than a command, and a fact
    # mentioned often more than one mentioned once
    cc = profile_for(shipped, "claude_code")
    assert cc.keep_probability("path", 3, 5) > cc.keep_probability("command", 3, 5)
    assert cc.keep_probability("identifier", 10, 5) > cc.keep_probability("identifier", 1, 5)
    # their size does not follow the span: 2,967 to 4,119 tokens for spans of 68k to 118k (span tokens as counted)
    assert (cc.size["floor"], cc.size["cap"]) == (2_967, 4_119)


def test_leave_one_log_out_is_reported_honestly():
    s = load_profiles()["loo_summary"]
    assert s["facts"] == 439
    judged = {k: v["error_pp"] for k, v in s["kinds"].items() if v["facts"] >= 20}
    assert set(judged) == {"identifier", "path", "command"}
    # four Claude Code summaries (datasets/bundled): each log predicted by the profile fitted on
    # the other three is within the 10 pp target overall and for every kind with 20 facts
    assert abs(s["overall_pp"]) <= 10.0 and all(abs(e) <= 10.0 for e in judged.values())
    assert s["meets_target"] is True


def test_task_state_is_not_shrunk_toward_the_literal_facts_intercept():
    """The task coefficient is unpenalized: its facts' predicted rate is their own (7 of 10 kept:
    70 %), not shrunk toward ``b0``, which the literal facts set (here 2 of 20 paths kept)."""
    import polars as pl

    from workbench.summarize.retention_profile import fit_keep

    facts = pl.DataFrame({"kind": ["path"] * 20 + ["task"] * 10, "mentions": [1] * 30, "requests_since": [0] * 30,
                          "kept": ["exact"] * 2 + ["lost"] * 18 + ["exact"] * 7 + ["lost"] * 3})
    k = fit_keep(facts)
    p = 1.0 / (1.0 + math.exp(-(k["b0"] + k["kind"]["task"])))
    assert p == pytest.approx(0.7, abs=1e-6)


def _request(label_kind: str = "file_path"):
    text = "I moved the retry logic into src/retry.py during the refactor."
    i = text.index("src/retry.py")
    lab = SpanLabel("fact-1", label_kind, 3, i, i + 12, "src/retry.py", "src/retry.py", True)
    events = (SpanEvent(3, "message", "user", text), SpanEvent(4, "message", "user", "ok, go on"))
    return SummaryRequest("c", "art", 3, 4, events, None, 200, labels=(lab,)), lab


def test_calibrated_summarizer_keeps_by_profile():
    req, lab = _request()
    s = get_summarizer("calibrated", seed=0, harness="claude_code")
    cc = profile_for(load_profiles(), "claude_code")
    # a planted file path is a path fact mentioned once, one user message before the cut
    assert s.keep_probability(lab, req) == pytest.approx(cc.keep_probability("path", 1, 1))
    kept = sum("src/retry.py" in get_summarizer("calibrated", seed=k, harness="claude_code").summarize(req).text
               for k in range(200))
    p = cc.keep_probability("path", 1, 1)
    assert abs(kept / 200 - p) < 4 * (p * (1 - p) / 200) ** 0.5 + 0.01


def test_modelled_keep_fact_replaces_the_constant_and_the_default_is_unchanged():
    req, _ = _request()
    base = get_summarizer("modelled", seed=3)
    assert base.summarize(req) == get_summarizer("modelled", seed=3, keep_fact=None).summarize(req)
    never = get_summarizer("modelled", seed=3, keep_fact=lambda lb, r: 0.0).summarize(req)
    always = get_summarizer("modelled", seed=3, keep_fact=lambda lb, r: 1.0).summarize(req)
    assert never.retained == () and always.retained == ("fact-1",)


def test_calibrate_writes_retention_profiles(imported_bundle, tmp_path):
    from typer.testing import CliRunner

    from workbench.cli import app

    out = tmp_path / "retention.json"
    r = CliRunner().invoke(app, ["calibrate", str(imported_bundle.path), "--out", str(tmp_path / "cal.json"),
                                 "--retention-out", str(out)])
    assert r.exit_code == 0, r.output
    assert orjson.loads(out.read_bytes()) == orjson.loads(PACKAGED.read_bytes())
    assert "leave-one-log-out overall" in r.output and "meets the target" in r.output
    other = tmp_path / "notes.json"
    other.write_text("{}")
    r = CliRunner().invoke(app, ["calibrate", str(imported_bundle.path), "--out", str(tmp_path / "cal2.json"),
                                 "--retention-out", str(other)])
    assert r.exit_code != 0 and other.read_text() == "{}"
