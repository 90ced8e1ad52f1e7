"""Release lines of versioned presets: which line a log's harness version replays, where each
Gemini CLI line first compacts (hand-computed, both engines), and the keys its tune snippet uses."""

from __future__ import annotations

import json

import pytest
from _tiny import replay_input
from test_semantics import ENGINES, run
from test_semantics_harnesses import _main, _rounds

from workbench.engine import enums as E
from workbench.engine.presets import PRESETS, VERSIONS, for_harness_version, get_policy, release_key
from workbench.sweep.harness_config import render


@pytest.mark.parametrize("version,line", [
    ("0.1.9", "gemini-cli@0.1"), ("0.1.10", "gemini-cli@0.1.10"), ("0.11.2", "gemini-cli@0.1.10"),
    ("0.11.3", "gemini-cli@0.11.3"), ("0.16.0", "gemini-cli@0.11.3"), ("0.17.0", "gemini-cli@0.17"),
    ("0.25.1", "gemini-cli@0.17"), ("0.26.0", "gemini-cli@0.26"), ("0.29.0", "gemini-cli@0.29"),
    ("0.29.0-nightly.20260205", "gemini-cli@0.29"),
    ("0.40.0", "gemini-cli"), ("0.0.5", "gemini-cli"), ("nightly", "gemini-cli"), (None, "gemini-cli"),
])
def test_a_gemini_cli_version_replays_the_line_that_held_at_that_release(version, line):
    # a line holds from its own release up to the next line's; a release past the newest known
    # line, before the oldest, or no release number at all replays the preset itself (the newest rule)
    assert for_harness_version(PRESETS["gemini-cli"], version).name == line


def test_claude_code_lines_are_unchanged_by_range_matching():
    base = PRESETS["claude-code"]
    assert [for_harness_version(base, v).name for v in ("1.0.30", "2.0.76", "2.1.3", "2.2.0")] == [
        "claude-code", "claude-code@2.0", "claude-code@2.1", "claude-code"]


def test_release_numbers_order_numerically():
    assert release_key("0.11.3") > release_key("0.2.9") and release_key("0.1") < release_key("0.1.10")
    assert release_key("0.29.0-preview.1") == (0, 29, 0) and release_key("latest") is None


def test_the_newest_gemini_line_is_the_preset():
    newest = VERSIONS["gemini-cli"]["0.29"]
    for field in ("trigger", "compaction", "masking", "compile", "flush", "emergency"):
        assert getattr(newest, field) == getattr(PRESETS["gemini-cli"], field), field


# rounds of 9,000 + 1,000 after a 1,000-token system prompt: request k's context is 10,000 (k + 1);
# a 200k window
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("line,first,probe", [
    ("0.1", 18, False),      # 0.95 x 200k = 190,000
    ("0.1.10", 13, False),   # 0.7 x 200k = 140,000
    ("0.11.3", 3, False),    # 0.2 x 200k = 40,000 (the newest 30 % of the history kept: 12,000)
    ("0.17", 9, False),      # 0.5 x 200k = 100,000
    ("0.26", 9, True),       # 0.5, then the probe call checks the summary
])
def test_each_gemini_cli_line_first_compacts_where_its_release_did(engine, line, first, probe):
    pol = get_policy(f"gemini-cli@{line}", {"provider.context_window": 200_000})
    ledger, events = run(engine, replay_input(_rounds(1_000, 9_000, 1_000, n=20)), pol)
    comps = [e["request"] for e in events if e["type"] == E.EventType.CHECKPOINT]
    assert comps and comps[0] == first, comps
    assert _main(ledger)[first]["context_before"] == 10_000 * (first + 1)
    calls = [r for r in ledger if r["request"] == first and r["call_kind"] == E.CallKind.COMPACTION]
    assert len(calls) == (2 if probe else 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_first_line_summarizes_the_whole_history_later_lines_keep_the_newest_30_percent(engine):
    inp = replay_input(_rounds(1_000, 9_000, 1_000, n=20))
    spans = {}
    for line in ("0.1", "0.1.10"):
        _, events = run(engine, inp, get_policy(f"gemini-cli@{line}", {"provider.context_window": 200_000}))
        first = next(e for e in events if e["type"] == E.EventType.CHECKPOINT)
        spans[line] = first["span_events"]
    # 0.1 at request 18: every message but the system prompt (18 rounds + the 19th user message);
    # 0.1.10 at request 13 keeps the newest 30 % of the history's 139,000 tokens (41,700): the newest
    # 4 rounds and the 14th user message would be 49,000, so 4 rounds (8 messages) stay of 27
    assert spans["0.1"] == 2 * 18 + 1
    assert spans["0.1.10"] == 27 - 8


def _keys(policy_name: str, window: int = 1_000_000) -> dict:
    return {k.name: k.value for k in render("gemini-cli", get_policy(policy_name), window=window).keys}


def test_the_tune_snippet_uses_the_keys_of_the_line_s_release():
    assert _keys("gemini-cli") == {"model.compressionThreshold": 0.5,
                                   "contextManagement.tools.outputMasking.protectionThresholdTokens": 50_000,
                                   "contextManagement.tools.outputMasking.minPrunableThresholdTokens": 30_000}
    assert _keys("gemini-cli@0.11.3") == {"model.compressionThreshold": 0.2}   # no masking before 0.29
    assert _keys("gemini-cli@0.1.10") == {"model.chatCompression.contextPercentageThreshold": 0.7}
    old = render("gemini-cli", get_policy("gemini-cli@0.1.10"), window=1_000_000)
    assert json.loads(old.blocks[0].text) == {"model": {"chatCompression": {"contextPercentageThreshold": 0.7}}}
    assert any("top level" in n for n in old.notes)
    none = render("gemini-cli", get_policy("gemini-cli@0.1"), window=1_000_000)
    assert not none.keys and not none.blocks and "no compression setting" in none.notes[0]
    masked = render("gemini-cli", get_policy("gemini-cli@0.26", {"masking.keep_tokens": 40_000}), window=1_000_000)
    assert "contextManagement.tools.outputMasking.protectionThresholdTokens" not in {k.name for k in masked.keys}
    assert any("arrived in Gemini CLI 0.29.0" in n for n in masked.notes)


# ---- opencode: packages/opencode (0.x-1.x) and packages/core (2.0 on; the boundary inferred) ----
@pytest.mark.parametrize("version,line", [
    ("0.3.1", "opencode@0"), ("1.15.10", "opencode@0"), ("2.0.14", "opencode@2.0"), ("2.0", "opencode@2.0"),
    ("2.1.0", "opencode"), (None, "opencode"),
])
def test_an_opencode_version_replays_its_line(version, line):
    assert for_harness_version(PRESETS["opencode"], version).name == line


def test_the_newest_opencode_line_is_the_preset():
    newest = VERSIONS["opencode"]["2.0"]
    for field in ("trigger", "compaction", "masking", "compile", "flush", "emergency"):
        assert getattr(newest, field) == getattr(PRESETS["opencode"], field), field


# rounds of 9,000 + 1,000 after a 1,000-token system prompt, a 200k window, max output 32k:
# opencode@2.0 compacts at 200k - max(min(32k, 32k), 20k) = 168,000, first reached at request 16
# (170,000), and keeps its newest 15,000 tokens raw: the 17th user message (9,000) and the 16th reply
# (1,000) fit, the 16th user message would make 19,000; opencode@0 at 200k - 20k = 180,000 (request
# 17) summarizes every message but the system prompt (17 rounds + the 18th user message)
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("line,first,span", [("2.0", 16, 2 * 16 + 1 - 2), ("0", 17, 2 * 17 + 1)])
def test_each_opencode_line_compacts_where_and_what_its_release_did(engine, line, first, span):
    pol = get_policy(f"opencode@{line}", {"provider.context_window": 200_000, "provider.max_output": 32_000})
    ledger, events = run(engine, replay_input(_rounds(1_000, 9_000, 1_000, n=20)), pol)
    checkpoints = [e for e in events if e["type"] == E.EventType.CHECKPOINT]
    assert checkpoints and checkpoints[0]["request"] == first
    assert _main(ledger)[first]["context_before"] == 10_000 * (first + 1)
    assert checkpoints[0]["span_events"] == span


def test_an_imported_opencode_log_replays_the_line_of_its_recorded_version(tmp_path):
    # the constructed sessions of tests/sources/data/opencode record "version": "0.15.8"
    from pathlib import Path

    from workbench.engine.run import simulate
    from workbench.sources.importer import import_paths

    storage = Path(__file__).parents[1] / "sources" / "data" / "opencode" / "storage"
    ds = import_paths([storage], tmp_path / "ds", tokenizers=("approx",))
    res = simulate(ds, ["opencode"], engine="reference", accounting="counted", tokenizer="approx")
    lines = res.config["policies"]["opencode"]["release_lines"]
    assert set(lines.values()) == {"opencode@0"} and len(lines) == 2


def test_the_docs_table_names_every_release_line():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "harness-releases.md").read_text()
    for preset, lines in VERSIONS.items():
        for line in lines:
            assert f"`{preset}@{line}`" in text, f"docs/harness-releases.md does not list {preset}@{line}"


# ---- lower thresholds on a 1M window (simulations/lower-threshold-1m-*.yaml) -------------------
# rounds of 9,000 + 1,000 after a 1,000-token system prompt: request k's context is 10,000 (k + 1).
# Claude Code on 1M compacts at 1,000,000 - min(32k, 20k) - 13k = 967,000 (request 96: 970,000);
# 50 % of the window (reserve 500,000, anthropics/claude-code#75335) at request 49 (500,000);
# 20 % (reserve 800,000, google-gemini/gemini-cli#23906) at request 19 (200,000)
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("reserve,first", [(33_000, 96), (500_000, 49), (800_000, 19)])
def test_claude_code_on_a_1m_window_first_compacts_at_its_threshold(engine, reserve, first):
    pol = get_policy("claude-code", {"provider.context_window": 1_000_000, "trigger.reserve_tokens": reserve})
    assert pol.trigger.threshold(1_000_000) == 1_000_000 - reserve
    ledger, events = run(engine, replay_input(_rounds(1_000, 9_000, 1_000, n=100)), pol)
    comps = [e["request"] for e in events if e["type"] == E.EventType.CHECKPOINT]
    assert comps and comps[0] == first, comps
    assert _main(ledger)[first]["context_before"] == 10_000 * (first + 1)


@pytest.mark.parametrize("window", [200_000, 20_000])
def test_parity_of_every_release_line(window):
    # the kernel and the reference engine give one ledger for each line, as for each preset
    # (tests/engine/test_parity.py), on a generated coding session
    from dataclasses import replace

    from test_parity import assert_same, generated

    inp = replace(generated("coding", 600, 1), prefix_tokens=0)
    for lines in VERSIONS.values():
        for policy in lines.values():
            assert_same(inp, policy, window, "explicit", 300.0, 1)


# ---- named lines no recorded version selects: Cline's VS Code extension, Roo Code's maxTokens ----
def _cline_extension_threshold(window: int) -> int:
    # context-window-utils.ts: the limit by window, then min(floor(0.75 x window), limit)
    limit = {64_000: window - 27_000, 128_000: window - 30_000, 200_000: window - 40_000}.get(
        window, max(window - 40_000, int(0.8 * window)))
    return min(int(0.75 * window), limit)


# every window but 64,000 (window - 27k = 37,000 comes before 48,000 there: not modelled)
@pytest.mark.parametrize("window", [32_000, 100_000, 128_000, 200_000, 272_000, 1_000_000])
def test_cline_extension_line_condenses_at_the_extension_s_threshold(window):
    assert get_policy("cline@extension").trigger.threshold(window) == _cline_extension_threshold(window)


@pytest.mark.parametrize("window,expected", [(200_000, 171_808), (190_000, 162_808), (1_000_000, 891_808)])
def test_roo_code_max_tokens_line_reserves_max_tokens_below_90_percent(window, expected):
    # manageContext: tokens > window x (1 - 0.1) - maxTokens, maxTokens 8,192 when unset
    assert get_policy("roo-code@max-tokens").trigger.threshold(window) == expected
    wider = get_policy("roo-code@max-tokens", {"trigger.fraction_less_tokens": 16_384})
    assert wider.trigger.threshold(window) == expected - 8_192


@pytest.mark.parametrize("preset", ["cline", "roo-code"])
@pytest.mark.parametrize("version", [None, "3.36.0", "nightly"])
def test_named_lines_are_never_followed_on_a_recorded_version(preset, version):
    assert for_harness_version(PRESETS[preset], version) is PRESETS[preset]


# rounds of 9,000 + 1,000 after a 1,000-token system prompt: request k's context is 10,000 (k + 1).
# A 200k window: cline@extension at 0.75 x 200k = 150,000 (request 14), cline at 0.81 = 162,000
# (request 16). A 190k window: roo-code@max-tokens at 0.9 x 190k - 8,192 = 162,808 (request 16:
# 170,000), roo-code at 171,000 (request 17: 180,000)
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("policy,window,first", [
    ("cline@extension", 200_000, 14), ("cline", 200_000, 16),
    ("roo-code@max-tokens", 190_000, 16), ("roo-code", 190_000, 17),
])
def test_cline_and_roo_code_lines_first_compact_where_their_rules_say(engine, policy, window, first):
    pol = get_policy(policy, {"provider.context_window": window})
    ledger, events = run(engine, replay_input(_rounds(1_000, 9_000, 1_000, n=20)), pol)
    comps = [e["request"] for e in events if e["type"] == E.EventType.CHECKPOINT]
    assert comps and comps[0] == first, comps
    assert _main(ledger)[first]["context_before"] == 10_000 * (first + 1)
