"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON record per line. Every non-blank line becomes one or more events, never zero;
the whole line is kept in ``raw`` of the *first* event made from it (``None`` for the
others), so joining the non-null ``raw`` values with ``"\\n"`` reproduces the file's
non-blank lines byte for byte.

Mapping (record -> events):

* ``user`` / ``assistant`` with ``message.content`` a string or a list of blocks, one
  event per block: ``text`` -> MESSAGE (role user/assistant); ``thinking`` /
  ``redacted_thinking`` -> REASONING; ``tool_use`` / ``server_tool_use`` -> TOOL_CALL
  (``call_id`` = block id, ``name`` = tool, ``text`` = the input as JSON);
  ``tool_result`` / ``*_tool_result`` -> TOOL_RESULT (``call_id`` = ``tool_use_id``,
  flag ERROR when ``is_error``, text flattened, ``name`` = the called tool when known);
  ``image`` / ``document`` -> MESSAGE with a placeholder text such as
  ``[image: image/png, 1234 base64 chars]``; any other block -> OPAQUE (text = block JSON).
  An empty block list still gives one (empty) MESSAGE.
* ``isCompactSummary`` user record -> SUMMARY (role user, origin BACKGROUND).
* ``system`` subtype ``compact_boundary`` -> COMPACTION (``compactMetadata.trigger`` ->
  ``compact_trigger``, ``preTokens`` -> ``compact_pre_tokens``).
* ``progress``, ``file-history-snapshot``, ``queue-operation``, other ``system`` subtypes
  (``stop_hook_summary``, ``turn_duration``, ``local_command``...), ``custom-title``,
  ``tag`` ... -> SIDE_EFFECT (origin HARNESS, ``name`` = ``type`` or ``type/subtype``).
* legacy ``type: "summary"`` records -> SUMMARY (``name="legacy_summary"``, text = the
  ``summary`` field). These are the titles shown by ``/resume`` for a leaf message; they
  were never sent to the model (origin BACKGROUND, role none), and calibration ignores them.
* anything else (unknown ``type``) -> OPAQUE with its raw line.
* flags: ``isMeta`` -> META, ``isSidechain`` -> SIDECHAIN; assistant output -> OUTPUT.
  An assistant record whose model is ``<synthetic>`` (Claude Code writes these for API
  errors and interruptions), or that has no ``message.id``, is not a model request: it is
  kept as a META message (origin HARNESS).
* continuity: ``continuity_id`` = ``sessionId`` (subagents: ``<session>/<file stem>``);
  ``model`` = the model that served the most requests (a session can switch with
  ``/model`` or a skill's ``model:``; every model's request count is in the import manifest,
  and a session that switched has ``model_runs``: the request where each model took over);
  the calls a ``PreToolUse`` hook denied are in ``hook_denials``
  (:mod:`workbench.sources.claude_code_hooks`); ``context_window``
  stays -1 because the log does not record it.

Requests and usage. Claude Code writes one assistant API response as several records
(one per content block) that share ``message.id``; a request is one distinct
``message.id``, numbered 0, 1, 2... in order of first appearance. Checked by hand on all
recorded logs (217 + 55 + 5 + 4 + 3 + 1 + 1 message ids, 158 of them split across several
records): within one id, ``input_tokens``, ``cache_read_input_tokens`` and
``cache_creation_input_tokens`` are identical in every record, while ``output_tokens`` is
a running count that never decreases and is largest on the *last* record (e.g.
``msg_01AjAt...``: 9, 9, 9, 209). So the last record of an id is authoritative; its usage
is stored once, on the first event of the request. Lines of one API request (``requestId``)
written under different message ids are one request too (their usage is the same response's,
repeated). Before 2.1.97 the counts written are the streaming placeholders when the
authoritative record has no ``stop_reason``: such requests are listed in the continuity meta
``usage_placeholders`` (:func:`streaming_placeholders`; the recorded values are kept as
written), and the fidelity audit does not take their output count as the bill. Cache writes
at the 1-hour tier (``cache_creation.ephemeral_1h_input_tokens``, billed 2x the input price
instead of 1.25x) are listed per request in the meta ``cache_write_1h``. Output events carry their request
index; every other event carries the index of the next request that starts after it
(the first request that can see it), or -1 when no request follows.

Subagents: ``<session>/subagents/agent-*.jsonl`` files are separate continuities whose
``parent_id`` is the session (from the path, else from ``sessionId`` of sidechain
records); the import driver finds them and links them. Parsing a session file never
reads its subagent files. ``agent-acompact-*`` files are not conversations but the
summarizer call of one of the parent's compactions: flagged ``compaction_agent`` in their
meta, the import attaches them to it (:mod:`workbench.sources.compaction_calls`).

>>> from pathlib import Path
>>> import workbench
>>> log = Path(workbench.__file__).parents[1] / "datasets" / "bundled" / "claude-code" / "short.jsonl"
>>> FORMAT.parse(ParseContext(log))[0].rows.cols["kind"][:3]
[5, 5, 5]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.anthropic_blocks import content_block_events
from workbench.sources.base import (
    Detection,
    EventRows,
    ParseContext,
    ParsedContinuity,
    iter_jsonl,
)
from workbench.sources.builder import guard_record
from workbench.sources.checks import Malformed, opt_int, str_or_none
from workbench.sources.claude_code_hooks import META_KEY as HOOK_DENIALS
from workbench.sources.claude_code_hooks import RULE as HOOK_DENIAL_RULE
from workbench.sources.claude_code_hooks import HookTrail
from workbench.sources.compaction_calls import COMPACTION_AGENT, is_claude_code_compaction_agent
from workbench.sources.lossless import add_bom_event
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.registration import register_format
from workbench.sources.sniffing import sniff_jsonl_records
from workbench.sources.values import flatten_content, parse_ts

NAME = "claude_code"
EXPECTED = "a Claude Code record (a JSON object with a string 'type')"

# record types Claude Code writes that are harness activity, not conversation
SIDE_EFFECT_TYPES = frozenset({
    "progress", "file-history-snapshot", "queue-operation", "custom-title", "tag",
    "agent-name", "last-prompt", "pr-link", "attachment", "system",
})
KNOWN_TYPES = SIDE_EFFECT_TYPES | {"user", "assistant", "summary"}
_CC_KEYS = ("sessionId", "uuid", "parentUuid", "leafUuid", "snapshot")

_TRIGGERS = {"auto": CompactTrigger.AUTO, "manual": CompactTrigger.MANUAL}

F_OUT = int(EventFlag.OUTPUT)


# ---------------------------------------------------------------- small helpers

def _usage_of(usage: Any) -> tuple[int, int, int, int] | None:
    """(input, cache read, cache write, output) from ``message.usage``; absent counts are 0."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise Malformed("", "message.usage is not an object", "usage as an object of token counts")
    inp, read, write, out = (
        opt_int(usage.get(key), f"message.usage.{key}", "usage token counts as non-negative integers") or 0
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                    "output_tokens"))
    return inp, read, write, out


# Claude Code before 2.1.97 wrote the usage of a streamed response as it stood when each
# content block was written: input and output counts are the message_start placeholders
# (the cache fields are accurate; ccusage#866, anthropics/claude-code#22686)
PLACEHOLDER_FIXED_IN = (2, 1, 97)
PLACEHOLDER_OUTPUT_MAX = 8  # message_start output counts seen in such logs: 1 to 8
USAGE_PLACEHOLDERS = "usage_placeholders"  # the continuity meta key
CACHE_WRITE_1H = "cache_write_1h"  # meta key: {request: cache writes at the 1-hour tier}
MODEL_RUNS = "model_runs"  # meta key: [[first request, model], ...] of a session that switched model
PLACEHOLDER_RULE = (f"Claude Code < {'.'.join(map(str, PLACEHOLDER_FIXED_IN))}: no stop_reason, output_tokens "
                    f"<= {PLACEHOLDER_OUTPUT_MAX} for an output of more than 16 characters a token")


def _release(version: str | None) -> tuple[int, ...] | None:
    parts = version.split(".")[:3] if version else []
    try:
        return tuple(int(p.split("-")[0]) for p in parts) if parts else None
    except ValueError:
        return None


def cache_writes_1h(manifest: dict[str, Any]) -> dict[str, dict[int, int]]:
    """Per continuity id of an imported dataset, its requests' cache writes at the 1-hour
    tier (part of their recorded cache writes; the import's meta ``cache_write_1h``)."""
    metas = ((manifest or {}).get("import") or {}).get("continuities") or {}
    return {cid: {int(r): int(t) for r, t in m[CACHE_WRITE_1H].items()} for cid, m in metas.items()
            if isinstance(m, dict) and m.get(CACHE_WRITE_1H)}


def usage_placeholders(manifest: dict[str, Any]) -> dict[str, set[int]]:
    """Per continuity id of an imported dataset, the requests whose recorded usage is a
    streaming placeholder (the import's meta ``usage_placeholders``)."""
    metas = ((manifest or {}).get("import") or {}).get("continuities") or {}
    return {cid: set(m[USAGE_PLACEHOLDERS]["requests"]) for cid, m in metas.items()
            if isinstance(m, dict) and m.get(USAGE_PLACEHOLDERS)}


def streaming_placeholders(usage: list, stopped: list[bool], versions: list[str | None],
                           chars: list[int]) -> list[int]:
    """Requests whose recorded usage is a streaming placeholder (:data:`PLACEHOLDER_RULE`):
    a release before :data:`PLACEHOLDER_FIXED_IN`, an authoritative record without
    ``stop_reason``, and an output count far below what its output events hold.

    >>> streaming_placeholders([(3, 10, 0, 1), (3, 10, 0, 1), (3, 10, 0, 1)], [False, True, False],
    ...                        ["2.1.39", "2.1.39", "2.1.97"], [400, 400, 400])
    [0]
    """
    out = []
    for r, u in enumerate(usage):
        rel = _release(versions[r])
        if u is None or rel is None or rel >= PLACEHOLDER_FIXED_IN or stopped[r]:
            continue
        if u[3] <= PLACEHOLDER_OUTPUT_MAX and chars[r] > 16 * max(u[3], 1):
            out.append(r)
    return out


def _write_1h(usage: Any) -> int:
    """``usage.cache_creation.ephemeral_1h_input_tokens``: cache writes at the 1-hour tier
    (inside ``cache_creation_input_tokens``, billed 2x the input price, not 1.25x)."""
    cc = usage.get("cache_creation") if isinstance(usage, dict) else None
    v = cc.get("ephemeral_1h_input_tokens") if isinstance(cc, dict) else None
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


# ---------------------------------------------------------------- record mapping
# An event spec is a dict of EventRows.add keyword arguments plus two private keys:
# "_mid" (the assistant message id of an output) and "_usage".

def _map_record(rec: Any, tool_names: dict[str, str]) -> tuple[list[dict], bool]:
    """Map one parsed record to event specs; returns (specs, recognised_as_claude_code)."""
    if not isinstance(rec, dict):
        raise Malformed("", f"line is a JSON {type(rec).__name__}, not an object", EXPECTED)
    rtype = rec.get("type")
    if not isinstance(rtype, str):
        raise Malformed("", "record has no string 'type'", EXPECTED)
    flags = 0
    if rec.get("isMeta") is True:
        flags |= int(EventFlag.META)
    if rec.get("isSidechain") is True:
        flags |= int(EventFlag.SIDECHAIN)
    ts = parse_ts(rec.get("timestamp"))
    uuid = str_or_none(rec.get("uuid"))

    if rtype == "user" or rtype == "assistant":
        msg = rec.get("message")
        if not isinstance(msg, dict):
            raise Malformed("", f"'{rtype}' record without a message object",
                            f"a '{rtype}' record with a message object")
        content = msg.get("content")
        if rtype == "user":
            if rec.get("isCompactSummary") is True:
                text = flatten_content(content)
                return [{"kind": EventKind.SUMMARY, "role": Role.USER, "origin": Origin.BACKGROUND,
                         "flags": flags, "ts_ms": ts, "message_id": uuid, "name": "compact_summary",
                         "text": text}], True
            origin = Origin.HARNESS if flags & EventFlag.META else Origin.USER
            base = {"role": Role.USER, "origin": origin, "flags": flags, "ts_ms": ts,
                    "message_id": uuid}
            return content_block_events(content, assistant=False, base=base,
                                    tool_names=tool_names), True
        model = str_or_none(msg.get("model"))
        mid = str_or_none(msg.get("id"))
        synthetic = model == "<synthetic>" or rec.get("isApiErrorMessage") is True or mid is None
        usage = _usage_of(msg.get("usage"))
        if synthetic:
            base = {"role": Role.ASSISTANT, "origin": Origin.HARNESS,
                    "flags": flags | int(EventFlag.META), "ts_ms": ts, "message_id": mid or uuid,
                    "name": "synthetic"}
            return content_block_events(content, assistant=True, base=base,
                                    tool_names=tool_names), True
        base = {"role": Role.ASSISTANT, "origin": Origin.AGENT, "flags": flags | F_OUT,
                "ts_ms": ts, "message_id": mid}
        specs = content_block_events(content, assistant=True, base=base, tool_names=tool_names)
        for s in specs:
            s["_mid"] = mid
        specs[0]["_usage"] = usage
        specs[0]["_model"] = model
        specs[0]["_rid"] = str_or_none(rec.get("requestId"))
        specs[0]["_write_1h"] = _write_1h(msg.get("usage"))
        specs[0]["_stop"] = msg.get("stop_reason")
        return specs, True

    if rtype == "system":
        sub = rec.get("subtype")
        sub = sub if isinstance(sub, str) else None
        text = str_or_none(rec.get("content"))
        if sub == "compact_boundary":
            meta = rec.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            trig = meta.get("trigger")
            trigger = _TRIGGERS.get(trig, CompactTrigger.OTHER) if isinstance(trig, str) else CompactTrigger.OTHER
            pre = meta.get("preTokens")
            pre = pre if isinstance(pre, int) and not isinstance(pre, bool) and 0 <= pre < 1 << 62 else -1
            return [{"kind": EventKind.COMPACTION, "role": Role.SYSTEM, "origin": Origin.HARNESS,
                     "flags": flags, "ts_ms": ts, "message_id": uuid, "name": "compact_boundary",
                     "text": text, "compact_trigger": trigger, "compact_pre_tokens": pre}], True
        return [{"kind": EventKind.SIDE_EFFECT, "role": Role.SYSTEM, "origin": Origin.HARNESS,
                 "flags": flags, "ts_ms": ts, "message_id": uuid,
                 "name": f"system/{sub}" if sub else "system", "text": text}], True

    if rtype == "summary":
        return [{"kind": EventKind.SUMMARY, "origin": Origin.BACKGROUND, "flags": flags,
                 "message_id": str_or_none(rec.get("leafUuid")), "name": "legacy_summary",
                 "text": str_or_none(rec.get("summary")) or ""}], True

    if rtype in SIDE_EFFECT_TYPES:
        name = rtype
        text = None
        if rtype == "progress":
            data = rec.get("data")
            if isinstance(data, dict) and isinstance(data.get("type"), str):
                name = f"progress/{data['type']}"
        elif rtype == "queue-operation":
            op = rec.get("operation")
            if isinstance(op, str):
                name = f"queue-operation/{op}"
            text = str_or_none(rec.get("content"))
        elif rtype == "file-history-snapshot":
            snap = rec.get("snapshot")
            if ts < 0 and isinstance(snap, dict):
                ts = parse_ts(snap.get("timestamp"))
            uuid = uuid or str_or_none(rec.get("messageId"))
        return [{"kind": EventKind.SIDE_EFFECT, "origin": Origin.HARNESS, "flags": flags,
                 "ts_ms": ts, "message_id": uuid, "name": name, "text": text}], True

    # an unknown record type: keep it, opaque
    recognised = any(k in rec for k in _CC_KEYS)
    return [{"kind": EventKind.OPAQUE, "flags": flags, "ts_ms": ts, "message_id": uuid,
             "name": rtype}], recognised


# ---------------------------------------------------------------- parse

_ADD_KEYS = ("kind", "role", "origin", "text", "call_id", "message_id", "name", "ts_ms",
             "flags", "compact_trigger", "compact_pre_tokens")


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    rows = EventRows()
    tool_names: dict[str, str] = {}
    req_of: dict[str, int] = {}  # message id -> request index
    req_first_row: list[int] = []
    req_usage: list[tuple[int, int, int, int] | None] = []
    req_of_rid: dict[str, int] = {}  # API request id -> request index
    req_stopped: list[bool] = []  # the authoritative record has a stop_reason
    req_version: list[str | None] = []
    req_chars: list[int] = []  # characters of the request's output events
    req_write_1h: dict[int, int] = {}  # request -> cache writes at the 1-hour tier
    req_model: list[str | None] = []
    model_requests: dict[str, int] = {}
    recognised = 0
    records = 0
    session_id = None
    sidechain_session = None
    agent_id = None
    versions: dict[str, int] = {}
    hooks = HookTrail()  # calls a PreToolUse hook denied: their reason reached the model twice
    add = rows.add
    add_bom_event(ctx, add)

    for line, raw, obj in iter_jsonl(ctx, rows):
        records += 1
        mapped = guard_record(ctx, rows, line, raw, _map_record, obj, tool_names, expected=EXPECTED)
        if mapped is None:
            continue
        specs, ok = mapped
        recognised += ok
        hooks.see(obj)
        if session_id is None or agent_id is None:
            sid = obj.get("sessionId")
            if isinstance(sid, str) and session_id is None:
                session_id = sid
            aid = obj.get("agentId")
            if isinstance(aid, str) and agent_id is None:
                agent_id = aid
            if obj.get("isSidechain") is True and isinstance(sid, str):
                sidechain_session = sidechain_session or sid
        v = obj.get("version")
        if isinstance(v, str):
            versions[v] = versions.get(v, 0) + 1
        first = True
        for spec in specs:
            mid = spec.get("_mid")
            request = -1
            usage = None
            if mid is not None:
                request = req_of.get(mid, -1)
                rid = spec.get("_rid")
                if request < 0 and rid is not None and rid in req_of_rid:
                    # one API request written under several message ids: one request, its
                    # usage repeated on each line (see module docstring)
                    request = req_of[mid] = req_of_rid[rid]
                if request < 0:
                    request = len(req_first_row)
                    req_of[mid] = request
                    req_first_row.append(len(rows))
                    req_usage.append(None)
                    req_stopped.append(False)
                    req_version.append(None)
                    req_chars.append(0)
                    m = spec.get("_model")
                    req_model.append(m)
                    if m:
                        model_requests[m] = model_requests.get(m, 0) + 1
                if rid is not None:
                    req_of_rid.setdefault(rid, request)
                if "_usage" in spec and spec["_usage"] is not None:
                    # the last record of a message id is authoritative (see module docstring)
                    req_usage[request] = spec["_usage"]
                    req_stopped[request] = spec.get("_stop") is not None
                    req_write_1h[request] = spec.get("_write_1h", 0)
                    v = obj.get("version") if isinstance(obj, dict) else None
                    req_version[request] = v if isinstance(v, str) else None
                req_chars[request] += len(spec.get("text") or "")
            add(spec["kind"], role=spec.get("role", Role.NONE), text=spec.get("text"),
                raw=raw if first else None, origin=spec.get("origin", Origin.UNKNOWN),
                call_id=spec.get("call_id"), message_id=spec.get("message_id"),
                name=spec.get("name"), ts_ms=spec.get("ts_ms", -1), request=request,
                flags=spec.get("flags", 0), source_line=line, usage=usage,
                compact_trigger=spec.get("compact_trigger", CompactTrigger.NONE),
                compact_pre_tokens=spec.get("compact_pre_tokens", -1))
            first = False

    if recognised == 0:
        raise SourceError(f"no Claude Code records among {records} JSON lines",
                          path=str(ctx.path), expected=EXPECTED + " such as type 'user'/'assistant' "
                          "with sessionId/uuid")

    cols = rows.cols
    n = len(rows)
    # usage, once per request, on the request's first event
    for r, u in enumerate(req_usage):
        if u is not None:
            row = req_first_row[r]
            cols["usage_input"][row], cols["usage_cache_read"][row] = u[0], u[1]
            cols["usage_cache_write"][row], cols["usage_output"][row] = u[2], u[3]
    # inputs and everything else that is not an output: the next request to start after it
    if n:
        flags = np.fromiter(cols["flags"], dtype=np.int64, count=n)
        non_out = np.flatnonzero((flags & F_OUT) == 0)
        if non_out.size:
            nxt = np.searchsorted(np.asarray(req_first_row, dtype=np.int64), non_out, side="right")
            nxt[nxt >= len(req_first_row)] = -1
            req_col = cols["request"]
            for i, r in zip(non_out.tolist(), nxt.tolist(), strict=True):
                req_col[i] = r

    path = ctx.path
    parent_id = None
    if path.parent.name == "subagents" and path.parent.parent.name:
        parent_id = path.parent.parent.name
    elif sidechain_session is not None and (agent_id is not None or path.stem.startswith("agent-")):
        parent_id = sidechain_session
    cid = f"{parent_id}/{path.stem}" if parent_id is not None else (session_id or path.stem)
    model = max(model_requests, key=model_requests.get) if model_requests else None
    meta: dict[str, Any] = {"records": records, "requests": len(req_first_row),
                            "models": model_requests}
    if versions:
        meta["harness_version"] = max(versions, key=versions.get)
    if len(model_requests) > 1:  # a session that switched model: where each model took over
        meta[MODEL_RUNS] = [[r, m] for r, m in enumerate(req_model) if m and (r == 0 or m != req_model[r - 1])]
    if any(req_write_1h.values()):
        meta[CACHE_WRITE_1H] = {str(r): t for r, t in sorted(req_write_1h.items()) if t}
    placeholders = streaming_placeholders(req_usage, req_stopped, req_version, req_chars)
    if placeholders:
        meta[USAGE_PLACEHOLDERS] = {"rule": PLACEHOLDER_RULE, "requests": placeholders}
    denied = hooks.denials()
    if denied:
        meta[HOOK_DENIALS] = {"rule": HOOK_DENIAL_RULE, "calls": denied}
    if agent_id is not None:
        meta["agent_id"] = agent_id
    if session_id is not None:
        meta["session_id"] = session_id
    if parent_id is not None and is_claude_code_compaction_agent(path, agent_id):
        meta[COMPACTION_AGENT] = True  # the import attaches it to the parent's compaction
    return [ParsedContinuity(continuity_id=cid, source_format=NAME, source_file=str(path), rows=rows,
                             parent_id=parent_id, model=model, provider="anthropic", meta=meta)]


# ---------------------------------------------------------------- sniff

def _looks_cc(rec: Any) -> bool:
    if not isinstance(rec, dict) or "payload" in rec:
        return False
    t = rec.get("type")
    if not isinstance(t, str):
        return False
    if t in KNOWN_TYPES:
        return any(k in rec for k in _CC_KEYS) or (t == "summary" and "summary" in rec)
    return "sessionId" in rec and "uuid" in rec


def _long_first_line(head: bytes) -> bool:
    return head.lstrip().startswith(b"{") and b'"sessionId"' in head and (
        b'"type":"user"' in head or b'"type":"assistant"' in head or b'"type":"summary"' in head)


def _sniff(path: Path, head: bytes) -> Detection:
    return sniff_jsonl_records(
        head, _looks_cc, "Claude Code", bonus=0.03 if path.suffix == ".jsonl" else 0.0,
        detail=lambda recs: "type user/assistant/progress/summary... with sessionId/uuid",
        long_first_line=_long_first_line,
        long_reason="first line is longer than the sniffed head but has Claude Code keys")


FORMAT = register_format(
    NAME, "Claude Code session JSONL (~/.claude/projects/*/<session>.jsonl, subagents/)",
    sniff=_sniff, parse=_parse, profile="claude-code",
)
parse, sniff = FORMAT.parse, FORMAT.sniff

