"""OpenHands software-agent-sdk (v1) logs: the event stream and the LLM call log.

**Event stream** (``events.jsonl``, one event per line, ``kind`` names its type):

* ``SystemPromptEvent`` → MESSAGE system (``system_prompt.text``).
* ``MessageEvent`` → MESSAGE (``llm_message.role``/``content``); from the agent it is an
  output (REASONING first when it carries ``reasoning_content``).
* ``ActionEvent`` → REASONING (``reasoning_content``, else ``thinking_blocks``), MESSAGE
  assistant (the ``thought`` text, when non-empty), TOOL_CALL (``call_id`` =
  ``tool_call_id``, ``name`` = ``tool_name``, ``text`` = ``tool_call.arguments``).
* ``ObservationEvent`` → TOOL_RESULT (text parts of ``observation.content``; ERROR when
  ``observation.is_error``); ``AgentErrorEvent`` / ``UserRejectObservation`` →
  TOOL_RESULT flagged ERROR.
* ``Condensation`` → COMPACTION (trigger AUTO) + SUMMARY when it has a ``summary``;
  ``CondensationSummaryEvent`` → SUMMARY; ``CondensationRequest`` → SIDE_EFFECT.
* ``ConversationStateUpdateEvent`` with ``key: "stats"`` → USAGE (below); other keys
  (``execution_status``…) and ``PauseEvent`` etc. → SIDE_EFFECT; unknown kinds → OPAQUE.

Usage. The SDK writes no per-response usage in events; ``stats`` updates carry the
*accumulated* ``usage_to_metrics.<usage id>.accumulated_token_usage`` (``prompt_tokens``,
``completion_tokens``, ``cache_read_tokens``, ``cache_write_tokens``). Every stats update
whose accumulated counters changed closes one LLM call: its USAGE event carries the
difference to the previous update of the same usage id (``prompt_tokens`` is LiteLLM's,
which includes cached tokens, so ``usage_input = Δprompt - Δcache_read - Δcache_write``).
``per_turn_token`` is prompt + completion of the latest call only, so ``per_turn_token =
Δprompt + Δcompletion`` confirms one call per update (true of every update in
events.jsonl); an update where it differs spans several calls: it is still one USAGE
event, but the continuity's meta then says the usage is not per request
(``calibration_not_meaningful``, ``stats_updates_spanning_calls``) and calibration skips it.
Such a USAGE event opens a request; the agent outputs that follow it (same
``llm_response_id``), before any new input, are that request's outputs. A change of
another usage id (the ``condenser`` LLM) is a request of its own (origin BACKGROUND),
numbered before the agent's call of the same update. A
``llm_response_id`` not preceded by a stats update is a request without usage. The
``condenser`` metrics entry in the fixture never changes (all zeros): it is usage
bookkeeping of the condenser LLM, not a compaction, so it yields no event of its own.
Final accumulated metrics go to ``meta["model_stats"]``; the agent LLM's ``model_name``
is the continuity's model. The recorded events.jsonl is a fragment: it starts
mid-conversation (no SystemPromptEvent, no user message; two of its four calls have no
output event in the file), so its usage cannot calibrate a tokenizer (see
:mod:`workbench.sources.calibrate`: the counted context is not what was sent).

**LLM call log** (``<model>-<timestamp>.json``: ``messages``, ``tools``, ``kwargs``,
``context_window``, ``response``, ``cost``, ``timestamp``, ``latency_sec``): one request.
The request ``messages`` are its inputs (assistant messages in there are history, not new
requests); ``response.choices[0].message`` is the output of request 0 (REASONING /
MESSAGE / TOOL_CALLs) with ``response.usage`` on its first event; ``context_window`` goes
on the continuity, ``cost`` and ``latency_sec`` to ``meta``.

Raw: events.jsonl keeps each line's text on its first event (non-null raws joined by
``"\\n"`` == the non-blank lines); the call log uses the document layout of
:mod:`workbench.sources.lossless` (messages array and the response value taken
out). :func:`roundtrip` handles both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder
from workbench.sources.calibrate import NOT_MEANINGFUL
from workbench.sources.checks import (
    Malformed,
    opt_dict,
    opt_id,
    opt_int,
    opt_list,
    opt_str,
    pick,
    want_dict,
)
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.lossless import start_document
from workbench.sources.openai_style import (
    MessageState,
    call_event,
    message_events,
    parse_tool_calls,
)
from workbench.sources.registration import register_format
from workbench.sources.sniffing import peek
from workbench.sources.values import content_text, dumps, litellm_usage, parse_ts

NAME = "openhands_sdk"
EXPECTED = "an OpenHands SDK event (a JSON object with a string 'kind')"
EXPECTED_LOG = "an OpenHands LLM call log {messages, response, ...}"
SDK_KINDS = frozenset({
    "MessageEvent", "ActionEvent", "ObservationEvent", "SystemPromptEvent", "Condensation",
    "CondensationRequest", "CondensationSummaryEvent", "ConversationStateUpdateEvent",
    "AgentErrorEvent", "UserRejectObservation", "PauseEvent", "ConversationErrorEvent",
    "LLMCompletionLogEvent", "TokenEvent", "HookExecutionEvent",
})
_ORIGIN = {"user": Origin.USER, "agent": Origin.AGENT, "environment": Origin.HARNESS}
_COUNTERS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens")


class _State:
    def __init__(self) -> None:
        self.acc: dict[str, tuple[int, ...]] = {}  # usage id -> last accumulated counters
        self.metrics: dict[str, Any] = {}
        self.model: str | None = None
        self.context_window = -1
        self.pending_req: int | None = None  # opened by a stats update, awaiting outputs
        self.req_of_response: dict[str, int] = {}
        self.cur_req: int | None = None  # request of the latest outputs (until an input)
        self.multi_call_updates = 0  # stats updates whose delta spans several LLM calls


def _output_request(b: Builder, st: _State, rid: str | None) -> int:
    if rid is not None and rid in st.req_of_response:
        return st.req_of_response[rid]
    if st.pending_req is not None:
        req, st.pending_req = st.pending_req, None
    elif rid is None and st.cur_req is not None:
        req = st.cur_req
    else:
        req = b.new_request()
    if rid is not None:
        st.req_of_response[rid] = req
    st.cur_req = req
    return req


def _input_seen(st: _State) -> None:
    st.pending_req = None
    st.cur_req = None


def _stats_events(value: Any, where: str, b: Builder, st: _State, common: dict) -> list[dict]:
    value = opt_dict(value, f"{where}.value") or {}
    metrics = value.get("usage_to_metrics", value.get("service_to_metrics"))
    metrics = opt_dict(metrics, f"{where}.value.usage_to_metrics") or {}
    deltas = []
    for uid, m in metrics.items():
        w = f"{where}.value.usage_to_metrics.{uid}"
        m = want_dict(m, w, "a metrics object")
        acc = opt_dict(m.get("accumulated_token_usage"), f"{w}.accumulated_token_usage")
        if acc is None:
            continue
        cur = tuple(opt_int(acc.get(k), f"{w}.accumulated_token_usage.{k}") or 0 for k in _COUNTERS)
        cw = opt_int(acc.get("context_window"), f"{w}.accumulated_token_usage.context_window")
        last_call = acc.get("per_turn_token")  # prompt + completion of the latest call only
        prev = st.acc.get(uid, (0, 0, 0, 0))
        d = tuple(c - p for c, p in zip(cur, prev, strict=True))
        if any(x < 0 for x in d):  # counters were reset: this update starts from zero
            d = cur
        if (isinstance(last_call, int) and not isinstance(last_call, bool) and (d[0] or d[1])
                and last_call != d[0] + d[1]):
            st.multi_call_updates += 1  # the delta covers more than the latest call
        deltas.append((uid, m, cur, d, cw))
    evs: list[dict] = []
    # a background LLM (condenser) runs before the agent's call within one step: number it first
    deltas.sort(key=lambda x: x[0] in ("default", "agent"))
    for uid, m, cur, d, cw in deltas:
        st.acc[uid] = cur
        st.metrics[uid] = m
        agent = uid in ("default", "agent")
        if agent and isinstance(m.get("model_name"), str):
            st.model = m["model_name"]
        if agent and cw:
            st.context_window = cw
        if d[0] == 0 and d[1] == 0:
            continue
        dp, dc, dr, dw = d
        usage = (max(dp - dr - dw, 0), dr, dw, dc)
        req = b.new_request()  # a background LLM (condenser) call is a request too
        if agent:
            st.pending_req, st.cur_req = req, None
        evs.append(dict(kind=EventKind.USAGE, origin=Origin.AGENT if agent else Origin.BACKGROUND,
                        name=f"stats:{uid}"[:200], usage=usage, request=req, **common))
    if not evs:
        evs.append(dict(kind=EventKind.USAGE, origin=Origin.HARNESS, name="stats", **common))
    return evs


def _parts_text(v: Any, where: str) -> str | None:
    if isinstance(v, dict) and "content" in v and "text" not in v:
        return content_text(v.get("content"), f"{where}.content")
    if isinstance(v, dict) and isinstance(v.get("text"), str):
        return v["text"]
    return content_text(v, where)


def _event_events(e: Any, where: str, b: Builder, st: _State) -> list[dict[str, Any]]:
    e = want_dict(e, where, EXPECTED)
    kind = e.get("kind")
    if not isinstance(kind, str):
        raise Malformed(f"{where}.kind", "is missing or not a string", "an event kind string")
    source = e.get("source")
    origin = _ORIGIN.get(source, Origin.UNKNOWN) if isinstance(source, str) else Origin.UNKNOWN
    common = dict(ts_ms=parse_ts(e.get("timestamp")), message_id=opt_id(e.get("id"), f"{where}.id"))
    if kind == "SystemPromptEvent":
        text = _parts_text(e.get("system_prompt"), f"{where}.system_prompt")
        _input_seen(st)
        return [dict(kind=EventKind.MESSAGE, role=Role.SYSTEM, origin=Origin.SYSTEM, text=text, **common)]
    if kind == "MessageEvent":
        msg = want_dict(e.get("llm_message"), f"{where}.llm_message", "a message {role, content}")
        role = opt_str(msg.get("role"), f"{where}.llm_message.role")
        text = content_text(msg.get("content"), f"{where}.llm_message.content")
        reasoning = opt_str(msg.get("reasoning_content"), f"{where}.llm_message.reasoning_content")
        calls = parse_tool_calls(msg.get("tool_calls"), f"{where}.llm_message.tool_calls")
        if role == "assistant" or source == "agent":
            rid = opt_id(e.get("llm_response_id"), f"{where}.llm_response_id")
            req = _output_request(b, st, rid)
            evs: list[dict[str, Any]] = []
            if reasoning:
                evs.append(dict(kind=EventKind.REASONING, role=Role.ASSISTANT, origin=Origin.AGENT,
                                text=reasoning, request=req, output=True, **common))
            evs.append(dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=text, request=req, output=True, **common))
            evs += [call_event(cid or f"{e.get('id')}-{k}", n, a, req, True, **common)
                    for k, (cid, n, a) in enumerate(calls)]
            return evs
        _input_seen(st)
        r = {"system": Role.SYSTEM, "developer": Role.DEVELOPER}.get(role or "", Role.USER)
        return [dict(kind=EventKind.MESSAGE, role=r, origin=origin if r == Role.USER else Origin.SYSTEM,
                     text=text, **common)]
    if kind == "ActionEvent":
        rid = opt_id(e.get("llm_response_id"), f"{where}.llm_response_id")
        thought = content_text(e.get("thought"), f"{where}.thought")
        reasoning = opt_str(e.get("reasoning_content"), f"{where}.reasoning_content")
        if not reasoning:
            blocks = opt_list(e.get("thinking_blocks"), f"{where}.thinking_blocks") or []
            texts = [blk.get("thinking") for blk in blocks if isinstance(blk, dict)]
            reasoning = "\n".join(t for t in texts if isinstance(t, str)) or None
        tc = opt_dict(e.get("tool_call"), f"{where}.tool_call")
        cid = opt_id(e.get("tool_call_id"), f"{where}.tool_call_id")
        name = opt_str(e.get("tool_name"), f"{where}.tool_name")
        args = None
        if tc is not None:
            args = tc.get("arguments")
            if args is not None and not isinstance(args, str):
                args = dumps(args)
            cid = cid or opt_id(tc.get("id"), f"{where}.tool_call.id")
        if args is None and e.get("action") is not None:
            args = dumps(e.get("action"))
        req = _output_request(b, st, rid)
        evs = []
        if reasoning:
            evs.append(dict(kind=EventKind.REASONING, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=reasoning, request=req, output=True, **common))
        if thought:
            evs.append(dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=thought, request=req, output=True, **common))
        evs.append(call_event(cid or f"ohsdk-{e.get('id')}", name, args, req, True, **common))
        return evs
    if kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
        cid = opt_id(e.get("tool_call_id"), f"{where}.tool_call_id")
        name = opt_str(e.get("tool_name"), f"{where}.tool_name")
        flags = 0
        if kind == "ObservationEvent":
            ob = opt_dict(e.get("observation"), f"{where}.observation") or {}
            text = content_text(ob.get("content"), f"{where}.observation.content")
            if ob.get("is_error") is True:
                flags = EventFlag.ERROR
        elif kind == "AgentErrorEvent":
            text = opt_str(e.get("error"), f"{where}.error")
            flags = EventFlag.ERROR
        else:
            text = opt_str(e.get("rejection_reason"), f"{where}.rejection_reason")
            flags = EventFlag.ERROR
        _input_seen(st)
        return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL, call_id=cid,
                     name=name, text=text, flags=flags, **common)]
    if kind == "Condensation":
        summary = opt_str(e.get("summary"), f"{where}.summary")
        forgotten = opt_list(e.get("forgotten_event_ids"), f"{where}.forgotten_event_ids")
        evs = [dict(kind=EventKind.COMPACTION, origin=Origin.BACKGROUND, name="condensation",
                    compact_trigger=CompactTrigger.AUTO,
                    text=None if forgotten is None else f"forgot {len(forgotten)} events", **common)]
        if summary:
            evs.append(dict(kind=EventKind.SUMMARY, role=Role.USER, origin=Origin.BACKGROUND,
                            text=summary, **common))
        return evs
    if kind == "CondensationSummaryEvent":
        return [dict(kind=EventKind.SUMMARY, role=Role.USER, origin=Origin.BACKGROUND,
                     text=opt_str(e.get("summary"), f"{where}.summary"), **common)]
    if kind == "ConversationStateUpdateEvent":
        if e.get("key") == "stats":
            return _stats_events(e.get("value"), where, b, st, common)
        key = e.get("key")
        return [dict(kind=EventKind.SIDE_EFFECT, origin=origin,
                     name=f"state:{key}"[:200] if isinstance(key, str) else "state", **common)]
    if kind in SDK_KINDS:
        return [dict(kind=EventKind.SIDE_EFFECT, origin=origin, name=kind, **common)]
    return [dict(kind=EventKind.OPAQUE, name=kind[:200], **common)]


def _parse_events(ctx: ParseContext) -> ParsedContinuity:
    b = Builder(ctx)
    st = _State()
    b.record_lines(lambda e, where: _event_events(e, where, b, st))
    rows = b.finish()
    stem = ctx.path.stem
    cid = ctx.path.parent.name if stem == "events" and ctx.path.parent.name else stem
    meta: dict[str, Any] = {"container": "events"}
    if st.metrics:
        meta["model_stats"] = st.metrics
    if st.multi_call_updates:
        meta["stats_updates_spanning_calls"] = st.multi_call_updates
        meta[NOT_MEANINGFUL] = (f"{st.multi_call_updates} stats update(s) span several LLM calls "
                                "(per_turn_token != delta prompt + completion tokens): the recorded "
                                "usage is not per request")
    return ParsedContinuity(continuity_id=cid, source_format=NAME, source_file=str(ctx.path),
                            rows=rows, model=st.model, context_window=st.context_window, meta=meta)


def _parse_call_log(ctx: ParseContext, doc: dict) -> ParsedContinuity:
    b = Builder(ctx)
    msgs = doc.get("messages")
    if not isinstance(msgs, list):
        raise SourceError("'messages' is not a list", path=str(ctx.path), expected=EXPECTED_LOG)
    lay = start_document(doc)
    lay.take_array("messages")
    resp = doc.get("response")
    take_resp = isinstance(resp, dict)
    if take_resp:
        lay.take_value("response")
    lay.emit(b)
    ms = MessageState()
    b.record_elements(msgs, "messages",
                      lambda m, where: message_events(m, where, b, ms, assistant_is_request=False))
    model = None
    if take_resp and b.record(lambda r, _where: _response_events(r, b, ms), resp, "response", dumps(resp)):
        model = resp.get("model") if isinstance(resp.get("model"), str) else None
    rows = b.finish()
    number = (int, float)
    meta: dict[str, Any] = {"container": "llm_call_log",
                            **pick(doc, cost=number, latency_sec=number, timestamp=number)}
    cw = doc.get("context_window")
    cw = cw if isinstance(cw, int) and not isinstance(cw, bool) and cw > 0 else -1
    return ParsedContinuity(continuity_id=ctx.path.stem, source_format=NAME,
                            source_file=str(ctx.path), rows=rows, model=model,
                            context_window=cw, meta=meta)


def _response_events(resp: dict, b: Builder, ms: MessageState) -> list[dict[str, Any]]:
    choices = opt_list(resp.get("choices"), "response.choices") or []
    msg: dict = {"role": "assistant", "content": None}
    if choices:
        ch = want_dict(choices[0], "response.choices[0]", "a choice {message}")
        msg = want_dict(ch.get("message"), "response.choices[0].message", "an assistant message")
    usage = litellm_usage(resp.get("usage"), "response.usage")
    ts = parse_ts(resp.get("created"))
    evs = message_events({**msg, "role": "assistant"}, "response.choices[0].message", b, ms)
    for ev in evs:
        ev["ts_ms"] = ts
        ev["message_id"] = resp.get("id") if isinstance(resp.get("id"), str) else None
    if usage is not None:
        evs[0]["usage"] = usage
    return evs


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    import orjson

    data = ctx.read_bytes()
    first = data.lstrip()[:1]
    if first == b"[":
        raise SourceError("a JSON list is not an OpenHands SDK log", path=str(ctx.path),
                          expected=f"{EXPECTED} per line, or {EXPECTED_LOG}")
    if first == b"{":
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            obj = None  # JSONL (or broken): read line by line
        if isinstance(obj, dict) and "messages" in obj and "kind" not in obj:
            return [_parse_call_log(ctx, obj)]
    return [_parse_events(ctx)]



def _sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    if p.doc_ok:
        d = p.doc
        if isinstance(d, dict) and isinstance(d.get("messages"), list) and isinstance(d.get("response"), dict):
            extra = [k for k in ("context_window", "cost", "latency_sec", "kwargs", "tools") if k in d]
            ok = isinstance(d["response"].get("choices"), list)
            return Detection(0.9 if ok and extra else 0.7,
                             f"LLM call log: JSON object with messages, response{', ' if extra else ''}{', '.join(extra)}")
        if isinstance(d, dict) and isinstance(d.get("kind"), str) and d["kind"] in SDK_KINDS:
            return Detection(0.9, f"single OpenHands SDK event of kind {d['kind']}")
        return Detection(0.0, "not an OpenHands SDK event stream or LLM call log")
    if p.first_ok and isinstance(p.first, dict):
        f = p.first
        k = f.get("kind")
        if isinstance(k, str) and k in SDK_KINDS and "id" in f and "timestamp" in f:
            return Detection(0.95, f"JSONL of OpenHands SDK events (first kind {k})")
        if isinstance(k, str) and "source" in f and "timestamp" in f:
            return Detection(0.6, f"JSONL events with kind/source/timestamp (kind {k[:40]})")
        return Detection(0.0, "JSONL without OpenHands SDK 'kind'")
    return Detection(0.0, "not JSON")


FORMAT = register_format(
    NAME, "OpenHands SDK (v1): events.jsonl event stream, or an LLM call log JSON",
    sniff=_sniff, parse=_parse, profile="openhands-sdk",
    raw_joiner="\n",  # events.jsonl; the LLM call log uses the document layout (roundtrip())
)
parse, sniff = FORMAT.parse, FORMAT.sniff
