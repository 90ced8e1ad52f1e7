"""Claude Code's tune snippet: a tuned auto-compact threshold in the controls Claude Code has
now, each with the releases it works on. :func:`workbench.sweep.harness_config.render`
dispatches here.

Claude Code is closed source; what it does is read from its issue tracker and from readings of
its bundled code that users posted there (named beside each key, provenance ``inferred``):

* the threshold is ``W - min(max_output, 20k) - 13k`` where ``W`` is the model's window, or the
  auto-compact window when one is set (``min`` of the two: it can only lower);
* the auto-compact window: ``autoCompactWindow`` (settings.json), ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``
  (environment), ``claude --autocompact W`` and, from 2.1.247, ``/autocompact 300k`` in a session;
  it is clamped to at least 100k;
* ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` only lowers the threshold (floor of the effective window x
  pct) and is ignored from 2.1.220 on (anthropics/claude-code#82761): emitted for older releases.

>>> from workbench.engine.presets import get_policy
>>> s = claude_code(get_policy("claude-code", {"trigger.reserve_tokens": 500_000}), 1_000_000)
>>> [k.value for k in s.keys if k.name == "autoCompactWindow"]
[533000]
"""

from __future__ import annotations

import json
import math

from workbench.sweep.harness_base import Block, HarnessSnippet, Key, never_compacts, not_tokens, threshold_of

RESERVE_BELOW_WINDOW = 13_000  # anthropics/claude-code#31806: the buffer below the effective window
OUTPUT_RESERVE_CAP = 20_000  # ... after min(max_output, 20k) is taken off the window
MIN_COMPACT_WINDOW = 100_000  # the auto-compact window's lower clamp (--autocompact's minimum)
PCT_OVERRIDE_LAST = "2.1.219"  # CLAUDE_AUTOCOMPACT_PCT_OVERRIDE is a no-op from 2.1.220 (#82761)
SLASH_COMMAND_FIRST = "2.1.247"  # /autocompact N in a session

_WINDOW_SOURCES = ("anthropics/claude-code#86863 (Anthropic: the trigger is the auto-compact window less a fixed "
                   "buffer; the default window per model and plan is set server-side), #64277 (autoCompactWindow in "
                   "settings.json), BaseInfinity/claude-sdlc-harness#520 (a reading of 2.1.221: window = min(model "
                   "window, clamp(W, 100k..1M))), jojoprison/mnemo v1.2.16 (W - min(max_output, 20k) - 13k)")


def compact_window_for(threshold: int, max_output: int) -> int:
    """The auto-compact window ``W`` at which Claude Code compacts at ``threshold``:
    ``W - min(max_output, 20k) - 13k = threshold``."""
    return int(threshold) + min(int(max_output), OUTPUT_RESERVE_CAP) + RESERVE_BELOW_WINDOW


def _k(tokens: int) -> str:
    return f"{tokens // 1000}k" if tokens % 1000 == 0 else str(tokens)


def claude_code(policy, window: int) -> HarnessSnippet:
    s = HarnessSnippet("claude-code")
    if never_compacts(policy):
        settings = {"autoCompactEnabled": False}
        s.blocks.append(Block("json", "~/.claude/settings.json", json.dumps(settings, indent=2)))
        s.keys.append(Key("autoCompactEnabled", False, "documented", "settings.json (settings reference)"))
        s.notes.append("older versions keep this in ~/.claude.json (`claude config set -g autoCompactEnabled false`)")
        return s
    threshold = threshold_of(policy, window)
    if threshold is None:
        s.notes.append(not_tokens(policy, "Claude Code"))
        return s
    effective = window - min(policy.provider.max_output, OUTPUT_RESERVE_CAP)
    default = effective - RESERVE_BELOW_WINDOW
    settings: dict = {"autoCompactEnabled": True}
    s.keys.append(Key("autoCompactEnabled", True, "documented", "settings.json (settings reference)"))
    if threshold >= default:
        s.notes.append(f"the chosen threshold {threshold:,} is at or above Claude Code's default {default:,} "
                       f"(window {window:,} - min(max output, 20k) - 13k); the auto-compact window and "
                       "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE can only lower the threshold, so the default stays and "
                       "no override is emitted")
    else:
        _lower(s, settings, policy, threshold, window, effective)
    s.blocks.insert(0, Block("json", "~/.claude/settings.json", json.dumps(settings, indent=2)))
    _rest(s, policy)
    return s


def _lower(s: HarnessSnippet, settings: dict, policy, threshold: int, window: int, effective: int) -> None:
    compact_window = compact_window_for(threshold, policy.provider.max_output)
    if compact_window >= MIN_COMPACT_WINDOW:
        settings["autoCompactWindow"] = compact_window
        s.keys.append(Key("autoCompactWindow", compact_window, "inferred", f"settings.json ({_WINDOW_SOURCES})"))
        s.keys.append(Key("CLAUDE_CODE_AUTO_COMPACT_WINDOW", str(compact_window), "inferred",
                          "environment (the same window, a whole number: it wins over the settings, where "
                          "modelSettings.<model>.autoCompactWindow, written by /autocompact, wins over the top level)"))
        s.blocks.append(Block("shell", "or: the shell profile, before `claude`",
                              f"export CLAUDE_CODE_AUTO_COMPACT_WINDOW={compact_window}"))
        s.notes.append(f"or per session: `claude --autocompact {compact_window}`, or from {SLASH_COMMAND_FIRST} "
                       f"`/autocompact {_k(compact_window)}` inside a session (inferred, issue 31's reading)")
        s.notes.append(f"threshold {threshold:,} tokens = auto-compact window {compact_window:,} - min(max output, "
                       "20k) - 13k (inferred: the window only lowers the model's own; clamped to >= 100k)")
        if compact_window < 200_000:
            s.notes.append(f"an auto-compact window of {compact_window:,} is in the 100k-199k range that a reading "
                           "of 2.1.221 found to switch auto-compact off (BaseInfinity/claude-sdlc-harness#520); "
                           "check that your release compacts there")
    else:
        s.notes.append(f"threshold {threshold:,} needs an auto-compact window of {compact_window:,}, below the "
                       f"{MIN_COMPACT_WINDOW:,} minimum Claude Code clamps it to: not expressible from 2.1.220 on "
                       "(only the percentage below, on older releases)")
    pct = math.floor(threshold * 10_000 / effective) / 100  # floor(E * pct / 100) <= threshold
    pct_text = str(int(pct)) if float(pct).is_integer() else f"{pct:.2f}"
    reached = math.floor(effective * pct / 100)
    s.blocks.append(Block("shell", f"Claude Code <= {PCT_OVERRIDE_LAST} only: the shell profile, before `claude`",
                          f"export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={pct_text}"))
    s.keys.append(Key("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", pct_text, "documented",
                      "environment (Claude Code env-var reference); ignored from 2.1.220 (#82761)"))
    s.notes.append(f"up to {PCT_OVERRIDE_LAST}: {pct_text}% of the effective window {effective:,} (window "
                   f"{window:,} - min(max output, 20k)); Claude Code computes floor(effective x pct) = {reached:,}; "
                   "it can only lower the threshold, and issues #63186, #36381, #57567 report it ignored when "
                   "set only in settings.json `env` (export it in the shell)")


def _rest(s: HarnessSnippet, policy) -> None:
    if policy.flush.enabled:
        s.notes.append("Claude Code has no pre-compaction flush key; the flush settings are not expressible")
    m = policy.masking
    if m.keep_results or m.idle_s:
        s.notes.append(f"the time-based microcompact (keep the newest {m.keep_results} tool outputs after a "
                       f"{m.idle_s / 60:g}-minute gap; readings differ: 60 or 90 min) is switched by a remote "
                       "flag, not a setting: not expressible (inferred from third-party readings of "
                       "services/compact/microCompact.ts)")
    if m.after_turns or m.keep_tokens or policy.trigger.keep_last_events or policy.compaction.retain != "none":
        s.notes.append("keep/masking parameters have no Claude Code key (microcompact is internal)")
