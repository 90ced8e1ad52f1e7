"""What Claude Code sends that its log does not show (workbench.tokens.unlogged), and where the
claude-code preset compacts the bundled logs without their own usage (issue 28, item 6)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from workbench.tokens.unlogged import (
    dropped_thinking,
    fit_growth,
    growth_points,
    mention_attachments,
    predict,
)

AUTO_LOG = "624a4a58-b34c-462d-a70d-13421c8125a8"
MANUAL_LOG = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"

# kinds: 1 message, 2 tool call, 3 tool result, 4 reasoning; roles: 2 user, 3 assistant, 4 tool


def test_a_mentioned_file_counts_as_its_whole_read_elsewhere_in_the_log():
    texts = ["@docs/plan.md review it, and @moduledoc is no file", None,
             '{"file_path": "/repo/docs/plan.md", "offset": 10, "limit": 5}', "part",
             '{"file_path": "/repo/docs/plan.md"}', "whole file"]
    kinds = np.array([1, 4, 2, 3, 2, 3])
    roles = np.array([2, 3, 3, 4, 3, 4])
    names = [None, "thinking", "Read", "Read", "Read", "Read"]
    calls = [None, None, "a", "a", "b", "b"]
    tokens = np.array([20, 5, 30, 700, 25, 9000])
    # the partial read (offset/limit) is not the file; the whole read is
    assert mention_attachments(texts, kinds, roles, names, calls, tokens) == {0: 9000}
    # no whole read of the path in the log: nothing to estimate it from
    assert mention_attachments(texts[:4], kinds[:4], roles[:4], names[:4], calls[:4], tokens[:4]) == {}


def test_edits_between_the_mention_and_the_read_are_undone():
    """The whole read (11 tokens, 3 lines) comes after an edit that added 3 tokens of text
    and 2 lines; its gutter is 2 tokens a line: the file at the mention was 11 - (3 + 2 x 2)
    = 4 tokens. A Write in between: unknown, no estimate."""
    def count(strings):  # one token a word, the gutter "N→" one token
        return np.array([len(s.replace("→", " → ").split()) for s in strings])

    read = "1→ a b\n2→ c d\n3→ e"
    edit = json.dumps({"file_path": "/r/plan.md", "old_string": "x", "new_string": "x y\nz\nw"})
    texts = ["@plan.md", edit, "ok", '{"file_path": "/r/plan.md"}', read]
    kinds = np.array([1, 2, 3, 2, 3])
    roles = np.array([2, 3, 4, 3, 4])
    names = [None, "Edit", "Edit", "Read", "Read"]
    calls = [None, "e", "e", "r", "r"]
    tokens = np.array([3, 20, 1, 5, int(count([read])[0])])
    # gutter: (count(read) 11 - count(stripped) 5) / 3 lines = 2 a line; the edit grew the text
    # by 4 - 1 = 3 tokens and 2 lines: 11 - (3 + 2 x 2) = 4
    assert mention_attachments(texts, kinds, roles, names, calls, tokens, count) == {0: 4}
    # without a counter the read is taken as it is
    assert mention_attachments(texts, kinds, roles, names, calls, tokens) == {0: 11}
    texts[1] = '{"file_path": "/r/plan.md", "content": "new"}'
    names[1] = names[2] = "Write"
    assert mention_attachments(texts, kinds, roles, names, calls, tokens, count) == {}


def test_thinking_is_dropped_once_a_user_turn_follows_it():
    kind = np.array([1, 4, 2, 3, 4, 1, 1, 4])
    user = np.array([1, 0, 0, 0, 0, 1, 0, 0], bool)
    # rows 1 and 4 precede the user message at row 5; row 7 is the current turn's
    assert np.flatnonzero(dropped_thinking(kind, user)).tolist() == [1, 4]


def test_growth_fit_recovers_prefix_factor_and_framing():
    rng = np.random.default_rng(7)
    logs = {}
    for name, prefix in (("a", 20_000), ("b", 24_000), ("c", 22_000)):
        sent = np.cumsum(rng.integers(200, 3_000, 40)).astype(np.float64)
        k = np.arange(40)
        logs[name] = (sent, prefix + 1.2 * sent + 150 * k, k, np.zeros(40, np.int64))
    fit = fit_growth(logs)
    assert fit["factor"] == pytest.approx(1.2, abs=1e-3)
    assert fit["per_request_tokens"] == pytest.approx(150, abs=1)
    # the prefix: each log's first request less its sent tokens (no framing yet), median over logs
    assert fit["prefix_tokens"] == pytest.approx(22_000, abs=1)
    assert predict(fit, np.array([1000.0]), np.array([2]))[0] == pytest.approx(22_000 + 1_200 + 300, abs=2)
    # too few increments: no fit
    assert fit_growth({"a": tuple(v[:3] for v in logs["a"])}) is None


def test_growth_points_of_the_auto_compacted_log(imported_bundle):
    """Checked by hand on session-624a4a58.jsonl: the first user turn mentions
    @src/providers/plugins/sso/ARCHITECTURE-REFACTORING.md, sent as an attachment the log does
    not hold (the first call wrote 50,989 + 10 tokens, the 23,254-token system prefix
    included); the only whole Read of that file (request 37, after the compaction) holds
    26,391 cl100k tokens in 2,129 lines, 10,072 of them the line-number gutter (4.73 a line);
    the 13 Edits made to it in between grew it by 5,238 tokens of text (7,536 new, 2,298 old)
    and 736 lines: 26,391 - 5,238 - 736 x 4.73 = 17,671 at the mention. Request 0 sends the
    149 counted tokens of the log plus those."""
    points, attached = growth_points(imported_bundle)
    assert attached[AUTO_LOG] == [(5, 17671)]
    sent, rec, k, stretch = points[AUTO_LOG]
    assert (sent[0], rec[0]) == (149 + 17671, 50999)
    assert k[:3].tolist() == [0, 1, 2] and len(set(stretch.tolist())) == 2  # before and after the boundary
    # request 36, the last before the boundary: 90,730 counted tokens in the context, of which
    # 6,625 are thinking of turns a later user message closed (dropped by the API)
    assert k[36] == 36 and sent[36] == 90730 + 17671 - 6625 and rec[36] == 155741


def test_unanchored_preset_positions_on_the_bundled_logs(imported_bundle):
    """Where the claude-code preset compacts without the log's usage (loo_unanchored: the
    growth model fitted on the other Claude Code logs). 624a4a58 (2.0.76, auto boundary before
    request 37): the preset compacts at request 38, one late. The fitted line (prefix 25,570,
    factor 1.1311, 135 tokens a request, fitted on the three other Claude Code sessions; with
    only ae4a77f8 to fit on it was 25,796, 1.1671 and 113, 4.6 % low at request 36: 148.7k against the
    recorded 155,741: the first call's 4.4k of unlogged context beyond the prefix and the
    attachment is not modelled); the replay, which does not compact there, goes on with the
    log's events after the boundary and crosses 155k at request 38, where the log's whole Read
    of the 26,391-token file lands. Before the growth model (a + b·counted with the sonnet
    profile fitted on two short logs, factor 1.92) it compacted at 21, 16 early.
    ae4a77f8 (manual /compact at 138) is not compacted before it (195; 203 before the hook
    denials' reminders were counted, 8 of them in this log, 198 with them but before the tool
    definitions its Haiku stretch carries (requests 5-137): its replayed prompt grew; 198 also
    when the growth model was fitted on two Claude Code logs, before the two spotter sessions
    were bundled). The hook denials of the logs it is fitted on moved the line from 1.1311 and
    134.5 tokens a request: their increments no longer hold an unexplained second copy."""
    from workbench.engine.run import prepare_dataset
    from workbench.evaluate.fidelity_predictive import preset_compactions
    from workbench.sources.profiles import fit_profiles

    profiles = fit_profiles(imported_bundle)
    fit = profiles["logs"][AUTO_LOG]["loo_unanchored"]
    assert AUTO_LOG not in fit["fitted_on"]
    assert (fit["prefix_tokens"], fit["factor"], fit["per_request_tokens"]) == (25570.2, 1.1321, 133.6)
    inputs = [i for i in prepare_dataset(imported_bundle, "cl100k") if i.continuity_id in (AUTO_LOG, MANUAL_LOG)]
    preset = preset_compactions(imported_bundle, inputs, profiles).filter(pl.col("line") == "loo_unanchored")
    auto = preset.filter(pl.col("continuity_id") == AUTO_LOG).row(0, named=True)
    assert auto["line_source"] == "loo growth claude_code/growth"
    assert auto["simulated_compactions"][0] == 38 and auto["first_auto_delta_requests"] == 1
    assert auto["within"] is True and auto["compacted_early"] is False
    manual = preset.filter(pl.col("continuity_id") == MANUAL_LOG).row(0, named=True)
    assert manual["recorded_triggers"] == ["manual"] and manual["compacted_early"] is False
    assert manual["simulated_compactions"][0] == 195


def test_the_unanchored_view_adds_what_the_log_does_not_show():
    """Hand-computed on four rows: a user turn (100 tokens) that attached a file (1,000
    counted), the assistant's thinking (40) and answer (20) of request 0, then a user turn (30)
    and the answer of request 1 (10). Factor 1.5, 50 framing tokens a request: the attached
    file adds 1,500 to row 0, each request's first output row gets 50, and the thinking, closed
    by the second user turn, counts 0."""
    from workbench.engine.accounting import Line, provider_view
    from workbench.engine.prepare import prepare_continuity

    frame = pl.DataFrame({
        "seq": [0, 1, 2, 3, 4], "kind": [1, 4, 1, 1, 1], "role": [2, 3, 3, 2, 3], "flags": [0, 2, 2, 0, 2],
        "request": [0, 0, 0, 1, 1], "ts_ms": [0, 1, 2, 3, 4], "pair_seq": [-1] * 5,
        "name": [None, "thinking", None, None, None], "message_id": ["a", "b", "b", "c", "d"],
        "tokens_cl100k": [100, 40, 20, 30, 10],
    }, schema_overrides={"name": pl.String})
    inp = prepare_continuity(frame, continuity=0, continuity_id="t", tokenizer="cl100k")
    plain = provider_view(inp, Line(0.0, 1.5, "test", anchored=False))
    assert plain.tokens.tolist() == [150, 60, 30, 45, 15]
    line = Line(0.0, 1.5, "test", anchored=False, per_request=50.0, attachments=((0, 1000),), drop_thinking=True)
    view = provider_view(inp, line)
    first = inp.req_first_row.tolist()
    assert first == [1, 4]
    assert view.tokens.tolist() == [150 + 1500, 0 + 50, 30, 45, 15 + 50]


def test_a_model_without_tool_search_carries_the_deferred_tools():
    """Hand-computed on nine rows, requests 0-3 (factor 2, 1,000 tokens of tool definitions):
    request 1 is served by Haiku (no tool search), request 2 by Opus again, request 3 after a
    recorded boundary by Haiku. Request 1's prompt gets the 1,000 tokens on its last input row
    (row 2), request 2 gives them back from its last input row on (row 4: its 60, the other 940
    from row 5), and request 3, after the boundary, gets them again on the summary (row 7)."""
    from workbench.engine.accounting import Line, provider_view
    from workbench.engine.prepare import prepare_continuity
    from workbench.tokens.unlogged import searches_tools

    assert not searches_tools("claude-haiku-4-5-20251001") and searches_tools("claude-opus-4-6")
    assert searches_tools("gpt-5.5")  # the rule is Claude Code's, for Claude models
    frame = pl.DataFrame({
        "seq": list(range(9)), "kind": [1, 1, 1, 1, 1, 1, 6, 7, 1], "role": [2, 3, 2, 3, 2, 3, 0, 2, 3],
        "flags": [0, 2, 0, 2, 0, 2, 0, 0, 2], "request": [0, 0, 1, 1, 2, 2, -1, 3, 3],
        "ts_ms": list(range(9)), "pair_seq": [-1] * 9, "name": [None] * 9,
        "message_id": list("abcdefghi"), "tokens_cl100k": [100, 10, 500, 10, 30, 2000, 0, 300, 10],
    }, schema_overrides={"name": pl.String})
    inp = prepare_continuity(frame, continuity=0, continuity_id="t", tokenizer="cl100k")
    assert inp.req_first_row.tolist() == [1, 3, 5, 8] and np.flatnonzero(inp.is_boundary).tolist() == [6]
    line = Line(0.0, 2.0, "test", anchored=False, switches=((1, False), (3, True), (5, False), (8, True)),
                switch_tokens=1000.0)
    view = provider_view(inp, line)
    plain = provider_view(inp, Line(0.0, 2.0, "test", anchored=False)).tokens
    assert (view.tokens - plain).tolist() == [0, 0, 1000, 0, -60, -940, 0, 1000, 0]


def test_the_model_switch_of_the_manual_log_is_predicted_from_other_logs(imported_bundle):
    """ae4a77f8 switches from opus-4-6 to haiku-4-5 at request 5 (the elixir plugin's
    hex-docs-search skill declares ``model: haiku``; Claude Code ran it in the main
    conversation and stayed on Haiku until the /compact at request 138): request 5's prompt
    grew 6,956 tokens for 2,030 counted tokens of log. Fitted without the log, the Haiku
    sub-agents of fa812bfe (Explore, 17.8k first-request prefix) against the sonnet ones of
    4d5611e5 (Explore) and ae4a77f8 (general-purpose), 13.2-13.7k, put 4,313 tokens on a model
    without tool search; the increment at request 5 less b·Δsent + c (the line fitted without
    the log) is 5,056: the offset is 85 % of it (the rest: context of the skill's turn the log
    does not show, or the sub-agents' prefixes standing in for the main session's)."""
    from workbench.sources.profiles import fit_profiles

    runs = imported_bundle.manifest["import"]["continuities"][MANUAL_LOG]["model_runs"]
    assert runs == [[0, "claude-opus-4-6"], [5, "claude-haiku-4-5-20251001"], [138, "claude-opus-4-6"]]
    fit = fit_profiles(imported_bundle)["logs"][MANUAL_LOG]["loo_unanchored"]
    assert [no for _seq, no in fit["switches"]] == [False, True, False]
    points, _attached = growth_points(imported_bundle)
    sent, rec, _k, _s = points[MANUAL_LOG]
    jump = rec[5] - rec[4] - fit["factor"] * (sent[5] - sent[4]) - fit["per_request_tokens"]
    assert rec[5] - rec[4] == 6956 and round(jump) == 5056
    assert fit["tool_search_tokens"] == 4313.1
    assert abs(fit["tool_search_tokens"] / jump - 1) < 0.15
