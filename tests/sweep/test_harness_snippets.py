"""`tune --harness` snippets of the harnesses added in issue 16 (gemini-cli, cline, roo-code,
opencode, aider, hermes) and Codex's threshold scope: each tuned policy renders the expected
key and value (hand-computed), parsed back in the snippet's own format, and a policy the
harness cannot express yields a note, not a wrong key."""

from __future__ import annotations

import json

import pytest
import yaml
from test_sweep_tune import parse_blocks
from typer.testing import CliRunner

from workbench.cli import app
from workbench.engine.presets import get_policy
from workbench.sweep.harness_config import HARNESSES, render

W = 200_000


def key_names(snippet) -> set[str]:
    return {k.name for k in snippet.keys}


def test_the_new_harnesses_are_listed():
    assert {"gemini-cli", "cline", "roo-code", "opencode", "aider", "hermes"} <= set(HARNESSES)


# ---- Roo Code: autoCondenseContextPercent = threshold / window x 100 ---------------------------
def test_roo_code_percent_is_threshold_over_window():
    s = render("roo-code", get_policy("roo-code", {"trigger.fraction": 0.75}), window=W)
    (doc,) = parse_blocks(s)
    assert doc == {"globalSettings": {"autoCondenseContext": True, "autoCondenseContextPercent": 75}}
    assert {k.provenance for k in s.keys} == {"source"}
    # an absolute threshold: 123,456 / 200,000 = 61.73 % -> 61 (whole percent, never later than tuned)
    s = render("roo-code", get_policy("roo-code", {"trigger.tokens": 123_456}), window=W)
    (doc,) = parse_blocks(s)
    assert doc["globalSettings"]["autoCondenseContextPercent"] == 61
    assert any("122,000" in n for n in s.notes)  # 61 % of 200,000


def test_roo_code_cannot_go_below_five_percent():
    s = render("roo-code", get_policy("roo-code", {"trigger.fraction": 0.03}), window=W)
    assert s.blocks == [] and s.keys == []
    assert any("from 5 to 100" in n for n in s.notes)


def test_roo_code_and_cline_turned_off():
    (doc,) = parse_blocks(render("roo-code", get_policy("no-compaction"), window=W))
    assert doc == {"globalSettings": {"autoCondenseContext": False}}
    (doc,) = parse_blocks(render("cline", get_policy("no-compaction"), window=W))
    assert doc == {"compaction": {"enabled": False}}


# ---- Gemini CLI: model.compressionThreshold is a share of the window -----------------------------
def test_gemini_cli_threshold_and_masking():
    s = render("gemini-cli", get_policy("gemini-cli", {"trigger.fraction": 0.6, "masking.keep_tokens": 60_000}),
               window=W)
    (settings,) = parse_blocks(s)
    assert settings["model"] == {"compressionThreshold": 0.6}
    assert settings["contextManagement"]["tools"]["outputMasking"] == {
        "protectionThresholdTokens": 60_000, "minPrunableThresholdTokens": 30_000}
    # an absolute threshold: 70,000 / 200,000 = 0.35
    (settings,) = parse_blocks(render("gemini-cli", get_policy("gemini-cli", {"trigger.tokens": 70_000}), window=W))
    assert settings["model"]["compressionThreshold"] == 0.35


def test_gemini_cli_cannot_express_an_event_trigger_or_no_masking():
    s = render("gemini-cli", get_policy("openhands-default"), window=W)
    assert s.blocks == [] and s.keys == [] and any("not a token threshold" in n for n in s.notes)
    s = render("gemini-cli", get_policy("gemini-cli", {"masking.keep_tokens": 0}), window=W)
    (settings,) = parse_blocks(s)
    assert "contextManagement" not in settings
    assert any("no setting turns it off" in n for n in s.notes)


# ---- Cline: the trigger has no key; the raw tail does ------------------------------------------------
def test_cline_tail_key_and_no_threshold_key():
    s = render("cline", get_policy("cline", {"trigger.keep_last_tokens": 30_000, "trigger.fraction": 0.7}),
               window=W)
    (doc,) = parse_blocks(s)
    assert doc == {"compaction": {"enabled": True, "strategy": "agentic", "preserveRecentTokens": 30_000}}
    assert ("--compaction", "agentic") in {(k.name, k.value) for k in s.keys}
    # 0.7 x 200,000 = 140,000 is not Cline's fixed ~81 % (162,000): said, never emitted as a key
    assert not any("threshold" in k.lower() or "ratio" in k.lower() for k in key_names(s))
    assert any("140,000" in n and "cannot be set" in n and "162,000" in n for n in s.notes)


# ---- opencode: compaction.reserved = window - threshold ------------------------------------------
def test_opencode_reserved_and_prune():
    (doc,) = parse_blocks(render("opencode", get_policy("opencode", {"trigger.reserve_tokens": 33_000}), window=W))
    assert doc["compaction"] == {"auto": True, "reserved": 33_000, "prune": False}  # opt-in since #24108
    (doc,) = parse_blocks(render("opencode", get_policy("opencode@0"), window=W))
    assert doc["compaction"] == {"auto": True, "reserved": 20_000, "prune": True}
    s = render("opencode", get_policy("opencode", {"trigger.fraction": 0.75, "masking.keep_tokens": 60_000}),
               window=W)
    (doc,) = parse_blocks(s)
    assert doc["compaction"]["reserved"] == 50_000  # 200,000 - 0.75 x 200,000
    assert any("PRUNE_PROTECT" in n for n in s.notes)  # 60,000 kept has no key: a note
    (doc,) = parse_blocks(render("opencode", get_policy("opencode", {"masking.keep_tokens": 0}), window=W))
    assert doc["compaction"]["prune"] is False


def test_opencode_cannot_express_an_event_trigger():
    s = render("opencode", get_policy("openhands-sdk"), window=W)
    assert s.blocks == [] and s.keys == [] and any("not a token threshold" in n for n in s.notes)


# ---- aider: max-chat-history-tokens counts the body only -----------------------------------------
def test_aider_history_budget():
    s = render("aider", get_policy("aider", {"trigger.tokens": 16_384, "trigger.keep_last_tokens": 8_192}), window=W)
    conf, env = parse_blocks(s)
    assert conf == {"max-chat-history-tokens": 16_384}
    assert env == {"AIDER_MAX_CHAT_HISTORY_TOKENS": "16384"}
    assert not any("newest half" in n for n in s.notes)  # 8,192 = 16,384 // 2: aider's own tail


def test_aider_cannot_express_a_whole_prompt_threshold():
    s = render("aider", get_policy("codex-local"), window=W)  # 0.9 x window on the whole prompt
    assert s.blocks == [] and s.keys == []
    assert any("counts the chat history alone" in n for n in s.notes)


# ---- Hermes: threshold (share), threshold_tokens, target_ratio = tail / trigger -------------------
def test_hermes_compression_section():
    s = render("hermes", get_policy("hermes", {"trigger.fraction": 0.8}), window=1_000_000)
    (doc,) = parse_blocks(s)
    # tail 0.1 x 1,000,000 = 100,000 of a trigger of 800,000: target_ratio 0.125
    assert doc == {"compression": {"enabled": True, "threshold": 0.8, "threshold_tokens": 800_000,
                                   "protect_first_n": 3, "tail_mode": "legacy", "target_ratio": 0.125}}
    assert not any("0.75" in n for n in s.notes)  # 1M window: no small-window floor
    s = render("hermes", get_policy("hermes"), window=W)
    (doc,) = parse_blocks(s)
    assert doc["compression"]["threshold_tokens"] == 100_000
    assert any("0.75" in n for n in s.notes)  # floored below 512K: threshold_tokens carries it


def test_hermes_target_ratio_out_of_range_is_a_note():
    s = render("hermes", get_policy("hermes", {"trigger.keep_last_fraction": 0.45}), window=W)
    (doc,) = parse_blocks(s)
    assert "target_ratio" not in doc["compression"] and "tail_mode" not in doc["compression"]
    assert any("0.10..0.80" in n for n in s.notes)  # 90,000 / 100,000 = 0.9


# ---- Codex: the threshold's scope -------------------------------------------------------------------
def test_codex_scope_key_only_for_a_body_scope():
    s = render("codex", get_policy("codex-local", {"trigger.tokens": 150_000, "trigger.scope": "body"}), window=W)
    (cfg,) = parse_blocks(s)
    assert cfg["model_auto_compact_token_limit"] == 150_000
    assert cfg["model_auto_compact_token_limit_scope"] == "body_after_prefix"
    (cfg,) = parse_blocks(render("codex", get_policy("codex-local", {"trigger.tokens": 150_000}), window=W))
    assert "model_auto_compact_token_limit_scope" not in cfg


@pytest.mark.parametrize("harness", ["gemini-cli", "cline", "roo-code", "opencode", "hermes"])
def test_a_body_scope_is_a_note_where_there_is_no_scope_key(harness):
    s = render(harness, get_policy("codex-local", {"trigger.scope": "body"}), window=W)
    assert any("trigger.scope = body" in n for n in s.notes)


# ---- the CLI ----------------------------------------------------------------------------------------
def test_tune_prints_roo_code_and_hermes_snippets(small_dataset, tmp_path):
    runner = CliRunner()
    spec = tmp_path / "roo.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "roo-cli-test", "dataset": str(small_dataset), "base": "roo-code",
        "parameters": {"trigger.fraction": [0.6, 0.8], "provider.context_window": W}, "seeds": [0]}))
    out = tmp_path / "out"
    r = runner.invoke(app, ["sweep", str(spec), "--out", str(out), "--executor", "serial"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--harness", "roo-code"])
    assert r.exit_code == 0, r.output
    text = r.output.split("## Roo Code settings export (globalSettings) (json)\n", 1)[1].split("\n## ", 1)[0]
    assert json.loads(text)["globalSettings"]["autoCondenseContextPercent"] in {60, 80}
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--harness", "hermes"])
    assert r.exit_code == 0, r.output
    text = r.output.split("## ~/.hermes/config.yaml (yaml)\n", 1)[1].split("\n## ", 1)[0]
    assert yaml.safe_load(text)["compression"]["threshold"] in {0.6, 0.8}
    r = runner.invoke(app, ["tune", str(spec), "--out", str(out), "--no-run", "--harness", "nope"])
    assert r.exit_code != 0 and "gemini-cli" in r.output and "hermes" in r.output


def test_each_new_harness_renders_its_own_preset_with_keys():
    for harness in ("gemini-cli", "cline", "roo-code", "opencode", "aider", "hermes"):
        s = render(harness, get_policy(harness), window=W)
        assert s.blocks and s.keys, harness
        assert {k.provenance for k in s.keys} <= {"documented", "source", "inferred"}
        parse_blocks(s)


def test_tune_help_names_every_harness():
    from typer.testing import CliRunner

    from workbench.cli import app

    out = CliRunner().invoke(app, ["tune", "--help"], terminal_width=400).output
    assert all(h in out for h in HARNESSES), out
