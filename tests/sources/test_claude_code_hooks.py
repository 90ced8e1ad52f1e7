"""Hook denials (issue 28): a PreToolUse hook's deny reaches the model as the error result
and once more as a system reminder that Claude Code 2.1 does not write to the log."""

from __future__ import annotations

import numpy as np
import orjson

from workbench.sources.claude_code_hooks import META_KEY, HookTrail, hook_denials, reminder
from workbench.tokens.unlogged import denial_attachments

SID = "s1"
SPOTTER = "4d5611e5-241a-462a-8d15-5122611a9569"


def _hook(tid, event, command="${CLAUDE_PLUGIN_ROOT}/scripts/pre-commit.sh"):
    return {"type": "progress", "toolUseID": tid, "parentToolUseID": tid,
            "data": {"type": "hook_progress", "hookEvent": event, "hookName": f"{event}:Bash", "command": command}}


def _call(mid, tid, n):
    return {"type": "assistant", "sessionId": SID, "uuid": f"a{n}", "timestamp": f"2026-02-12T14:00:{n:02d}Z",
            "message": {"id": mid, "model": "claude-opus-4-6", "role": "assistant",
                        "content": [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "git commit"}}],
                        "usage": {"input_tokens": 3, "cache_read_input_tokens": 20000, "output_tokens": 9}}}


def _result(tid, text, n, error=True):
    return {"type": "user", "sessionId": SID, "uuid": f"u{n}", "timestamp": f"2026-02-12T14:00:{n:02d}Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                     "is_error": error, "content": text}]}}


def _records():
    """Four Bash calls, each after a PreToolUse hook: t1 denied by it (no post hook), t2 ran and
    failed (PostToolUseFailure ran), t3 refused by the user at the prompt, t4 denied with the
    attachment record a later release writes (its reason differs from the result's text)."""
    return [
        {"type": "user", "sessionId": SID, "uuid": "u0", "message": {"role": "user", "content": "commit it"}},
        _call("m1", "t1", 1), _hook("t1", "PreToolUse"),
        _result("t1", "Pre-commit validation failed: credo", 2),
        _call("m2", "t2", 3), _hook("t2", "PreToolUse"), _hook("t2", "PostToolUseFailure", "log.sh"),
        _result("t2", "Exit code 1\nnothing to commit", 4),
        _call("m3", "t3", 5), _hook("t3", "PreToolUse"),
        _result("t3", "The user doesn't want to proceed with this tool use.", 6),
        _call("m4", "t4", 7), _hook("t4", "PreToolUse"), _hook("t4", "PreToolUse", "guard.sh"),
        {"type": "attachment", "sessionId": SID, "uuid": "x1",
         "attachment": {"type": "hook_blocking_error", "hookName": "PreToolUse:Bash", "toolUseID": "t4",
                        "hookEvent": "PreToolUse",
                        "blockingError": {"blockingError": "tests fail", "command": "/p/guard.sh"}}},
        _result("t4", "tests fail (see above)", 8),
        _call("m5", "t5", 9),
    ]


def test_only_calls_a_hook_denied_count():
    trail = HookTrail()
    for rec in _records():
        trail.see(rec)
    assert trail.denials() == {
        "t1": {"hook": "PreToolUse:Bash", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/pre-commit.sh"},
        "t4": {"hook": "PreToolUse:Bash", "command": "/p/guard.sh", "reason": "tests fail"},
    }


def test_the_reminder_is_claude_codes_rendering():
    assert reminder({"hook": "PreToolUse:Bash", "command": "c.sh"}, "no") == (
        '<system-reminder>\nPreToolUse:Bash hook blocking error from command: "c.sh": no\n</system-reminder>')
    # several hooks ran and the log does not say which denied: no command
    trail = HookTrail()
    for rec in (_hook("t", "PreToolUse", "a.sh"), _hook("t", "PreToolUse", "b.sh"), _result("t", "denied", 1)):
        trail.see(rec)
    assert trail.denials() == {"t": {"hook": "PreToolUse:Bash", "command": ""}}


def test_the_import_records_the_denials_and_the_growth_model_counts_them(tmp_path):
    from workbench.continuity.dataset import load_dataset
    from workbench.sources.importer import import_paths
    from workbench.tokens.tokenizers import count_texts

    log = tmp_path / "logs" / f"{SID}.jsonl"
    log.parent.mkdir()
    log.write_bytes(b"\n".join(orjson.dumps(r) for r in _records()) + b"\n")
    ds = load_dataset(import_paths([log], tmp_path / "ds").path)
    meta = ds.manifest["import"]["continuities"][SID][META_KEY]
    assert sorted(meta["calls"]) == ["t1", "t4"]
    denied = hook_denials(ds.manifest)[SID]
    ev = ds.events(columns=["kind", "call_id", "text"]).to_dict(as_series=False)
    found = denial_attachments(ev["text"], np.array(ev["kind"]), ev["call_id"], denied,
                               lambda s: count_texts(s, "cl100k"))
    rows = {ev["call_id"][r]: t for r, t in found.items()}
    assert set(rows) == {"t1", "t4"}
    assert rows["t1"] == int(count_texts([reminder(denied["t1"], "Pre-commit validation failed: credo")])[0])
    assert rows["t4"] == int(count_texts([reminder(denied["t4"], "ignored: the attachment's reason")])[0])


def test_requests_after_a_denial_grow_by_the_second_copy(imported_bundle):
    """4d5611e5 (a log the rule was not read off: ae4a77f8's pre-commit loop was) records three
    denials by the elixir plugin's pre-commit hook (871-1,512 counted tokens each); the request
    after each grew 2,508-4,149 tokens for 1,116-1,713 counted tokens of log, 1.25-1.35x the
    denial text beyond what the log adds. With the reminder counted, the growth model's
    increment there (b·Δsent + c, the line fitted without the log) is within 15 % of the
    recorded one; without it, 40-50 % short."""
    from workbench.sources.profiles import fit_profiles
    from workbench.tokens.unlogged import growth_points

    ds = imported_bundle
    denied = hook_denials(ds.manifest)[SPOTTER]
    assert len(denied) == 3
    ev = ds.events(columns=["continuity", "kind", "call_id", "request"])
    cont = ds.continuities().filter(ds.continuities()["continuity_id"] == SPOTTER)["continuity"][0]
    ev = ev.filter(ev["continuity"] == cont)
    after = sorted(r for k, c, r in zip(ev["kind"], ev["call_id"], ev["request"], strict=True)
                   if k == 3 and c in denied)
    points, _attached = growth_points(ds)
    sent, rec, _k, _s = points[SPOTTER]
    assert sent.size == ds.manifest["import"]["continuities"][SPOTTER]["requests"]  # a point per request
    fit = fit_profiles(ds)["logs"][SPOTTER]["loo_unanchored"]
    for r in after:
        modelled = fit["factor"] * (sent[r] - sent[r - 1]) + fit["per_request_tokens"]
        assert abs(modelled / (rec[r] - rec[r - 1]) - 1) < 0.15, r
