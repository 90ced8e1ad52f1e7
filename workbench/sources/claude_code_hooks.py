"""Claude Code hook denials: context the model receives that a 2.1 log does not hold.

When a ``PreToolUse`` hook denies a tool call (``permissionDecision: "deny"``, or a
``decision: "block"``), Claude Code does not run the tool and sends the hook's reason to the
model twice: as the call's error ``tool_result`` (in the log) and as a ``hook_blocking_error``
attachment, rendered for the API as a meta user message::

    <system-reminder>
    PreToolUse:Bash hook blocking error from command: "<hook command>": <reason>
    </system-reminder>

(Claude Code's ``processHookJSONOutput`` turns the deny into the attachment and the
attachment renderer of its ``cli.js`` (the ``hook_blocking_error`` entry) wraps it so, as
public reverse-engineering notes and ports of the CLI quote them.) Releases whose transcripts write attachment
records (``type: "attachment"``) hold the attachment itself; 2.1.39 does not, so the
reminder is inferred from what it does write: the call's ``hook_progress`` records show the
``PreToolUse`` hooks that ran, and no ``PostToolUse``/``PostToolUseFailure`` hook and no
``bash_progress`` follow (the tool never ran). Checked on the bundled 2.1.39 sessions of
marot/spotter: each request after such a denial grows 1.23-1.35x the denial text's counted
tokens beyond what the log adds (ae4a77f8: 7 denials of 871-1,030 tokens; 4d5611e5: 3 of
871-1,512), where a second copy of the text in provider tokens is ~1.2x
(docs/fidelity-findings.md, "The pre-commit loop").

Which of several ``PreToolUse`` hooks denied is not written; the reminder is then counted
with an empty command (a few tokens short). The import keeps ``{tool_use_id: {"hook":
name, "command": command[, "reason": text]}}`` in the continuity meta (:data:`META_KEY`);
``reason`` only where an attachment record gave it (else it is the call's error result).

>>> t = HookTrail()
>>> t.see({"type": "progress", "toolUseID": "t1",
...        "data": {"type": "hook_progress", "hookEvent": "PreToolUse", "hookName": "PreToolUse:Bash",
...                 "command": "check.sh"}})
>>> t.see({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1",
...        "is_error": True, "content": "tests fail"}]}})
>>> t.denials()
{'t1': {'hook': 'PreToolUse:Bash', 'command': 'check.sh'}}
>>> reminder(t.denials()["t1"], "tests fail")
'<system-reminder>\\nPreToolUse:Bash hook blocking error from command: "check.sh": tests fail\\n</system-reminder>'
"""

from __future__ import annotations

from typing import Any

META_KEY = "hook_denials"  # the continuity meta key
RULE = ("a PreToolUse hook's deny reaches the model as the error tool_result and as a "
        "hook_blocking_error system reminder (not written to 2.1 transcripts)")
# error results Claude Code writes itself after the PreToolUse hooks ran (a user's or a
# permission rule's refusal, an interruption): not a hook's reason
_OWN_ERRORS = ("The user doesn't want to", "Permission to use", "[Request interrupted", "<tool_use_error>")
_RAN = ("PostToolUse", "PostToolUseFailure")


def reminder(denial: dict[str, str], result_text: str | None) -> str:
    """The meta user message Claude Code sends for one denial (its reason: the attachment's,
    else the call's error result)."""
    reason = denial.get("reason", result_text or "")
    return ("<system-reminder>\n"
            f"{denial.get('hook', 'PreToolUse')} hook blocking error from command: "
            f"\"{denial.get('command', '')}\": {reason}\n</system-reminder>")


class HookTrail:
    """Collects, record by record, what a Claude Code log says about its hooks."""

    def __init__(self) -> None:
        self._pre: dict[str, list[tuple[str, str]]] = {}  # tool use id -> (hook name, command)
        self._ran: set[str] = set()  # tool use ids whose tool ran (post hooks, bash progress)
        self._errors: list[tuple[str, str]] = []  # (tool use id, error text) in order
        self._attached: dict[str, dict[str, str]] = {}  # from hook_blocking_error attachment records

    def see(self, rec: Any) -> None:
        if not isinstance(rec, dict):
            return
        rtype = rec.get("type")
        if rtype == "progress":
            data, tid = rec.get("data"), rec.get("toolUseID")
            if not isinstance(data, dict) or not isinstance(tid, str):
                return
            if data.get("type") == "bash_progress":
                self._ran.add(tid)
            elif data.get("type") == "hook_progress":
                event = data.get("hookEvent")
                if event == "PreToolUse":
                    self._pre.setdefault(tid, []).append((str(data.get("hookName") or "PreToolUse"),
                                                          str(data.get("command") or "")))
                elif event in _RAN:
                    self._ran.add(tid)
        elif rtype == "attachment":
            att = rec.get("attachment")
            if isinstance(att, dict) and att.get("type") == "hook_blocking_error" \
                    and att.get("hookEvent") == "PreToolUse" and isinstance(att.get("toolUseID"), str):
                err = att.get("blockingError")
                err = err if isinstance(err, dict) else {}
                self._attached[att["toolUseID"]] = {"hook": str(att.get("hookName") or "PreToolUse"),
                                                    "command": str(err.get("command") or ""),
                                                    "reason": str(err.get("blockingError") or "")}
        elif rtype == "user":
            msg = rec.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error") is True \
                        and isinstance(block.get("tool_use_id"), str):
                    text = block.get("content")
                    if isinstance(text, list):
                        text = "".join(str(b.get("text") or "") for b in text if isinstance(b, dict))
                    self._errors.append((block["tool_use_id"], text if isinstance(text, str) else ""))

    def denials(self) -> dict[str, dict[str, str]]:
        """``{tool use id: {"hook", "command"[, "reason"]}}`` of the calls a PreToolUse hook denied."""
        out = dict(self._attached)
        for tid, text in self._errors:
            hooks = self._pre.get(tid)
            if tid in out or not hooks or tid in self._ran or text.startswith(_OWN_ERRORS):
                continue
            commands = {c for _h, c in hooks}
            out[tid] = {"hook": hooks[0][0], "command": commands.pop() if len(commands) == 1 else ""}
        return out


def hook_denials(manifest: dict[str, Any]) -> dict[str, dict[str, dict[str, str]]]:
    """Per continuity id of an imported dataset, its calls a hook denied (the import's meta
    :data:`META_KEY`)."""
    metas = ((manifest or {}).get("import") or {}).get("continuities") or {}
    return {cid: dict(m[META_KEY]["calls"]) for cid, m in metas.items()
            if isinstance(m, dict) and isinstance(m.get(META_KEY), dict) and m[META_KEY].get("calls")}
