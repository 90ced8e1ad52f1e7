"""SWE-agent trajectories (``*.traj``): one JSON object per run.

``history`` is what the model saw, so it is what becomes the continuity:

* ``system`` → MESSAGE system; ``user`` → MESSAGE user (``is_demo`` demonstrations are
  flagged META, origin HARNESS, name ``demonstration``);
* ``assistant`` → one request each (SWE-agent calls the model once per assistant
  message): MESSAGE assistant, then one TOOL_CALL per ``tool_calls`` entry
  (function-calling runs: ``call_id`` = the entry id, ``name`` = ``function.name``,
  ``text`` = ``arguments``);
* ``tool`` → one TOOL_RESULT per ``tool_call_ids`` entry (the text on the first).

Non-function-calling runs (e.g. the pydicom GPT-4 run) have no tool ids: the assistant's
parsed ``action`` becomes a TOOL_CALL with a synthetic ``call_id`` ``swea-<request>``
(``name`` = the command word, ``text`` = the action) and the *next* ``user`` message, the
environment's observation, becomes its TOOL_RESULT (role tool, origin tool). Decision:
observations are tool results rather than user messages so that observation masking
(SWE-agent's own ``last_n_observations`` history processor) can find them; the original
role and ``message_type`` stay in ``raw``.

``trajectory`` steps repeat the history (action, observation, response, thought, state,
execution_time, sometimes the full message list); each becomes a SIDE_EFFECT named
``trajectory_step`` with no text (so nothing is counted twice) and the step as raw.

``info.model_stats`` holds run totals only (tokens_sent, tokens_received, api_calls,
instance_cost); there is no per-request usage, so the totals go to
``ParsedContinuity.meta["model_stats"]`` as recorded and, unless zeroed, to the run-level
usage ``meta["run_usage"]`` (:mod:`workbench.sources.run_usage`); no usage columns are set.

Raw: the document layout of :mod:`workbench.sources.lossless` (META ``document``
= the object with ``history`` and ``trajectory`` emptied, META ``layout``, then history
elements, then trajectory steps); :func:`roundtrip` rebuilds ``json.load(file)``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder, open_document
from workbench.sources.checks import opt_id, opt_list, pick
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.openai_style import (
    call_event,
    parse_tool_calls,
    role_and_text,
    system_message,
)
from workbench.sources.registration import register_format
from workbench.sources.run_usage import RUN_USAGE, from_model_stats
from workbench.sources.sniffing import peek
from workbench.sources.values import dumps

NAME = "swe_agent"
EXPECTED = "a SWE-agent trajectory object {history: [...], trajectory: [...], info: {...}}"
_CMD = re.compile(r"\S+")


# SWE-agent's stand-ins for a model (sweagent/agent/models.py get_model): a trajectory run
# with one of them called no LLM, so it records no model to price
PSEUDO_MODELS = frozenset({"replay", "human", "human_thought", "instant_empty_submit"})


def _model_name(doc: dict) -> str | None:
    name = _named_model(doc)
    return None if name in PSEUDO_MODELS else name


def _named_model(doc: dict) -> str | None:
    cfg = doc.get("replay_config")
    if isinstance(cfg, str):
        try:
            cfg = orjson.loads(cfg)
        except orjson.JSONDecodeError:
            cfg = None
    if isinstance(cfg, dict):
        agent = cfg.get("agent")
        model = agent.get("model") if isinstance(agent, dict) else None
        if isinstance(model, dict):
            for k in ("name", "model_name"):
                if isinstance(model.get(k), str):
                    return model[k]
    info = doc.get("info")
    if isinstance(info, dict):
        for k in ("model", "model_name"):
            if isinstance(info.get(k), str):
                return info[k]
    return None


class _State:
    def __init__(self) -> None:
        self.pending: tuple[str, str | None] | None = None  # synthetic call awaiting its observation


def _history_events(m: Any, where: str, b: Builder, st: _State) -> list[dict[str, Any]]:
    m, role, text = role_and_text(m, where, "a history message {role, content, ...}")
    if role == "system":
        return [system_message(text)]
    if role == "assistant":
        calls = parse_tool_calls(m.get("tool_calls"), f"{where}.tool_calls")
        action = m.get("action")
        action = action if isinstance(action, str) and action.strip() else None
        req = b.new_request()
        evs: list[dict[str, Any]] = [dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT,
                                          origin=Origin.AGENT, text=text, request=req, output=True)]
        st.pending = None
        if calls:
            for j, (cid, name, args) in enumerate(calls):
                evs.append(call_event(cid or f"swea-{req}-{j}", name, args, req, True))
        elif action is not None:
            cid = f"swea-{req}"
            word = _CMD.search(action)
            name = word.group(0)[:100] if word else None
            evs.append(call_event(cid, name, action, req, True))
            st.pending = (cid, name)
        return evs
    if role == "tool":
        ids = opt_list(m.get("tool_call_ids"), f"{where}.tool_call_ids")
        ids = [opt_id(x, f"{where}.tool_call_ids[{k}]") for k, x in enumerate(ids or [])]
        if not ids:
            ids = [opt_id(m.get("tool_call_id"), f"{where}.tool_call_id")]
        st.pending = None
        return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL, call_id=cid,
                     text=text if k == 0 else None) for k, cid in enumerate(ids)]
    if role == "user":
        if m.get("is_demo"):
            return [dict(kind=EventKind.MESSAGE, role=Role.USER, origin=Origin.HARNESS, text=text,
                         name="demonstration", flags=EventFlag.META)]
        if st.pending is not None:
            cid, name = st.pending
            st.pending = None
            return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL,
                         call_id=cid, name=name, text=text)]
        return [dict(kind=EventKind.MESSAGE, role=Role.USER, origin=Origin.USER, text=text)]
    return [dict(kind=EventKind.OPAQUE, name=f"role:{role}"[:200])]


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    doc, b, lay = open_document(ctx, EXPECTED, lambda d: isinstance(d, dict), "not an object")
    arrays = []
    for key in ("history", "trajectory"):
        if key not in doc:
            continue
        if isinstance(doc[key], list):
            lay.take_array(key)
            arrays.append(key)
        else:  # kept whole in the document event, so nothing is lost on skip
            ctx.bad_record(None, f"'{key}' is not a list", EXPECTED, None, None)
    if not arrays:
        raise SourceError("no 'history' or 'trajectory' list", path=str(ctx.path), expected=EXPECTED)
    lay.emit(b)
    st = _State()
    if "history" in arrays:
        b.record_elements(doc["history"], "history", lambda m, where: _history_events(m, where, b, st))
    for step in doc.get("trajectory") if "trajectory" in arrays else []:
        b.add(EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name="trajectory_step", raw=dumps(step))
    rows = b.finish()
    meta: dict[str, Any] = {**pick(doc.get("info"), model_stats=dict, exit_status=str),
                            **pick(doc, environment=str)}
    totals = from_model_stats(meta.get("model_stats"))
    if totals is not None:
        meta[RUN_USAGE] = totals
    name = ctx.path.name
    cid = name[: -len(".traj")] if name.endswith(".traj") else ctx.path.stem
    return [ParsedContinuity(continuity_id=cid, source_format=NAME, source_file=str(ctx.path),
                             rows=rows, model=_model_name(doc), meta=meta)]



_HEAD_TRAJ = re.compile(rb'"trajectory"\s*:\s*\[')
_HEAD_HIST = re.compile(rb'"history"\s*:\s*\[')


def _sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    suffix = p.name.endswith(".traj")
    if p.doc_ok:
        d = p.doc
        if not isinstance(d, dict):
            return Detection(0.0, "not a JSON object")
        hist, traj = isinstance(d.get("history"), list), isinstance(d.get("trajectory"), list)
        stats = isinstance(d.get("info"), dict) and isinstance(d["info"].get("model_stats"), dict)
        keys = [k for k, ok in (("history", hist), ("trajectory", traj),
                                ("info.model_stats", stats)) if ok]
        if hist and traj:
            return Detection(0.95 if suffix or stats else 0.9, f"JSON object with keys {', '.join(keys)}")
        if traj and all(isinstance(s, dict) and "action" in s for s in d["trajectory"][:5]):
            return Detection(0.8, "JSON object with a trajectory of action/observation steps")
        return Detection(0.1 if suffix else 0.0, "JSON object without history/trajectory lists")
    if p.starts == "{" and _HEAD_TRAJ.search(head_bytes):
        score = 0.8 if _HEAD_HIST.search(head_bytes) or b'"observation"' in head_bytes else 0.5
        return Detection(min(score + (0.15 if suffix else 0.0), 0.95),
                         "JSON object starting with a 'trajectory' list (file too large to parse)")
    return Detection(0.2 if suffix else 0.0, ".traj file name only" if suffix else "no trajectory keys")


FORMAT = register_format(
    NAME, "SWE-agent trajectory (.traj): history messages, trajectory steps, model_stats totals",
    sniff=_sniff, parse=_parse,
    profile="observation-masking",  # SWE-agent's last_n_observations history processor
    raw_joiner=None,
)
parse, sniff = FORMAT.parse, FORMAT.sniff
