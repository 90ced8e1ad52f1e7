"""Helpers shared by the format modules (one owner each; the format modules never import
one another).

* structure checks: :class:`Malformed` (a record with the wrong structure; the caller
  turns it into ``ctx.bad_record``), ``want_*`` / ``opt_*`` validators, :func:`opt_int`
  for token counts;
* values: :func:`parse_ts` (timestamps), :func:`dumps` (compact JSON), :func:`content_text`
  and :func:`flatten_content` (message content as text), :func:`litellm_usage`;
* building: :class:`Builder` (EventRows plus request bookkeeping and tool-call pairing),
  :func:`guard_record` (one record through a mapper, bad ones reported);
* lossless raw: the JSON document layout (:class:`DocumentLayout`,
  :func:`rebuild_document`), the byte order mark marker (:func:`add_bom_event`) and the
  round trip (:func:`roundtrip`);
* sniffing: :func:`peek`, :func:`head_records`, :func:`sniff_jsonl_records`,
  :func:`sniff_safely`;
* registration: :func:`register_format` (every sniffer wrapped by :func:`safe_sniff`,
  every parser by :func:`guard_parse`);
* OpenAI-style messages (openai_messages, the OpenHands SDK call log, SWE-agent,
  mini-swe-agent, OpenHands): :func:`message_events`, :func:`parse_tool_calls`,
  :func:`call_event`.

>>> parse_ts("2026-01-01T00:00:00Z"), parse_ts(1_767_225_600), parse_ts("not a date")
(1767225600000, 1767225600000, -1)
>>> roundtrip(["\\ufeff", '{"a":1}', '{"b":2}'])
'\\ufeff{"a":1}\\n{"b":2}'
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.base import (
    UTF8_BOM,
    Detection,
    EventRows,
    ParseContext,
    ParsedContinuity,
    SourceFormat,
    iter_jsonl,
    register,
)

BOM = "\ufeff"

# ===================================================================== structure checks


class Malformed(Exception):
    """A record has the wrong structure; turned into ``ctx.bad_record`` by the caller.

    ``where`` names the place (``messages[3].tool_calls``); ``""`` when the message says it.
    """

    def __init__(self, where: str, message: str, expected: str):
        super().__init__(f"{where}: {message}" if where else message)
        self.message = f"{where}: {message}" if where else message
        self.expected = expected


def type_name(v: Any) -> str:
    if v is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def want_dict(v: Any, where: str, expected: str = "a JSON object") -> dict:
    if not isinstance(v, dict):
        raise Malformed(where, f"is {type_name(v)}, not an object", expected)
    return v


def want_list(v: Any, where: str, expected: str = "a JSON list") -> list:
    if not isinstance(v, list):
        raise Malformed(where, f"is {type_name(v)}, not a list", expected)
    return v


def want_str(v: Any, where: str, expected: str = "a string") -> str:
    if not isinstance(v, str):
        raise Malformed(where, f"is {type_name(v)}, not a string", expected)
    return v


def opt_dict(v: Any, where: str) -> dict | None:
    return None if v is None else want_dict(v, where, "an object or null")


def opt_list(v: Any, where: str) -> list | None:
    return None if v is None else want_list(v, where, "a list or null")


def opt_str(v: Any, where: str) -> str | None:
    return None if v is None else want_str(v, where, "a string or null")


def str_or_none(v: Any) -> str | None:
    """``v`` when it is a string, else None (never raises)."""
    return v if isinstance(v, str) else None


def pick(d: Any, /, **types: type | tuple[type, ...]) -> dict[str, Any]:
    """The entries of ``d`` (if a dict) named in ``types`` whose values have that type
    (a boolean is not a number), in the order of ``types``: metadata copied as recorded."""
    if not isinstance(d, dict):
        return {}
    out = {}
    for key, typ in types.items():
        v = d.get(key)
        wanted = typ if isinstance(typ, tuple) else (typ,)
        if isinstance(v, wanted) and not (isinstance(v, bool) and bool not in wanted):
            out[key] = v
    return out


def opt_id(v: Any, where: str) -> str | None:
    """An id: a string (or an integer, stringified); null → None."""
    if v is None:
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return want_str(v, where, "a string id")


def opt_int(v: Any, where: str, expected: str | None = None) -> int | None:
    """A token count: null/absent → None; an integral number in [0, 2**62) → int; anything
    else is Malformed (``expected`` overrides the description of what was wanted)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise Malformed(where, f"is {type_name(v)}, not a number", expected or "an integer token count")
    if isinstance(v, float):
        if not math.isfinite(v) or v != int(v):
            raise Malformed(where, f"is {v!r}, not an integer", expected or "an integer token count")
        v = int(v)
    if v < 0 or v >= 2**62:
        raise Malformed(where, f"is {v}, out of range", expected or "a non-negative token count")
    return v


# ===================================================================== values


def parse_ts(v: Any) -> int:
    """Epoch milliseconds from an ISO-8601 string (naive = UTC) or positive epoch
    seconds/ms (a number above 1e11 is taken as ms); ``-1`` when absent or unreadable
    (timestamps are metadata, never a reason to fail)."""
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


def dumps(value: Any) -> str:
    """Compact JSON text of a parsed value (ValueError if it cannot be serialised)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson: ints beyond 64 bits, nesting deeper than 255
        import json

        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except RecursionError:
            raise ValueError("value nested too deeply to serialise") from None


def content_text(content: Any, where: str) -> str | None:
    """Message content as plain text: a string, or a list of parts (text parts joined by
    a newline; image/audio/other non-text parts contribute nothing, they stay in raw).
    Validates: a part that is neither a string nor an object is Malformed."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, dict):  # a single part
        content = [content]
    parts = want_list(content, where, "a string, a list of content parts, or null")
    return join_parts(parts, where, "a content part object {type, text}", _part_text)


def _part_text(p: dict, where: str) -> str | None:
    t = p.get("text")
    if t is not None and not isinstance(t, str | dict):
        raise Malformed(f"{where}.text", f"is {type_name(t)}", "a string")
    return t if isinstance(t, str) else None


def join_parts(parts: list, where: str, expected: str,
               text_of: Callable[[dict, str], str | None]) -> str:
    """The texts of a list of parts joined by newlines: a string part as is, an object
    part (else Malformed, naming ``expected``) by ``text_of(part, where[i])``, which
    returns None for a part that contributes no text."""
    out: list[str] = []
    for i, p in enumerate(parts):
        if isinstance(p, str):
            out.append(p)
            continue
        t = text_of(want_dict(p, f"{where}[{i}]", expected), f"{where}[{i}]")
        if t is not None:
            out.append(t)
    return "\n".join(out)


def media_placeholder(block: dict) -> str:
    """``[image: image/png, 1234 base64 chars]`` for an Anthropic image/document block."""
    src = block.get("source")
    btype = block.get("type")
    if isinstance(src, dict):
        media = src.get("media_type") or src.get("type") or "?"
        data = src.get("data")
        if isinstance(data, str):
            return f"[{btype}: {media}, {len(data)} base64 chars]"
        if isinstance(src.get("url"), str):
            return f"[{btype}: {src['url']}]"
        return f"[{btype}: {media}]"
    return f"[{btype}]"


def flatten_content(content: Any) -> str:
    """Tool-result (or message) content -> one string, never failing: text parts as is,
    image/document parts as placeholders, anything else as its JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict):
                t = item.get("type")
                if t == "text" and isinstance(item.get("text"), str):
                    parts.append(item["text"])
                elif t in ("image", "document"):
                    parts.append(media_placeholder(item))
                else:
                    parts.append(dumps(item))
            else:
                parts.append(dumps(item))
        return "\n".join(parts)
    return dumps(content)


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


# ===================================================================== building

# what a mapper may raise on a record of surprising structure when the format chooses to
# report it as a bad record rather than as an importer bug
RECORD_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


def guard_record(ctx: ParseContext, rows: EventRows | None, line: int | None, raw: str | None,
                 fn: Callable[..., Any], *args: Any, expected: str | None = None) -> Any:
    """``fn(*args)``, or None after ``ctx.bad_record`` when it raised :class:`Malformed`
    (or, when ``expected`` is given, one of :data:`RECORD_ERRORS`: "unexpected record
    structure"; without ``expected`` those propagate, as parser bugs)."""
    try:
        return fn(*args)
    except Malformed as exc:
        ctx.bad_record(line, exc.message, exc.expected, raw, rows)
    except RECORD_ERRORS as exc:
        if expected is None:
            raise
        ctx.bad_record(line, f"unexpected record structure ({type(exc).__name__}: {exc})",
                       expected, raw, rows)
    return None


def add_bom_event(ctx: ParseContext, add: Callable[..., int], **kw: Any) -> int | None:
    """When the file starts with a UTF-8 BOM (stripped by ``ctx.read_bytes``), add the META
    ``bom`` event whose raw is the BOM, once per file, before anything else; its row or None.

    :func:`roundtrip` puts the BOM back in front of the rebuilt text.
    """
    if not ctx.take_bom():
        return None
    return add(EventKind.META, origin=Origin.HARNESS, name="bom", raw=BOM, source_line=1, **kw)


class Builder:
    """EventRows plus request bookkeeping and tool-call pairing for one continuity.

    Outputs (and usage reports) are added with an explicit ``request`` (pinned; outputs are
    flagged OUTPUT). :meth:`finish` gives every other event the next request, the first
    one that can see it (one past the latest pinned request before it; ``-1`` when no
    request follows), the same convention as the Claude Code and Codex importers, and
    fills ``pair_seq``/UNPAIRED from ``call_id`` like the canonical validator expects.
    The first Builder of a file that starts with a BOM begins with the META ``bom`` event.
    """

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.rows = EventRows()
        self.n_requests = 0
        self._pinned: set[int] = set()
        add_bom_event(ctx, self.add)

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

    def record(self, fn: Callable[[Any, str], list[dict[str, Any]]], obj: Any, where: str,
               raw: str | None, line: int | None = None) -> bool:
        """Map one source record with ``fn(obj, where)`` and commit its events; a Malformed
        record is reported (fail, or kept as a SKIPPED event). True when committed."""
        evs = guard_record(self.ctx, self.rows, line, raw, fn, obj, where)
        if evs is None:
            return False
        self.commit(evs, raw=raw, line=line)
        return True

    def record_elements(self, items: Iterable[Any], where: str,
                        fn: Callable[[Any, str], list[dict[str, Any]]]) -> None:
        """Every element of a JSON array (``where[i]``), each raw its compact JSON."""
        for i, item in enumerate(items):
            self.record(fn, item, f"{where}[{i}]", dumps(item))

    def record_lines(self, fn: Callable[[Any, str], list[dict[str, Any]]]) -> None:
        """Every JSONL line of the file (``line N``), each raw the line's text."""
        for line, text, obj in iter_jsonl(self.ctx, self.rows):
            self.record(fn, obj, f"line {line}", text, line)

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


# ===================================================================== JSON documents


def load_document(ctx: ParseContext, expected: str) -> Any:
    """Parse a whole-file JSON document; a syntax error names line and column."""
    data = ctx.read_bytes()
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

    def take_messages(self) -> list:
        """Take out the message list (the document itself, or its ``messages``); return it."""
        if isinstance(self.skeleton, list):
            msgs = self.skeleton
            self.take_array(None)
        else:
            msgs = self.skeleton["messages"]
            self.take_array("messages")
        return msgs

    def take_value(self, key: str) -> None:
        self.skeleton[key] = None
        self.entries.append({"value": _ptr_key(key)})

    def emit(self, b: Builder) -> None:
        b.add(EventKind.META, name="document", raw=dumps(self.skeleton))
        b.add(EventKind.META, name="layout", raw=dumps(self.entries))


def start_document(doc: Any) -> DocumentLayout:
    """A layout whose skeleton is a shallow copy of ``doc`` (arrays are emptied later)."""
    return DocumentLayout(skeleton=dict(doc) if isinstance(doc, dict) else list(doc))


def open_document(ctx: ParseContext, expected: str, ok: Callable[[Any], bool],
                  not_ok: str) -> tuple[Any, Builder, DocumentLayout]:
    """Load a whole-file JSON document that passes ``ok`` (else SourceError "top-level JSON
    is <not_ok>"); return it, the continuity's Builder and the document's layout."""
    doc = load_document(ctx, expected)
    if not ok(doc):
        raise SourceError(f"top-level JSON is {not_ok}", path=str(ctx.path), expected=expected)
    return doc, Builder(ctx), start_document(doc)


def is_message_list(doc: Any) -> bool:
    """A list of messages, or an object with a ``messages`` list (see ``take_messages``)."""
    return isinstance(doc, list) or (isinstance(doc, dict) and isinstance(doc.get("messages"), list))


def _raws(events_raw: Iterable[str | None]) -> tuple[str, list[str]]:
    """(the BOM or "", the non-null raws after the BOM marker)."""
    raws = [r for r in events_raw if r is not None]
    if raws and raws[0] == BOM:
        return BOM, raws[1:]
    return "", raws


def rebuild_document(events_raw: list[str | None]) -> Any:
    """Inverse of the document layout: the parsed JSON document (``== json.load(file)``)."""
    _, raws = _raws(events_raw)
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
    _, raws = _raws(events_raw)
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


def roundtrip(events_raw: Iterable[str | None], joiner: str = "\n", documents: bool = True) -> Any:
    """The source rebuilt from the raw column (all continuities of one file, in order).

    Raws written by the document layout (``documents=True``): the parsed document
    (``== json.load``; the BOM, like white space, is not part of the value). Otherwise the
    raws joined with ``joiner`` (JSONL: ``"\\n"``, giving the non-blank lines; text
    chunks: ``""``, giving the file), with a BOM marker event's BOM put back in front.
    """
    raws = list(events_raw)
    if documents and is_document_raws(raws):
        return rebuild_document(raws)
    bom, lines = _raws(raws)
    return bom + joiner.join(lines)


# ===================================================================== sniffing

_PEEK_LIMIT = 32 << 20


def strip_bom(data: bytes) -> bytes:
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data


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
    head = strip_bom(head)
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
                data = strip_bom(path.read_bytes())
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


def head_records(head: bytes, limit: int = 8) -> tuple[list[Any], bool]:
    """Parse up to ``limit`` complete leading lines of ``head``; (records, had_partial).
    A line that is not JSON is ``None``."""
    lines = head.split(b"\n")
    partial = not head.endswith(b"\n") and len(lines) >= 1
    complete = lines[:-1] if partial else lines
    out = []
    for ln in complete:
        if not ln.strip():
            continue
        try:
            out.append(orjson.loads(ln))
        except orjson.JSONDecodeError:
            out.append(None)
        if len(out) >= limit:
            break
    if not out and partial and lines[0].strip():
        try:  # a small file without trailing newline
            out.append(orjson.loads(lines[0]))
            partial = False
        except orjson.JSONDecodeError:
            pass
    return out, partial


def describe_records(recs: list[Any]) -> str:
    """A short description of what the leading lines were (for detection messages)."""
    bad = sum(r is None for r in recs)
    kinds = sorted({repr(r["type"]) if isinstance(r, dict) and isinstance(r.get("type"), str)
                    else "object without 'type'" if isinstance(r, dict)
                    else type(r).__name__ for r in recs if r is not None})[:4]
    parts = ([f"{bad} not JSON"] if bad else []) + ([f"saw {', '.join(kinds)}"] if kinds else [])
    return "; ".join(parts)


def sniff_jsonl_records(head: bytes, looks: Callable[[Any], bool], what: str, *,
                        detail: Callable[[list[Any]], str], bonus: float = 0.0,
                        long_first_line: Callable[[bytes], bool] = lambda head: False,
                        long_reason: str = "") -> Detection:
    """Score a JSONL head by the share of its leading lines that ``looks`` like ``what``
    records: ``0.95 · share + bonus`` (at most 1). A first line longer than the head is
    judged by ``long_first_line`` (0.7 with ``long_reason``)."""
    recs, partial = head_records(head)
    if not recs:
        if partial and long_first_line(head):
            return Detection(0.7, long_reason)
        return Detection(0.0, "no complete JSON line at the start")
    hits = sum(looks(r) for r in recs)
    if hits == 0:
        return Detection(0.0, f"0/{len(recs)} leading lines are {what} records ({describe_records(recs)})")
    return Detection(min(1.0, 0.95 * hits / len(recs) + bonus),
                     f"{hits}/{len(recs)} leading lines are {what} records ({detail(recs)})")


def is_message(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("role"), str)


def sniff_safely(fn: Callable[[Path, bytes], Detection], path: Path, head: bytes) -> Detection:
    """``fn``'s verdict on ``head`` without a BOM; a sniffer that raises, or returns
    anything but a Detection, means 'not this format' (sniffing is best effort)."""
    try:
        det = fn(Path(path), strip_bom(head))
    except Exception as exc:  # noqa: BLE001 - a broken sniffer must not hide the others
        return Detection(0.0, f"could not inspect ({type(exc).__name__}: {exc})")
    if not isinstance(det, Detection):
        return Detection(0.0, f"sniffer returned {type(det).__name__}")
    return det


def safe_sniff(fn: Callable[[Path, bytes], Detection]) -> Callable[[Path, bytes], Detection]:
    """``fn`` wrapped by :func:`sniff_safely`."""

    def wrapped(path: Path, head_bytes: bytes) -> Detection:
        return sniff_safely(fn, path, head_bytes)

    wrapped.__name__ = getattr(fn, "__name__", "sniff")
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


# ===================================================================== registration


def run_parser(fmt: str, fn: Callable[[ParseContext], list[ParsedContinuity]],
               ctx: ParseContext) -> list[ParsedContinuity]:
    """``fn(ctx)``; anything but SourceError escaping a parser is reported as a SourceError
    naming the file (a RecursionError as a record nested too deeply, anything else as an
    internal error of the importer: a bug, which the fuzz tests fail on)."""
    try:
        return fn(ctx)
    except SourceError:
        raise
    except RecursionError as exc:
        raise SourceError(f"record nested too deeply for the {fmt} parser ({exc})",
                          path=str(ctx.path), expected=f"a {fmt} log") from exc
    except Exception as exc:  # noqa: BLE001 - the contract is "only SourceError"
        raise SourceError(f"internal error in the {fmt} importer ({type(exc).__name__}: {exc})",
                          path=str(ctx.path), expected=f"a {fmt} log") from exc


def guard_parse(fmt: str, fn: Callable[[ParseContext], list[ParsedContinuity]]):
    """``fn`` wrapped by :func:`run_parser` (the last line of defence of every parser)."""

    def wrapped(ctx: ParseContext) -> list[ParsedContinuity]:
        return run_parser(fmt, fn, ctx)

    wrapped.__name__ = getattr(fn, "__name__", "parse")
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


def register_format(name: str, description: str, *, sniff: Callable[[Path, bytes], Detection],
                    parse: Callable[[ParseContext], list[ParsedContinuity]], profile: str,
                    raw_joiner: str | None = "\n") -> SourceFormat:
    """Register a format whose sniffer never raises and whose parser only raises SourceError."""
    return register(SourceFormat(name=name, description=description, sniff=safe_sniff(sniff),
                                 parse=guard_parse(name, parse), raw_joiner=raw_joiner,
                                 profile=profile))


# ===================================================================== OpenAI-style messages


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


def role_and_text(m: Any, where: str, expected: str) -> tuple[dict, str, str | None]:
    """(message, role, content text) of a ``{role, content}`` message."""
    m = want_dict(m, where, expected)
    role = m.get("role")
    if not isinstance(role, str):
        raise Malformed(f"{where}.role", f"is {type_name(role)}, not a string", "a role string")
    return m, role, content_text(m.get("content"), f"{where}.content")


def system_message(text: str | None) -> dict[str, Any]:
    return dict(kind=EventKind.MESSAGE, role=Role.SYSTEM, origin=Origin.SYSTEM, text=text)


@dataclass
class MessageState:
    """Cross-message state: legacy function_call pairing and synthetic ids."""

    n_synth: int = 0
    open_function: str | None = None

    def synth(self, prefix: str = "call") -> str:
        self.n_synth += 1
        return f"{prefix}-{self.n_synth}"


_ROLES = {"system": Role.SYSTEM, "developer": Role.DEVELOPER, "user": Role.USER}


def message_events(m: Any, where: str, b: Builder, st: MessageState, *,
                   assistant_is_request: bool = True) -> list[dict[str, Any]]:
    """Events for one OpenAI-style message. Validates fully before anything is added.

    ``assistant_is_request=False`` (e.g. the history inside one recorded LLM call) maps
    assistant messages as plain inputs, not as outputs of new requests.
    """
    m, role, text = role_and_text(m, where, "a message object {role, content}")
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
