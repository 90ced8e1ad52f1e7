"""A tuned policy's thresholds in a harness's own configuration keys, ready to paste.

Every key carries where it comes from:

* ``documented``: named in the harness's published docs/reference;
* ``source``: read from the harness's code or shipped config template, not its docs;
* ``inferred``: our reading of behaviour reported by users (issue threads); verify first.

Only keys that exist are emitted; what a harness cannot express is said in ``notes``.

=============  ===================================================================================
harness        keys
=============  ===================================================================================
claude-code    ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (env, documented; can only *lower* the built-in
               threshold of effective window - 13k), ``autoCompactEnabled`` (settings, documented)
codex          ``model_auto_compact_token_limit``, ``model_context_window`` (config.toml, documented)
openclaw       ``agents.defaults.compaction.reserveTokensFloor`` (source),
               ``...memoryFlush.enabled`` / ``...memoryFlush.softThresholdTokens`` (documented)
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
import math
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import WorkbenchError

HARNESSES = ("claude-code", "codex", "openclaw", "openhands", "anthropic", "langchain", "gemini-cli",
             "cline", "roo-code", "opencode", "aider", "hermes")


@dataclass(frozen=True)
class Key:
    name: str
    value: Any
    provenance: str  # documented | source | inferred
    where: str  # the file / API / environment it goes to


@dataclass(frozen=True)
class Block:
    format: str  # toml | json | yaml | shell | python | http
    title: str
    text: str


@dataclass
class HarnessSnippet:
    harness: str
    blocks: list[Block] = field(default_factory=list)
    keys: list[Key] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        out = [f"# {self.harness}: the chosen thresholds in its own keys"]
        for b in self.blocks:
            out += ["", f"## {b.title} ({b.format})", b.text.rstrip()]
        if self.keys:
            out += ["", "## provenance"]
            out += [f"- {k.name} = {k.value!r}: {k.provenance} ({k.where})" for k in self.keys]
        if self.notes:
            out += ["", "## notes"] + [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


def _threshold(policy, window: int) -> int | None:
    t = policy.trigger
    if t.kind != "tokens":
        return None
    return int(t.threshold(window))


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    return json.dumps(str(v))  # a TOML basic string is JSON-compatible for plain text


def _not_tokens(policy, harness: str) -> str:
    return (f"the policy's trigger is {policy.trigger.rule_id()}, not a token threshold; {harness} "
            "only takes a token threshold, so nothing below reproduces it")


def _off(policy) -> bool:
    """The policy never compacts (no trigger, or nothing replaces the span)."""
    return policy.trigger.kind == "none" or policy.compaction.kind == "none"


def _fraction(policy, threshold: int, window: int) -> float:
    """The threshold as a share of the window: the policy's own fraction when it has one (no
    rounding through tokens), else threshold / window to 4 places."""
    t = policy.trigger
    if t.fraction and not t.tokens:
        return float(t.fraction)
    return round(threshold / window, 4)


def _whole_prompt(policy, harness: str) -> list[str]:
    """A note when the policy's threshold counts only the body but the harness counts the
    whole prompt (no scope key)."""
    if policy.trigger.scope != "body":
        return []
    return [f"the policy's threshold counts the prompt body only (trigger.scope = body); {harness} compares "
            "its threshold with the whole prompt and has no key to change that, so it compacts earlier"]


# ---- harnesses ----------------------------------------------------------------------------------
def claude_code(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("claude-code")
    threshold = _threshold(policy, window)
    if policy.trigger.kind == "none" or policy.compaction.kind == "none":
        settings = {"autoCompactEnabled": False}
        s.blocks.append(Block("json", "~/.claude/settings.json", json.dumps(settings, indent=2)))
        s.keys.append(Key("autoCompactEnabled", False, "documented", "settings.json (settings reference)"))
        s.notes.append("older versions keep this in ~/.claude.json (`claude config set -g autoCompactEnabled false`)")
        return s
    if threshold is None:
        s.notes.append(_not_tokens(policy, "Claude Code"))
        return s
    effective = window - min(policy.provider.max_output, 20_000)
    default = effective - 13_000
    env: dict[str, str] = {}
    if threshold < default:
        pct = math.floor(threshold * 10_000 / effective) / 100  # floor(E * pct / 100) <= threshold
        pct_text = str(int(pct)) if float(pct).is_integer() else f"{pct:.2f}"
        env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = pct_text
        reached = math.floor(effective * pct / 100)
        s.keys.append(Key("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", pct_text, "documented",
                          "environment (Claude Code env-var reference)"))
        s.notes.append(f"threshold {threshold:,} tokens = {pct_text}% of the effective window "
                       f"{effective:,} (window {window:,} - min(max output, 20k)); Claude Code computes "
                       f"floor(effective x pct) = {reached:,}")
    else:
        s.notes.append(f"the chosen threshold {threshold:,} is at or above Claude Code's default "
                       f"{default:,} (effective window - 13k); CLAUDE_AUTOCOMPACT_PCT_OVERRIDE can only "
                       "lower the threshold, so the default stays and no override is emitted")
    settings = {"autoCompactEnabled": True}
    if env:
        settings["env"] = env
        lines = [f"export {k}={v}" for k, v in env.items()]
        s.blocks.append(Block("shell", "shell profile, before starting `claude`", "\n".join(lines)))
    s.blocks.append(Block("json", "~/.claude/settings.json", json.dumps(settings, indent=2)))
    s.keys.append(Key("autoCompactEnabled", True, "documented", "settings.json (settings reference)"))
    if env:
        s.notes.append("several Claude Code versions were reported (issues #63186, #36381, #57567) to ignore "
                       "this variable when set only in settings.json `env`; exporting it in the shell is "
                       "the reliable route (inferred from those reports)")
    if policy.flush.enabled:
        s.notes.append("Claude Code has no pre-compaction flush key; the flush settings are not expressible")
    if policy.masking.after_turns or policy.trigger.keep_last_events or policy.compaction.retain != "none":
        s.notes.append("keep/masking parameters have no Claude Code key (microcompact is internal)")
    s.notes.append("CLAUDE_CODE_AUTO_COMPACT_WINDOW / autoCompactWindow (the window the percentage "
                   "applies to) appear in newer versions; not emitted (inferred, semantics unverified)")
    return s


def codex(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("codex")
    threshold = _threshold(policy, window)
    if threshold is None:
        s.notes.append(_not_tokens(policy, "Codex"))
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
    threshold = _threshold(policy, window)
    compaction: dict[str, Any] = {}
    if threshold is None:
        s.notes.append(_not_tokens(policy, "OpenClaw"))
    else:
        reserve = int(window - threshold)
        compaction["reserveTokensFloor"] = reserve
        s.keys.append(Key("agents.defaults.compaction.reserveTokensFloor", reserve, "source",
                          "OpenClaw config (read by its compaction and memory-flush code)"))
    flush: dict[str, Any] = {"enabled": bool(policy.flush.enabled)}
    s.keys.append(Key("agents.defaults.compaction.memoryFlush.enabled", bool(policy.flush.enabled),
                      "documented", "OpenClaw config (session management: memory flush)"))
    if policy.flush.enabled:
        reserve = compaction.get("reserveTokensFloor", int(policy.flush.reserve_tokens))
        soft = int(window - reserve - policy.flush.threshold(window))
        if soft < 0:
            s.notes.append(f"the tuned flush threshold lies above the compaction threshold; "
                           f"softThresholdTokens clamped to 0 (was {soft:,})")
            soft = 0
        flush["softThresholdTokens"] = soft
        s.keys.append(Key("agents.defaults.compaction.memoryFlush.softThresholdTokens", soft, "documented",
                          "OpenClaw config (session management: memory flush)"))
        if policy.flush.reserve_tokens != reserve and not policy.flush.fraction:
            s.notes.append("OpenClaw uses one reserve for compaction and flush; softThresholdTokens was "
                           "computed so the flush fires at the tuned flush threshold")
    compaction["memoryFlush"] = flush
    doc = {"agents": {"defaults": {"compaction": compaction}}}
    s.blocks.append(Block("json", "OpenClaw config (JSON)", json.dumps(doc, indent=2)))
    s.blocks.append(Block("yaml", "OpenClaw config (YAML)", yaml.safe_dump(doc, sort_keys=False)))
    return s


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
        threshold = _threshold(policy, window)
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
    threshold = _threshold(policy, window)
    if threshold is None:
        s.notes.append(_not_tokens(policy, "the Messages API context management"))
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
        trigger = ("tokens", _threshold(policy, window))
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
def gemini_cli(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("gemini-cli")
    threshold = _threshold(policy, window)
    if threshold is None:
        s.notes.append(_not_tokens(policy, "Gemini CLI"))
        return s
    if _off(policy):
        s.notes.append("Gemini CLI has no setting that turns chat compression off (none in "
                       "packages/cli/src/config/settingsSchema.ts); a never-compacting policy is not expressible")
        return s
    frac = _fraction(policy, threshold, window)
    # google-gemini/gemini-cli docs/reference/configuration.md and packages/cli/src/config/
    # settingsSchema.ts: model.compressionThreshold, "the fraction of context usage at which to
    # trigger context compression", default 0.5; compared with the last prompt's token count
    # against tokenLimit(model) in packages/core/src/context/chatCompressionService.ts
    settings: dict[str, Any] = {"model": {"compressionThreshold": frac}}
    s.keys.append(Key("model.compressionThreshold", frac, "documented",
                      "~/.gemini/settings.json (docs/reference/configuration.md)"))
    m = policy.masking
    if m.keep_tokens:
        # same files: contextManagement.tools.outputMasking.protectionThresholdTokens (default 50,000)
        # and .minPrunableThresholdTokens (default 30,000), read by
        # packages/core/src/context/toolOutputMaskingService.ts
        settings["contextManagement"] = {"tools": {"outputMasking": {
            "protectionThresholdTokens": int(m.keep_tokens),
            "minPrunableThresholdTokens": int(m.at_least_tokens)}}}
        for k, v in (("protectionThresholdTokens", int(m.keep_tokens)),
                     ("minPrunableThresholdTokens", int(m.at_least_tokens))):
            s.keys.append(Key(f"contextManagement.tools.outputMasking.{k}", v, "documented",
                              "~/.gemini/settings.json (docs/reference/configuration.md)"))
        s.notes.append("remote experiment flags, when the account receives them, take precedence over the two "
                       "masking settings (packages/core/src/config/config.ts, getToolOutputMaskingConfig)")
    else:
        s.notes.append("Gemini CLI masks old tool outputs on every turn with its defaults (newest 50k tool tokens "
                       "protected, masked once >= 30k are prunable); no setting turns it off, so a policy without "
                       "masking is not fully expressible")
    if m.after_turns:
        s.notes.append(f"masking by turn age (after {m.after_turns} turns) has no Gemini CLI key; its masking "
                       "counts tool-output tokens")
    keep = policy.trigger.keep_last_fraction
    if keep != 0.3:
        s.notes.append(f"Gemini CLI keeps the newest 30 % of the history raw (COMPRESSION_PRESERVE_THRESHOLD, "
                       f"a constant in chatCompressionService.ts); the policy's {keep or 0:g} has no key")
    s.notes.append(f"the fraction applies to Gemini CLI's own token limit for the model (tokenLimit(model)); "
                   f"it was tuned on a window of {window:,}: {frac:g} x {window:,} = {int(frac * window):,}")
    s.notes.append("the experimental context manager (experimental.contextManagement, off by default) has its "
                   "own contextManagement.historyWindow.maxTokens trigger; not emitted, it replaces the rule tuned")
    s.notes += _whole_prompt(policy, "Gemini CLI")
    s.blocks.append(Block("json", "~/.gemini/settings.json", json.dumps(settings, indent=2)))
    return s


def cline(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("cline")
    # cline/cline sdk/packages/core/src/types/config.ts: CoreCompactionConfig {enabled, strategy
    # ("basic" | "agentic"), preserveRecentTokens, summarizer, compact}, the `compaction` field of
    # CoreSessionConfig; apps/cli/README.md documents `--compaction <agentic|basic|off>`
    if _off(policy):
        s.blocks.append(Block("json", "Cline SDK session config (CoreSessionConfig)",
                              json.dumps({"compaction": {"enabled": False}}, indent=2)))
        s.keys += [Key("compaction.enabled", False, "source", "Cline SDK CoreSessionConfig "
                       "(sdk/packages/core/src/types/config.ts)"),
                   Key("--compaction", "off", "documented", "cline CLI flag (apps/cli/README.md)")]
        s.notes.append("in the VS Code extension the same is its auto-compact toggle (global state key "
                       "useAutoCondense, apps/vscode/src/shared/storage/state-keys.ts), set in the UI")
        return s
    kinds = {"summary": "agentic", "truncate": "basic"}
    if policy.compaction.kind not in kinds:
        s.notes.append(f"compaction kind {policy.compaction.kind!r} has no Cline strategy (agentic = an LLM "
                       "summary, basic = local truncation)")
        return s
    strategy = kinds[policy.compaction.kind]
    compaction: dict[str, Any] = {"enabled": True, "strategy": strategy}
    t = policy.trigger
    if t.keep_last_tokens:
        compaction["preserveRecentTokens"] = int(t.keep_last_tokens)
    elif t.keep_last_events or t.keep_last_fraction:
        s.notes.append("Cline keeps a raw tail by tokens (preserveRecentTokens, default 20,000); the policy's "
                       "tail in events or as a share of the window has no key")
    s.blocks.append(Block("json", "Cline SDK session config (CoreSessionConfig)",
                          json.dumps({"compaction": compaction}, indent=2)))
    for k, v in compaction.items():
        s.keys.append(Key(f"compaction.{k}", v, "source",
                          "Cline SDK CoreSessionConfig (sdk/packages/core/src/types/config.ts)"))
    s.keys.append(Key("--compaction", strategy, "documented", "cline CLI flag (apps/cli/README.md)"))
    if "preserveRecentTokens" in compaction:
        s.notes.append("the SDK caps preserveRecentTokens at the compaction target "
                       "(sdk/packages/core/src/extensions/context/compaction.ts)")
    threshold = _threshold(policy, window)
    fixed = int(0.9 * 0.9 * window)
    told = (f"Cline has no key for the trigger: it compacts at 0.9 x the usable input, usable = 0.9 x the "
            f"window when the model reports only a window (~81 %: {fixed:,} of {window:,}; constants "
            "COMPACTION_TRIGGER_RATIO and CONTEXT_WINDOW_INPUT_RATIO in sdk/packages/core/src/extensions/"
            "context/compaction-shared.ts)")
    if threshold is None:
        s.notes.append(_not_tokens(policy, "Cline") + "; " + told)
    elif abs(threshold - fixed) > 0.005 * window:
        s.notes.append(f"the tuned threshold {threshold:,} ({threshold / window:.1%}) cannot be set; " + told)
    else:
        s.notes.append(f"the tuned threshold {threshold:,} is Cline's own; " + told)
    if policy.compaction.cap != 4_096:
        s.notes.append("the summary cap (4,096 tokens by default) is summarizer.maxOutputTokens in the SDK, which "
                       "also needs the summarizer's providerId and modelId; not emitted")
    s.notes += _whole_prompt(policy, "Cline")
    return s


def roo_code(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("roo-code")
    where = "Roo Code global settings (packages/types/src/global-settings.ts)"
    import_note = ("the settings slider (Settings > Context) sets the same keys; an import needs a whole file "
                   "exported from Roo Code (providerProfiles included, src/core/config/importExport.ts), so "
                   "merge these into its globalSettings")
    # RooCodeInc/Roo-Code packages/types/src/global-settings.ts: autoCondenseContext (boolean),
    # autoCondenseContextPercent (number); defaults true / 100 in src/core/webview/ClineProvider.ts
    if _off(policy):
        s.blocks.append(Block("json", "Roo Code settings export (globalSettings)",
                              json.dumps({"globalSettings": {"autoCondenseContext": False}}, indent=2)))
        s.keys.append(Key("autoCondenseContext", False, "source", where))
        s.notes.append(import_note)
        return s
    threshold = _threshold(policy, window)
    if threshold is None:
        s.notes.append(_not_tokens(policy, "Roo Code"))
        return s
    t = policy.trigger
    if t.fraction and not t.tokens:
        pct = math.floor(round(t.fraction * 100, 6))
    else:
        pct = threshold * 100 // window
    # src/core/condense/index.ts: MIN_CONDENSE_THRESHOLD = 5, MAX_CONDENSE_THRESHOLD = 100; the slider
    # in webview-ui/src/components/settings/ContextManagementSettings.tsx runs 10..100 in steps of 1
    if not 5 <= pct <= 100:
        s.notes.append(f"the threshold is {threshold * 100 / window:.2f} % of the window; Roo Code takes "
                       "autoCondenseContextPercent from 5 to 100 only, so nothing is emitted")
        return s
    settings = {"autoCondenseContext": True, "autoCondenseContextPercent": int(pct)}
    s.blocks.append(Block("json", "Roo Code settings export (globalSettings)",
                          json.dumps({"globalSettings": settings}, indent=2)))
    for k, v in settings.items():
        s.keys.append(Key(k, v, "source", where))
    reached = math.ceil(pct * window / 100)
    if reached != threshold:
        s.notes.append(f"the percent is a whole number: {pct} % of {window:,} = {reached:,} (tuned {threshold:,}); "
                       "rounded down so condensing is never later than tuned")
    if pct < 10:
        s.notes.append("below 10 % the settings slider cannot show it; set it through a settings import")
    s.notes.append(import_note + "; a per-profile value in profileThresholds overrides the global percent")
    buffer = int(0.9 * window - policy.provider.max_output)
    if buffer < reached:
        s.notes.append(f"Roo Code also condenses when the context exceeds 0.9 x window - the model's max tokens "
                       f"({buffer:,} here; TOKEN_BUFFER_PERCENTAGE in src/core/context-management/index.ts), "
                       "which comes first")
    if t.keep_last_events != 3 or t.keep_last_tokens or t.keep_last_fraction:
        s.notes.append("the raw tail Roo Code keeps after condensing is built in; no key in global-settings.ts")
    if policy.emergency != "truncate_half":
        s.notes.append("when the context still does not fit Roo Code drops the older half of the messages "
                       "(built in, no key); the policy's overflow rule differs")
    s.notes += _whole_prompt(policy, "Roo Code")
    return s


def opencode(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("opencode")
    where = "opencode.json (packages/web/src/content/docs/config.mdx)"
    # anomalyco/opencode (formerly sst/opencode) packages/web/src/content/docs/config.mdx documents
    # compaction.auto, compaction.prune and compaction.reserved; the trigger is in
    # packages/opencode/src/session/overflow.ts (usable = context (or limit.input) - reserved,
    # reserved defaulting to min(20k, max output)); pruning in packages/opencode/src/session/compaction.ts
    compaction: dict[str, Any] = {}
    if _off(policy):
        compaction["auto"] = False
    else:
        threshold = _threshold(policy, window)
        if threshold is None:
            s.notes.append(_not_tokens(policy, "opencode"))
            return s
        reserved = int(window - threshold)
        if reserved < 0:
            s.notes.append(f"the threshold {threshold:,} lies beyond the window {window:,}; reserved cannot be negative")
            return s
        compaction["auto"] = True
        compaction["reserved"] = reserved
        s.notes.append(f"opencode compacts at the window less reserved: {window:,} - {reserved:,} = {threshold:,}; "
                       "for a model that declares an input limit (limit.input) it subtracts reserved from that "
                       "limit instead (packages/opencode/src/session/overflow.ts)")
    m = policy.masking
    compaction["prune"] = bool(m.keep_tokens)
    if m.keep_tokens and (m.keep_tokens, m.at_least_tokens) != (40_000, 20_000):
        s.notes.append(f"opencode prunes tool outputs beyond the newest 40,000 tokens once more than 20,000 would "
                       f"go (PRUNE_PROTECT / PRUNE_MINIMUM, constants in packages/opencode/src/session/"
                       f"compaction.ts); the policy's {m.keep_tokens:,} / {m.at_least_tokens:,} have no key")
    if m.after_turns:
        s.notes.append(f"masking by turn age (after {m.after_turns} turns) has no opencode key; prune counts tokens")
    doc = {"$schema": "https://opencode.ai/config.json", "compaction": compaction}
    s.blocks.append(Block("json", "opencode.json (project) or ~/.config/opencode/opencode.json",
                          json.dumps(doc, indent=2)))
    for k, v in compaction.items():
        s.keys.append(Key(f"compaction.{k}", v, "documented", where))
    if not _off(policy):
        s.notes += _whole_prompt(policy, "opencode")
    return s


def aider(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("aider")
    if _off(policy):
        s.notes.append("aider has no documented switch that turns chat-history summarisation off; a never-"
                       "compacting policy is not expressible")
        return s
    threshold = _threshold(policy, window)
    if threshold is None:
        s.notes.append(_not_tokens(policy, "aider"))
        return s
    if policy.trigger.scope != "body":
        s.notes.append(f"the policy's threshold {threshold:,} counts the whole prompt; aider's only budget "
                       "(max-chat-history-tokens) counts the chat history alone (aider/history.py, too_big), "
                       "so no key expresses it")
        return s
    # Aider-AI/aider aider/args.py (--max-chat-history-tokens, "soft limit on tokens for chat history,
    # after which summarization begins"), aider/website/docs/config/options.md (env
    # AIDER_MAX_CHAT_HISTORY_TOKENS), aider/website/assets/sample.aider.conf.yml
    s.blocks.append(Block("yaml", ".aider.conf.yml", f"max-chat-history-tokens: {threshold}\n"))
    s.blocks.append(Block("shell", "environment", f"export AIDER_MAX_CHAT_HISTORY_TOKENS={threshold}"))
    s.keys += [Key("max-chat-history-tokens", threshold, "documented",
                   ".aider.conf.yml or --max-chat-history-tokens (aider/website/docs/config/options.md)"),
               Key("AIDER_MAX_CHAT_HISTORY_TOKENS", threshold, "documented",
                   "environment (aider/website/docs/config/options.md)")]
    s.notes.append("unset, aider uses min(max(max input / 16, 1,024), 8,192) for the model (aider/models.py)")
    keep = policy.trigger.keep_last_tokens
    if keep != threshold // 2:
        s.notes.append(f"aider keeps the newest half of the budget raw ({threshold // 2:,} tokens, aider/history.py); "
                       f"the policy's raw tail of {keep:,} tokens has no key")
    return s


def hermes(policy, window: int) -> HarnessSnippet:
    import yaml

    s = HarnessSnippet("hermes")
    where = "~/.hermes/config.yaml (cli-config.yaml.example; website/docs/developer-guide/" \
            "context-compression-and-caching.md)"
    # NousResearch/hermes-agent cli-config.yaml.example ("copy settings from this example into
    # ~/.hermes/config.yaml"): compression.enabled, threshold (share of context_length),
    # threshold_tokens (absolute cap: the lower of the two fires), target_ratio, protect_last_n,
    # protect_first_n (head messages after the system prompt); tail_mode (lean | legacy) in
    # website/docs/developer-guide/context-compression-and-caching.md
    if _off(policy):
        doc = {"compression": {"enabled": False}}
        s.blocks.append(Block("yaml", "~/.hermes/config.yaml", yaml.safe_dump(doc, sort_keys=False)))
        s.keys.append(Key("compression.enabled", False, "documented", where))
        return s
    threshold = _threshold(policy, window)
    if threshold is None:
        s.notes.append(_not_tokens(policy, "Hermes"))
        return s
    t = policy.trigger
    frac = _fraction(policy, threshold, window)
    comp: dict[str, Any] = {"enabled": True, "threshold": frac, "threshold_tokens": int(threshold),
                            "protect_first_n": int(t.keep_first)}
    if t.keep_last_events:
        comp["protect_last_n"] = int(t.keep_last_events)
    tail = t.keep_last_tokens or int(t.keep_last_fraction * window)
    if tail:
        ratio = round(tail / threshold, 4)
        if 0.10 <= ratio <= 0.80:
            comp["tail_mode"] = "legacy"
            comp["target_ratio"] = ratio
            s.notes.append(f"target_ratio keeps a raw tail of target_ratio x the trigger: {ratio:g} x {threshold:,} "
                           f"= {int(ratio * threshold):,} tokens; it applies in tail_mode legacy only (the default "
                           "lean mode keeps 2.5 % of the window, 10k..25k)")
        else:
            s.notes.append(f"the raw tail of {tail:,} tokens is {ratio:g} of the trigger; Hermes takes target_ratio "
                           "in 0.10..0.80 only, so it is not emitted")
    doc = {"compression": comp}
    s.blocks.append(Block("yaml", "~/.hermes/config.yaml", yaml.safe_dump(doc, sort_keys=False)))
    for k, v in comp.items():
        s.keys.append(Key(f"compression.{k}", v, "documented", where))
    if window < 512_000 and frac < 0.75:
        s.notes.append(f"Hermes raises threshold to 0.75 for windows below 512K (documented); threshold_tokens = "
                       f"{threshold:,} (the lower trigger wins) keeps the tuned point")
    s.notes.append("protect_first_n counts head messages after the system prompt, which Hermes always keeps; "
                   "the policy's keep_first counts the log's first events, the fixed prefix apart")
    if not t.keep_last_events:
        s.notes.append("Hermes also keeps at least its last protect_last_n messages (default 20) raw; the "
                       "policy sets no such minimum")
    s.notes += _whole_prompt(policy, "Hermes")
    return s


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
