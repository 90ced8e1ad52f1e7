"""Tuning on hand-made results: constraints, best feasible choice, Pareto front, and the
harness snippets parsed back in their own formats."""

from __future__ import annotations

import ast
import json
import shlex
import tomllib

import polars as pl
import pytest
import yaml

from workbench.engine.presets import get_policy
from workbench.sweep.harness_config import HARNESSES, render
from workbench.sweep.runner import aggregate
from workbench.sweep.spec import SweepSpec
from workbench.sweep.tune import TuneError, pareto_mask, parse_constraint, tune


def table() -> pl.DataFrame:
    """Seven configurations of one aggregated sweep (one row each); 6 is dominated by 1."""
    return pl.DataFrame({
        "config_id": [f"cfg_{i}" for i in range(7)],
        "config_index": list(range(7)),
        "trigger.reserve_tokens": [13_000, 20_000, 33_000, 45_000, 60_000, 80_000, 100_000],
        "cost_usd": [10.0, 9.0, 8.0, 7.0, 6.5, 6.0, 9.5],
        "overflows": [2, 0, 0, 0, 0, 0, 0],
        "leaks": [0, 0, 1, 0, 0, 3, 0],
        "retention": [0.99, 0.97, 0.98, 0.96, 0.94, 0.90, 0.96],
        "complete": [True] * 7,
    })


def test_constraints_parse_safely():
    assert parse_constraint("overflows==0") == parse_constraint(" overflows == 0 ")
    c = parse_constraint("retention>=0.95")
    assert (c.metric, c.op, c.value, str(c)) == ("retention", ">=", 0.95, "retention>=0.95")
    assert parse_constraint("cost_usd<1e3").value == 1000.0
    assert parse_constraint("peak_context_tokens!=-5").value == -5.0
    for bad in ("overflows=0", "__import__('os')==0", "leaks==0 or 1", "retention>=x", "==0", "a<<1"):
        with pytest.raises(TuneError):
            parse_constraint(bad)


def test_tune_picks_the_cheapest_feasible_configuration():
    r = tune(table(), "cost_usd", ["overflows==0", "leaks==0", "retention>=0.95"])
    assert r.best["config_index"] == 3  # 4 and 5 are cheaper but fail retention / leaks
    assert r.feasible["config_index"].sort().to_list() == [1, 3, 6]
    assert r.configs["rank"][0] == 1 and r.configs["config_index"][0] == 3
    # Pareto over feasible configurations: cost down, retention up, leaks down
    assert r.pareto["config_index"].sort().to_list() == [1, 3]
    # without constraints the front is every non-dominated configuration
    free = tune(table(), "cost_usd")
    assert free.best["config_index"] == 5
    assert free.pareto["config_index"].sort().to_list() == [0, 1, 2, 3, 4, 5]


def test_maximise_nulls_incomplete_and_unknown_metrics():
    t = table().with_columns(pl.Series("complete", [True, True, True, False, True, True, True]),
                             pl.Series("retention", [0.99, None, 0.98, 0.96, 0.94, 0.90, 0.96]))
    r = tune(t, "retention", ["overflows==0"], direction="max")
    assert r.best["config_index"] == 2  # 0 overflows, 1 has no retention, 3 is incomplete
    assert tune(t, "cost_usd", ["retention>=0.95", "leaks==0"]).best["config_index"] == 6
    r = tune(t, "cost_usd", ["retention>=0.97", "leaks==0", "overflows==0"])
    assert r.best is None and any("no configuration" in n for n in r.notes)
    with pytest.raises(TuneError, match="evaluate: true"):
        tune(table().drop("retention"), "cost_usd", ["retention>=0.9"])
    with pytest.raises(TuneError, match="unknown metric"):
        tune(table(), "dollars")


def test_pareto_mask():
    import numpy as np

    v = np.array([[1, 5], [2, 4], [3, 3], [2, 5], [4, 4], [np.nan, 5]], float)
    assert pareto_mask(v).tolist() == [True, True, True, False, False, False]


def test_aggregate_sums_continuities_averages_seeds_and_takes_the_worst_failures():
    rows = []
    for seed, cost, ovf, ret in ((0, 1.0, 0, 0.9), (1, 3.0, 2, 0.7)):
        for cont in ("a", "b"):
            rows.append({"run_id": f"r{seed}", "config_id": "c", "config_index": 0, "seed": seed,
                         "policy": "p", "policy_digest": "d", "invalid": None, "trigger.fraction": 0.8,
                         "status": "ok", "error": None, "continuity_id": cont, "cost_usd": cost,
                         "overflows": ovf, "truncations": ovf, "compactions": 3, "prompt_tokens": 100, "cached_input_tokens": 50,
                         "peak_context_tokens": 10 if cont == "a" else 20, "leaks": seed,
                         "retention": ret, "context_window": 200_000})
    agg = aggregate(pl.DataFrame(rows))
    r = agg.row(0, named=True)
    assert r["cost_usd"] == pytest.approx(4.0)  # (2 + 6) / 2 seeds
    assert r["overflows"] == 4 and r["leaks"] == 1  # the worst seed
    assert r["truncations"] == 4 and r["compactions"] == 6  # truncations: the worst seed too
    assert r["retention"] == pytest.approx(0.8) and r["retention_min"] == pytest.approx(0.7)
    assert r["cache_hit_rate"] == pytest.approx(0.5) and r["peak_context_tokens"] == 20
    assert r["complete"] and r["runs"] == 2 and r["continuities"] == 2


def test_aggregate_cache_hit_rate_is_the_rate_of_its_own_token_columns():
    """Seeds with different traffic: the configuration's rate is cached / prompt of its
    (seed-averaged) token columns, as metrics computes it, never the mean of the seeds' rates."""
    from workbench.engine.metrics import with_cache_hit_rate

    rows = []
    for seed, prompt, cached, status in ((0, 100, 90, "ok"), (1, 1000, 100, "ok"), (2, 5, 5, "failed")):
        for cont in ("a", "b"):
            rows.append({"run_id": f"r{seed}", "config_id": "c", "config_index": 0, "seed": seed, "policy": "p",
                         "policy_digest": "d", "invalid": None, "status": status, "error": None,
                         "continuity_id": cont, "cost_usd": 1.0, "prompt_tokens": prompt,
                         "cached_input_tokens": cached})
    rows += [{**r, "config_id": "f", "config_index": 1, "run_id": "x" + r["run_id"], "status": "failed"}
             for r in rows]
    agg = aggregate(pl.DataFrame(rows))
    r = agg.row(0, named=True)
    assert r["prompt_tokens"] == pytest.approx(1100) and r["cached_input_tokens"] == pytest.approx(190)
    assert r["cache_hit_rate"] == pytest.approx(190 / 1100)  # the mean of rates would be 0.5
    assert r["cache_hit_rate"] == pytest.approx(with_cache_hit_rate(agg.head(1))["cache_hit_rate"][0])
    assert agg.row(1, named=True)["cache_hit_rate"] is None  # no run succeeded: no figure


# ---- harness snippets, parsed back ------------------------------------------------------------
def parse_blocks(snippet):
    parsed = []
    for b in snippet.blocks:
        if b.format == "toml":
            parsed.append(tomllib.loads(b.text))
        elif b.format == "json":
            parsed.append(json.loads(b.text))
        elif b.format == "yaml":
            parsed.append(yaml.safe_load(b.text))
        elif b.format == "shell":
            env = {}
            for line in b.text.splitlines():
                word, assignment = shlex.split(line)
                assert word == "export"
                k, v = assignment.split("=", 1)
                env[k] = v
            parsed.append(env)
        elif b.format == "python":
            tree = ast.parse(b.text)
            call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
            parsed.append({kw.arg: ast.literal_eval(kw.value) for kw in call.keywords
                           if not isinstance(kw.value, ast.Name)})
        elif b.format == "http":
            name, value = b.text.split(":", 1)
            parsed.append({name.strip(): value.strip()})
        else:  # pragma: no cover
            raise AssertionError(b.format)
    return parsed


def test_claude_code_snippet():
    s = render("claude-code", get_policy("claude-code", {"trigger.reserve_tokens": 60_000}), window=200_000)
    settings, env, legacy = parse_blocks(s)
    # today's control: the auto-compact window W with W - min(max output 32k, 20k) - 13k = 140,000
    assert settings == {"autoCompactEnabled": True, "autoCompactWindow": 173_000}
    assert env == {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "173000"}
    assert any("100k-199k" in n for n in s.notes)  # the range a reading of 2.1.221 found switched off
    assert any("`/autocompact 173k`" in n and "--autocompact 173000" in n for n in s.notes)
    # the percentage, for the releases that still read it (a no-op from 2.1.220, #82761)
    assert "2.1.219 only" in s.blocks[2].title
    pct = float(legacy["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"])
    effective = 200_000 - 20_000
    assert 140_000 - 20 <= int(effective * pct / 100) <= 140_000  # floor(E x pct) lands at the threshold
    # 50 % of a 1M window: W = 500,000 + 20,000 + 13,000
    s = render("claude-code", get_policy("claude-code", {"trigger.reserve_tokens": 500_000}), window=1_000_000)
    assert parse_blocks(s)[0]["autoCompactWindow"] == 533_000 and not any("100k-199k" in n for n in s.notes)
    # below the 100k minimum of the window (threshold 60,000 needs W = 93,000): only the old percentage
    s = render("claude-code", get_policy("claude-code", {"trigger.tokens": 60_000}), window=200_000)
    settings, legacy = parse_blocks(s)
    assert "autoCompactWindow" not in settings and "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE" in legacy
    assert any("93,000" in n and "not expressible from 2.1.220" in n for n in s.notes)
    assert {k.provenance for k in s.keys} <= {"documented", "source", "inferred"}
    # a threshold above the default cannot be reached with the override: none is emitted
    s = render("claude-code", get_policy("claude-code", {"trigger.reserve_tokens": 20_000}), window=200_000)
    (settings,) = parse_blocks(s)
    assert "env" not in settings and any("only lower" in n for n in s.notes)
    # the microcompact variant: the same settings, and a note that its gap rule has no key
    s = render("claude-code", get_policy("claude-code-microcompact"), window=200_000)
    assert any("60-minute gap" in n and "60 or 90 min" in n and "not expressible" in n for n in s.notes), s.notes


def test_codex_snippet():
    s = render("codex", get_policy("codex-local", {"trigger.fraction": 0.7, "provider.context_window": 272_000}))
    (cfg,) = parse_blocks(s)
    assert cfg == {"model_context_window": 272_000, "model_auto_compact_token_limit": int(0.7 * 272_000)}


def test_openclaw_snippet_json_and_yaml_agree():
    pol = get_policy("openclaw-flush", {"trigger.reserve_tokens": 33_000, "flush.reserve_tokens": 33_000,
                                        "flush.soft_threshold_tokens": 8_000})
    as_json, as_yaml = parse_blocks(render("openclaw", pol, window=200_000))
    assert as_json == as_yaml
    c = as_json["agents"]["defaults"]["compaction"]
    assert c == {"reserveTokensFloor": 33_000, "memoryFlush": {"enabled": True, "softThresholdTokens": 8_000}}


def test_openhands_anthropic_langchain_snippets():
    toml_cfg, sdk = parse_blocks(render("openhands", get_policy("openhands-default", {"trigger.max_events": 80})))
    assert toml_cfg["condenser"] == {"type": "llm", "llm_config": "condenser", "keep_first": 4, "max_size": 80}
    assert sdk == {"max_size": 80, "keep_first": 4}

    pol = get_policy("anthropic-clear-tool-uses", {"trigger.tokens": 60_000, "compaction.clear_keep": 6,
                                                   "compaction.clear_at_least": 10_000,
                                                   "compaction.exclude_tools": ("Memory",)})
    body, header = parse_blocks(render("anthropic", pol))
    (edit,) = body["context_management"]["edits"]
    assert edit == {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 60_000},
                    "keep": {"type": "tool_uses", "value": 6},
                    "clear_at_least": {"type": "input_tokens", "value": 10_000}, "exclude_tools": ["Memory"]}
    assert header == {"anthropic-beta": "context-management-2025-06-27"}
    body, header = parse_blocks(render("anthropic", get_policy("anthropic-compact")))
    assert body["context_management"]["edits"] == [
        {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 150_000}}]

    (kwargs,) = parse_blocks(render("langchain", get_policy("langchain-summarization", {"trigger.fraction": 0.7})))
    assert kwargs == {"model": "MODEL", "trigger": ("fraction", 0.7), "keep": ("messages", 20)}


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_harness_renders_every_preset_without_error(harness):
    from workbench.engine.presets import PRESETS

    for name in PRESETS:
        snippet = render(harness, PRESETS[name])
        parse_blocks(snippet)
        assert snippet.text().startswith(f"# {harness}")


def test_best_policy_round_trip():
    from workbench.sweep.tune import best_policy

    spec = SweepSpec.from_dict({"dataset": "d", "base": "claude-code",
                                "parameters": {"trigger.reserve_tokens": [13_000, 20_000, 33_000, 45_000,
                                                                          60_000, 80_000, 100_000]}})
    r = tune(table(), "cost_usd", ["overflows==0", "leaks==0", "retention>=0.95"])
    assert best_policy(r, spec).trigger.reserve_tokens == 45_000
