"""A tuned policy's thresholds in a harness's own configuration keys, ready to paste.

Every key carries where it comes from:

* ``documented``: named in the harness's published docs/reference;
* ``source``: read from the harness's code or shipped config template, not its docs;
* ``inferred``: our reading of behaviour reported by users (issue threads); verify first.

Only keys that exist are emitted; what a harness cannot express is said in ``notes``.

=============  ===================================================================================
harness        keys
=============  ===================================================================================
claude-code    ``autoCompactWindow`` (settings) / ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (env) /
               ``--autocompact`` / ``/autocompact`` (inferred; >= 100k; the threshold is that window
               - min(max output, 20k) - 13k), ``autoCompactEnabled`` (settings, documented),
               ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (env, documented; only lowers; up to 2.1.219):
               :mod:`workbench.sweep.harness_claude_code`
codex          ``model_auto_compact_token_limit``, ``model_context_window`` (config.toml, documented)
openclaw       ``agents.defaults.compaction.reserveTokensFloor`` (source),
               ``...memoryFlush.enabled`` / ``...memoryFlush.softThresholdTokens`` (documented),
               ``agents.defaults.contextPruning.mode`` / ``ttl`` / ``keepLastAssistants`` /
               ``softTrimRatio`` / ``hardClearRatio`` / ``minPrunableToolChars`` / ``softTrim.*`` /
               ``hardClear.enabled`` (documented), when the policy prunes
openhands      v0 ``config.toml`` ``[condenser] type="llm" keep_first max_size`` (source: shipped
               template); SDK ``LLMSummarizingCondenser(max_size, keep_first, max_tokens)`` (documented)
anthropic      ``context_management.edits``: ``clear_tool_uses_20250919`` (trigger, keep,
               clear_at_least, exclude_tools, clear_tool_inputs) and ``compact_20260112`` (trigger),
               beta headers ``context-management-2025-06-27`` / ``compact-2026-01-12`` (documented)
langchain      ``SummarizationMiddleware(model, trigger=(kind, n), keep=(kind, n))`` (documented)
gemini-cli     ``model.compressionThreshold``, ``contextManagement.tools.outputMasking.``
               ``protectionThresholdTokens`` / ``minPrunableThresholdTokens`` (settings.json, documented)
cline          SDK ``compaction.enabled`` / ``strategy`` / ``preserveRecentTokens`` (source), CLI
               ``--compaction`` (documented); the trigger (0.9 x usable input) has no key
roo-code       ``autoCondenseContext``, ``autoCondenseContextPercent`` (global settings, source)
opencode       ``compaction.auto`` / ``prune`` / ``reserved`` (opencode.json, documented)
aider          ``max-chat-history-tokens`` (.aider.conf.yml) / ``AIDER_MAX_CHAT_HISTORY_TOKENS``
               (documented)
hermes         ``compression.enabled`` / ``threshold`` / ``threshold_tokens`` / ``protect_first_n`` /
               ``protect_last_n`` / ``tail_mode`` / ``target_ratio`` (~/.hermes/config.yaml, documented)
=============  ===================================================================================

``codex`` also takes ``model_auto_compact_token_limit_scope = "body_after_prefix"`` (source) when
the policy's ``trigger.scope`` is ``body``. Where each key was read (a file of the harness's
public repository) is named in a comment beside it below.

>>> from workbench.engine.presets import get_policy
>>> s = render("codex", get_policy("codex-local", {"trigger.fraction": 0.8}), window=272_000)
>>> print(s.blocks[0].text.splitlines()[-1])
model_auto_compact_token_limit = 217600
"""

from __future__ import annotations

import json
from typing import Any

from workbench.errors import WorkbenchError
from workbench.sweep.harness_agents import aider, cline, gemini_cli, hermes, opencode, roo_code
from workbench.sweep.harness_base import (
    Block,
    HarnessSnippet,
    Key,
    not_tokens,
    threshold_of,
)
from workbench.sweep.harness_claude_code import claude_code

HARNESSES = ("claude-code", "codex", "openclaw", "openhands", "anthropic", "langchain", "gemini-cli",
             "cline", "roo-code", "opencode", "aider", "hermes")


def codex(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("codex")
    threshold = threshold_of(policy, window)
    if threshold is None:
        s.notes.append(not_tokens(policy, "Codex"))
        return s
    lines = ["# ~/.codex/config.toml"]
    if policy.provider.context_window:
        lines.append(f"model_context_window = {int(policy.provider.context_window)}")
        s.keys.append(Key("model_context_window", int(policy.provider.context_window), "documented",
                          "~/.codex/config.toml (config reference)"))
    else:
        lines.append(f"# model_context_window = {window}  (the window this threshold was tuned on)")
    lines.append(f"model_auto_compact_token_limit = {threshold}")
    s.keys.append(Key("model_auto_compact_token_limit", threshold, "documented",
                      "~/.codex/config.toml (config reference)"))
    if policy.trigger.scope == "body":
        # read in openai/codex codex-rs/config/src/config_toml.rs (ConfigToml field, "whether the
        # auto-compaction limit applies to the full context or only to tokens after the carried
        # prefix") and codex-rs/protocol/src/config_types.rs (AutoCompactTokenLimitScope, snake_case:
        # total | body_after_prefix)
        lines.append('model_auto_compact_token_limit_scope = "body_after_prefix"')
        s.keys.append(Key("model_auto_compact_token_limit_scope", "body_after_prefix", "source",
                          "~/.codex/config.toml (codex-rs/config/src/config_toml.rs)"))
        s.notes.append("with body_after_prefix the limit counts only what follows the carried prefix of the "
                       "compaction window; the whole prompt still cannot exceed the model's window")
    s.blocks.append(Block("toml", "~/.codex/config.toml", "\n".join(lines) + "\n"))
    if threshold > 0.9 * window:
        s.notes.append(f"{threshold:,} is above 90% of the window ({int(0.9 * window):,}); Codex clamps "
                       "the limit to 90% (source), so the effective threshold is lower than tuned")
    if policy.compaction.retain != "none":
        s.notes.append(f"retained {policy.compaction.retain} up to {policy.compaction.retain_tokens:,} "
                       "tokens is built into Codex (20k local / 64k remote); no key")
    if policy.flush.enabled:
        s.notes.append("Codex has no pre-compaction flush key; the flush settings are not expressible")
    return s


def openclaw(policy, window: int) -> HarnessSnippet:
    import yaml

    s = HarnessSnippet("openclaw")
    threshold = threshold_of(policy, window)
    compaction: dict[str, Any] = {}
    if threshold is None:
        s.notes.append(not_tokens(policy, "OpenClaw"))
    else:
        reserve = int(window - threshold)
        compaction["reserveTokensFloor"] = reserve
        s.keys.append(Key("agents.defaults.compaction.reserveTokensFloor", reserve, "source",
                          "OpenClaw config (read by its compaction and memory-flush code)"))
    flush: dict[str, Any] = {"enabled": bool(policy.flush.enabled)}
    s.keys.append(Key("agents.defaults.compaction.memoryFlush.enabled", bool(policy.flush.enabled),
                      "documented", "OpenClaw config (session management: memory flush)"))
    if policy.flush.enabled and threshold is not None:
        # the flush fires softThresholdTokens below the compaction threshold, in OpenClaw as here
        soft = int(threshold - policy.flush_threshold(window))
        flush["softThresholdTokens"] = soft
        s.keys.append(Key("agents.defaults.compaction.memoryFlush.softThresholdTokens", soft, "documented",
                          "OpenClaw config (session management: memory flush)"))
        if soft != policy.flush.soft_threshold_tokens:
            s.notes.append(f"flush.fraction {policy.flush.fraction} puts the flush {soft:,} tokens below the "
                           f"compaction threshold: softThresholdTokens is that distance")
    compaction["memoryFlush"] = flush
    doc = {"agents": {"defaults": {"compaction": compaction}}}
    if policy.pruning.mode != "off":
        doc["agents"]["defaults"]["contextPruning"] = _openclaw_pruning(policy.pruning, s)
    s.blocks.append(Block("json", "OpenClaw config (JSON)", json.dumps(doc, indent=2)))
    s.blocks.append(Block("yaml", "OpenClaw config (YAML)", yaml.safe_dump(doc, sort_keys=False)))
    return s


def _openclaw_pruning(pr, s: HarnessSnippet) -> dict[str, Any]:
    """OpenClaw's ``contextPruning`` keys of a pruning policy (docs/concepts/session-pruning.md;
    read by src/agents/pi-extensions/context-pruning/settings.ts)."""
    ttl = f"{int(pr.ttl_s // 60)}m" if pr.ttl_s % 60 == 0 else f"{pr.ttl_s:g}s"  # settings.ts: parseDurationMs
    doc = {"mode": pr.mode, "ttl": ttl, "keepLastAssistants": pr.keep_last_assistants,
           "softTrimRatio": pr.soft_trim_ratio, "hardClearRatio": pr.hard_clear_ratio,
           "minPrunableToolChars": pr.min_prunable_tool_chars,
           "softTrim": {"maxChars": pr.soft_trim_max_chars, "headChars": pr.soft_trim_head_chars,
                        "tailChars": pr.soft_trim_tail_chars},
           "hardClear": {"enabled": pr.hard_clear}}
    for key, value in doc.items():
        for sub, v in (value.items() if isinstance(value, dict) else [(None, value)]):
            name = f"agents.defaults.contextPruning.{key}" + (f".{sub}" if sub else "")
            s.keys.append(Key(name, v, "documented", "OpenClaw docs: concepts/session-pruning"))
    s.notes.append("OpenClaw prunes only for Anthropic models (direct, or anthropic/* through OpenRouter); "
                   "set the model's cacheControlTtl to the same ttl")
    return doc


def openhands(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("openhands")
    t = policy.trigger
    keep_first = int(t.keep_first)
    if t.kind == "events":
        max_size = int(t.max_events)
        toml = ("[condenser]\n" 'type = "llm"\n' 'llm_config = "condenser"\n'
                f"keep_first = {keep_first}\nmax_size = {max_size}\n")
        s.blocks.append(Block("toml", "OpenHands v0 config.toml", toml))
        s.keys += [Key("condenser.type", "llm", "source", "config.toml (shipped config.template.toml)"),
                   Key("condenser.keep_first", keep_first, "source", "config.toml (shipped config.template.toml)"),
                   Key("condenser.max_size", max_size, "source", "config.toml (shipped config.template.toml)")]
        py = (f"LLMSummarizingCondenser(llm=llm, max_size={max_size}, keep_first={keep_first})")
        s.keys += [Key("LLMSummarizingCondenser.max_size", max_size, "documented", "OpenHands SDK"),
                   Key("LLMSummarizingCondenser.keep_first", keep_first, "documented", "OpenHands SDK")]
    else:
        threshold = threshold_of(policy, window)
        if threshold is None:
            s.notes.append(f"the policy's trigger is {t.rule_id()}; OpenHands condensers trigger on "
                           "event count (max_size) or tokens (SDK max_tokens)")
            return s
        py = f"LLMSummarizingCondenser(llm=llm, max_tokens={threshold}, keep_first={keep_first})"
        s.keys += [Key("LLMSummarizingCondenser.max_tokens", threshold, "documented", "OpenHands SDK"),
                   Key("LLMSummarizingCondenser.keep_first", keep_first, "documented", "OpenHands SDK")]
        s.notes.append("a token trigger exists only in the SDK condenser (max_tokens); the v0 config.toml "
                       "condenser has no token key")
    s.blocks.append(Block("python", "OpenHands SDK",
                          "from openhands.sdk.context.condenser import LLMSummarizingCondenser\n\n"
                          f"condenser = {py}\n"))
    if t.min_progress:
        s.notes.append(f"min_progress={t.min_progress} (the SDK condenser's minimum progress, 0.1 there) is not emitted")
    return s


def anthropic(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("anthropic")
    threshold = threshold_of(policy, window)
    if threshold is None:
        s.notes.append(not_tokens(policy, "the Messages API context management"))
        return s
    c = policy.compaction
    edits: list[dict[str, Any]] = []
    betas: list[str] = []
    if c.kind == "clear_tool_uses":
        edit: dict[str, Any] = {"type": "clear_tool_uses_20250919",
                                "trigger": {"type": "input_tokens", "value": threshold},
                                "keep": {"type": "tool_uses", "value": int(c.clear_keep)}}
        if c.clear_at_least:
            edit["clear_at_least"] = {"type": "input_tokens", "value": int(c.clear_at_least)}
        if c.exclude_tools:
            edit["exclude_tools"] = list(c.exclude_tools)
        if c.clear_inputs:
            edit["clear_tool_inputs"] = True
        edits.append(edit)
        betas.append("context-management-2025-06-27")
        for k in ("trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"):
            if k in edit:
                s.keys.append(Key(f"context_management.edits[clear_tool_uses_20250919].{k}", edit[k],
                                  "documented", "Messages API request body (context editing)"))
    elif c.kind in ("summary", "opaque"):
        edits.append({"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": threshold}})
        betas.append("compact-2026-01-12")
        s.keys.append(Key("context_management.edits[compact_20260112].trigger", edits[0]["trigger"],
                          "documented", "Messages API request body (compaction)"))
        if threshold < 50_000:
            s.notes.append(f"the API rejects compaction triggers below 50,000 tokens; {threshold:,} must be raised")
    else:
        s.notes.append(f"compaction kind {c.kind!r} has no Anthropic context-management edit")
        return s
    body = {"context_management": {"edits": edits}}
    s.blocks.append(Block("json", "Messages API request body (fragment)", json.dumps(body, indent=2)))
    s.blocks.append(Block("http", "request header", f"anthropic-beta: {','.join(betas)}"))
    if policy.masking.after_turns:
        s.notes.append("observation masking by turn age has no API edit; clear_tool_uses keeps the last N tool uses instead")
    return s


def langchain(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("langchain")
    t = policy.trigger
    if t.kind == "tokens" and t.tokens:
        trigger: tuple = ("tokens", int(t.tokens))
    elif t.kind == "tokens" and t.fraction:
        trigger = ("fraction", float(t.fraction))
    elif t.kind == "tokens":
        trigger = ("tokens", threshold_of(policy, window))
    elif t.kind == "events":
        trigger = ("messages", int(t.max_events))
        s.notes.append("the policy counts events; LangChain counts messages (tool calls/results are messages too)")
    else:
        s.notes.append(f"the policy's trigger is {t.rule_id()}; SummarizationMiddleware triggers on "
                       "tokens, a fraction of the window, or a message count")
        return s
    kwargs: dict[str, Any] = {"trigger": trigger}
    if t.keep_last_tokens:
        kwargs["keep"] = ("tokens", int(t.keep_last_tokens))
    elif t.keep_last_fraction:
        kwargs["keep"] = ("fraction", float(t.keep_last_fraction))
    elif t.keep_last_events:
        kwargs["keep"] = ("messages", int(t.keep_last_events))
    elif t.keep_last_share:
        s.notes.append(f"the policy keeps {t.keep_last_share:g} of the history raw; SummarizationMiddleware keeps "
                       "tokens, a fraction of the window or messages, so keep is left at its default")
    else:
        s.notes.append("the policy keeps no minimum raw tail; keep is left at its default ('messages', 20)")
    model = policy.provider.model or "MODEL"
    args = ", ".join([f"model={model!r}"] + [f"{k}={v!r}" for k, v in kwargs.items()])
    code = ("from langchain.agents.middleware import SummarizationMiddleware\n\n"
            f"summarization = SummarizationMiddleware({args})\n")
    s.blocks.append(Block("python", "LangChain agent middleware", code))
    for k, v in kwargs.items():
        s.keys.append(Key(f"SummarizationMiddleware.{k}", v, "documented", "LangChain reference"))
    return s


# ---- harnesses added for issue 16 ----------------------------------------------------------------
# Each key below was read in the harness's public repository; the file is named beside it.


RENDERERS = {"claude-code": claude_code, "codex": codex, "openclaw": openclaw, "openhands": openhands,
             "anthropic": anthropic, "langchain": langchain, "gemini-cli": gemini_cli, "cline": cline,
             "roo-code": roo_code, "opencode": opencode, "aider": aider, "hermes": hermes}


def render(harness: str, policy, *, window: int | None = None) -> HarnessSnippet:
    """The policy's thresholds for ``harness``; ``window`` defaults to the policy's own
    ``provider.context_window`` or 200,000."""
    if harness not in RENDERERS:
        raise WorkbenchError(f"unknown harness {harness!r}; choose one of {', '.join(HARNESSES)}")
    w = int(window or policy.provider.context_window or 200_000)
    return RENDERERS[harness](policy, w)
