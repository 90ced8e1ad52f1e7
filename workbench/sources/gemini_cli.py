"""Gemini CLI chat sessions (``~/.gemini/tmp/<project>/chats/session-*.json``).

One JSON object ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``;
each message ``{id, timestamp, type, content, ...}``:

* ``user`` → MESSAGE user.
* ``gemini`` → one request: REASONING per ``thoughts`` entry (``subject`` + newline +
  ``description``), MESSAGE assistant (``content``, even when empty, so every record has
  an event), then for each ``toolCalls`` entry a TOOL_CALL (``call_id`` = its ``id``,
  ``name``, ``text`` = ``args`` as JSON) followed by its TOOL_RESULT (same id; text = the
  ``functionResponse.response.output``/``error`` of each ``result`` part, JSON of any
  other part; flag ERROR when ``status`` is ``error``/``cancelled``). The results are
  inputs of the next request.
* ``info`` / ``warning`` / ``error`` → SIDE_EFFECT (origin HARNESS; ERROR for ``error``);
  any other type → OPAQUE.

Usage: ``tokens {input, output, cached, thoughts, tool, total}`` on a gemini message is
that request's usage, recorded on its first event. Gemini's ``input``
(``promptTokenCount``) includes the cached tokens, and ``total = input + output + thoughts
+ tool`` (checked on every message of the recorded session, e.g. 5054 + 269 + 1627 =
6950). So: ``usage_input = input - cached + tool`` (``tool`` = tool-use prompt tokens,
prompt-side but outside ``input``; 0 in the fixture), ``usage_cache_read = cached``,
``usage_cache_write = 0`` (Gemini implicit caching has no write), ``usage_output =
output + thoughts`` (thinking tokens are billed as output). The model name of the
gemini messages is the continuity's model, provider ``google``.

Caveat: Gemini CLI appends the tool calls of follow-up model turns to the same gemini
message, so one gemini message may stand for several API calls while carrying one
``tokens`` record; we keep one request per gemini message, as recorded.

Raw: document layout (see :mod:`workbench.sources.lossless`); :func:`roundtrip`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder, is_message_list, open_document
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
from workbench.sources.registration import register_format
from workbench.sources.sniffing import peek
from workbench.sources.values import content_text, dumps, join_parts, parse_ts

NAME = "gemini_cli"
EXPECTED = "a Gemini CLI session object {sessionId, messages: [{type, content, ...}]}"


def _usage(tokens: Any, where: str) -> tuple[int, int, int, int] | None:
    t = opt_dict(tokens, where)
    if t is None:
        return None
    inp = opt_int(t.get("input"), f"{where}.input")
    out = opt_int(t.get("output"), f"{where}.output")
    cached = opt_int(t.get("cached"), f"{where}.cached") or 0
    thoughts = opt_int(t.get("thoughts"), f"{where}.thoughts") or 0
    tool = opt_int(t.get("tool"), f"{where}.tool") or 0
    if inp is None and out is None:
        return None
    return (-1 if inp is None else max(inp - cached, 0) + tool, cached, 0,
            -1 if out is None else out + thoughts)


def _result_text(result: Any, where: str) -> str | None:
    if result is None:
        return None
    if isinstance(result, str):
        return result
    parts = result if isinstance(result, list) else [result]
    return join_parts(parts, where, "a result part {functionResponse: {...}}", _result_part_text)


def _result_part_text(part: dict, where: str) -> str:
    fr = part.get("functionResponse")
    resp = fr.get("response") if isinstance(fr, dict) else None
    if isinstance(resp, dict) and isinstance(resp.get("output"), str):
        return resp["output"]
    if isinstance(resp, dict) and isinstance(resp.get("error"), str):
        return resp["error"]
    if isinstance(part.get("text"), str):
        return part["text"]
    return dumps(part)


def _events(m: Any, where: str, b: Builder, st: dict) -> list[dict[str, Any]]:
    m = want_dict(m, where, "a message object {id, timestamp, type, content}")
    typ = m.get("type")
    if not isinstance(typ, str):
        raise Malformed(f"{where}.type", "is missing or not a string", "a message type (user, gemini, ...)")
    common = dict(ts_ms=parse_ts(m.get("timestamp")), message_id=opt_id(m.get("id"), f"{where}.id"))
    text = content_text(m.get("content"), f"{where}.content")
    if typ == "user":
        return [dict(kind=EventKind.MESSAGE, role=Role.USER, origin=Origin.USER, text=text, **common)]
    if typ == "gemini":
        usage = _usage(m.get("tokens"), f"{where}.tokens")
        thoughts = opt_list(m.get("thoughts"), f"{where}.thoughts") or []
        rtexts = []
        for k, th in enumerate(thoughts):
            if isinstance(th, str):
                rtexts.append((th, -1))
                continue
            th = want_dict(th, f"{where}.thoughts[{k}]", "a thought {subject, description}")
            subj = opt_str(th.get("subject"), f"{where}.thoughts[{k}].subject")
            desc = opt_str(th.get("description"), f"{where}.thoughts[{k}].description")
            rtexts.append(("\n".join(x for x in (subj, desc) if x), parse_ts(th.get("timestamp"))))
        calls = []
        for k, tc in enumerate(opt_list(m.get("toolCalls"), f"{where}.toolCalls") or []):
            w = f"{where}.toolCalls[{k}]"
            tc = want_dict(tc, w, "a tool call {id, name, args, result, status}")
            cid = opt_id(tc.get("id"), f"{w}.id")
            name = opt_str(tc.get("name"), f"{w}.name")
            args = tc.get("args")
            status = tc.get("status")
            calls.append((cid, name, None if args is None else dumps(args),
                          _result_text(tc.get("result"), f"{w}.result"),
                          status in ("error", "cancelled"), parse_ts(tc.get("timestamp"))))
        model = m.get("model")
        if isinstance(model, str) and st.get("model") is None:
            st["model"] = model
        req = b.new_request()
        evs: list[dict[str, Any]] = []
        for rt, ts in rtexts:
            evs.append(dict(kind=EventKind.REASONING, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=rt, request=req, output=True, ts_ms=ts if ts >= 0 else common["ts_ms"],
                            message_id=common["message_id"]))
        evs.append(dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT, text=text,
                        request=req, output=True, **common))
        for k, (cid, name, args, res, err, ts) in enumerate(calls):
            cid = cid or f"{common['message_id']}-call-{k}"
            evs.append(dict(kind=EventKind.TOOL_CALL, role=Role.ASSISTANT, origin=Origin.AGENT,
                            call_id=cid, name=name, text=args, request=req, output=True, **common))
            evs.append(dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL,
                            call_id=cid, name=name, text=res,
                            flags=EventFlag.ERROR if err else 0,
                            ts_ms=ts if ts >= 0 else common["ts_ms"], message_id=common["message_id"]))
        if usage is not None:
            evs[0]["usage"] = usage
        return evs
    if typ in ("info", "warning", "error"):
        return [dict(kind=EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name=typ, text=text,
                     flags=EventFlag.ERROR if typ == "error" else 0, **common)]
    return [dict(kind=EventKind.OPAQUE, name=f"type:{typ}"[:200], **common)]


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    doc, b, lay = open_document(ctx, EXPECTED, lambda d: isinstance(d, dict) and is_message_list(d),
                                "not an object with a 'messages' list")
    msgs = lay.take_messages()
    lay.emit(b)
    st: dict[str, Any] = {}
    b.record_elements(msgs, "messages", lambda m, where: _events(m, where, b, st))
    rows = b.finish()
    sid = doc.get("sessionId")
    meta = pick(doc, projectHash=str, startTime=str, lastUpdated=str)
    return [ParsedContinuity(continuity_id=sid if isinstance(sid, str) and sid else ctx.path.stem,
                             source_format=NAME, source_file=str(ctx.path), rows=rows,
                             model=st.get("model"), provider="google", meta=meta)]



def _sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    if p.doc_ok:
        d = p.doc
        if not (isinstance(d, dict) and isinstance(d.get("messages"), list)):
            return Detection(0.0, "not a JSON object with a 'messages' list")
        msgs = d["messages"]
        typed = all(isinstance(m, dict) and isinstance(m.get("type"), str) for m in msgs[:50])
        gem = any(isinstance(m, dict) and m.get("type") == "gemini" for m in msgs)
        keys = [k for k in ("sessionId", "projectHash", "startTime") if k in d]
        if typed and (keys or gem):
            score = 0.95 if "sessionId" in d and (gem or not msgs) else 0.85 if gem else 0.6
            return Detection(score, f"JSON object with keys {', '.join(keys + ['messages'])}"
                             + (" and type 'gemini' messages" if gem else ""))
        return Detection(0.0, "messages are not Gemini CLI {type, content} records")
    if p.starts == "{" and '"sessionId"' in p.text and '"messages"' in p.text and (
            '"type": "gemini"' in p.text or '"type":"gemini"' in p.text):
        return Detection(0.75, "JSON object with sessionId and gemini messages (too large to parse)")
    return Detection(0.0, "not a Gemini CLI session")


FORMAT = register_format(
    NAME, "Gemini CLI chat session JSON (messages with tokens, thoughts, toolCalls)",
    sniff=_sniff, parse=_parse,
    profile="as-recorded",  # no preset mirrors Gemini CLI's chat compression
    raw_joiner=None,
)
parse, sniff = FORMAT.parse, FORMAT.sniff
