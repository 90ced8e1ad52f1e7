"""OpenHands v0 event streams: a JSON list of events ``{id, timestamp, source, action |
observation, message, args | extras, cause?, tool_call_metadata?}``.

Mapping (one source event → events, raw on the first):

* action ``message``: from the user → MESSAGE user; from the agent → MESSAGE assistant,
  an output (its own request when it has no ``tool_call_metadata``).
* action ``system`` → MESSAGE system (``args.content``).
* other agent actions (``run``, ``edit``, ``read``, ``browse``, ``think``, ``finish``…)
  → MESSAGE assistant with ``args.thought`` when non-empty, then TOOL_CALL:
  ``call_id`` = ``tool_call_metadata.tool_call_id`` (``oh-<event id>`` without metadata),
  ``name`` = ``function_name`` (else the action type), ``text`` = the arguments the model
  produced (from ``model_response.choices[].message.tool_calls``), else the args as JSON.
* ``condensation`` → COMPACTION (trigger AUTO, origin BACKGROUND), plus SUMMARY when the
  args carry a summary; observation ``condense`` → SUMMARY.
* observations with ``tool_call_metadata``, or whose ``cause`` is an action mapped to a
  TOOL_CALL → TOOL_RESULT (``text`` = ``content``; flag ERROR for ``error`` observations
  or ``success: false``).
* observation ``error`` with no tool call → MESSAGE user, origin HARNESS, flags
  ERROR|META (OpenHands feeds these back to the model).
* everything else (``agent_state_changed``, ``null`` observations, ``change_agent_state``,
  ``recall``, user-initiated commands and their outputs…) → SIDE_EFFECT (origin by
  ``source``); an event with neither ``action`` nor ``observation`` → OPAQUE.

Requests and usage: one distinct ``tool_call_metadata.model_response.id`` = one request
(parallel tool calls share it); its usage is recorded once, on the request's first event,
from ``model_response.usage``. LiteLLM's ``prompt_tokens`` includes the Anthropic cache
tokens (checked in basic_gui_mode.json: 3601 = 6 + 160 cache write + 3435 cache read, and
``prompt_tokens_details.cached_tokens`` == ``cache_read_input_tokens``), so
``usage_input = prompt_tokens - cache_read - cache_write`` (see ``litellm_usage``).
An agent ``message`` action without metadata is a model response too: its own request,
no usage recorded.

Raw: document layout (META ``document`` = ``[]``, META ``layout``, one raw per event);
:func:`roundtrip` rebuilds ``json.load(file)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Origin, Role
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder, open_document
from workbench.sources.checks import opt_dict, opt_id, opt_str, want_dict
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.openai_style import call_event, parse_tool_calls, system_message
from workbench.sources.registration import register_format
from workbench.sources.sniffing import peek
from workbench.sources.values import content_text, dumps, litellm_usage, parse_ts

NAME = "openhands"
EXPECTED = "an OpenHands event list [{id, timestamp, source, action|observation, ...}]"
_ORIGIN = {"user": Origin.USER, "agent": Origin.AGENT, "environment": Origin.HARNESS}
NON_TOOL_ACTIONS = frozenset({"message", "system", "change_agent_state", "condensation",
                              "condensation_request", "recall", "null"})


class _State:
    def __init__(self) -> None:
        self.req_of_response: dict[str, int] = {}
        self.call_of_event: dict[Any, tuple[str, str | None]] = {}  # action id -> (call id, name)
        self.model: str | None = None


def _response(tcm: dict | None, where: str) -> tuple[str | None, dict | None]:
    if tcm is None:
        return None, None
    mr = opt_dict(tcm.get("model_response"), f"{where}.tool_call_metadata.model_response")
    if mr is None:
        return None, None
    return opt_id(mr.get("id"), f"{where}.tool_call_metadata.model_response.id"), mr


def _model_args(mr: dict | None, call_id: str | None, where: str) -> str | None:
    """The arguments string the model produced for ``call_id``."""
    if mr is None or call_id is None:
        return None
    choices = mr.get("choices")
    if not isinstance(choices, list):
        return None
    for k, ch in enumerate(choices):
        msg = ch.get("message") if isinstance(ch, dict) else None
        if not isinstance(msg, dict):
            continue
        for cid, _name, args in parse_tool_calls(msg.get("tool_calls"),
                                                 f"{where}.tool_call_metadata.model_response.choices[{k}].message.tool_calls"):
            if cid == call_id:
                return args
    return None


def _events(e: Any, where: str, b: Builder, st: _State) -> list[dict[str, Any]]:
    e = want_dict(e, where, "an OpenHands event object")
    source = e.get("source")
    origin = _ORIGIN.get(source, Origin.UNKNOWN) if isinstance(source, str) else Origin.UNKNOWN
    eid = e.get("id") if isinstance(e.get("id"), int | str) and not isinstance(e.get("id"), bool) else None
    common = dict(ts_ms=parse_ts(e.get("timestamp")), message_id=None if eid is None else str(eid))
    action, obs = e.get("action"), e.get("observation")
    tcm = opt_dict(e.get("tool_call_metadata"), f"{where}.tool_call_metadata")
    rid, mr = _response(tcm, where)

    if isinstance(action, str):
        args = opt_dict(e.get("args"), f"{where}.args") or {}
        if action == "system":
            text = content_text(args.get("content"), f"{where}.args.content")
            return [{**system_message(text), **common}]
        if action == "condensation":
            summary = opt_str(args.get("summary"), f"{where}.args.summary")
            evs = [dict(kind=EventKind.COMPACTION, origin=Origin.BACKGROUND, name="condensation",
                        compact_trigger=CompactTrigger.AUTO, **common)]
            if summary:
                evs.append(dict(kind=EventKind.SUMMARY, role=Role.USER, origin=Origin.BACKGROUND,
                                text=summary, **common))
            return evs
        is_agent = source == "agent"
        if is_agent and (action == "message" or action not in NON_TOOL_ACTIONS):
            usage = litellm_usage(mr.get("usage"), f"{where}.tool_call_metadata.model_response.usage") \
                if mr is not None else None
            thought_key = "content" if action == "message" else "thought"
            text = content_text(args.get(thought_key), f"{where}.args.{thought_key}")
            if action == "message" and text is None:
                text = opt_str(e.get("message"), f"{where}.message")
            call = None
            if action != "message":
                cid = opt_id(tcm.get("tool_call_id"), f"{where}.tool_call_metadata.tool_call_id") \
                    if tcm is not None else None
                name = opt_str(tcm.get("function_name"), f"{where}.tool_call_metadata.function_name") \
                    if tcm is not None else None
                cargs = _model_args(mr, cid, where)
                if cargs is None:
                    cargs = dumps({k: v for k, v in args.items() if k != "thought"})
                call = (cid or f"oh-{eid}", name or action, cargs)
            # request: one per model response id; a response id seen before → same request
            if rid is not None and rid in st.req_of_response:
                req, first = st.req_of_response[rid], False
            else:
                req, first = b.new_request(), True
                if rid is not None:
                    st.req_of_response[rid] = req
            if mr is not None and st.model is None and isinstance(mr.get("model"), str):
                st.model = mr["model"]
            evs: list[dict[str, Any]] = []
            if text or call is None:
                evs.append(dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT,
                                text=text, request=req, output=True, **common))
            if call is not None:
                evs.append(call_event(*call, req, True, **common))
                if eid is not None:
                    st.call_of_event[eid] = (call[0], call[1])
            if first and usage is not None:
                evs[0]["usage"] = usage
            return evs
        if action == "message":
            text = content_text(args.get("content"), f"{where}.args.content")
            if text is None:
                text = opt_str(e.get("message"), f"{where}.message")
            role = Role.USER if source != "agent" else Role.ASSISTANT
            return [dict(kind=EventKind.MESSAGE, role=role, origin=origin, text=text, **common)]
        return [dict(kind=EventKind.SIDE_EFFECT, origin=origin, name=f"action:{action}"[:200], **common)]

    if isinstance(obs, str):
        content = content_text(e.get("content"), f"{where}.content")
        call = None
        if tcm is not None:
            cid = opt_id(tcm.get("tool_call_id"), f"{where}.tool_call_metadata.tool_call_id")
            name = opt_str(tcm.get("function_name"), f"{where}.tool_call_metadata.function_name")
            if cid is not None:
                call = (cid, name)
        if call is None and e.get("cause") is not None:
            cause = e.get("cause")
            call = st.call_of_event.get(cause) if isinstance(cause, int | str) and not isinstance(cause, bool) else None
        if call is not None:
            flags = EventFlag.ERROR if obs == "error" or e.get("success") is False else 0
            return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL,
                         call_id=call[0], name=call[1] or obs, text=content, flags=flags, **common)]
        if obs == "condense":
            return [dict(kind=EventKind.SUMMARY, role=Role.USER, origin=Origin.BACKGROUND,
                         text=content, name="condense", **common)]
        if obs == "error":
            return [dict(kind=EventKind.MESSAGE, role=Role.USER, origin=Origin.HARNESS, text=content,
                         name="error", flags=EventFlag.ERROR | EventFlag.META, **common)]
        return [dict(kind=EventKind.SIDE_EFFECT, origin=origin, name=f"observation:{obs}"[:200], **common)]
    return [dict(kind=EventKind.OPAQUE, name="event", **common)]


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    doc, b, lay = open_document(ctx, EXPECTED, lambda d: isinstance(d, list), "not a list of events")
    lay.take_array(None)
    lay.emit(b)
    st = _State()
    b.record_elements(doc, "", lambda e, where: _events(e, where, b, st))
    rows = b.finish()
    return [ParsedContinuity(continuity_id=ctx.path.stem, source_format=NAME,
                             source_file=str(ctx.path), rows=rows, model=st.model,
                             meta={"events": len(doc)})]



def _is_event(v: Any) -> bool:
    return isinstance(v, dict) and "id" in v and ("action" in v or "observation" in v)


def _sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    if p.doc_ok:
        d = p.doc
        if isinstance(d, list) and d:
            sample = d[:20]
            good = sum(_is_event(x) for x in sample)
            if good == len(sample):
                src = all("source" in x for x in sample)
                return Detection(0.95 if src else 0.85,
                                 f"JSON list of {len(d)} events with id, source, action/observation")
            if good:
                return Detection(0.5, f"JSON list where {good}/{len(sample)} items are OpenHands events")
        return Detection(0.0, "not a list of OpenHands events")
    if p.starts == "[" and '"observation"' in p.text and '"source"' in p.text and '"id"' in p.text:
        return Detection(0.7, "JSON list with id/source/observation keys (too large to parse)")
    return Detection(0.0, "not a JSON list of events")


FORMAT = register_format(
    NAME, "OpenHands v0 event stream (JSON list of actions/observations with LiteLLM usage)",
    sniff=_sniff, parse=_parse, profile="openhands-default", raw_joiner=None,
)
parse, sniff = FORMAT.parse, FORMAT.sniff
