"""The openclaw snippet of a pruning policy: OpenClaw's own contextPruning keys, tagged
documented (docs/concepts/session-pruning.md), only when the policy prunes."""

from __future__ import annotations

import yaml

from workbench.engine.presets import get_policy
from workbench.sweep.harness_config import render


def test_a_tuned_pruning_policy_prints_openclaws_context_pruning_keys():
    pol = get_policy("openclaw-pruning", {"pruning.ttl_s": 3600.0, "pruning.soft_trim_ratio": 0.4,
                                          "pruning.min_prunable_tool_chars": 20_000})
    s = render("openclaw", pol, window=200_000)
    keys = {k.name: (k.value, k.provenance) for k in s.keys if ".contextPruning." in k.name}
    assert keys["agents.defaults.contextPruning.mode"] == ("cache-ttl", "documented")
    assert keys["agents.defaults.contextPruning.ttl"] == ("60m", "documented")
    assert keys["agents.defaults.contextPruning.softTrimRatio"] == (0.4, "documented")
    assert keys["agents.defaults.contextPruning.minPrunableToolChars"] == (20_000, "documented")
    assert keys["agents.defaults.contextPruning.softTrim.headChars"] == (1_500, "documented")
    doc = yaml.safe_load(next(b.text for b in s.blocks if b.format == "yaml"))
    pruning = doc["agents"]["defaults"]["contextPruning"]
    assert (pruning["ttl"], pruning["keepLastAssistants"], pruning["hardClear"]) == ("60m", 3, {"enabled": True})
    assert doc["agents"]["defaults"]["compaction"]["reserveTokensFloor"] == 20_000
    assert get_policy("openclaw-pruning", {"pruning.ttl_s": 90.0}).pruning.ttl_s == 90.0
    assert ("90s", "documented") in [(k.value, k.provenance) for k in render(
        "openclaw", get_policy("openclaw-pruning", {"pruning.ttl_s": 90.0}), window=200_000).keys]


def test_a_policy_without_pruning_prints_no_context_pruning():
    s = render("openclaw", get_policy("openclaw-flush"), window=200_000)
    assert not [k for k in s.keys if "contextPruning" in k.name]
    assert "contextPruning" not in next(b.text for b in s.blocks if b.format == "yaml")
