"""OpenAI Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. Every non-blank line becomes one or
more events (the ``raw`` line is on the first), never zero.

Mapping:

* ``session_meta`` -> META (role system; text = ``base_instructions.text``, the system
  prompt; ``model_provider``, ``cli_version``, ``originator`` go to the continuity meta).
* ``turn_context`` -> META (no text; its ``model`` and, when present,
  ``model_context_window`` go to the continuity).
* ``response_item``: ``message`` -> MESSAGE (role user/assistant/developer/system; content
  parts ``input_text``/``output_text`` joined with newlines, images as placeholders; user
  messages that Codex itself injects — ``<environment_context>``, ``# AGENTS.md
  instructions``, ``<user_instructions>`` — are flagged META); ``reasoning`` -> REASONING
  (text = the summary text, or the readable ``content`` when there is no summary; the
  encrypted blob is not text, only its length is summed into the continuity meta);
  ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` -> TOOL_CALL;
  ``function_call_output`` / ``custom_tool_call_output`` -> TOOL_RESULT;
  ``web_search_call`` -> TOOL_CALL that is *self-contained*: the search runs on the server
  inside the same model call and the rollout never holds a result item, so the event is
  paired with itself (``pair_seq == seq``) instead of being flagged UNPAIRED; its
  ``call_id`` is the item id, or the ``call_id`` of the ``web_search_end`` event Codex
  writes just before it. ``compaction`` items (remote, encrypted compaction) -> SUMMARY
  without text. Anything else -> OPAQUE.
* ``event_msg``: ``token_count`` with ``info`` -> USAGE (see below); every other event
  message (``user_message``, ``agent_message``, ``agent_reasoning``, ``exec_command_end``,
  ``task_started``...) -> SIDE_EFFECT, because it duplicates a response item — except
  ``user_message`` in rollouts that have *no* ``response_item`` user message at all
  (Codex Desktop writes the user's words only there): then it is the user MESSAGE.
* ``compacted`` -> COMPACTION (trigger AUTO unless the payload says ``manual``) followed by
  a SUMMARY whose text is ``payload.message`` (or, when empty, the text of
  ``replacement_history``).

Requests and usage. Every ``token_count`` whose ``info`` is not null closes one model
request; the outputs (reasoning, assistant messages, tool calls) written since the
previous one are that request's outputs, flagged OUTPUT. The USAGE event carries
``info.last_token_usage`` in the canonical convention: ``usage_input = input_tokens -
cached_input_tokens``, ``usage_cache_read = cached_input_tokens``, ``usage_cache_write =
0`` (OpenAI reports no cache writes), ``usage_output = output_tokens``. Reasoning tokens
are already inside ``output_tokens`` (checked: ``total_tokens = input_tokens +
output_tokens`` on every record, with ``reasoning_output_tokens`` > 0). A token_count
repeating the previous ``total_token_usage`` with no output in between is a duplicate:
kept as USAGE named ``token_count_duplicate``, without usage, not a request.
A token_count with nothing produced since the previous one, next to a compaction (a
``compacted`` record or a ``compaction`` item after the previous token_count or before the
next output) and with its own ``last_token_usage`` is the compaction request's usage: Codex
≥ 0.154 writes one and leaves it out of ``total_token_usage`` (openai/codex#47003). It is
kept as USAGE named ``token_count_compaction`` of origin BACKGROUND, with its usage, not a
request of the conversation; the continuity meta lists it under ``compaction_calls``
(:mod:`workbench.sources.compaction_calls`).
Rollouts without any token_count (Codex Desktop) have no usage; there, a request is one
run of consecutive model outputs (a run ends at the next input: user/developer message
or tool result). Inputs and side effects carry the next request (-1 if none follows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.base import Detection, EventRows, ParseContext, ParsedContinuity, iter_jsonl
from workbench.sources.builder import guard_record
from workbench.sources.checks import Malformed, opt_int, str_or_none
from workbench.sources.compaction_calls import COMPACTION_CALLS
from workbench.sources.lossless import add_bom_event
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.registration import register_format
from workbench.sources.sniffing import sniff_jsonl_records
from workbench.sources.values import dumps, flatten_content, parse_ts

NAME = "codex"
EXPECTED = "a Codex rollout record ({timestamp, type, payload})"
TOP_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
# legacy (2025 spring) rollouts: bare response items without the payload wrapper
LEGACY_ITEM_TYPES = frozenset({
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call",
})
INJECTED_PREFIXES = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>",
                     "<user_shell_command>", "<turn_aborted>")
_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "developer": Role.DEVELOPER,
          "system": Role.SYSTEM, "tool": Role.TOOL}
_ORIGINS = {Role.USER: Origin.USER, Role.ASSISTANT: Origin.AGENT, Role.DEVELOPER: Origin.SYSTEM,
            Role.SYSTEM: Origin.SYSTEM, Role.TOOL: Origin.TOOL}

F_OUT = int(EventFlag.OUTPUT)
IN, OUT, OTHER = 0, 1, 2  # how an event relates to requests (input, output, neither)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else dumps(content)
    parts = []
    for c in content:
        if isinstance(c, dict):
            t = c.get("type")
            if isinstance(c.get("text"), str):
                parts.append(c["text"])
            elif t in ("input_image", "image"):
                url = c.get("image_url")
                parts.append(f"[image: {len(url)} chars]" if isinstance(url, str) else "[image]")
            elif isinstance(c.get("refusal"), str):
                parts.append(c["refusal"])
            else:
                parts.append(dumps(c))
        elif isinstance(c, str):
            parts.append(c)
        else:
            parts.append(dumps(c))
    return "\n".join(parts)


def _output_text(output: Any) -> tuple[str, bool]:
    """function_call_output.output -> (text, is_error)."""
    if isinstance(output, str):
        return output, False
    if isinstance(output, dict):
        err = output.get("success") is False
        for key in ("content", "output", "text"):
            v = output.get(key)
            if isinstance(v, str):
                return v, err
            if isinstance(v, list):
                return _content_text(v), err
        return dumps(output), err
    if isinstance(output, list):
        return _content_text(output), False
    return flatten_content(output), False


def _usage(last: Any) -> tuple[int, int, int, int]:
    if not isinstance(last, dict):
        raise Malformed("", "token_count info.last_token_usage is not an object",
                        "info.last_token_usage with input_tokens/cached_input_tokens/output_tokens")
    inp, cached, out = (
        opt_int(last.get(key), f"last_token_usage.{key}", "token counts as non-negative integers") or 0
        for key in ("input_tokens", "cached_input_tokens", "output_tokens"))
    return max(0, inp - cached), min(cached, inp), 0, out


class _Parser:
    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.rows = EventRows()
        self.meta: dict[str, Any] = {"encrypted_reasoning_chars": 0}
        self.session_id: str | None = None
        self.provider: str | None = None
        self.models: dict[str, int] = {}
        self.window = -1
        self.pending_ws_id: str | None = None
        self.self_paired: list[int] = []

    # each returns a list of (spec, relation) ------------------------------------------
    def map(self, rec: Any, user_msg_fallback: bool) -> list[tuple[dict, int]]:
        if not isinstance(rec, dict):
            raise Malformed("", f"line is a JSON {type(rec).__name__}, not an object", EXPECTED)
        rtype = rec.get("type")
        if not isinstance(rtype, str):
            raise Malformed("", "record has no string 'type'", EXPECTED)
        ts = parse_ts(rec.get("timestamp"))
        if "payload" not in rec:
            if rtype in LEGACY_ITEM_TYPES:
                return self.item(rec, ts)
            if rtype in TOP_TYPES:
                raise Malformed("", f"'{rtype}' record without payload", f"a '{rtype}' record with a payload object")
            if "instructions" in rec and "id" in rec:  # legacy session header
                self.session_id = self.session_id or str_or_none(rec.get("id"))
                return [({"kind": EventKind.META, "role": Role.SYSTEM, "origin": Origin.HARNESS,
                          "ts_ms": ts, "name": "session_header", "text": str_or_none(rec.get("instructions"))}, OTHER)]
            return [({"kind": EventKind.OPAQUE, "ts_ms": ts, "name": rtype}, OTHER)]
        p = rec["payload"]
        if rtype not in TOP_TYPES:
            return [({"kind": EventKind.OPAQUE, "ts_ms": ts, "name": rtype}, OTHER)]
        if not isinstance(p, dict):
            raise Malformed("", f"'{rtype}' payload is {type(p).__name__}",
                            f"a '{rtype}' record with a payload object")
        if rtype == "response_item":
            return self.item(p, ts)
        if rtype == "event_msg":
            return self.event(p, ts, user_msg_fallback)
        if rtype == "session_meta":
            self.session_id = self.session_id or str_or_none(p.get("id"))
            self.provider = self.provider or str_or_none(p.get("model_provider"))
            for k in ("cli_version", "originator", "source", "model_provider"):
                if isinstance(p.get(k), str):
                    self.meta.setdefault(k, p[k])
            bi = p.get("base_instructions")
            text = str_or_none(bi.get("text")) if isinstance(bi, dict) else str_or_none(bi)
            if text is None:
                text = str_or_none(p.get("instructions"))
            return [({"kind": EventKind.META, "role": Role.SYSTEM, "origin": Origin.HARNESS, "ts_ms": ts,
                      "message_id": str_or_none(p.get("id")), "name": "session_meta", "text": text}, OTHER)]
        if rtype == "turn_context":
            m = str_or_none(p.get("model"))
            if m:
                self.models[m] = self.models.get(m, 0) + 1
            self._window(p.get("model_context_window"))
            return [({"kind": EventKind.META, "origin": Origin.HARNESS, "ts_ms": ts,
                      "message_id": str_or_none(p.get("turn_id")), "name": "turn_context"}, OTHER)]
        # compacted
        trig = p.get("trigger")
        trigger = CompactTrigger.MANUAL if trig == "manual" else CompactTrigger.AUTO
        text = str_or_none(p.get("message")) or ""
        if not text and isinstance(p.get("replacement_history"), list):
            text = "\n".join(_content_text(it.get("content")) for it in p["replacement_history"]
                             if isinstance(it, dict))
        return [({"kind": EventKind.COMPACTION, "origin": Origin.HARNESS, "ts_ms": ts, "name": "compacted",
                  "compact_trigger": trigger}, OTHER),
                ({"kind": EventKind.SUMMARY, "role": Role.USER, "origin": Origin.BACKGROUND, "ts_ms": ts,
                  "name": "compacted_summary", "text": text}, IN)]

    def _window(self, v: Any) -> None:
        if isinstance(v, int) and not isinstance(v, bool) and 0 < v < 1 << 40:
            self.window = v

    def item(self, p: dict, ts: int) -> list[tuple[dict, int]]:
        t = p.get("type")
        mid = str_or_none(p.get("id"))
        if t == "message":
            role = _ROLES.get(p.get("role"), Role.NONE)
            text = _content_text(p.get("content"))
            out = role == Role.ASSISTANT
            flags = F_OUT if out else 0
            origin = _ORIGINS.get(role, Origin.UNKNOWN)
            if role == Role.USER and text.lstrip().startswith(INJECTED_PREFIXES):
                flags |= int(EventFlag.META)
                origin = Origin.HARNESS
            return [({"kind": EventKind.MESSAGE, "role": role, "origin": origin, "flags": flags, "ts_ms": ts,
                      "message_id": mid, "text": text}, OUT if out else IN)]
        if t == "reasoning":
            summ = p.get("summary")
            text = _content_text(summ) if isinstance(summ, list) and summ else ""
            if not text and p.get("content") is not None:
                text = _content_text(p.get("content"))
            enc = p.get("encrypted_content")
            if isinstance(enc, str):
                self.meta["encrypted_reasoning_chars"] += len(enc)
            return [({"kind": EventKind.REASONING, "role": Role.ASSISTANT, "origin": Origin.AGENT, "flags": F_OUT,
                      "ts_ms": ts, "message_id": mid, "name": "reasoning", "text": text}, OUT)]
        if t in ("function_call", "custom_tool_call"):
            args = p.get("arguments") if t == "function_call" else p.get("input")
            return [({"kind": EventKind.TOOL_CALL, "role": Role.ASSISTANT, "origin": Origin.AGENT,
                      "flags": F_OUT, "ts_ms": ts, "message_id": mid, "call_id": str_or_none(p.get("call_id")),
                      "name": str_or_none(p.get("name")), "text": args if isinstance(args, str) else dumps(args)}, OUT)]
        if t == "local_shell_call":
            return [({"kind": EventKind.TOOL_CALL, "role": Role.ASSISTANT, "origin": Origin.AGENT,
                      "flags": F_OUT, "ts_ms": ts, "message_id": mid,
                      "call_id": str_or_none(p.get("call_id")) or mid, "name": "local_shell",
                      "text": dumps(p.get("action"))}, OUT)]
        if t in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            text, err = _output_text(p.get("output"))
            return [({"kind": EventKind.TOOL_RESULT, "role": Role.TOOL, "origin": Origin.TOOL,
                      "flags": int(EventFlag.ERROR) if err else 0, "ts_ms": ts,
                      "call_id": str_or_none(p.get("call_id")), "text": text}, IN)]
        if t == "web_search_call":
            cid = mid or self.pending_ws_id
            self.pending_ws_id = None
            return [({"kind": EventKind.TOOL_CALL, "role": Role.ASSISTANT, "origin": Origin.AGENT,
                      "flags": F_OUT, "ts_ms": ts, "message_id": mid, "call_id": cid, "name": "web_search",
                      "text": dumps(p.get("action")), "_self_paired": True}, OUT)]
        if t in ("compaction", "compaction_summary"):
            enc = p.get("encrypted_content")
            return [({"kind": EventKind.SUMMARY, "role": Role.ASSISTANT, "origin": Origin.BACKGROUND,
                      "ts_ms": ts, "message_id": mid,
                      "name": f"remote_compaction({len(enc) if isinstance(enc, str) else 0} chars encrypted)",
                      "text": None}, IN)]
        return [({"kind": EventKind.OPAQUE, "ts_ms": ts, "message_id": mid,
                  "name": f"response_item/{t}" if isinstance(t, str) else "response_item"}, OTHER)]

    def event(self, p: dict, ts: int, user_msg_fallback: bool) -> list[tuple[dict, int]]:
        t = p.get("type")
        name = t if isinstance(t, str) else "event_msg"
        if t == "token_count":
            info = p.get("info")
            if isinstance(info, dict):
                self._window(info.get("model_context_window"))
                usage = _usage(info.get("last_token_usage"))
                total = info.get("total_token_usage")
                return [({"kind": EventKind.USAGE, "origin": Origin.HARNESS, "ts_ms": ts, "name": "token_count",
                          "_usage": usage, "_total": dumps(total),
                          "_last": dumps(info.get("last_token_usage"))}, OTHER)]
            return [({"kind": EventKind.SIDE_EFFECT, "origin": Origin.HARNESS, "ts_ms": ts,
                      "name": "token_count"}, OTHER)]
        if t in ("task_started", "turn_started"):
            self._window(p.get("model_context_window"))
        if t == "web_search_end":
            self.pending_ws_id = str_or_none(p.get("call_id"))
        text = str_or_none(p.get("message"))
        if t == "agent_reasoning":
            text = str_or_none(p.get("text"))
        if t == "user_message" and user_msg_fallback:
            return [({"kind": EventKind.MESSAGE, "role": Role.USER, "origin": Origin.USER, "ts_ms": ts,
                      "text": text or ""}, IN)]
        return [({"kind": EventKind.SIDE_EFFECT, "origin": Origin.HARNESS, "ts_ms": ts, "name": name,
                  "call_id": None, "text": text}, OTHER)]


class _DeferredRows:
    """Stands in for EventRows while reading, so skipped lines keep their place."""

    def __init__(self, items: list):
        self.items = items

    def add(self, kind, **kw) -> int:
        self.items.append((None, None, (kind, kw)))
        return -1


def _has_user_item(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    if rec.get("type") == "response_item":
        p = rec.get("payload")
        return isinstance(p, dict) and p.get("type") == "message" and p.get("role") == "user"
    return rec.get("type") == "message" and rec.get("role") == "user" and "payload" not in rec


def _has_token_info(rec: Any) -> bool:
    if not isinstance(rec, dict) or rec.get("type") != "event_msg":
        return False
    p = rec.get("payload")
    return isinstance(p, dict) and p.get("type") == "token_count" and isinstance(p.get("info"), dict)


def _is_compaction(spec: dict) -> bool:
    return spec["kind"] == EventKind.COMPACTION or (
        spec["kind"] == EventKind.SUMMARY and str(spec.get("name", "")).startswith("remote_compaction"))


def _record_is_compaction(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    if rec.get("type") == "compacted":
        return True
    p = rec.get("payload")
    return rec.get("type") == "response_item" and isinstance(p, dict) and p.get("type") in (
        "compaction", "compaction_summary")


def _record_is_output(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    p = rec.get("payload") if "payload" in rec else rec
    if not isinstance(p, dict) or rec.get("type") not in ("response_item", *LEGACY_ITEM_TYPES):
        return False
    t = p.get("type")
    return (t == "message" and p.get("role") == "assistant") or t in (
        "reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call")


def _compaction_ahead(items: list[tuple]) -> list[bool]:
    """Per read item: a compaction record follows it before the next model output or
    token_count (a compaction request's token_count written before its ``compacted``)."""
    out = [False] * len(items)
    seen = False
    for k in range(len(items) - 1, -1, -1):
        out[k] = seen
        rec = items[k][2] if items[k][0] is not None else None
        if _record_is_compaction(rec):
            seen = True
        elif _record_is_output(rec) or _has_token_info(rec):
            seen = False
    return out


def _compaction_calls(rows: EventRows, call_rows: list[int]) -> list[dict[str, Any]]:
    """The ``compaction_calls`` meta entries of the compaction usage rows: each call's usage
    and the compaction it made (the first COMPACTION row after it, else the last before)."""
    cols = rows.cols
    bounds = [i for i, kd in enumerate(cols["kind"]) if kd == EventKind.COMPACTION]
    out = []
    for row in call_rows:
        after = [b for b in bounds if b > row]
        before = [b for b in bounds if b < row]
        b = after[0] if after else (before[-1] if before else None)
        req = cols["request"][b] if b is not None else -1
        out.append({"source": "token_count", "boundary_seq": b, "request": req if req >= 0 else None,
                    "calls": 1, "input": cols["usage_input"][row], "cache_read": cols["usage_cache_read"][row],
                    "cache_write": cols["usage_cache_write"][row], "output": cols["usage_output"][row]})
    return out


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    pr = _Parser(ctx)
    rows = pr.rows
    # one pass to read, then decide two file-level questions before mapping; lines that
    # fail to parse are kept in place as (None, None, kwargs of their SKIPPED event)
    items: list[tuple] = []
    deferred = _DeferredRows(items)
    for rec in iter_jsonl(ctx, deferred):  # type: ignore[arg-type]
        items.append(rec)
    records = [r for r in items if r[0] is not None]
    user_msg_fallback = not any(_has_user_item(o) for _, _, o in records)
    token_mode = any(_has_token_info(o) for _, _, o in records)
    recognised = 0

    request = 0  # the request currently being produced / awaited
    outputs_open = False  # outputs seen since the last request boundary
    last_total: str | None = None
    last_usage: str | None = None
    compacted_since = False  # a compaction since the last token_count
    ahead = _compaction_ahead(items)
    call_rows: list[int] = []  # USAGE rows of compaction calls
    rel_rows: list[int] = []  # non-output rows: their request is fixed up at the end
    add = rows.add
    bom_row = add_bom_event(ctx, add, request=0)
    if bom_row is not None:
        rel_rows.append(bom_row)
    for k, (line, raw, obj) in enumerate(items):
        if line is None:  # a line iter_jsonl could not read (on_error="skip")
            kind, kw = obj
            rows.add(kind, **kw)
            continue
        specs = guard_record(ctx, rows, line, raw, pr.map, obj, user_msg_fallback, expected=EXPECTED)
        if specs is None:
            continue
        if isinstance(obj, dict) and (obj.get("type") in TOP_TYPES or obj.get("type") in LEGACY_ITEM_TYPES
                                      or ("instructions" in obj and "id" in obj)):
            recognised += 1
        first = True
        for spec, rel in specs:
            usage = None
            name = spec.get("name")
            if rel == OUT:
                outputs_open = True
                req = request
            elif "_usage" in spec and not outputs_open and (compacted_since or ahead[k]) and \
                    spec["_last"] != last_usage:  # the compaction request's own usage
                req = request
                usage = spec["_usage"]
                name = "token_count_compaction"
                spec = {**spec, "origin": Origin.BACKGROUND}
                last_usage = spec["_last"]
                compacted_since = False
            elif "_usage" in spec:  # a token_count closes the request being produced
                if outputs_open or spec["_total"] != last_total:
                    req = request
                    usage = spec["_usage"]
                    request += 1
                    outputs_open = False
                else:  # repeats the previous totals with nothing produced in between
                    req = request - 1 if request > 0 else -1
                    name = "token_count_duplicate"
                last_total = spec["_total"]
                last_usage = spec["_last"]
                compacted_since = False
            else:
                if rel == IN and not token_mode and outputs_open:
                    request += 1  # no token counts: an input ends the run of outputs
                    outputs_open = False
                # the next request to start after this event (the first that can see it)
                req = request + 1 if outputs_open else request
            row = add(spec["kind"], role=spec.get("role", Role.NONE), text=spec.get("text"),
                      raw=raw if first else None, origin=spec.get("origin", Origin.UNKNOWN),
                      call_id=spec.get("call_id"), message_id=spec.get("message_id"), name=name,
                      ts_ms=spec.get("ts_ms", -1), request=req, flags=spec.get("flags", 0),
                      source_line=line, usage=usage,
                      compact_trigger=spec.get("compact_trigger", CompactTrigger.NONE))
            if spec.get("_self_paired"):
                rows.set(row, "pair_seq", row)
            if name == "token_count_compaction":
                call_rows.append(row)
            if _is_compaction(spec):
                compacted_since = True
            if rel != OUT and "_usage" not in spec:
                rel_rows.append(row)
            first = False

    if recognised == 0:
        raise SourceError(f"no Codex rollout records among {len(records)} JSON lines",
                          path=str(ctx.path), expected=EXPECTED)
    n_requests = request + (1 if outputs_open else 0)
    req_col = rows.cols["request"]
    for row in rel_rows + call_rows:
        if req_col[row] >= n_requests:
            req_col[row] = -1
    # rows added by bad_record (skipped lines) are not requests' inputs we can place
    model = max(pr.models, key=pr.models.get) if pr.models else None
    meta = dict(pr.meta)
    if call_rows:
        meta[COMPACTION_CALLS] = _compaction_calls(rows, call_rows)
    meta.update({"records": len(records), "requests": n_requests, "models": pr.models,
                 "usage_recorded": token_mode})
    cid = pr.session_id or ctx.path.stem
    return [ParsedContinuity(continuity_id=cid, source_format=NAME, source_file=str(ctx.path), rows=rows,
                             model=model, provider=pr.provider or "openai", context_window=pr.window,
                             meta=meta)]


def _looks_codex(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    t = rec.get("type")
    if not isinstance(t, str):
        return False
    if "payload" in rec:
        return t in TOP_TYPES and "timestamp" in rec
    if t in LEGACY_ITEM_TYPES and "sessionId" not in rec and "uuid" not in rec:
        return True
    return "instructions" in rec and "id" in rec and "timestamp" in rec


def _long_first_line(head: bytes) -> bool:
    return head.lstrip().startswith(b'{"timestamp"') and b'"payload"' in head[:200] and (
        b'"type":"session_meta"' in head or b'"type":"response_item"' in head)


def _detail(recs: list[Any]) -> str:
    first = recs[0] if isinstance(recs[0], dict) else {}
    start = "session_meta first" if first.get("type") == "session_meta" else "no session_meta first"
    return f"{{timestamp, type, payload}}; {start}"


def _sniff(path: Path, head: bytes) -> Detection:
    return sniff_jsonl_records(
        head, _looks_codex, "Codex rollout", bonus=0.04 if path.name.startswith("rollout-") else 0.0,
        detail=_detail, long_first_line=_long_first_line,
        long_reason="first line is longer than the sniffed head but starts like a Codex rollout")


FORMAT = register_format(
    NAME, "OpenAI Codex CLI / Desktop rollout JSONL (~/.codex/sessions/**/rollout-*.jsonl)",
    sniff=_sniff, parse=_parse, profile="codex-local",
)
parse, sniff = FORMAT.parse, FORMAT.sniff

