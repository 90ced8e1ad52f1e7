"""mini-swe-agent trajectories (``*.traj.json``).

Either a bare JSON list of ``{role, content}`` messages (the test fixture) or the saved
object ``{"info": {...}, "messages": [...], "trajectory_format": "mini-swe-agent-1"}``.

Mapping: ``system`` → MESSAGE system; ``assistant`` → one request each: MESSAGE assistant
(the whole content, THOUGHT and code block included), then the action as a TOOL_CALL
with a synthetic ``call_id`` ``mswea-<n>`` (``name`` = ``bash``, ``text`` = the command).
The action is the single ```` ```mswea_bash_command ```` (or ```` ```bash ````) block, as
mini-swe-agent itself parses it: a response with zero or several blocks is a format
error there and has no action here. Newer logs that list ``extra.actions`` use those.

The ``user`` message right after an assistant message that had an action is that
action's observation → TOOL_RESULT (role tool, same ``call_id``, flag ERROR when
``<returncode>`` is not 0). Decision: this includes observations without
``<returncode>``/``<output>`` tags (timeouts, and the final submission output that
follows ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``), because they are that command's
result. Other user messages (the task, format-error feedback) stay MESSAGE user.

Usage: the fixture has none; ``info.model_stats`` (totals) goes to ``meta`` and a
per-message ``extra.response.usage`` (newer logs, LiteLLM shape) is recorded on the
request's first event.

Raw: document layout (see :mod:`workbench.sources.lossless`); :func:`roundtrip`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder, is_message_list, open_document
from workbench.sources.checks import opt_dict, opt_list, pick, want_dict
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.openai_style import call_event, role_and_text, system_message
from workbench.sources.registration import register_format
from workbench.sources.run_usage import RUN_USAGE, from_model_stats
from workbench.sources.sniffing import is_message, peek
from workbench.sources.values import dumps, litellm_usage

NAME = "mini_swe_agent"
EXPECTED = "a mini-swe-agent trajectory: a list of {role, content} messages or {info, messages}"
# mini-swe-agent's own action regexes (v1 used ```bash, later versions ```mswea_bash_command)
_ACTION = re.compile(r"```(?:mswea_bash_command|bash)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_MARKERS = ("mswea_bash_command", "<returncode>", "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
            "MINI_SWE_AGENT_FINAL_OUTPUT")


def _actions(m: dict, text: str | None, where: str) -> list[str]:
    extra = opt_dict(m.get("extra"), f"{where}.extra")
    if extra is not None and extra.get("actions") is not None:
        acts = opt_list(extra.get("actions"), f"{where}.extra.actions") or []
        out = []
        for k, a in enumerate(acts):
            if isinstance(a, str):
                out.append(a)
            else:
                a = want_dict(a, f"{where}.extra.actions[{k}]", "an action {command}")
                cmd = a.get("command")
                out.append(cmd if isinstance(cmd, str) else dumps(a))
        return out
    found = _ACTION.findall(text or "")
    return [found[0].strip()] if len(found) == 1 else []


class _State:
    def __init__(self) -> None:
        self.pending: list[str] = []  # call ids of the last assistant's actions
        self.n_calls = 0


def _events(m: Any, where: str, b: Builder, st: _State) -> list[dict[str, Any]]:
    m, role, text = role_and_text(m, where, "a message object {role, content}")
    if role == "system":
        return [system_message(text)]
    if role == "assistant":
        acts = _actions(m, text, where)
        extra = opt_dict(m.get("extra"), f"{where}.extra")
        resp = opt_dict(extra.get("response"), f"{where}.extra.response") if extra else None
        usage = litellm_usage(resp.get("usage"), f"{where}.extra.response.usage") if resp else None
        req = b.new_request()
        evs: list[dict[str, Any]] = [dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT,
                                          origin=Origin.AGENT, text=text, request=req, output=True,
                                          usage=usage)]
        st.pending = []
        for a in acts:
            st.n_calls += 1
            cid = f"mswea-{st.n_calls}"
            evs.append(call_event(cid, "bash", a, req, True))
            st.pending.append(cid)
        return evs
    if role in ("user", "tool") and st.pending:
        cids, st.pending = st.pending, []
        rc = _RETURNCODE.search(text or "")
        flags = EventFlag.ERROR if rc is not None and int(rc.group(1)) != 0 else 0
        return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL, call_id=cid,
                     name="bash", text=text if k == 0 else None, flags=flags)
                for k, cid in enumerate(cids)]
    st.pending = []
    if role == "user":
        return [dict(kind=EventKind.MESSAGE, role=Role.USER, origin=Origin.USER, text=text)]
    return [dict(kind=EventKind.OPAQUE, name=f"role:{role}"[:200])]


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    doc, b, lay = open_document(ctx, EXPECTED, is_message_list,
                                "neither a message list nor an object with 'messages'")
    meta: dict[str, Any] = {}
    model = None
    msgs = lay.take_messages()
    if isinstance(doc, dict):
        info = doc.get("info")
        meta.update(pick(info, model_stats=dict, exit_status=str))
        totals = from_model_stats(meta.get("model_stats"))
        if totals is not None:
            meta[RUN_USAGE] = totals
        if isinstance(info, dict):
            cfg = info.get("config")
            mcfg = cfg.get("model") if isinstance(cfg, dict) else None
            if isinstance(mcfg, dict) and isinstance(mcfg.get("model_name"), str):
                model = mcfg["model_name"]
        meta.update(pick(doc, trajectory_format=str))
    lay.emit(b)
    st = _State()
    b.record_elements(msgs, "messages", lambda m, where: _events(m, where, b, st))
    rows = b.finish()
    name = ctx.path.name
    cid = name[: -len(".traj.json")] if name.endswith(".traj.json") else ctx.path.stem
    return [ParsedContinuity(continuity_id=cid, source_format=NAME, source_file=str(ctx.path),
                             rows=rows, model=model, meta=meta)]



def _sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    suffix = p.name.endswith(".traj.json")
    if p.doc_ok:
        d = p.doc
        if isinstance(d, dict):
            if str(d.get("trajectory_format", "")).startswith("mini-swe-agent"):
                return Detection(0.97, f"JSON object with trajectory_format {d['trajectory_format']!r}")
            msgs = d.get("messages")
        else:
            msgs = d
        if not (isinstance(msgs, list) and msgs and all(is_message(m) for m in msgs[:50])):
            return Detection(0.0, "no list of {role, content} messages")
        blob = "".join(m["content"] for m in msgs[:200] if isinstance(m.get("content"), str))
        seen = [k for k in _MARKERS if k in blob]
        if seen:
            return Detection(0.95 if suffix else 0.9,
                             f"{{role, content}} messages with mini-swe-agent markers ({', '.join(seen)})")
        return Detection(0.7 if suffix else 0.0,
                         ".traj.json message list without mini-swe-agent markers" if suffix
                         else "message list without mini-swe-agent markers")
    if p.starts in ("[", "{") and ("mswea_bash_command" in p.text or "<returncode>" in p.text):
        return Detection(0.85 if suffix else 0.75, "JSON with mini-swe-agent markers (too large to parse)")
    return Detection(0.0, "not a mini-swe-agent trajectory")


FORMAT = register_format(
    NAME, "mini-swe-agent trajectory (.traj.json): role/content messages with bash blocks",
    sniff=_sniff, parse=_parse,
    profile="no-compaction",  # mini-swe-agent keeps its whole linear history
    raw_joiner=None,
)
parse, sniff = FORMAT.parse, FORMAT.sniff
