"""OpenAI-style chat message lists, plus the helpers shared by the part-B importers.

Accepted inputs (``openai_messages``):

* a JSON list of messages ``[{role, content, tool_calls?, tool_call_id?, name?}, ...]``;
* an object ``{"messages": [...], ...}`` (other keys are kept in the document event);
* JSONL, one message object per line.

Mapping: ``system``/``developer``/``user`` → MESSAGE; ``assistant`` → REASONING (if it
carries ``reasoning_content``), MESSAGE, then one TOOL_CALL per ``tool_calls`` entry
(``call_id`` = the entry's ``id``, ``name`` = ``function.name``, ``text`` = ``arguments``;
``tool_calls`` given as a JSON-encoded string is decoded); ``tool`` → TOOL_RESULT
(``call_id`` = ``tool_call_id``); legacy ``function_call`` / role ``function`` pairs get a
synthetic ``call_id`` (``fn-<n>``). Any other role becomes OPAQUE. One request per
assistant message; inputs belong to the request that first sees them.

Lossless ``raw`` (see :func:`roundtrip`):

* JSONL: each line's text is the ``raw`` of the first event of that line, so the non-null
  raws joined with ``"\\n"`` equal the input's non-blank lines byte for byte.
* JSON documents: event 0 is META ``document`` (the document with its message array
  emptied), event 1 is META ``layout`` (which arrays/values were taken out and how many
  elements); every element's ``orjson.dumps`` is the raw of its first event.
  :func:`rebuild_document` puts them back together (``== json.load(input)``).

The helpers in the first half of this module (``Malformed``, ``Builder``, the document
layout, ``content_text``, ``litellm_usage``, ``parse_ts``, ``peek``) are used by
swe_agent, mini_swe_agent, openhands, openhands_sdk, gemini_cli and aider too.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.base import (
    Detection,
    EventRows,
    ParseContext,
    ParsedContinuity,
    SourceFormat,
    iter_jsonl,
    register,
)

# ===================================================================== shared helpers


class Malformed(Exception):
    """A record has the wrong structure; turned into ``ctx.bad_record`` by the caller."""

    def __init__(self, where: str, message: str, expected: str):
        super().__init__(f"{where}: {message}" if where else message)
        self.message = f"{where}: {message}" if where else message
        self.expected = expected


def _tname(v: Any) -> str:
    if v is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def want_dict(v: Any, where: str, expected: str = "a JSON object") -> dict:
    if not isinstance(v, dict):
        raise Malformed(where, f"is {_tname(v)}, not an object", expected)
    return v


def want_list(v: Any, where: str, expected: str = "a JSON list") -> list:
    if not isinstance(v, list):
        raise Malformed(where, f"is {_tname(v)}, not a list", expected)
    return v


def want_str(v: Any, where: str, expected: str = "a string") -> str:
    if not isinstance(v, str):
        raise Malformed(where, f"is {_tname(v)}, not a string", expected)
    return v


def opt_dict(v: Any, where: str) -> dict | None:
    return None if v is None else want_dict(v, where, "an object or null")


def opt_list(v: Any, where: str) -> list | None:
    return None if v is None else want_list(v, where, "a list or null")


def opt_str(v: Any, where: str) -> str | None:
    return None if v is None else want_str(v, where, "a string or null")


def opt_int(v: Any, where: str) -> int | None:
    """A token count: null/absent → None; an integral number → int; else Malformed."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise Malformed(where, f"is {_tname(v)}, not a number", "an integer token count")
    if isinstance(v, float):
        if not math.isfinite(v) or v != int(v):
            raise Malformed(where, f"is {v!r}, not an integer", "an integer token count")
        v = int(v)
    if v < 0 or v > 2**62:
        raise Malformed(where, f"is {v}, out of range", "a non-negative token count")
    return v


def content_text(content: Any, where: str) -> str | None:
    """Message content as plain text: a string, or a list of parts (text parts joined by
    a newline; image/audio/other non-text parts contribute nothing, they stay in raw)."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, dict):  # a single part
        content = [content]
    parts = want_list(content, where, "a string, a list of content parts, or null")
    out: list[str] = []
    for i, p in enumerate(parts):
        if isinstance(p, str):
            out.append(p)
            continue
        p = want_dict(p, f"{where}[{i}]", "a content part object {type, text}")
        t = p.get("text")
        if isinstance(t, str):
            out.append(t)
        elif t is not None and not isinstance(t, dict):
            raise Malformed(f"{where}[{i}].text", f"is {_tname(t)}", "a string")
    return "\n".join(out)


def parse_ts(v: Any) -> int:
    """Epoch milliseconds from an ISO-8601 string (naive = UTC) or epoch seconds/ms;
    ``-1`` when absent or unreadable (timestamps are metadata, never a reason to fail)."""
    try:
        if isinstance(v, str) and v:
            s = v.strip()
            if s.endswith("Z"):
                s = s[:-1] + "+00:00"
            d = _dt.datetime.fromisoformat(s)
            if d.tzinfo is None:
                d = d.replace(tzinfo=_dt.UTC)
            return int(round(d.timestamp() * 1000))
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
            ms = v if v > 1e11 else v * 1000.0
            return int(round(ms)) if ms < 2**62 else -1
    except (ValueError, OverflowError, OSError):
        return -1
    return -1


def litellm_usage(u: Any, where: str) -> tuple[int, int, int, int] | None:
    """Canonical (input, cache_read, cache_write, output) from a LiteLLM/OpenAI usage object.

    LiteLLM's ``prompt_tokens`` *includes* cached tokens: for Anthropic models it is
    ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` (checked on
    openhands/basic_gui_mode.json: 3601 = 6 + 160 + 3435), for OpenAI models it includes
    ``prompt_tokens_details.cached_tokens``. So ``usage_input = prompt_tokens - read - write``.
    A raw Anthropic usage (``input_tokens`` next to ``cache_*_input_tokens``) is already
    exclusive and is taken as is.
    """
    if u is None:
        return None
    u = want_dict(u, where, "a usage object")
    write = opt_int(u.get("cache_creation_input_tokens"), f"{where}.cache_creation_input_tokens")
    read = opt_int(u.get("cache_read_input_tokens"), f"{where}.cache_read_input_tokens")
    details = opt_dict(u.get("prompt_tokens_details"), f"{where}.prompt_tokens_details")
    if read is None and details is not None:
        read = opt_int(details.get("cached_tokens"), f"{where}.prompt_tokens_details.cached_tokens")
    prompt = opt_int(u.get("prompt_tokens"), f"{where}.prompt_tokens")
    out = opt_int(u.get("completion_tokens"), f"{where}.completion_tokens")
    if prompt is None and out is None:
        inp = opt_int(u.get("input_tokens"), f"{where}.input_tokens")
        out = opt_int(u.get("output_tokens"), f"{where}.output_tokens")
        if inp is None and out is None:
            return None
        anthropic_raw = "cache_creation_input_tokens" in u or "cache_read_input_tokens" in u
        if not anthropic_raw:
            idet = opt_dict(u.get("input_tokens_details"), f"{where}.input_tokens_details")
            if read is None and idet is not None:
                read = opt_int(idet.get("cached_tokens"), f"{where}.input_tokens_details.cached_tokens")
            inp = None if inp is None else max(inp - (read or 0) - (write or 0), 0)
        return (-1 if inp is None else inp, read or 0, write or 0, -1 if out is None else out)
    read = read or 0
    write = write or 0
    inp = -1 if prompt is None else max(prompt - read - write, 0)
    return (inp, read, write, -1 if out is None else out)


class Builder:
    """EventRows plus request bookkeeping and tool-call pairing for one continuity.

    Outputs (and usage reports) are added with an explicit ``request`` (pinned; outputs are
    flagged OUTPUT). :meth:`finish` gives every other event the next request, the first
    one that can see it (one past the latest pinned request before it; ``-1`` when no
    request follows), the same convention as the Claude Code and Codex importers, and
    fills ``pair_seq``/UNPAIRED from ``call_id`` like the canonical validator expects.
    """

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.rows = EventRows()
        self.n_requests = 0
        self._pinned: set[int] = set()

    def new_request(self) -> int:
        r = self.n_requests
        self.n_requests += 1
        return r

    def add(self, kind: EventKind, *, request: int | None = None, output: bool = False,
            flags: int = 0, **kw: Any) -> int:
        if output:
            flags |= EventFlag.OUTPUT
        row = self.rows.add(kind, request=-1 if request is None else request, flags=flags, **kw)
        if request is not None and request >= 0:
            self._pinned.add(row)
        return row

    def commit(self, events: list[dict[str, Any]], *, raw: str | None, line: int | None = None) -> None:
        """Add the events of one source record; its raw goes on the first one."""
        for i, ev in enumerate(events):
            ev = dict(ev)
            kind = ev.pop("kind")
            self.add(kind, raw=raw if i == 0 else None, source_line=line, **ev)

    def bad(self, exc: Malformed, raw: str | None, line: int | None = None) -> None:
        self.ctx.bad_record(line, exc.message, exc.expected, raw, self.rows)

    def finish(self) -> EventRows:
        import numpy as np

        from workbench.continuity.validate import pair_tool_events

        c = self.rows.cols
        n = len(self.rows)
        last_out = -1
        for i in range(n):
            if i in self._pinned:
                last_out = max(last_out, c["request"][i])
                continue
            nxt = last_out + 1
            c["request"][i] = nxt if nxt < self.n_requests else -1
        if n:
            kind = np.asarray(c["kind"], dtype=np.int8)
            pair, unpaired = pair_tool_events(np.zeros(n, np.int32), np.arange(n, dtype=np.int64),
                                              kind, c["call_id"])
            c["pair_seq"] = [int(x) for x in pair]
            for i in np.flatnonzero(unpaired):
                c["flags"][i] |= int(EventFlag.UNPAIRED)
        return self.rows


# ------------------------------------------------------------- single-document JSON


def load_document(ctx: ParseContext, expected: str) -> Any:
    """Parse a whole-file JSON document; a syntax error names line and column."""
    data = ctx.path.read_bytes()
    if not data.strip():
        raise SourceError("file is empty", path=str(ctx.path), expected=expected)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise SourceError(f"not valid JSON: {exc}", path=str(ctx.path), line=line,
                          expected=expected) from None


def _ptr_parts(pointer: str) -> list[str]:
    if pointer == "":
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _ptr_key(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


@dataclass
class DocumentLayout:
    """What was taken out of a JSON document so it can be rebuilt from raws.

    ``entries``: ``{"array": pointer, "count": n}`` (the n next raws are that array's
    elements) or ``{"value": pointer}`` (the next raw is that value), in event order.
    """

    skeleton: Any
    entries: list[dict[str, Any]] = field(default_factory=list)

    def take_array(self, key: str | None) -> None:
        """Empty the array at top-level ``key`` (None: the document is the array)."""
        if key is None:
            n = len(self.skeleton)
            self.skeleton = []
            self.entries.append({"array": "", "count": n})
        else:
            n = len(self.skeleton[key])
            self.skeleton[key] = []
            self.entries.append({"array": _ptr_key(key), "count": n})

    def take_value(self, key: str) -> None:
        self.skeleton[key] = None
        self.entries.append({"value": _ptr_key(key)})

    def emit(self, b: Builder) -> None:
        b.add(EventKind.META, name="document", raw=orjson.dumps(self.skeleton).decode())
        b.add(EventKind.META, name="layout", raw=orjson.dumps(self.entries).decode())


def start_document(doc: Any) -> DocumentLayout:
    """A layout whose skeleton is a shallow copy of ``doc`` (arrays are emptied later)."""
    return DocumentLayout(skeleton=dict(doc) if isinstance(doc, dict) else list(doc))


def dumps(v: Any) -> str:
    return orjson.dumps(v).decode()


def rebuild_document(events_raw: list[str | None]) -> Any:
    """Inverse of the document layout: the parsed JSON document (``== json.load(file)``)."""
    raws = [r for r in events_raw if r is not None]
    doc = orjson.loads(raws[0])
    layout = orjson.loads(raws[1])
    i = 2

    def put(pointer: str, value: Any) -> None:
        nonlocal doc
        parts = _ptr_parts(pointer)
        if not parts:
            doc = value
            return
        tgt = doc
        for p in parts[:-1]:
            tgt = tgt[int(p)] if isinstance(tgt, list) else tgt[p]
        if isinstance(tgt, list):
            tgt[int(parts[-1])] = value
        else:
            tgt[parts[-1]] = value

    for entry in layout:
        if "array" in entry:
            n = entry["count"]
            put(entry["array"], [orjson.loads(r) for r in raws[i:i + n]])
            i += n
        else:
            put(entry["value"], orjson.loads(raws[i]))
            i += 1
    if i != len(raws):
        raise ValueError(f"{len(raws) - i} raw values left over after rebuilding the document")
    return doc


def is_document_raws(events_raw: list[str | None]) -> bool:
    """True when the raws were written by the document layout (not JSONL lines)."""
    raws = [r for r in events_raw if r is not None]
    if len(raws) < 2:
        return False
    try:
        layout = orjson.loads(raws[1])
        orjson.loads(raws[0])
    except orjson.JSONDecodeError:
        return False
    if not isinstance(layout, list) or not all(
            isinstance(e, dict) and (("array" in e and isinstance(e.get("count"), int))
                                     or set(e) == {"value"}) for e in layout):
        return False
    need = sum(e["count"] if "array" in e else 1 for e in layout)
    return need == len(raws) - 2


# ------------------------------------------------------------------------- sniffing

_PEEK_LIMIT = 32 << 20


@dataclass
class Peek:
    """What a sniffer may look at: the head text, the whole document when small enough,
    or the first JSONL record."""

    name: str
    text: str
    doc: Any = None
    doc_ok: bool = False
    first: Any = None  # first JSONL record (when the file is not one JSON document)
    first_ok: bool = False
    starts: str = ""  # first non-blank character


_peek_cache: dict[tuple, Peek] = {}


def peek(path: Path, head: bytes) -> Peek:
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns, hash(head))
    except OSError:
        st = None
        key = None
    if key is not None and key in _peek_cache:
        return _peek_cache[key]
    text = head.decode("utf-8", "replace")
    stripped = text.lstrip("\ufeff \t\r\n")
    p = Peek(name=path.name.lower(), text=text, starts=stripped[:1])
    if p.starts in ("{", "["):
        data = head
        if st is not None and st.st_size > len(head) and st.st_size <= _PEEK_LIMIT:
            try:
                data = path.read_bytes()
            except OSError:
                data = head
        try:
            p.doc = orjson.loads(data)
            p.doc_ok = True
        except orjson.JSONDecodeError:
            first = data.split(b"\n", 1)[0]
            try:
                p.first = orjson.loads(first)
                p.first_ok = True
            except orjson.JSONDecodeError:
                pass
    if key is not None:
        if len(_peek_cache) > 64:
            _peek_cache.clear()
        _peek_cache[key] = p
    return p


def safe_sniff(fn: Callable[[Path, bytes], Detection]) -> Callable[[Path, bytes], Detection]:
    """Sniffers never raise: a surprise means 'not this format'."""

    def wrapped(path: Path, head_bytes: bytes) -> Detection:
        try:
            return fn(Path(path), head_bytes)
        except Exception as exc:  # noqa: BLE001 - sniffing is best effort by contract
            return Detection(0.0, f"could not inspect ({type(exc).__name__})")

    wrapped.__name__ = getattr(fn, "__name__", "sniff")
    wrapped.__doc__ = fn.__doc__
    return wrapped


def guard_parse(fmt: str, fn: Callable[[ParseContext], list[ParsedContinuity]]):
    """Last line of defence: anything but SourceError escaping a parser is a bug, reported
    as a SourceError whose message says so (the fuzz tests fail on it)."""

    def wrapped(ctx: ParseContext) -> list[ParsedContinuity]:
        try:
            return fn(ctx)
        except SourceError:
            raise
        except Exception as exc:  # noqa: BLE001 - the contract is "only SourceError"
            raise SourceError(f"internal error in the {fmt} importer ({type(exc).__name__}: {exc})",
                              path=str(ctx.path), expected=f"a {fmt} log") from exc

    wrapped.__name__ = getattr(fn, "__name__", "parse")
    wrapped.__doc__ = fn.__doc__
    return wrapped


def is_message(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("role"), str)


def looks_like_claude_or_codex(obj: Any) -> bool:
    return isinstance(obj, dict) and "type" in obj and ("payload" in obj or "message" in obj)


# ===================================================================== the format

NAME = "openai_messages"
_ROLES = {"system": Role.SYSTEM, "developer": Role.DEVELOPER, "user": Role.USER}
KNOWN_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}


def opt_id(v: Any, where: str) -> str | None:
    """An id: a string (or an integer, stringified); null → None."""
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return want_str(v, where, "a string id")


def parse_tool_calls(tool_calls: Any, where: str) -> list[tuple[str | None, str | None, str | None]]:
    """(id, name, arguments) from an OpenAI ``tool_calls`` list or its JSON-encoded string."""
    if tool_calls is None:
        return []
    if isinstance(tool_calls, str):
        try:
            tool_calls = orjson.loads(tool_calls)
        except orjson.JSONDecodeError:
            raise Malformed(where, "is a string that is not JSON",
                            "a list of tool calls (or its JSON encoding)") from None
    calls = want_list(tool_calls, where, "a list of tool calls")
    out = []
    for j, tc in enumerate(calls):
        w = f"{where}[{j}]"
        tc = want_dict(tc, w, "a tool call object {id, type, function: {name, arguments}}")
        fn = tc.get("function")
        if fn is None and "name" in tc:  # flattened variant {id, name, arguments}
            fn = tc
        fn = want_dict(fn, f"{w}.function", "an object {name, arguments}")
        name = opt_str(fn.get("name"), f"{w}.function.name")
        args = fn.get("arguments")
        if args is not None and not isinstance(args, str):
            args = dumps(args)
        out.append((opt_id(tc.get("id"), f"{w}.id"), name, args))
    return out


def call_event(cid: str, name: str | None, args: str | None, request: int | None,
               output: bool, **kw: Any) -> dict[str, Any]:
    return dict(kind=EventKind.TOOL_CALL, role=Role.ASSISTANT, origin=Origin.AGENT,
                call_id=cid, name=name, text=args, request=request, output=output, **kw)


@dataclass
class MessageState:
    """Cross-message state: legacy function_call pairing and synthetic ids."""

    n_synth: int = 0
    open_function: str | None = None

    def synth(self, prefix: str = "call") -> str:
        self.n_synth += 1
        return f"{prefix}-{self.n_synth}"


def message_events(m: Any, where: str, b: Builder, st: MessageState, *,
                   assistant_is_request: bool = True) -> list[dict[str, Any]]:
    """Events for one OpenAI-style message. Validates fully before anything is added.

    ``assistant_is_request=False`` (e.g. the history inside one recorded LLM call) maps
    assistant messages as plain inputs, not as outputs of new requests.
    """
    m = want_dict(m, where, "a message object {role, content}")
    role = m.get("role")
    if not isinstance(role, str):
        raise Malformed(f"{where}.role", f"is {_tname(role)}", "a role string")
    text = content_text(m.get("content"), f"{where}.content")
    name = m.get("name") if isinstance(m.get("name"), str) else None
    if role in _ROLES:
        origin = Origin.USER if role == "user" else Origin.SYSTEM
        return [dict(kind=EventKind.MESSAGE, role=_ROLES[role], origin=origin, text=text, name=name)]
    if role == "assistant":
        # validate before taking a request number
        reasoning = m.get("reasoning_content")
        if reasoning is None and isinstance(m.get("reasoning"), str):
            reasoning = m["reasoning"]
        reasoning = opt_str(reasoning, f"{where}.reasoning_content")
        fc = opt_dict(m.get("function_call"), f"{where}.function_call")
        calls = parse_tool_calls(m.get("tool_calls"), f"{where}.tool_calls")
        fc_name = None if fc is None else opt_str(fc.get("name"), f"{where}.function_call.name")
        req = b.new_request() if assistant_is_request else None
        out = assistant_is_request
        evs: list[dict[str, Any]] = []
        if reasoning:
            evs.append(dict(kind=EventKind.REASONING, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=reasoning, request=req, output=out))
        if text or not (calls or fc is not None):
            evs.append(dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT,
                            text=text, name=name, request=req, output=out))
        for cid, cname, args in calls:
            evs.append(call_event(cid or st.synth(), cname, args, req, out))
        if fc is not None:
            cid = st.synth("fn")
            st.open_function = cid
            args = fc.get("arguments")
            evs.append(call_event(cid, fc_name, args if isinstance(args, str) or args is None
                                  else dumps(args), req, out))
        return evs
    if role == "tool":
        cid = opt_id(m.get("tool_call_id"), f"{where}.tool_call_id")
        return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL,
                     call_id=cid, name=name, text=text)]
    if role == "function":
        cid, st.open_function = st.open_function, None
        return [dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL,
                     call_id=cid, name=name, text=text)]
    return [dict(kind=EventKind.OPAQUE, name=f"role:{role}"[:200])]


def _continuity_id(path: Path) -> str:
    name = path.name
    for suf in (".jsonl", ".json"):
        if name.lower().endswith(suf):
            return name[: -len(suf)]
    return path.stem


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    expected = "a JSON list of {role, content} messages, an object with 'messages', or JSONL"
    data = ctx.path.read_bytes()
    if not data.strip():
        raise SourceError("file is empty", path=str(ctx.path), expected=expected)
    b = Builder(ctx)
    st = MessageState()
    meta: dict[str, Any] = {}
    doc: Any = None
    is_doc = False
    try:
        doc = orjson.loads(data)
        is_doc = True
    except orjson.JSONDecodeError as exc:
        if data.lstrip()[:1] == b"[" or b"\n" not in data.strip():
            raise SourceError(f"not valid JSON: {exc}", path=str(ctx.path),
                              line=getattr(exc, "lineno", None), expected=expected) from None
    if is_doc and is_message(doc) and len([ln for ln in data.split(b"\n") if ln.strip()]) == 1:
        is_doc = False  # a one-line JSONL file
    if is_doc:
        if isinstance(doc, list):
            lay = start_document(doc)
            lay.take_array(None)
            msgs, base = doc, "messages"
        elif isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            lay = start_document(doc)
            lay.take_array("messages")
            msgs, base = doc["messages"], "messages"
            if isinstance(doc.get("model"), str):
                meta["model"] = doc["model"]
        else:
            got = "an object without a 'messages' list" if isinstance(doc, dict) else _tname(doc)
            raise SourceError(f"top-level JSON is {got}", path=str(ctx.path), expected=expected)
        lay.emit(b)
        for i, m in enumerate(msgs):
            raw = dumps(m)
            try:
                evs = message_events(m, f"{base}[{i}]", b, st)
            except Malformed as exc:
                b.bad(exc, raw)
                continue
            b.commit(evs, raw=raw)
    else:
        for line, text, obj in iter_jsonl(ctx, b.rows):
            try:
                evs = message_events(obj, f"line {line}", b, st)
            except Malformed as exc:
                b.bad(exc, text, line)
                continue
            b.commit(evs, raw=text, line=line)
    rows = b.finish()
    return [ParsedContinuity(continuity_id=_continuity_id(ctx.path), source_format=NAME,
                             source_file=str(ctx.path), rows=rows, model=meta.get("model"),
                             meta={"container": "json" if is_doc else "jsonl"})]


def roundtrip(events_raw: list[str | None]) -> Any:
    """JSON input: the parsed document (``== json.load``). JSONL input: the non-blank
    lines joined with ``"\\n"`` (a ``str``)."""
    if is_document_raws(events_raw):
        return rebuild_document(events_raw)
    return "\n".join(r for r in events_raw if r is not None)


@safe_sniff
def sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    if p.doc_ok:
        d = p.doc
        if isinstance(d, list):
            sample = d[:50]
            if sample and all(is_message(m) for m in sample):
                roles = {m["role"] for m in sample}
                if roles <= KNOWN_ROLES:
                    tools = any("tool_calls" in m or m["role"] == "tool" for m in sample)
                    return Detection(0.65 if tools else 0.6,
                                     f"JSON list of {len(d)} messages with roles {', '.join(sorted(roles))}")
                return Detection(0.3, "JSON list of role objects with unknown roles")
            return Detection(0.0, "JSON list whose items are not {role, content} messages")
        if isinstance(d, dict):
            msgs = d.get("messages")
            if isinstance(msgs, list) and msgs and all(is_message(m) for m in msgs[:50]):
                return Detection(0.5, "JSON object with a 'messages' list of role messages")
            return Detection(0.0, "JSON object without a 'messages' list")
        return Detection(0.0, "JSON scalar")
    if p.first_ok:
        f = p.first
        if looks_like_claude_or_codex(f):
            return Detection(0.02, "JSONL with top-level 'type' and 'payload'/'message' (Claude Code/Codex)")
        if is_message(f) and "kind" not in f and "type" not in f:
            return Detection(0.55, "JSONL whose first record is a {role, content} message")
        return Detection(0.0, "JSONL whose first record is not a message")
    return Detection(0.0, "not JSON")


FORMAT = register(SourceFormat(
    name=NAME,
    description="OpenAI-style chat message list (JSON list, {messages: [...]}, or JSONL)",
    sniff=sniff,
    parse=guard_parse(NAME, _parse),
    raw_joiner=None,  # JSON documents use the document layout; see roundtrip()
))
parse = FORMAT.parse

__all__ = ["FORMAT", "parse", "roundtrip", "sniff", "Malformed", "Builder", "peek",
           "rebuild_document", "content_text", "litellm_usage", "parse_ts"]
