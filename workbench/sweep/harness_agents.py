"""Snippets for the coding-agent harnesses added with their presets (issue 16): Gemini CLI,
Cline, Roo Code, opencode, aider and Hermes, each key verified in the harness's own source or
docs (named beside it). :func:`workbench.sweep.harness_config.render` dispatches here."""

from __future__ import annotations

import json
import math
from typing import Any

from workbench.sweep.harness_base import (
    Block,
    HarnessSnippet,
    Key,
    never_compacts,
    not_tokens,
    threshold_fraction,
    threshold_of,
    whole_prompt_notes,
)


def gemini_cli(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("gemini-cli")
    threshold = threshold_of(policy, window)
    if threshold is None:
        s.notes.append(not_tokens(policy, "Gemini CLI"))
        return s
    if never_compacts(policy):
        s.notes.append("Gemini CLI has no setting that turns chat compression off (none in "
                       "packages/cli/src/config/settingsSchema.ts); a never-compacting policy is not expressible")
        return s
    frac = threshold_fraction(policy, threshold, window)
    release = _gemini_release(policy)
    if release is not None and release < (0, 1, 10):
        s.notes.append("Gemini CLI before 0.1.19 has no compression setting (a constant in "
                       "packages/core/src/core/client.ts); upgrade to set the threshold")
        return s
    if release is not None and release < (0, 11, 3):
        # same repository at v0.3.0 ... v0.11.2, packages/cli/src/config/settingsSchema.ts:
        # model.chatCompression {contextPercentageThreshold}, read by core/client.ts
        settings: dict[str, Any] = {"model": {"chatCompression": {"contextPercentageThreshold": frac}}}
        s.keys.append(Key("model.chatCompression.contextPercentageThreshold", frac, "source",
                          "~/.gemini/settings.json (packages/cli/src/config/settingsSchema.ts at v0.3.0-v0.11.2)"))
        s.notes.append("0.1.19-0.2.x read the same object at the top level of settings.json "
                       "(chatCompression.contextPercentageThreshold), releases before 0.1.19 have no setting; "
                       "0.11.3 renamed it model.compressionThreshold")
    else:
        # google-gemini/gemini-cli docs/reference/configuration.md and packages/cli/src/config/
        # settingsSchema.ts: model.compressionThreshold, "the fraction of context usage at which to
        # trigger context compression", default 0.5; compared with the last prompt's token count
        # against tokenLimit(model) in packages/core/src/context/chatCompressionService.ts
        settings = {"model": {"compressionThreshold": frac}}
        s.keys.append(Key("model.compressionThreshold", frac, "documented",
                          "~/.gemini/settings.json (docs/reference/configuration.md)"))
    m = policy.masking
    if release is not None and release < (0, 29):
        if m.keep_tokens:
            s.notes.append("tool-output masking arrived in Gemini CLI 0.29.0 (#18389); this release line has no "
                           "masking and no key for it")
    elif m.keep_tokens:
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
    keep = policy.trigger.keep_last_share
    if keep != 0.3 or policy.trigger.keep_last_fraction or policy.trigger.keep_last_tokens:
        s.notes.append(f"Gemini CLI keeps the newest 30 % of the history raw (COMPRESSION_PRESERVE_THRESHOLD, "
                       f"a constant in chatCompressionService.ts); the policy's {keep or 0:g} has no key")
    s.notes.append(f"the fraction applies to Gemini CLI's own token limit for the model (tokenLimit(model)); "
                   f"it was tuned on a window of {window:,}: {frac:g} x {window:,} = {int(frac * window):,}")
    s.notes.append("the experimental context manager (experimental.contextManagement, off by default) has its "
                   "own contextManagement.historyWindow.maxTokens trigger; not emitted, it replaces the rule tuned")
    s.notes += whole_prompt_notes(policy, "Gemini CLI")
    s.blocks.append(Block("json", "~/.gemini/settings.json", json.dumps(settings, indent=2)))
    return s


def _gemini_release(policy) -> tuple[int, ...] | None:
    """The release a ``gemini-cli@LINE`` policy was made for (its keys changed with it);
    None for the preset itself and any other policy (today's keys)."""
    from workbench.engine.presets import release_key

    name, _, line = policy.name.partition("@")
    return release_key(line) if name == "gemini-cli" and line else None


def cline(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("cline")
    # cline/cline sdk/packages/core/src/types/config.ts: CoreCompactionConfig {enabled, strategy
    # ("basic" | "agentic"), preserveRecentTokens, summarizer, compact}, the `compaction` field of
    # CoreSessionConfig; apps/cli/README.md documents `--compaction <agentic|basic|off>`
    if never_compacts(policy):
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
    elif t.keep_last_events or t.keep_last_fraction or t.keep_last_share:
        s.notes.append("Cline keeps a raw tail by tokens (preserveRecentTokens, default 20,000); the policy's "
                       "tail in events or as a share of the window or history has no key")
    s.blocks.append(Block("json", "Cline SDK session config (CoreSessionConfig)",
                          json.dumps({"compaction": compaction}, indent=2)))
    for k, v in compaction.items():
        s.keys.append(Key(f"compaction.{k}", v, "source",
                          "Cline SDK CoreSessionConfig (sdk/packages/core/src/types/config.ts)"))
    s.keys.append(Key("--compaction", strategy, "documented", "cline CLI flag (apps/cli/README.md)"))
    if "preserveRecentTokens" in compaction:
        s.notes.append("the SDK caps preserveRecentTokens at the compaction target "
                       "(sdk/packages/core/src/extensions/context/compaction.ts)")
    threshold = threshold_of(policy, window)
    fixed = int(0.9 * 0.9 * window)
    told = (f"Cline has no key for the trigger: it compacts at 0.9 x the usable input, usable = 0.9 x the "
            f"window when the model reports only a window (~81 %: {fixed:,} of {window:,}; constants "
            "COMPACTION_TRIGGER_RATIO and CONTEXT_WINDOW_INPUT_RATIO in sdk/packages/core/src/extensions/"
            "context/compaction-shared.ts)")
    if threshold is None:
        s.notes.append(not_tokens(policy, "Cline") + "; " + told)
    elif abs(threshold - fixed) > 0.005 * window:
        s.notes.append(f"the tuned threshold {threshold:,} ({threshold / window:.1%}) cannot be set; " + told)
    else:
        s.notes.append(f"the tuned threshold {threshold:,} is Cline's own; " + told)
    if policy.compaction.cap != 4_096:
        s.notes.append("the summary cap (4,096 tokens by default) is summarizer.maxOutputTokens in the SDK, which "
                       "also needs the summarizer's providerId and modelId; not emitted")
    s.notes += whole_prompt_notes(policy, "Cline")
    return s


def roo_code(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("roo-code")
    where = "Roo Code global settings (packages/types/src/global-settings.ts)"
    import_note = ("the settings slider (Settings > Context) sets the same keys; an import needs a whole file "
                   "exported from Roo Code (providerProfiles included, src/core/config/importExport.ts), so "
                   "merge these into its globalSettings")
    # RooCodeInc/Roo-Code packages/types/src/global-settings.ts: autoCondenseContext (boolean),
    # autoCondenseContextPercent (number); defaults true / 100 in src/core/webview/ClineProvider.ts
    if never_compacts(policy):
        s.blocks.append(Block("json", "Roo Code settings export (globalSettings)",
                              json.dumps({"globalSettings": {"autoCondenseContext": False}}, indent=2)))
        s.keys.append(Key("autoCondenseContext", False, "source", where))
        s.notes.append(import_note)
        return s
    threshold = threshold_of(policy, window)
    if threshold is None:
        s.notes.append(not_tokens(policy, "Roo Code"))
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
    s.notes += whole_prompt_notes(policy, "Roo Code")
    return s


def opencode(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("opencode")
    where = "opencode.json (packages/web/src/content/docs/config.mdx)"
    # anomalyco/opencode (formerly sst/opencode) packages/web/src/content/docs/config.mdx documents
    # compaction.auto, compaction.prune and compaction.reserved; the trigger is in
    # packages/opencode/src/session/overflow.ts (usable = context (or limit.input) - reserved,
    # reserved defaulting to min(20k, max output)); pruning in packages/opencode/src/session/compaction.ts
    compaction: dict[str, Any] = {}
    if never_compacts(policy):
        compaction["auto"] = False
    else:
        threshold = threshold_of(policy, window)
        if threshold is None:
            s.notes.append(not_tokens(policy, "opencode"))
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
    if not never_compacts(policy):
        s.notes += whole_prompt_notes(policy, "opencode")
    return s


def aider(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("aider")
    if never_compacts(policy):
        s.notes.append("aider has no documented switch that turns chat-history summarisation off; a never-"
                       "compacting policy is not expressible")
        return s
    threshold = threshold_of(policy, window)
    if threshold is None:
        s.notes.append(not_tokens(policy, "aider"))
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
    if never_compacts(policy):
        doc = {"compression": {"enabled": False}}
        s.blocks.append(Block("yaml", "~/.hermes/config.yaml", yaml.safe_dump(doc, sort_keys=False)))
        s.keys.append(Key("compression.enabled", False, "documented", where))
        return s
    threshold = threshold_of(policy, window)
    if threshold is None:
        s.notes.append(not_tokens(policy, "Hermes"))
        return s
    t = policy.trigger
    frac = threshold_fraction(policy, threshold, window)
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
    s.notes += whole_prompt_notes(policy, "Hermes")
    return s
