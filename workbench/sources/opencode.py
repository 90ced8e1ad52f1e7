"""opencode sessions: the JSON storage directory and ``opencode export`` files.

Two layouts of the same data (``packages/opencode/src/session/message-v2.ts`` in the opencode
repository: ``Session.Info``, ``MessageV2.User | Assistant``, ``MessageV2.Part``):

* storage (``~/.local/share/opencode/storage/``, opencode before its SQLite database):
  ``session/<projectID>/<sessionID>.json`` (the session), ``message/<sessionID>/<messageID>.json``
  (one file per message), ``part/<messageID>/<partID>.json`` (one file per part), plus
  ``todo/<sessionID>.json`` and ``session_diff/<sessionID>.json``. The session file is the
  primary file; the others are read with it (companions), in id order (opencode's ids
  ascend with time).
* ``opencode export <sessionID>``: one JSON object ``{info: session, messages: [{info, parts}]}``.

Continuity id: the session id; parent: ``parentID`` (a sub-agent's session points at its
caller's); model: the most frequent assistant ``modelID`` (``providerID`` the provider).

Events: every message starts with a META ``message`` event (name ``user`` / ``assistant``,
the message id, its time) that carries the record's raw, then its parts in order:

* ``text`` -> MESSAGE (user, or the current request's output); ``synthetic`` text (what
  opencode adds, e.g. a read file's content) is flagged META, ``ignored`` text (never
  sent) is a SIDE_EFFECT;
* ``reasoning`` -> REASONING output; ``file`` -> MESSAGE ``[file: mime name]``;
* ``tool`` -> TOOL_CALL output (``call_id`` = ``callID``, ``name`` = the tool, text = the
  input JSON) and, once it ran, TOOL_RESULT (``state.output``, or ``state.error`` flagged
  ERROR), an input of the next request. A pruned output (``state.time.compacted``: opencode
  then sends "[Old tool result content cleared]") keeps its text; the count is in
  ``meta["pruned_tool_outputs"]``;
* ``step-start`` starts a request (one LLM call; an assistant message holds one step per
  call of its tool loop) and ``step-finish`` is its USAGE (``tokens.input`` uncached,
  ``tokens.cache.read`` / ``write``, ``tokens.output``: opencode's ``getUsage`` already
  takes the cache out of ``input`` for every provider); an assistant message without steps
  (older opencode) is one request whose usage is the message's ``tokens``;
* ``compaction`` (on a user message: opencode's request for a summary, ``auto`` or not) ->
  SIDE_EFFECT ``compaction_request``; the assistant message that answers it (``summary:
  true``) is the summarizer call: a COMPACTION boundary (trigger ``auto`` / ``manual``; no
  pre-compaction size is recorded) then its text as SUMMARY (origin BACKGROUND, not
  output), its usage on its own request. As in Claude Code's logs, the boundary's request
  is the first one after the summary;
* ``snapshot``, ``patch``, ``agent``, ``subtask``, ``retry`` (ERROR) -> SIDE_EFFECT; any
  other part -> OPAQUE.

The session's ``cost`` figures (per step, else per message) and token sums are its
run-level usage (``meta["run_usage"]``). Raws: the export file is a document (the messages
array taken out, one raw per message with its parts); the storage files are one raw each
(their JSON), with a closing META ``files`` event listing their paths relative to the
storage root in raw order: :func:`roundtrip` rebuilds every file's JSON value.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder, load_document
from workbench.sources.checks import (
    Malformed,
    opt_dict,
    opt_int,
    opt_str,
    str_or_none,
    type_name,
    want_dict,
    want_list,
)
from workbench.sources.lossless import BOM, rebuild_document, start_document
from workbench.sources.registration import register_format
from workbench.sources.run_usage import run_usage
from workbench.sources.sniffing import peek
from workbench.sources.values import dumps

NAME = "opencode"
EXPECTED_EXPORT = "an opencode export {info: session, messages: [{info, parts}]}"
EXPECTED_SESSION = "an opencode session object {id, projectID, directory, title, time}"
EXPECTED_MESSAGE = "an opencode message object {id, sessionID, role, time, ...}"
EXPECTED_PART = "an opencode part object {id, messageID, type, ...}"
_SIDE_PARTS = frozenset({"snapshot", "patch", "agent", "subtask", "retry"})


# ---------------------------------------------------------------- mapping

class _State:
    """Request bookkeeping across the messages of one session."""

    def __init__(self, b: Builder):
        self.b = b
        self.req: int | None = None  # the open request (a step, or a step-less message)
        self.role: str | None = None
        self.summary = False
        self.stepless_usage: tuple[int, int, int, int] | None = None
        self.models: Counter[str] = Counter()
        self.providers: Counter[str] = Counter()
        self.costs: list[float] = []
        self.usages: list[tuple[int, int, int, int]] = []
        self.message_cost: float | None = None
        self.step_costs = 0
        self.pruned = 0
        self.trigger = CompactTrigger.OTHER  # of the last compaction request (a user message's part)
        self.boundary_done = False  # the current summary message has its COMPACTION event

    def request(self) -> int:
        if self.req is None:
            self.req = self.b.new_request()
        return self.req


def _tokens(t: Any, where: str) -> tuple[int, int, int, int] | None:
    """Canonical usage from an opencode ``tokens`` object; None when it holds no count."""
    t = opt_dict(t, where)
    if t is None:
        return None
    cache = opt_dict(t.get("cache"), f"{where}.cache") or {}
    inp = opt_int(t.get("input"), f"{where}.input")
    out = opt_int(t.get("output"), f"{where}.output")
    read = opt_int(cache.get("read"), f"{where}.cache.read") or 0
    write = opt_int(cache.get("write"), f"{where}.cache.write") or 0
    if not (inp or out or read or write):
        return None
    return (inp or 0, read, write, out or 0)


def _cost(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _message_events(info: Any, where: str, st: _State) -> list[dict[str, Any]]:
    """The META event that opens a message (and closes the previous one's request)."""
    info = want_dict(info, where, EXPECTED_MESSAGE)
    role = info.get("role")
    if role not in ("user", "assistant"):
        raise Malformed(f"{where}.role", f"is {role!r}", "'user' or 'assistant'")
    time = opt_dict(info.get("time"), f"{where}.time") or {}
    ts = opt_int(time.get("created"), f"{where}.time.created")
    usage = _tokens(info.get("tokens"), f"{where}.tokens") if role == "assistant" else None
    if role == "assistant":
        for key, counter in (("modelID", st.models), ("providerID", st.providers)):
            v = opt_str(info.get(key), f"{where}.{key}")
            if v:
                counter[v] += 1
    _close_message(st)
    st.role, st.req = role, None
    st.summary = role == "assistant" and info.get("summary") is True
    st.boundary_done = False
    st.stepless_usage, st.message_cost, st.step_costs = usage, _cost(info.get("cost")), 0
    return [dict(kind=EventKind.META, origin=Origin.HARNESS, name=role,
                 message_id=str_or_none(info.get("id")), ts_ms=-1 if ts is None else ts)]


def _close_message(st: _State) -> None:
    """A step-less assistant message's usage and cost (older opencode: no step parts)."""
    if st.role != "assistant":
        return
    if st.step_costs == 0:
        if st.stepless_usage is not None:
            req = st.request()
            st.b.add(EventKind.USAGE, origin=Origin.HARNESS, name="message_tokens",
                     usage=st.stepless_usage, request=req)
            st.usages.append(st.stepless_usage)
        if st.message_cost is not None:
            st.costs.append(st.message_cost)
    st.role = None


def _part_events(p: Any, where: str, st: _State) -> list[dict[str, Any]]:
    p = want_dict(p, where, EXPECTED_PART)
    typ = p.get("type")
    if not isinstance(typ, str):
        raise Malformed(f"{where}.type", f"is {type_name(typ)}", "a part type string")
    pid = str_or_none(p.get("id"))
    common: dict[str, Any] = {"message_id": pid}
    out = st.role == "assistant"
    if typ in ("text", "reasoning"):
        text = opt_str(p.get("text"), f"{where}.text")
        if p.get("ignored") is True:
            return [dict(kind=EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name="ignored_text", text=text, **common)]
        flags = int(EventFlag.META) if p.get("synthetic") is True else 0
        if not out:
            return [dict(kind=EventKind.MESSAGE, role=Role.USER, text=text, flags=flags,
                         origin=Origin.HARNESS if flags else Origin.USER, **common)]
        if st.summary:
            evs = [] if st.boundary_done else [dict(
                kind=EventKind.COMPACTION, role=Role.SYSTEM, origin=Origin.HARNESS, name="compaction",
                compact_trigger=st.trigger)]
            st.boundary_done = True
            return evs + [dict(kind=EventKind.SUMMARY, role=Role.ASSISTANT, origin=Origin.BACKGROUND,
                               name="compaction_summary", text=text, **common)]
        kind = EventKind.REASONING if typ == "reasoning" else EventKind.MESSAGE
        return [dict(kind=kind, role=Role.ASSISTANT, origin=Origin.AGENT, text=text, flags=flags,
                     request=st.request(), output=True, **common)]
    if typ == "tool":
        return _tool_events(p, where, st, common)
    if typ == "step-start":
        st.req = None
        return [dict(kind=EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name="step-start",
                     request=st.request(), **common)]
    if typ == "step-finish":
        usage = _tokens(p.get("tokens"), f"{where}.tokens")
        cost = _cost(p.get("cost"))
        st.step_costs += 1
        if cost is not None:
            st.costs.append(cost)
        req = st.request()
        st.req = None
        if usage is None:
            return [dict(kind=EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name="step-finish",
                         request=req, **common)]
        st.usages.append(usage)
        return [dict(kind=EventKind.USAGE, origin=Origin.HARNESS, name="step-finish", usage=usage,
                     request=req, **common)]
    if typ == "file":
        mime = str_or_none(p.get("mime")) or "?"
        name = str_or_none(p.get("filename")) or str_or_none(p.get("url")) or "file"
        placeholder = f"[file: {mime} {name}]"
        if out:
            return [dict(kind=EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT, name="file",
                         text=placeholder, request=st.request(), output=True, **common)]
        return [dict(kind=EventKind.MESSAGE, role=Role.USER, origin=Origin.USER, name="file",
                     text=placeholder, **common)]
    if typ == "compaction":  # the request for a summary; the boundary sits before the summary
        auto = p.get("auto")
        st.trigger = (CompactTrigger.AUTO if auto is True else CompactTrigger.MANUAL if auto is False
                      else CompactTrigger.OTHER)
        return [dict(kind=EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name="compaction_request", **common)]
    if typ in _SIDE_PARTS:
        text = str_or_none(p.get("prompt")) if typ == "subtask" else None
        return [dict(kind=EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name=typ, text=text,
                     flags=int(EventFlag.ERROR) if typ == "retry" else 0, **common)]
    return [dict(kind=EventKind.OPAQUE, name=f"part:{typ}"[:200], **common)]


def _tool_events(p: dict, where: str, st: _State, common: dict[str, Any]) -> list[dict[str, Any]]:
    state = want_dict(p.get("state"), f"{where}.state", "a tool state {status, input, ...}")
    status = state.get("status")
    if status not in ("pending", "running", "completed", "error"):
        raise Malformed(f"{where}.state.status", f"is {status!r}", "pending, running, completed or error")
    cid = opt_str(p.get("callID"), f"{where}.callID")
    tool = opt_str(p.get("tool"), f"{where}.tool")
    args = state.get("input")
    call = dict(kind=EventKind.TOOL_CALL, role=Role.ASSISTANT, origin=Origin.AGENT, call_id=cid, name=tool,
                text=None if args is None else dumps(args), request=st.request(), output=True, **common)
    if status == "completed":
        text = opt_str(state.get("output"), f"{where}.state.output")
        time = opt_dict(state.get("time"), f"{where}.state.time") or {}
        if time.get("compacted") is not None:
            st.pruned += 1
        return [call, dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL, call_id=cid,
                           name=tool, text=text)]
    if status == "error":
        text = opt_str(state.get("error"), f"{where}.state.error")
        return [call, dict(kind=EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL, call_id=cid,
                           name=tool, text=text, flags=int(EventFlag.ERROR))]
    return [call]


def _finish(ctx: ParseContext, b: Builder, st: _State, session: dict, fmt_meta: dict[str, Any]) -> ParsedContinuity:
    _close_message(st)
    rows = b.finish()
    sid = str_or_none(session.get("id")) or ctx.path.stem
    meta: dict[str, Any] = {**fmt_meta, **{k: session[k] for k in ("title", "version", "directory", "projectID")
                                          if isinstance(session.get(k), str)}}
    if st.pruned:
        meta["pruned_tool_outputs"] = st.pruned
    if st.usages or st.costs:
        meta["run_usage"] = run_usage(
            "opencode step-finish tokens and costs", tokens_sent=sum(i + r + w for i, r, w, _ in st.usages),
            tokens_received=sum(o for *_, o in st.usages), api_calls=len(st.usages),
            cost_usd=sum(st.costs) if st.costs else None)
    return ParsedContinuity(
        continuity_id=sid, source_format=NAME, source_file=str(ctx.path), rows=rows,
        parent_id=str_or_none(session.get("parentID")),
        model=st.models.most_common(1)[0][0] if st.models else None,
        provider=st.providers.most_common(1)[0][0] if st.providers else None, meta=meta)


# ---------------------------------------------------------------- export file

def _parse_export(ctx: ParseContext, doc: dict) -> list[ParsedContinuity]:
    session = doc.get("info")
    if not isinstance(session, dict):
        raise SourceError(f"'info' is {type_name(session)}, not an object", path=str(ctx.path),
                          expected=EXPECTED_EXPORT)
    b = Builder(ctx)
    st = _State(b)
    layout = start_document(doc)
    layout.take_array("messages")
    layout.emit(b)

    def message(m: Any, where: str) -> list[dict[str, Any]]:
        m = want_dict(m, where, "a message with its parts {info, parts}")
        parts = want_list(m.get("parts", []), f"{where}.parts", "a list of parts")
        evs = _message_events(m.get("info"), f"{where}.info", st)
        for j, p in enumerate(parts):
            evs.extend(_part_events(p, f"{where}.parts[{j}]", st))
        return evs

    b.record_elements(doc["messages"], "messages", message)
    return [_finish(ctx, b, st, session, {"layout": "export"})]


# ---------------------------------------------------------------- storage directory

def _storage_root(session_file: Path) -> Path | None:
    """``<root>`` of ``<root>/session/<projectID>/<sessionID>.json``, when it looks like one."""
    if session_file.parent.parent.name != "session":
        return None
    root = session_file.parents[2]
    return root if (root / "message").is_dir() else None


def _json_files(d: Path) -> list[Path]:
    try:
        return sorted((p for p in d.iterdir() if p.suffix == ".json" and p.is_file()), key=lambda p: p.name)
    except OSError:
        return []


def _parse_storage(ctx: ParseContext, session: dict, root: Path) -> list[ParsedContinuity]:
    b = Builder(ctx)
    st = _State(b)
    sid = ctx.path.stem  # ids come from the paths (opencode's own migration does the same)
    files = [ctx.path.relative_to(root).as_posix()]
    b.add(EventKind.META, origin=Origin.HARNESS, name="session", message_id=sid,
          text=str_or_none(session.get("title")), raw=dumps(session))

    def read(path: Path, where: str) -> Any:
        data = ctx.read_companion(path)
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise Malformed(where, f"is not valid JSON ({exc})", "a JSON object") from None
        files.append(path.relative_to(root).as_posix())
        return value

    def one(path: Path, fn) -> None:
        rel = path.relative_to(root).as_posix()
        with ctx.reading(path):
            try:
                value = read(path, rel)
            except Malformed as exc:
                files.append(rel)
                b.bad(exc, path.read_bytes().decode("utf-8", "replace"))
                return
            b.record(fn, value, rel, dumps(value))

    for mpath in _json_files(root / "message" / sid):
        one(mpath, lambda v, w: _message_events(v, w, st))
        for ppath in _json_files(root / "part" / mpath.stem):
            one(ppath, lambda v, w: _part_events(v, w, st))
    _close_message(st)
    for extra in ("todo", "session_diff"):
        path = root / extra / f"{sid}.json"
        if path.is_file():
            one(path, lambda v, w, extra=extra: [dict(kind=EventKind.META, origin=Origin.HARNESS, name=extra)])
    b.add(EventKind.META, origin=Origin.HARNESS, name="files", raw=dumps(files))
    return [_finish(ctx, b, st, {**session, "id": sid}, {"layout": "storage"})]


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    doc = load_document(ctx, EXPECTED_EXPORT)
    if not isinstance(doc, dict):
        raise SourceError(f"top-level JSON is {type_name(doc)}, not an object", path=str(ctx.path),
                          expected=EXPECTED_EXPORT)
    if isinstance(doc.get("messages"), list):
        return _parse_export(ctx, doc)
    root = _storage_root(ctx.path)
    if root is None:
        raise SourceError("neither an export (no 'messages' list) nor a session file of a storage directory "
                          "(<root>/session/<projectID>/<sessionID>.json beside <root>/message/)",
                          path=str(ctx.path), expected=f"{EXPECTED_EXPORT}, or {EXPECTED_SESSION}")
    return _parse_storage(ctx, doc, root)


def roundtrip(events_raw: list[str | None]) -> Any:
    """The source rebuilt from the raw column: an export's JSON value, or for a storage
    session ``{path relative to the storage root: JSON value}`` of every file it read."""
    raws = [r for r in events_raw if r is not None]
    if raws and raws[0] == BOM:
        raws = raws[1:]
    try:
        files = orjson.loads(raws[-1])
    except (IndexError, orjson.JSONDecodeError):
        files = None
    if isinstance(files, list) and len(files) == len(raws) - 1 and all(isinstance(f, str) for f in files):
        return {f: orjson.loads(r) for f, r in zip(files, raws[:-1], strict=True)}
    return rebuild_document(raws)


# ---------------------------------------------------------------- detection

_index: dict[tuple[str, int], dict[str, str]] = {}


def _session_of_message(root: Path, message_id: str) -> str | None:
    """The session a message id belongs to (``<root>/message/<sessionID>/<messageID>.json``),
    from an index of the storage root built once per state of its message directory."""
    mdir = root / "message"
    key = (str(mdir), os.stat(mdir).st_mtime_ns)
    index = _index.get(key)
    if index is None:
        index = {}
        for sdir in mdir.iterdir():
            if sdir.is_dir():
                for m in sdir.iterdir():
                    if m.suffix == ".json":
                        index[m.stem] = sdir.name
        if len(_index) > 8:
            _index.clear()
        _index[key] = index
    return index.get(message_id)


def _session_file(root: Path, sid: str) -> Path | None:
    sdir = root / "session"
    if not sdir.is_dir():
        return None
    return next((p / f"{sid}.json" for p in sorted(sdir.iterdir())
                 if p.is_dir() and (p / f"{sid}.json").is_file()), None)


def primary_of(path: Path) -> Path | None:
    """The session file that reads a message, part, todo or session_diff file."""
    if path.suffix != ".json":
        return None
    kind = path.parent.parent.name if path.parent.parent.name in ("message", "part") else path.parent.name
    if kind == "message":
        return _session_file(path.parents[2], path.parent.name)
    if kind == "part":
        root = path.parents[2]
        sid = _session_of_message(root, path.parent.name) if (root / "message").is_dir() else None
        return None if sid is None else _session_file(root, sid)
    if kind in ("todo", "session_diff"):
        return _session_file(path.parents[1], path.stem)
    return None


def _sniff(path: Path, head: bytes) -> Detection:
    p = peek(path, head)
    if p.starts != "{":
        return Detection(0.0, "not a JSON object")
    doc = p.doc if p.doc_ok else None
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list) and isinstance(doc.get("info"), dict):
        msgs = doc["messages"]
        shaped = all(isinstance(m, dict) and isinstance(m.get("info"), dict) and isinstance(m.get("parts"), list)
                     for m in msgs[:20])
        if shaped:
            return Detection(0.95, f"an opencode export: info + {len(msgs)} messages with parts")
        return Detection(0.1, "info + messages, but the messages are not {info, parts}")
    if _storage_root(path) is not None:
        looks = isinstance(doc, dict) and isinstance(doc.get("id"), str) and "time" in doc
        return Detection(0.95 if looks else 0.55, "a session file of an opencode storage directory")
    return Detection(0.0, "neither an opencode export nor a storage session file")


FORMAT = register_format(
    NAME, "opencode session (storage directory session/message/part files, or `opencode export` JSON)",
    sniff=_sniff, parse=_parse,
    profile="as-recorded",  # no preset mirrors opencode's compaction and pruning yet
    raw_joiner=None, primary_of=primary_of)
parse, sniff = FORMAT.parse, FORMAT.sniff
