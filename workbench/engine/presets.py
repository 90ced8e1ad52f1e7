"""Presets mirroring real harness policies: facts from the systems' public code, docs and issue
threads, stated in each preset's description.

Numbers the sources mark as uncertain are ordinary parameters; override them with
``get_policy(name, {"section.key": value})`` or in a YAML spec (``preset: NAME``).
Presets leave the model unset: it comes from ``--model``, the spec, or the continuity.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

from workbench.engine.policy import (
    Compaction,
    Compile,
    CutRule,
    Flush,
    Masking,
    Policy,
    Pruning,
)
from workbench.engine.policy_schema import check_field, check_policy, check_relations, coerce_field
from workbench.errors import PolicyError

_SUMMARY = Compaction(kind="summary", ratio=0.05, floor=1_500, cap=12_000, prompt_tokens=900)
# Claude Code's summarizer call re-writes the conversation to the cache instead of reading
# it (issues report ~97k tokens re-written per compaction; the recorded acompact call of a
# recorded log read only the 17.8k system prefix and wrote 121.7k)
# (its instruction, recorded in the same call, is ~2k cl100k tokens)
_CLAUDE_SUMMARY = Compaction(kind="summary", ratio=0.05, floor=1_500, cap=12_000, prompt_tokens=2_000,
                             shares_cache=False)

PRESETS: dict[str, Policy] = {p.name: p for p in (
    Policy("no-compaction", "raw: never compacts; on overflow the oldest events are truncated until "
           "it fits (counted as truncations, not compactions)",
           emergency="truncate"),
    Policy("as-recorded", "reproduces the compactions recorded in an imported log, with the log's own "
           "summaries; on overflow the oldest events are truncated (truncations, not compactions)",
           trigger=CutRule(kind="recorded", keep_first=0, message_boundary=False),
           compaction=Compaction(kind="recorded", prompt_tokens=900, shares_cache=False)),
    # on an imported log of Claude Code 2.0.x, its release line claude-code@2.0 (VERSIONS below)
    Policy("claude-code", "auto-compact at window - min(max_output, 20k) - 13k (~167k of 200k): whole history -> one summary",
           trigger=CutRule(kind="tokens", reserve_tokens=33_000, keep_first=1),
           compaction=_CLAUDE_SUMMARY),
    Policy("codex-local", "compact at 90% of the window: initial context + recent user messages (20k) + handoff summary; "
           "the summary call omits tool specs (no cache)",
           trigger=CutRule(kind="tokens", fraction=0.9, keep_first=1),
           compaction=Compaction(kind="summary", ratio=0.04, floor=1_000, cap=8_000, prompt_tokens=700,
                                 retain="user_messages", retain_tokens=20_000, shares_cache=False)),
    # Codex's remote compaction replaces the whole history with the window /responses/compact returns
    # (codex-rs/core/src/compact_remote.rs, replace_history): the new item folds the previous one
    Policy("codex-remote", "compact at 90%: opaque server-side compaction item + retained messages up to 64k; "
           "the returned window replaces the history, an earlier item included [source: codex-rs/core/src/"
           "compact_remote.rs]",
           trigger=CutRule(kind="tokens", fraction=0.9, keep_first=1),
           compaction=Compaction(kind="opaque", ratio=0.05, floor=1_000, cap=10_000, prompt_tokens=0,
                                 retain="messages", retain_tokens=64_000)),
    Policy("openhands-default", "LLMSummarizing(keep_first=4, max_size=120 events): first 4 + newest half, running summary; summarizer cache off",
           trigger=CutRule(kind="events", max_events=120, keep_first=4),
           compaction=Compaction(kind="summary", ratio=0.08, floor=500, cap=8_000, prompt_tokens=700,
                                 shares_cache=False)),
    Policy("openhands-sdk", "LLMSummarizing(max_size=80, keep_first=4, minimum_progress=0.1), cuts snapped to tool-call units",
           trigger=CutRule(kind="events", max_events=80, keep_first=4, min_progress=0.1),
           compaction=Compaction(kind="summary", ratio=0.08, floor=500, cap=8_000, prompt_tokens=700,
                                 shares_cache=False)),
    Policy("observation-masking", "Complexity Trap: observations older than 10 turns become placeholders; "
           "no extra calls; on overflow the oldest events are truncated (truncations, not compactions)",
           masking=Masking(after_turns=10, placeholder_tokens=12), emergency="truncate"),
    Policy("llm-summary", "Complexity Trap: every N+M turns (N=21, M=10) summarize N turns; keep system + first user + summary + last M",
           trigger=CutRule(kind="turns", every_turns=21, keep_turns=10, keep_first=2),
           compaction=Compaction(kind="summary", ratio=0.1, floor=300, cap=4_000, prompt_tokens=600,
                                 shares_cache=False)),
    Policy("hybrid", "Complexity Trap: masking (W=10) plus LLM summary (N=43, M=10) as a last resort",
           trigger=CutRule(kind="turns", every_turns=43, keep_turns=10, keep_first=2),
           compaction=Compaction(kind="summary", ratio=0.1, floor=300, cap=4_000, prompt_tokens=600,
                                 shares_cache=False),
           masking=Masking(after_turns=10, placeholder_tokens=12)),
    Policy("anthropic-clear-tool-uses", "context editing: at 100k input tokens clear tool results older than "
           "the last 3 tool uses; on overflow the oldest events are truncated (truncations, not compactions)",
           trigger=CutRule(kind="tokens", tokens=100_000, keep_first=1),
           compaction=Compaction(kind="clear_tool_uses", clear_keep=3, clear_at_least=0, placeholder_tokens=12)),
    Policy("anthropic-compact", "server-side compaction at 150k tokens: everything before the compaction block is dropped",
           trigger=CutRule(kind="tokens", tokens=150_000, keep_first=1),
           compaction=Compaction(kind="summary", ratio=0.05, floor=1_000, cap=10_000, prompt_tokens=500)),
    # OpenAI's compaction guide (developers.openai.com/api/docs/guides/compaction): the returned
    # item "carries forward key prior state", and the items before the most recent compaction
    # item may be dropped, "the latest compaction item carries the necessary context", so each
    # item replaces everything before it, an earlier item included (it folds; it never
    # accumulates). An input over the model's window is rejected (the Responses API's default
    # truncation is "disabled": a 400 error), so what still does not fit after the truncation of
    # the oldest events is a failed request
    Policy("openai-responses-compact", "context_management compact_threshold (no documented default; 80% here): "
           "the server replaces the rendered context, an earlier compaction item included, with one "
           "opaque encrypted item (OpenAI compaction guide: the latest item carries the context; older "
           "items may be dropped); on overflow a forced compaction, then the oldest events truncated; "
           "an input still over the window is the API's 400 error (a failed request)",
           trigger=CutRule(kind="tokens", fraction=0.8, keep_first=1),
           compaction=Compaction(kind="opaque", ratio=0.05, floor=1_000, cap=10_000, prompt_tokens=0)),
    Policy("holon-openai", "Holon's two layers (seed holon-openai-remote-compaction-boundary §4-§8): the provider "
           "window compacts at 80 % into opaque items that accumulate (metadata only, no memory.compacted; "
           "§4.2, §6); a local readable checkpoint every 32k raw tokens, on its own call, leaves the window as "
           "it is and never shares a request with a provider compaction (§4.1, §5.1, §5.3); past 4 opaque items "
           "the window is rebuilt from the local checkpoint + the raw tail, a continuation reset (§5.4) "
           "[local threshold, item bound and summary sizes inferred]",
           trigger=CutRule(kind="tokens", fraction=0.8, keep_first=1),
           compaction=Compaction(kind="opaque", ratio=0.05, floor=1_000, cap=10_000, prompt_tokens=0,
                                 accumulate=True, max_segments=4, local_tokens=32_000,
                                 local_prompt_tokens=900)),
    Policy("openclaw-flush", "memory flush at window - reserveTokensFloor (20k) - softThresholdTokens (4k), once per "
           "compaction; compaction at window - 20k",
           trigger=CutRule(kind="tokens", reserve_tokens=20_000, keep_first=1),
           compaction=_SUMMARY,
           flush=Flush(enabled=True, reserve_tokens=20_000, soft_threshold_tokens=4_000)),
    Policy("letta", "warn (flush) at 75% of the window; summarize down to 30% (recursive summary)",
           trigger=CutRule(kind="tokens", fraction=0.95, keep_first=1, keep_last_fraction=0.3),
           compaction=Compaction(kind="summary", ratio=0.05, floor=800, cap=8_000, prompt_tokens=600),
           flush=Flush(enabled=True, fraction=0.75)),
    Policy("langchain-summarization", "SummarizationMiddleware(trigger=('fraction', 0.8), keep 20 messages); AI/tool pairs never split",
           trigger=CutRule(kind="tokens", fraction=0.8, keep_first=1, keep_last_events=20),
           compaction=Compaction(kind="summary", ratio=0.1, floor=300, cap=1_000, prompt_tokens=400)),
    # ---- harnesses added for issue 16; [documented] from the harness's docs, [source] read in
    # its code (file named), [inferred] a number the sources do not give (a parameter)
    Policy("gemini-cli", "chat compression at model.compressionThreshold = 0.5 of the window (0.95, 0.7, 0.2 "
           "in earlier releases: gemini-cli@LINE) keeping the newest 30 % of the history, then a probe call "
           "checks the summary; tool "
           "outputs but the newest 50k tokens masked once >= 30k are prunable [source: packages/core/src/"
           "context/chatCompressionService.ts, toolOutputMaskingService.ts; summary size and probe prompt "
           "inferred; the 50k tool-response budget inside the kept 30 % is not modelled]",
           trigger=CutRule(kind="tokens", fraction=0.5, keep_first=1, keep_last_share=0.3),
           compaction=Compaction(kind="summary", ratio=0.1, floor=500, cap=8_000, prompt_tokens=900,
                                 probe_prompt_tokens=300),
           masking=Masking(keep_tokens=50_000, at_least_tokens=30_000, placeholder_tokens=12)),
    Policy("cline", "compact at 0.9 x usable input, usable = 0.9 x window (~81 %), keeping the last 20k tokens; "
           "summary at most 4,096 tokens [source: sdk/packages/core/src/extensions/context/"
           "compaction-shared.ts; the 0.7 target is met by the 20k kept]",
           trigger=CutRule(kind="tokens", fraction=0.81, keep_first=1, keep_last_tokens=20_000),
           compaction=Compaction(kind="summary", ratio=0.1, floor=500, cap=4_096, prompt_tokens=700)),
    Policy("roo-code", "auto-condense at autoCondenseContextPercent (default 100 %) less a 10 % buffer (~90 %), "
           "keeping the last 3 messages; on overflow the oldest events are truncated: the older half first "
           "[source: src/core/context-management/index.ts, src/core/condense/; summary size inferred]",
           trigger=CutRule(kind="tokens", fraction=0.9, keep_first=1, keep_last_events=3),
           compaction=Compaction(kind="summary", ratio=0.1, floor=500, cap=8_000, prompt_tokens=700),
           emergency="truncate_half"),
    # on an imported log of opencode 0.x/1.x, its release line opencode@0 (VERSIONS below)
    Policy("opencode", "compact when the estimate >= min(input limit - 20k, window - max(min(max output, 32k), "
           "20k)) (window - 32k for a model with >= 32k output and no input limit), the history -> one "
           "structured summary, the newest 15k tokens kept verbatim; no pruning (compaction.prune is opt-in) "
           "[source: anomalyco/opencode packages/core/src/session/compaction.ts (required, DEFAULT_BUFFER, "
           "DEFAULT_KEEP_TOKENS, OUTPUT_TOKEN_MAX); #24108; inferred: summary size; not modelled: a separate input "
           "limit, the tail snapped back to a user message, tool outputs in the kept tail cut to 2,000 chars]",
           trigger=CutRule(kind="tokens", reserve_tokens=32_000, keep_first=1, keep_last_tokens=15_000),
           # the default compaction (compaction.mode "prepend") sends the history serialised as
           # text in one user message with `tools: {}` and `system: []`: nothing of the session's
           # cached prefix is read (SOURCE["opencode"]; anomalyco/opencode#43249, #48542)
           compaction=Compaction(kind="summary", ratio=0.05, floor=1_000, cap=10_000, prompt_tokens=700,
                                 shares_cache=False)),
    Policy("aider", "chat history budget min(max(max_input/16, 1024), 8192) = 8,192 tokens (windows >= 128k), "
           "measured without the fixed prefix and the first message: summarise the oldest part, keeping the "
           "newest half of the budget raw, recursively [source: aider/models.py, aider/history.py; the repo "
           "map and files sent besides are not in the log]",
           trigger=CutRule(kind="tokens", tokens=8_192, keep_first=1, keep_last_tokens=4_096, scope="body"),
           compaction=Compaction(kind="summary", ratio=0.2, floor=200, cap=2_048, prompt_tokens=400)),
    Policy("hermes", "compress at 50 % of the window (85 % before hermes-agent PR #1096): protect the first 3 "
           "messages and a tail of threshold x 0.2 (10 % of the window); summary 20 % of the span, "
           ">= 2,000 and <= min(5 % of the window, 10k) tokens [source: agent/context_compressor.py; its "
           "pre-pass pruning of old tool results in the span is not modelled]",
           trigger=CutRule(kind="tokens", fraction=0.5, keep_first=3, keep_last_fraction=0.1),
           compaction=Compaction(kind="summary", ratio=0.2, floor=2_000, cap=10_000, prompt_tokens=900)),
    Policy("claude-code-microcompact", "claude-code (2.1 rule) plus its time-based microcompact: a request "
           ">= 60 min after the previous one (the 1-hour prompt cache has expired) first turns every tool "
           "output but the newest 5 into '[Old tool result content cleared]' [source: third-party readings of "
           "Claude Code's services/compact/microCompact.ts (gap 60 min, keepRecent 5); gated by a remote flag, "
           "so whether an install runs it is unknown; here every tool output is compactable (Claude Code: "
           "Read, shell, Grep, Glob, web, Edit, Write and MCP tools); its cache-editing variant is not modelled]",
           trigger=CutRule(kind="tokens", reserve_tokens=33_000, keep_first=1),
           compaction=_CLAUDE_SUMMARY,
           masking=Masking(keep_results=5, idle_s=3_600.0, placeholder_tokens=8)),
    Policy("rip-adr0011", "message-count stride (every N=10,000 messages, anchored to the N-th message) + summary_ref + recent messages",
           trigger=CutRule(kind="stride", every_messages=10_000, keep_first=1),
           compaction=_SUMMARY,
           compile=Compile(strategy="summaries_recent_messages_v1", recent_messages_limit=200)),
)}


# OpenClaw session pruning (issue 16), alone and with the memory flush: compaction as in
# openclaw-flush (Pi's auto-compaction at window - reserveTokensFloor)
_OPENCLAW_PRUNING = ("session pruning in cache-ttl mode: a request >= 5 min (ttl) after the previous one is sent "
                     "with old tool results soft-trimmed (messages >= 0.3 of the window: results > 4,000 chars "
                     "keep their first and last 1,500 chars) or hard-cleared oldest first (>= 0.5, when >= "
                     "50,000 chars are prunable) until under 0.5, the last 3 assistant turns and everything "
                     "before the first user message protected; transient: the context keeps every result and "
                     "the next request sends them again [documented: docs/concepts/session-pruning.md; source: "
                     "src/agents/pi-extensions/context-pruning/pruner.ts, settings.ts, extension.ts; inferred: "
                     "chars = 4 x tokens (OpenClaw's own estimate), the previous model call as the last cache "
                     "touch (OpenClaw's marker is written once per agent run), only raw-tail results prunable]")
PRESETS.update({p.name: p for p in (
    Policy("openclaw-pruning", _OPENCLAW_PRUNING + "; compaction at window - reserveTokensFloor (20k), no flush",
           trigger=CutRule(kind="tokens", reserve_tokens=20_000, keep_first=1),
           compaction=_SUMMARY, pruning=Pruning(mode="cache-ttl")),
    Policy("openclaw-pruning-flush", "openclaw-flush plus " + _OPENCLAW_PRUNING,
           trigger=CutRule(kind="tokens", reserve_tokens=20_000, keep_first=1),
           compaction=_SUMMARY, flush=Flush(enabled=True, reserve_tokens=20_000, soft_threshold_tokens=4_000),
           pruning=Pruning(mode="cache-ttl")),
)})


def preset_names() -> list[str]:
    return list(PRESETS)


# The harness (or API, or study) each preset mirrors: `workbench policies --harness NAME`.
HARNESS = {"claude-code": "claude-code", "claude-code-microcompact": "claude-code", "codex-local": "codex", "codex-remote": "codex",
           "openhands-default": "openhands", "openhands-sdk": "openhands", "openclaw-flush": "openclaw",
           "letta": "letta", "langchain-summarization": "langchain", "anthropic-clear-tool-uses": "anthropic-api",
           "anthropic-compact": "anthropic-api", "openai-responses-compact": "openai-api",
           "observation-masking": "complexity-trap", "llm-summary": "complexity-trap",
           "hybrid": "complexity-trap", "rip-adr0011": "rip", "no-compaction": "baseline",
           "as-recorded": "baseline", "gemini-cli": "gemini-cli", "cline": "cline", "roo-code": "roo-code",
           "opencode": "opencode", "aider": "aider", "hermes": "hermes",
           "openclaw-pruning": "openclaw", "openclaw-pruning-flush": "openclaw",
           "holon-openai": "holon"}
# ... and the log format its importer gives that harness's logs: provider-token accounting of
# generated continuities takes that format's calibration profile
LOG_FORMAT = {"claude-code": "claude_code", "codex-local": "codex", "codex-remote": "codex",
              "openhands-default": "openhands", "openhands-sdk": "openhands_sdk", "gemini-cli": "gemini_cli",
              "cline": "cline", "roo-code": "roo_code", "opencode": "opencode", "aider": "aider",
              "claude-code-microcompact": "claude_code"}
# ... and back: the preset that mirrors the harness of each log format (the first listed)
PRESET_OF_FORMAT = {fmt: name for name, fmt in reversed(LOG_FORMAT.items())}

# Where each preset's rule was read (file and line, issue or doc page), the citation of its
# description in a field of its own: `workbench policies` prints it. A release line
# (``name@line``) cites its preset's sources unless SOURCE names the line itself.
SOURCE = {
    "no-compaction": "workbench baseline (no harness): never compacts",
    "as-recorded": "the imported log itself: its recorded compaction boundaries and summaries",
    "claude-code": "anthropics/claude-code#31806 (deobfuscated auto-compact threshold: window - min(max_output, "
                   "20k) - 13k); /context buffer: anthropics/claude-code#10266, #15435, #23409; "
                   "code.claude.com docs 'How Claude Code works'; the compaction call "
                   "(subagents/agent-acompact-*.jsonl) re-writes the conversation instead of reading it: "
                   "anthropics/claude-code#94197 (~97k tokens re-written a compaction), the bundled "
                   "ae4a77f8 session's call read only its 17,842-token system prefix and wrote 121,689 "
                   "(compaction.shares_cache = false; the system prefix it reads is inferred, not modelled)",
    "claude-code@2.0": "anthropics/claude-code#10266 (/context: 45k autocompact buffer, 22.5 %, 2.0.x)",
    "claude-code@2.1": "anthropics/claude-code#31806, #23409 (33k buffer, 16.5 %, from 2.1.x)",
    "claude-code-microcompact": "anthropics/claude-code#31806 (threshold); microcompact: third-party readings "
                                "of Claude Code's services/compact/microCompact.ts: gap 60 min, keepRecent 5 "
                                "(bug-ops/zeph#2699, lijunzh/koda#660), or a cold path after 90 min (5,400,000 ms "
                                "in 2.1.112: cnighswonger/claude-code-cache-fix#36); the gap is masking.idle_s "
                                "(3600 here, 5400 for the other reading)",
    "codex-local": "openai/codex codex-rs/protocol/src/openai_models.rs ModelInfo::auto_compact_token_limit "
                   "(line 433 at rust-v0.154.0: (window x 9) / 10, a configured limit only lowers it), "
                   "codex-rs/core/models.json; openai/codex#40095 (272k -> 244,800); the local compaction call "
                   "sends the history with a Prompt::default() (no tool specs: codex-rs/core/src/codex/compact.rs, "
                   "run_compact_task_inner_inline, in the releases read), so it does not ride the cached prefix "
                   "(compaction.shares_cache = false)",
    "codex-remote": "openai/codex codex-rs/protocol/src/openai_models.rs; remote compaction path: "
                    "openai/codex#11805",
    "openhands-default": "All-Hands-AI/OpenHands condenser pipeline: ConversationWindow, BrowserOutput"
                         "(attention_window=2), LLMSummarizing(keep_first=4, max_size=120)",
    "openhands-sdk": "OpenHands/software-agent-sdk LLMSummarizingCondenser (max_size=80, keep_first=4, "
                     "minimum_progress=0.1 in the default agent)",
    "observation-masking": "The Complexity Trap, arXiv 2508.21433 (observation masking, M=10)",
    "llm-summary": "The Complexity Trap, arXiv 2508.21433 (LLM summary, N=21, M=10)",
    "hybrid": "The Complexity Trap, arXiv 2508.21433 (hybrid, W=10, N=43, M=10)",
    "anthropic-clear-tool-uses": "Anthropic docs: context editing, clear_tool_uses_20250919 (trigger "
                                 "input_tokens 100,000, keep 3 tool uses)",
    "anthropic-compact": "Anthropic docs, platform.claude.com/docs/en/build-with-claude/compaction: "
                         "compact_20260112, trigger type input_tokens, default 150,000, minimum 50,000",
    "openai-responses-compact": "OpenAI docs, developers.openai.com/api/docs/guides/compaction: "
                                "context_management compact_threshold (no documented default; 0.8 inferred)",
    "holon-openai": "Holon seed holon-openai-remote-compaction-boundary §4-§8",
    "openclaw-flush": "openclaw/openclaw memory flush: reserveTokensFloor 20,000, softThresholdTokens 4,000 "
                      "(the flush settings the harness reference lists)",
    "openclaw-pruning": "openclaw/openclaw docs/concepts/session-pruning.md; src/agents/pi-extensions/"
                        "context-pruning/pruner.ts, settings.ts, extension.ts",
    "openclaw-pruning-flush": "openclaw/openclaw docs/concepts/session-pruning.md; src/agents/pi-extensions/"
                              "context-pruning/pruner.ts; memory flush as openclaw-flush",
    "letta": "letta-ai/letta summarizer: warn at 0.75 of the window, summarize down to 0.3",
    "langchain-summarization": "langchain SummarizationMiddleware (trigger ('fraction', 0.8), keep 20 "
                               "messages)",
    "gemini-cli": "google-gemini/gemini-cli packages/core/src/context/chatCompressionService.ts, "
                  "toolOutputMaskingService.ts; thresholds: #12306, #13079, #13517",
    "gemini-cli@0.1": "google-gemini/gemini-cli v0.1.9 packages/core/src/core/client.ts (tryCompressChat)",
    "gemini-cli@0.1.10": "google-gemini/gemini-cli#3049; packages/core/src/core/client.ts",
    "gemini-cli@0.11.3": "google-gemini/gemini-cli#12306",
    "gemini-cli@0.17": "google-gemini/gemini-cli#13079, #13517; "
                       "packages/core/src/services/chatCompressionService.ts",
    "gemini-cli@0.26": "google-gemini/gemini-cli#15710 (probe call); "
                       "packages/core/src/services/chatCompressionService.ts",
    "gemini-cli@0.29": "google-gemini/gemini-cli#18389 (tool-output masking); "
                       "packages/core/src/context/toolOutputMaskingService.ts",
    "cline": "cline/cline sdk/packages/core/src/extensions/context/compaction-shared.ts (the SDK); the VS Code "
             "extension's rule, not this preset's: src/core/context/context-management/context-window-utils.ts "
             "getContextWindowInfo (limit = window - 27k / 30k / 40k for 64k / 128k / 200k windows, else "
             "max(window - 40k, 0.8 x window)) and auto-condense at min(floor(autoCondenseThreshold 0.75 x "
             "window), limit) (shouldCompactBeforeNextRequest): the line cline@extension",
    "cline@extension": "cline/cline src/core/context/context-management/context-window-utils.ts "
                       "(getContextWindowInfo, autoCondenseThreshold 0.75): trigger.fraction 0.75, exact on every "
                       "window but 64,000 (there window - 27k)",
    "roo-code": "RooCodeInc/Roo-Code src/core/context-management/index.ts manageContext (condense when 100 x "
                "tokens / window >= autoCondenseContextPercent, default 100, or tokens > window x (1 - "
                "TOKEN_BUFFER_PERCENTAGE 0.1) - maxTokens (ANTHROPIC_DEFAULT_MAX_TOKENS 8,192 when unset); a failed "
                "condense hides the oldest half: truncateConversation(messages, 0.5)), src/core/condense/; "
                "the preset compacts at 0.9 x window (up to maxTokens later); the reserve: roo-code@max-tokens",
    "roo-code@max-tokens": "RooCodeInc/Roo-Code src/core/context-management/index.ts manageContext (tokens > "
                           "window x 0.9 - maxTokens, ANTHROPIC_DEFAULT_MAX_TOKENS 8,192)",
    "opencode": "anomalyco/opencode packages/core/src/session/compaction.ts: required() (promptCeiling = "
                "min(limit.input - buffer, context - max(min(limit.output, OUTPUT_TOKEN_MAX 32,000), buffer)), "
                "DEFAULT_BUFFER 20,000), splitHistory/findTailStart (DEFAULT_KEEP_TOKENS 15,000); opencode.ai/v2/"
                "docs/compaction (the V2 rule); prune opt-in: anomalyco/opencode#24108 (maintainer: disabled by "
                "default intentionally); the compaction call: processCompaction's default 'prepend' mode sends "
                "`tools: {}`, `system: []` and the serialised history (no cached prefix: compaction.shares_cache "
                "= false), its opt-in compaction.mode 'suffix' appends the summary prompt to the main request with "
                "its tools (the main prefix: shares_cache = true); anomalyco/opencode#43249, #48542",
    "opencode@0": "sst/opencode packages/opencode/src/session/overflow.ts (usable = context - min(20k, max output)), "
                  "packages/opencode/src/session/compaction.ts (prune: PRUNE_PROTECT 40,000, PRUNE_MINIMUM 20,000)",
    "aider": "Aider-AI/aider aider/models.py, aider/history.py",
    "hermes": "NousResearch/hermes-agent agent/context_compressor.py; threshold: PR #1096",
    "rip-adr0011": "docs/adr0011.md (summaries_recent_messages_v1, message-count stride)",
}


def source_of(policy) -> str:
    """The source a preset or release line cites ("" for a policy no preset declares)."""
    name = policy.name
    return SOURCE.get(name) or SOURCE.get(name.split("@", 1)[0], "")


# Presets whose rule changed between releases of their harness: the variant for a release
# line (``name@line``), matched against the version a log records (Claude Code writes it on
# every record). The preset itself is the newest line; on an imported log it follows the
# log's version. Codex's compaction defaults have not changed between the releases we know
# (``model_auto_compact_token_limit_scope`` defaults to ``total``, today's behaviour).
VERSIONS: dict[str, dict[str, Policy]] = {}


def _claude_code_line(line: str, reserve: int, note: str) -> Policy:
    import dataclasses

    base = PRESETS["claude-code"]
    return dataclasses.replace(base, name=f"claude-code@{line}", description=note,
                               trigger=dataclasses.replace(base.trigger, reserve_tokens=reserve))


VERSIONS["claude-code"] = {
    "2.0": _claude_code_line("2.0", 45_000, "Claude Code 2.0.x: auto-compact at window - 45k (a 22.5 % buffer; "
                             "~155k of 200k): whole history -> one summary"),
    "2.1": _claude_code_line("2.1", 33_000, "Claude Code 2.1.x: auto-compact at window - min(max_output, 20k) "
                             "- 13k (~167k of 200k): whole history -> one summary"),
}


def _gemini_cli_line(line: str, note: str, **changes: Any) -> Policy:
    import dataclasses

    base = PRESETS["gemini-cli"]
    parts = {"trigger": base.trigger, "compaction": base.compaction, "masking": base.masking}
    for key, value in changes.items():
        section, _, field = key.partition(".")
        parts[section] = dataclasses.replace(parts[section], **{field: value}) if field else value
    return dataclasses.replace(base, name=f"gemini-cli@{line}", description=note, **parts)


# google-gemini/gemini-cli, the default read at each stable tag (git tags v0.1.9 ... v0.29.0):
# packages/core/src/core/client.ts (tryCompressChat) up to 0.10, then
# packages/core/src/services/chatCompressionService.ts, then packages/core/src/context/.
# A line holds from its version up to the next line's; the masking service arrived in 0.29.0.
_NO_MASKING = Masking()
VERSIONS["gemini-cli"] = {
    "0.1": _gemini_cli_line(
        "0.1", "Gemini CLI 0.1.0-0.1.9: compress at 0.95 of tokenLimit(model), the whole history -> one "
        "summary [source: packages/core/src/core/client.ts tryCompressChat]; no setting, no masking",
        **{"trigger.fraction": 0.95, "trigger.keep_last_share": 0.0, "compaction.probe_prompt_tokens": 0,
           "masking": _NO_MASKING}),
    "0.1.10": _gemini_cli_line(
        "0.1.10", "Gemini CLI 0.1.10-0.11.2: compress at 0.7 keeping the newest 30 % (#3049; setting "
        "chatCompression.contextPercentageThreshold from 0.1.19, under model. from 0.3.0) [source]; no probe, "
        "no masking", **{"trigger.fraction": 0.7, "compaction.probe_prompt_tokens": 0, "masking": _NO_MASKING}),
    "0.11.3": _gemini_cli_line(
        "0.11.3", "Gemini CLI 0.11.3-0.16.x: model.compressionThreshold default 0.2 (#12306, cherry-picked to "
        "0.11.3) keeping the newest 30 % [source]; no probe, no masking",
        **{"trigger.fraction": 0.2, "compaction.probe_prompt_tokens": 0, "masking": _NO_MASKING}),
    "0.17": _gemini_cli_line(
        "0.17", "Gemini CLI 0.17-0.25: model.compressionThreshold default 0.5 (#13079 0.7, then #13517 0.5, "
        "both in 0.17.0) keeping the newest 30 % [source]; no probe, no masking",
        **{"compaction.probe_prompt_tokens": 0, "masking": _NO_MASKING}),
    "0.26": _gemini_cli_line(
        "0.26", "Gemini CLI 0.26-0.28: 0.5, newest 30 %, then a probe call checks the summary (#15710) "
        "[source]; no tool-output masking yet", **{"masking": _NO_MASKING}),
    "0.29": _gemini_cli_line(
        "0.29", "Gemini CLI 0.29 on: 0.5, newest 30 %, probe call, and per-turn tool-output masking (newest 50k "
        "tool tokens protected, masked once >= 30k are prunable; #18389) [source]"),
}


# opencode: the session/compaction.ts of packages/opencode (0.x, 1.x) and of packages/core (the
# newest; opencode 2.0.14 logs its summary headings, anomalyco/opencode#50816). The 2.0 boundary is
# inferred: the core service may have shipped in a late 1.x release.
VERSIONS["opencode"] = {
    "0": dataclasses.replace(
        PRESETS["opencode"], name="opencode@0",
        description="opencode 0.x-1.x: compact when input >= window - min(20k, max output) (window - 20k), the "
        "whole history -> summary; prune old tool outputs beyond the newest 40k tokens when >= 20k would be "
        "freed [source: packages/opencode/src/session/overflow.ts, compaction.ts; summary size inferred; "
        "later 1.x releases prune only when compaction.prune is set (#24108): not modelled, pruning kept]",
        trigger=CutRule(kind="tokens", reserve_tokens=20_000, keep_first=1),
        masking=Masking(keep_tokens=40_000, at_least_tokens=20_000, placeholder_tokens=12)),
    "2.0": dataclasses.replace(PRESETS["opencode"], name="opencode@2.0"),
}


# Variants of a preset that no recorded version selects (the log records none, or the two rules
# ship side by side): a named line (not a release number), chosen with NAME@LINE only.
# Cline's VS Code extension (the bundled Cline logs are its task folders; they record no
# version) condenses at min(floor(0.75 x window), limit): fraction 0.75 is that on every window
# but 64,000, where the limit (window - 27k = 37,000) comes first (not modelled)
VERSIONS["cline"] = {"extension": dataclasses.replace(
    PRESETS["cline"], name="cline@extension",
    description="Cline VS Code extension: auto-condense at min(0.75 x window, limit), limit = window - 27k / "
    "30k / 40k on 64k / 128k / 200k windows, else max(window - 40k, 0.8 x window): 0.75 x window on every "
    "window but 64k (there window - 27k, not modelled) [source: src/core/context/context-management/"
    "context-window-utils.ts; kept tail and summary size as the cline preset's, inferred]",
    trigger=dataclasses.replace(PRESETS["cline"].trigger, fraction=0.75))}
# Roo Code with the maxTokens reserve (ANTHROPIC_DEFAULT_MAX_TOKENS 8,192) below 0.9 x window
VERSIONS["roo-code"] = {"max-tokens": dataclasses.replace(
    PRESETS["roo-code"], name="roo-code@max-tokens",
    description="Roo Code with its maxTokens reserve: condense when tokens > 0.9 x window - maxTokens (8,192 "
    "unset; a parameter: trigger.fraction_less_tokens) or at autoCondenseContextPercent (100); on overflow the "
    "oldest events are truncated: the older half first [source: src/core/context-management/index.ts manageContext]",
    trigger=dataclasses.replace(PRESETS["roo-code"].trigger, fraction_less_tokens=8_192))}


def release_key(version: str) -> tuple[int, ...] | None:
    """"0.11.3" -> (0, 11, 3); None for what is not a release number ("nightly", "")."""
    head = version.split("-", 1)[0].split("+", 1)[0]
    try:
        return tuple(int(x) for x in head.split("."))
    except ValueError:
        return None


def harness_of(policy: Policy) -> str | None:
    """The harness a policy mirrors (a preset or one of its release lines; a spec renamed
    from neither: None)."""
    return HARNESS.get(policy.name.split("@", 1)[0])


def log_format_of(policy: Policy) -> str | None:
    """The log format of the harness a policy mirrors (its calibration profile's name)."""
    return LOG_FORMAT.get(policy.name.split("@", 1)[0])


def without_recorded_compactions(policy: Policy) -> Policy:
    """What ``as-recorded`` (any policy whose trigger is ``recorded``) replays on a
    continuity that recorded no compaction: ``no-compaction`` (its own provider and
    redaction settings kept), so the two give one answer for one meaning (a recorded trigger
    alone would leave an unpinned truncation as the only way out of an overflow)."""
    import dataclasses

    if policy.trigger.kind != "recorded":
        return policy
    return dataclasses.replace(PRESETS["no-compaction"], name=f"{policy.name}->no-compaction",
                               provider=policy.provider, redaction=policy.redaction)


def replayed_rule(policy: Policy, inp) -> Policy:
    """The rule a policy is replayed with on one prepared continuity: a versioned preset's
    release line for the log's harness version, ``as-recorded`` as ``no-compaction`` where
    the log recorded no compaction. The one place that decides it (the run driver and the
    context tracker both ask here)."""
    rule = for_harness_version(policy, inp.harness_version) if inp.harness is not None else policy
    if not inp.is_boundary.any():
        rule = without_recorded_compactions(rule)
    return rule


def for_harness_version(policy: Policy, version: str | None) -> Policy:
    """The release line of a versioned preset that matches a log's harness ``version``
    ("2.0.76" -> ``claude-code@2.0``); any other policy (an explicit ``@line``, a spec with
    overrides) as it is. An unknown or missing version keeps the newest line."""
    lines = VERSIONS.get(policy.name)
    key = release_key(version) if version else None
    ordered = sorted((line for line in lines or () if release_key(line) is not None), key=release_key)
    if not ordered or policy != PRESETS[policy.name] or key is None:
        return policy
    newest = ordered[-1]
    if version == newest or version.startswith(newest + "."):
        return lines[newest]
    # a line holds from its own version up to the next line's; past the newest line's
    # releases (a version we do not know yet) the preset itself, and so before the oldest
    for line, following in itertools.pairwise(ordered):
        if release_key(line) <= key < release_key(following):
            return lines[line]
    return policy


def get_policy(name: str, overrides: dict[str, Any] | None = None, *, rename: str | None = None) -> Policy:
    """A preset by name, or a YAML/TOML spec file path, with optional dotted overrides."""
    if name in PRESETS:
        base = PRESETS[name]
    elif "@" in name and name.split("@", 1)[0] in VERSIONS:
        preset, line = name.split("@", 1)
        if line not in VERSIONS[preset]:
            raise PolicyError(f"unknown release line {line!r} of {preset}; known: "
                              f"{', '.join(f'{preset}@{v}' for v in VERSIONS[preset])}")
        base = VERSIONS[preset][line]
    elif name.endswith((".yaml", ".yml", ".toml")):
        base = load_policy_file(Path(name))
    else:
        raise PolicyError(f"unknown policy {name!r}; presets: {', '.join(PRESETS)} "
                          "(or pass a .yaml/.toml spec)")
    if overrides or rename:
        if not isinstance(overrides or {}, dict):
            raise PolicyError(f"overrides must be a mapping of dotted keys to values, got {overrides!r}")
        for key, value in (overrides or {}).items():  # types and ranges, before anything is built
            if "." in str(key) or key in ("description", "emergency"):
                check_field(str(key), value)
        coerced = {k: coerce_field(k, v) if "." in str(k) else v for k, v in (overrides or {}).items()}
        return check_relations(base.with_overrides(coerced, name=rename))
    return base


def policy_from_spec(spec: dict[str, Any]) -> Policy:
    """``{"preset": NAME, "name": NEW, "overrides": {...}}`` or a full policy mapping, checked
    against :mod:`workbench.engine.policy_schema` before it is built."""
    if not isinstance(spec, dict):
        raise PolicyError(f"a policy spec must be a mapping, got {type(spec).__name__}")
    if "preset" in spec:
        extra = set(spec) - {"preset", "name", "overrides"}
        if extra:
            raise PolicyError(f"a preset-based policy takes preset, name, overrides; got {sorted(extra)}")
        if not isinstance(spec["preset"], str):
            raise PolicyError(f"preset: {spec['preset']!r} is not a preset name")
        return get_policy(spec["preset"], spec.get("overrides") or {}, rename=spec.get("name"))
    check_policy(spec)
    coerced = {k: ({f: coerce_field(f"{k}.{f}", v) for f, v in val.items()} if isinstance(val, dict) else val)
               for k, val in spec.items()}
    return check_relations(Policy.from_dict(coerced))


def load_policy_file(path: Path) -> Policy:
    from workbench.errors import PolicyError

    if not path.is_file():
        raise PolicyError(f"{path}: policy spec not found")
    text = path.read_text()
    try:
        if path.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except Exception as exc:  # the parsers' own error types differ
        raise PolicyError(f"{path}: cannot parse policy spec: {exc}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: a policy spec must be a mapping")
    try:
        return policy_from_spec(data.get("policy", data))
    except PolicyError as exc:
        raise PolicyError(f"{path}: {exc}") from None
