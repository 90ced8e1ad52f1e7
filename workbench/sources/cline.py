"""Cline and Roo Code task directories (``<VS Code globalStorage>/<extension>/tasks/<task id>/``).

A task is a directory of JSON files (layout and fields as written by Cline's
``src/core/storage/disk.ts`` / Roo Code's ``src/core/task-persistence``):

* ``api_conversation_history.json``: what was sent to the model, a list of Anthropic
  messages ``{role, content}`` (content blocks: text, tool_use, tool_result, image,
  thinking); Roo Code adds ``ts``, and a context condensation appends a summary message
  (``isSummary``) while the messages it replaces stay, tagged ``condenseParent`` (Roo
  Code's non-destructive condense, ``src/core/condense``);
* ``ui_messages.json``: the chat panel, a list of ``{ts, type: say|ask, say|ask, text,
  partial, conversationHistoryIndex, modelInfo, ...}``. Every API request is a
  ``say: api_req_started`` whose ``text`` is JSON ``{request, tokensIn, tokensOut,
  cacheWrites, cacheReads, cost, apiProtocol?, cancelReason?}`` (older Cline wrote the
  counts on a following ``api_req_finished``); Roo Code's ``condense_context`` carries
  ``contextCondense {cost, prevContextTokens, newContextTokens, summary}``;
* ``task_metadata.json`` (Cline): ``files_in_context``, ``model_usage``,
  ``environment_history``.

The continuity is read from ``api_conversation_history.json`` (the primary file); the other
two next to it are read with it (companions: not imported again). A ``ui_messages.json``
without a history beside it is imported alone (*ui-only*, below). Continuity id: the task
directory's name; model: the most frequent ``modelInfo.modelId`` of the panel, else the
last of ``model_usage``.

Events, one file after the other (each file's records contiguous, so each file is rebuilt
from its raws: a META ``file`` event whose raw is ``{"file": name}``, then the document
layout of :mod:`workbench.sources.lossless`):

* history: a user message -> its blocks (:mod:`workbench.sources.anthropic_blocks`), role
  user; an assistant message -> one request, its blocks flagged OUTPUT. A Roo Code summary
  (``isSummary``) -> COMPACTION (trigger ``other``: the log does not say whether it was
  automatic; ``pre_tokens`` = the matching ``condense_context``'s ``prevContextTokens``,
  the k-th summary with the k-th condensation) then SUMMARY (origin BACKGROUND).
* panel: an ``api_req_started`` with token counts -> USAGE of its request: the first
  assistant message after its ``conversationHistoryIndex`` (Cline); without indices, when
  every history message has its ``ts`` (Roo Code), the assistant message answers the last
  ``api_req_started`` at or before it (Roo Code before 3.36 deleted condensed messages from
  the history, never from the panel: their requests are counted in
  ``meta["requests_without_history"]``); else the k-th request with usage is the k-th
  assistant message; every other message -> SIDE_EFFECT
  ``say:<x>`` / ``ask:<x>`` without text (the panel repeats what the history holds).
* metadata -> META ``task_metadata``.

*ui-only* (no history): ``say: task`` / ``user_feedback`` and a ``say: text`` before the
first request (newer Cline's task line) -> user MESSAGE; each
``api_req_started`` starts a request (its USAGE); ``text``, ``reasoning``,
``completion_result`` and the ``followup`` / ``plan_mode_respond`` questions -> its outputs;
a tool, command, browser or MCP request -> TOOL_CALL output (``call_id`` ``ui-<index>``)
paired with the ``command_output`` / ``mcp_server_response`` / ``browser_action_result``
after it; anything else -> SIDE_EFFECT with its text. Streaming snapshots (``partial``)
are kept like the rest.

Usage (canonical: input, cache read, cache write, output). Cline's providers report the
input without cache reads and writes (its own context gauge adds them up): ``(tokensIn,
cacheReads, cacheWrites, tokensOut)``. Roo Code records ``apiProtocol``: for ``openai``
``tokensIn`` includes the cache, so input = ``tokensIn − cacheReads − cacheWrites``; for
``anthropic`` Roo Code 3.30 (2025-10-31, "Fix cost and token tracking between provider
styles") also stores the total while earlier releases stored the uncached part: a task
whose ``anthropic`` requests all have ``tokensIn ≥ cacheReads + cacheWrites`` is read as
totals, one with a request below that as uncached parts. The decision is in the
continuity's ``meta["usage_convention"]``. The task's ``cost`` figures (plus Roo Code's
condensation costs) and token sums are its run-level usage (``meta["run_usage"]``).
"""

from __future__ import annotations

import bisect
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from workbench.continuity.enums import CompactTrigger, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.anthropic_blocks import content_block_events
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder
from workbench.sources.checks import (
    Malformed,
    opt_dict,
    opt_int,
    opt_str,
    str_or_none,
    want_dict,
)
from workbench.sources.lossless import BOM, rebuild_document, start_document
from workbench.sources.registration import register_format
from workbench.sources.run_usage import run_usage
from workbench.sources.sniffing import peek
from workbench.sources.values import dumps, parse_ts

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
EXPECTED_HISTORY = f"a Cline / Roo Code {HISTORY}: a JSON list of messages {{role, content}}"
EXPECTED_UI = f"a Cline / Roo Code {UI}: a JSON list of {{ts, type: say|ask, ...}}"
# panel messages only Roo Code writes
ROO_SAYS = frozenset({"condense_context", "condense_context_error", "sliding_window_truncation",
                      "subtask_result", "codebase_search_result", "user_edit_todos",
                      "too_many_tools_warning", "api_req_rate_limit_wait", "checkpoint_saved"})
_TOOL_REQUESTS = frozenset({"tool", "command", "use_mcp_server", "browser_action_launch"})
_TOOL_RESULTS = {"command_output", "mcp_server_response", "browser_action_result"}
_USER_SAYS = frozenset({"task", "user_feedback"})
_OUTPUT_SAYS = frozenset({"text", "reasoning", "completion_result"})
_OUTPUT_ASKS = frozenset({"followup", "plan_mode_respond", "completion_result"})


# ---------------------------------------------------------------- reading the files

def _load_list(data: bytes, path: Path, expected: str) -> list:
    if not data.strip():
        raise SourceError("file is empty", path=str(path), expected=expected)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise SourceError(f"not valid JSON: {exc}", path=str(path), line=getattr(exc, "lineno", None),
                          expected=expected) from None
    if not isinstance(doc, list):
        raise SourceError(f"top-level JSON is {type(doc).__name__}, not a list", path=str(path),
                          expected=expected)
    return doc


def _request_info(m: dict, where: str) -> dict[str, Any] | None:
    """The JSON in an ``api_req_started`` / ``api_req_finished`` text; None without counts."""
    text = m.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        info = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise Malformed(f"{where}.text", "is not JSON", "the request's JSON {request, tokensIn, tokensOut, ...}") from None
    info = want_dict(info, f"{where}.text", "the request's JSON object {request, tokensIn, tokensOut, ...}")
    counts = {k: opt_int(info.get(k), f"{where}.text.{k}")
              for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")}
    if counts["tokensIn"] is None and counts["tokensOut"] is None:
        return None
    cost = info.get("cost")
    protocol = info.get("apiProtocol")
    return {**counts, "cost": float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
            "protocol": protocol if isinstance(protocol, str) else None}


def _say_ask(m: Any, where: str) -> tuple[dict, str]:
    """(message, ``say:<x>`` / ``ask:<x>``) of a panel message."""
    m = want_dict(m, where, "a panel message object {ts, type: say|ask, ...}")
    typ = m.get("type")
    if typ not in ("say", "ask"):
        raise Malformed(f"{where}.type", f"is {typ!r}", "'say' or 'ask'")
    sub = opt_str(m.get(typ), f"{where}.{typ}")
    opt_str(m.get("text"), f"{where}.text")
    return m, f"{typ}:{sub or ''}"


class _Task:
    """What the panel says about the task's requests, collected before any event is added."""

    def __init__(self, ui: list, where: str):
        self.ui = ui
        self.bad: dict[int, Malformed] = {}
        self.kind: list[str | None] = []
        self.usage: dict[int, dict[str, Any]] = {}  # ui index -> request info
        self.condensations: list[dict[str, Any]] = []
        models: Counter[str] = Counter()
        self.providers: Counter[str] = Counter()
        last_started = None
        for i, m in enumerate(ui):
            w = f"{where}[{i}]"
            try:
                m, kind = _say_ask(m, w)
                if kind == "say:api_req_started":
                    last_started = i
                    info = _request_info(m, w)
                    if info is not None:
                        self.usage[i] = info
                elif kind == "say:api_req_finished" and last_started is not None and last_started not in self.usage:
                    info = _request_info(m, w)  # older Cline: the counts come after the request
                    if info is not None:
                        self.usage[last_started] = info
                elif kind == "say:condense_context" and m.get("partial") is not True:
                    cc = opt_dict(m.get("contextCondense"), f"{w}.contextCondense")
                    if cc is not None:
                        self.condensations.append({
                            "prev": opt_int(cc.get("prevContextTokens"), f"{w}.contextCondense.prevContextTokens"),
                            "new": opt_int(cc.get("newContextTokens"), f"{w}.contextCondense.newContextTokens"),
                            "cost": cc.get("cost") if isinstance(cc.get("cost"), int | float) else None,
                            "summary": str_or_none(cc.get("summary"))})
                mi = m.get("modelInfo")
                if isinstance(mi, dict) and isinstance(mi.get("modelId"), str):
                    models[mi["modelId"]] += 1
                    if isinstance(mi.get("providerId"), str):
                        self.providers[mi["providerId"]] += 1
                self.kind.append(kind)
            except Malformed as exc:
                self.bad[i] = exc
                self.kind.append(None)
        self.model = models.most_common(1)[0][0] if models else None

    def harness(self, path: Path) -> str:
        return "roo_code" if _roo_markers(self.ui, path) else "cline"

    def convention(self, harness: str) -> str:
        """How ``tokensIn`` relates to the cache counts in this task (see the module docstring)."""
        if harness != "roo_code":
            return "uncached"
        anth = [u for u in self.usage.values() if u["protocol"] == "anthropic"]
        if any((u["cacheReads"] or 0) + (u["cacheWrites"] or 0) > (u["tokensIn"] or 0) for u in anth):
            return "uncached-anthropic"
        return "total"

    def canonical(self, info: dict[str, Any], convention: str) -> tuple[int, int, int, int]:
        tin, tout = info["tokensIn"], info["tokensOut"]
        read, write = info["cacheReads"] or 0, info["cacheWrites"] or 0
        includes = convention == "total" or (convention == "uncached-anthropic" and info["protocol"] == "openai")
        if tin is None:
            uncached = -1
        elif includes:
            uncached = max(tin - read - write, 0)
        else:
            uncached = tin
        return (uncached, read, write, -1 if tout is None else tout)


def _roo_markers(ui: list, path: Path) -> bool:
    if "roo-cline" in str(path).lower():
        return True
    for m in ui:
        if not isinstance(m, dict):
            continue
        if m.get("say") in ROO_SAYS or "contextCondense" in m or "isProtected" in m or "apiProtocol" in m:
            return True
        if m.get("say") == "api_req_started" and isinstance(m.get("text"), str) and '"apiProtocol"' in m["text"]:
            return True
    return False


# ---------------------------------------------------------------- events

def _file_marker(b: Builder, name: str) -> None:
    b.add(EventKind.META, name="file", text=name, raw=dumps({"file": name}), origin=Origin.HARNESS)


def _history_events(b: Builder, history: list, task: _Task | None,
                    usage_of: dict[int, tuple[int, int, int, int]], ts_of: dict[int, int]) -> None:
    """Add the history's events (one request per assistant message)."""
    tool_names: dict[str, str] = {}
    condensations = iter(task.condensations if task is not None else [])

    def message(m: Any, where: str, i: int) -> list[dict[str, Any]]:
        m = want_dict(m, where, "a message object {role, content}")
        role = m.get("role")
        if role not in ("user", "assistant"):
            raise Malformed(f"{where}.role", f"is {role!r}", "'user' or 'assistant'")
        ts = parse_ts(m.get("ts"))
        if m.get("isSummary") is True:
            parts = content_block_events(m.get("content"), assistant=False, base={"flags": 0}, tool_names={},
                                         where=f"{where}.content")
            summary = "\n".join(e["text"] for e in parts if isinstance(e.get("text"), str))
            cc = next(condensations, None)
            pre = cc["prev"] if cc is not None and cc["prev"] is not None else -1
            return [dict(kind=EventKind.COMPACTION, role=Role.SYSTEM, origin=Origin.HARNESS,
                         name="condense_context", compact_trigger=CompactTrigger.OTHER,
                         compact_pre_tokens=pre, ts_ms=ts),
                    dict(kind=EventKind.SUMMARY, role=Role.ASSISTANT if role == "assistant" else Role.USER,
                         origin=Origin.BACKGROUND, name="condense_summary", text=summary, ts_ms=ts)]
        if role == "user":
            base = {"role": Role.USER, "origin": Origin.USER, "flags": 0, "ts_ms": ts}
            return content_block_events(m.get("content"), assistant=False, base=base, tool_names=tool_names,
                                        where=f"{where}.content")
        base = {"role": Role.ASSISTANT, "origin": Origin.AGENT, "flags": 0, "ts_ms": ts_of.get(i, ts)}
        evs = content_block_events(m.get("content"), assistant=True, base=base, tool_names=tool_names,
                                   where=f"{where}.content")
        req = b.new_request()  # validated first: a bad message takes no request
        for e in evs:
            e["request"], e["output"] = req, True
        if i in usage_of:
            evs.append(dict(kind=EventKind.USAGE, origin=Origin.HARNESS, name="api_req_started",
                            usage=usage_of[i], request=req, ts_ms=ts_of.get(i, -1)))
        return evs

    layout = start_document(history)
    layout.take_array(None)
    _file_marker(b, HISTORY)
    layout.emit(b)
    for i, m in enumerate(history):
        b.record(lambda obj, where, i=i: message(obj, where, i), m, f"{HISTORY}[{i}]", dumps(m))


def _ui_combined(b: Builder, ui: list, task: _Task) -> None:
    """The panel beside a history: raw-only side effects (usage went on the requests)."""
    layout = start_document(ui)
    layout.take_array(None)
    _file_marker(b, UI)
    layout.emit(b)
    for i, m in enumerate(ui):
        raw = dumps(m)
        if i in task.bad:
            b.bad(task.bad[i], raw)
            continue
        b.add(EventKind.SIDE_EFFECT, origin=Origin.HARNESS, name=task.kind[i], raw=raw,
              ts_ms=parse_ts(m.get("ts")))


def _ui_only(b: Builder, ui: list, task: _Task, convention: str) -> None:
    """A panel without its history: the panel's own text is the continuity."""
    layout = start_document(ui)
    layout.take_array(None)
    _file_marker(b, UI)
    layout.emit(b)
    req = -1
    open_call: str | None = None
    for i, m in enumerate(ui):
        raw = dumps(m)
        if i in task.bad:
            b.bad(task.bad[i], raw)
            continue
        kind = task.kind[i] or ""
        typ, _, sub = kind.partition(":")
        text = str_or_none(m.get("text"))
        ts = parse_ts(m.get("ts"))
        common: dict[str, Any] = dict(raw=raw, ts_ms=ts, name=kind)
        if kind == "say:api_req_started":
            req = b.new_request()
            info = task.usage.get(i)
            if info is not None:
                b.add(EventKind.USAGE, origin=Origin.HARNESS, usage=task.canonical(info, convention),
                      request=req, **common)
            else:
                b.add(EventKind.SIDE_EFFECT, origin=Origin.HARNESS, request=req, **common)
        elif typ == "say" and (sub in _USER_SAYS or (sub == "text" and req < 0)):
            b.add(EventKind.MESSAGE, role=Role.USER, origin=Origin.USER, text=text, **common)
        elif req >= 0 and ((typ == "say" and sub in _OUTPUT_SAYS) or (typ == "ask" and sub in _OUTPUT_ASKS)):
            b.add(EventKind.REASONING if sub == "reasoning" else EventKind.MESSAGE, role=Role.ASSISTANT,
                  origin=Origin.AGENT, text=text, request=req, output=True, **common)
        elif req >= 0 and sub in _TOOL_REQUESTS:
            open_call = f"ui-{i}"
            b.add(EventKind.TOOL_CALL, role=Role.ASSISTANT, origin=Origin.AGENT, text=text, request=req,
                  output=True, call_id=open_call, **common)
        elif sub in _TOOL_RESULTS and open_call is not None:
            b.add(EventKind.TOOL_RESULT, role=Role.TOOL, origin=Origin.TOOL, text=text, call_id=open_call,
                  **common)
            open_call = None
        else:
            b.add(EventKind.SIDE_EFFECT, origin=Origin.HARNESS, text=text, **common)


def _metadata_event(b: Builder, meta_doc: Any) -> None:
    _file_marker(b, METADATA)
    b.add(EventKind.META, origin=Origin.HARNESS, name="task_metadata", raw=dumps(meta_doc))


def _assistant_indices(history: list) -> list[int]:
    return [i for i, m in enumerate(history) if isinstance(m, dict) and m.get("role") == "assistant"
            and m.get("isSummary") is not True]


def _pin_usage(history: list, ui: list, task: _Task) -> dict[int, int]:
    """ui index of each request with usage -> history index of its assistant message."""
    assistants = _assistant_indices(history)
    started = sorted(task.usage)
    indexed = [i for i in started if isinstance(ui[i].get("conversationHistoryIndex"), int)
               and not isinstance(ui[i].get("conversationHistoryIndex"), bool)]
    out: dict[int, int] = {}
    if indexed and len(indexed) == len(started):
        taken: set[int] = set()
        for i in started:
            k = bisect.bisect_right(assistants, ui[i]["conversationHistoryIndex"])
            if k < len(assistants) and assistants[k] not in taken:
                out[i] = assistants[k]
                taken.add(assistants[k])
        return out
    by_time = _pin_by_time(history, ui, task, assistants)
    if by_time is not None:
        return by_time
    for i, a in zip(started, assistants, strict=False):
        out[i] = a
    return out


def _int_ts(m: Any) -> int | None:
    ts = m.get("ts") if isinstance(m, dict) else None
    return ts if isinstance(ts, int) and not isinstance(ts, bool) else None


def _pin_by_time(history: list, ui: list, task: _Task, assistants: list[int]) -> dict[int, int] | None:
    """Roo Code stamps every history message (``ts``, when it was saved: after its stream):
    an assistant message answers the last ``api_req_started`` at or before it. Pairing by
    position instead is wrong once messages left the history (Roo Code's condensing before
    3.36 deleted the condensed ones, while the panel keeps every request). None when a
    stamp is missing."""
    starts = [(ts, i) for i, k in enumerate(task.kind)
              if k == "say:api_req_started" and (ts := _int_ts(ui[i])) is not None]
    if not assistants or len(starts) != task.kind.count("say:api_req_started"):
        return None
    stamps = [_int_ts(history[a]) for a in assistants]
    if any(ts is None for ts in stamps):
        return None
    starts.sort()
    times = [ts for ts, _ in starts]
    out: dict[int, int] = {}
    for a, ts in zip(assistants, stamps, strict=True):
        k = bisect.bisect_right(times, ts) - 1
        if k >= 0:
            i = starts[k][1]
            if i in task.usage and i not in out:
                out[i] = a
    return out


# ---------------------------------------------------------------- parse

def _parse_task(ctx: ParseContext, fmt: str) -> list[ParsedContinuity]:
    path = ctx.path
    directory = path.parent
    history: list | None = None
    ui: list | None = None
    meta_doc: Any = None
    b = Builder(ctx)
    if path.name == UI:
        ui = _load_list(ctx.read_bytes(), path, EXPECTED_UI)
    else:
        history = _load_list(ctx.read_bytes(), path, EXPECTED_HISTORY)
        if (directory / UI).is_file():
            ui_path = directory / UI
            with ctx.reading(ui_path):
                ui = _load_list(ctx.read_companion(ui_path), ui_path, EXPECTED_UI)
    if (directory / METADATA).is_file() and path.name in (HISTORY, UI):
        md_path = directory / METADATA
        data = ctx.read_companion(md_path)
        try:
            meta_doc = orjson.loads(data) if data.strip() else None
        except orjson.JSONDecodeError as exc:
            with ctx.reading(md_path):
                ctx.bad_record(getattr(exc, "lineno", None), f"not valid JSON: {exc}",
                               "a JSON object", data.decode("utf-8", "replace"), b.rows)
            meta_doc = None

    task = _Task(ui or [], UI)
    harness = task.harness(path)
    convention = task.convention(harness)
    meta: dict[str, Any] = {"harness": harness, "files": [HISTORY] * (history is not None)
                            + [UI] * (ui is not None) + [METADATA] * (meta_doc is not None)}
    if task.usage:
        meta["usage_convention"] = convention
    if history is not None:
        pins = _pin_usage(history, ui or [], task) if ui is not None else {}
        usage_of = {h: task.canonical(task.usage[u], convention) for u, h in pins.items()}
        ts_of = {h: parse_ts(ui[u].get("ts")) for u, h in pins.items()} if ui is not None else {}
        _history_events(b, history, task, usage_of, ts_of)
        if ui is not None:
            with ctx.reading(directory / UI):
                _ui_combined(b, ui, task)
            unmatched = len(task.usage) - len(pins)
            if unmatched:
                meta["requests_without_history"] = unmatched
    else:
        with ctx.reading(path):
            _ui_only(b, ui or [], task, convention)
    if meta_doc is not None:
        _metadata_event(b, meta_doc)
    rows = b.finish()
    model = task.model
    if model is None and isinstance(meta_doc, dict) and isinstance(meta_doc.get("model_usage"), list):
        ids = [u.get("model_id") for u in meta_doc["model_usage"] if isinstance(u, dict)]
        model = next((m for m in reversed(ids) if isinstance(m, str)), None)
    run = _run_usage(task, convention)
    if run is not None:
        meta["run_usage"] = run
    provider = task.providers.most_common(1)[0][0] if task.providers else None
    return [ParsedContinuity(continuity_id=directory.name or path.stem, source_format=fmt,
                             source_file=str(path), rows=rows, model=model, provider=provider, meta=meta)]


def _run_usage(task: _Task, convention: str) -> dict[str, Any] | None:
    if not task.usage and not task.condensations:
        return None
    usages = [task.canonical(u, convention) for u in task.usage.values()]
    costs = [u["cost"] for u in task.usage.values() if u["cost"] is not None]
    costs += [c["cost"] for c in task.condensations if c["cost"] is not None]
    return run_usage("ui_messages.json api_req_started",
                     tokens_sent=sum(max(i, 0) + r + w for i, r, w, _ in usages),
                     tokens_received=sum(max(o, 0) for *_, o in usages), api_calls=len(usages),
                     cost_usd=sum(costs) if costs else None)


def roundtrip(events_raw: list[str | None]) -> dict[str, Any]:
    """The task's files rebuilt from the raw column: ``{file name: json.load(file)}``."""
    raws = [r for r in events_raw if r is not None]
    if raws and raws[0] == BOM:
        raws = raws[1:]
    out: dict[str, Any] = {}
    name: str | None = None
    chunk: list[str] = []

    def flush() -> None:
        if name is None:
            return
        out[name] = rebuild_document(chunk) if name != METADATA else orjson.loads(chunk[0])

    for r in raws:
        if r.startswith('{"file":'):
            marker = orjson.loads(r)
            if isinstance(marker, dict) and set(marker) == {"file"}:
                flush()
                name, chunk = marker["file"], []
                continue
        chunk.append(r)
    flush()
    return out


# ---------------------------------------------------------------- detection

def primary_of(path: Path) -> Path | None:
    """A task's ``ui_messages.json`` / ``task_metadata.json`` belong to the history beside it."""
    if path.name in (UI, METADATA):
        history = path.parent / HISTORY
        if history.is_file():
            return history
        if path.name == METADATA and (path.parent / UI).is_file():
            return path.parent / UI
    return None


def _sniff_for(fmt: str):
    def sniff(path: Path, head: bytes) -> Detection:
        name = path.name.lower()
        if name not in (HISTORY, UI):
            return Detection(0.0, f"not a task file ({HISTORY} or {UI})")
        p = peek(path, head)
        if p.starts != "[":
            return Detection(0.0, f"{name} is not a JSON list")
        ui = p.doc if p.doc_ok and name == UI else []
        if name == HISTORY and (path.parent / UI).is_file():
            try:
                ui_doc = orjson.loads((path.parent / UI).read_bytes().lstrip(BOM.encode()))
                ui = ui_doc if isinstance(ui_doc, list) else []
            except (OSError, orjson.JSONDecodeError):
                ui = []
        elif name == HISTORY and p.doc_ok and any(isinstance(m, dict) and ("isSummary" in m or "condenseParent" in m)
                                                 for m in p.doc):
            ui = [{"say": "condense_context"}]
        roo = _roo_markers(ui, path)
        mine = (fmt == "roo_code") == roo
        what = "Roo Code" if roo else "Cline"
        return Detection(0.97 if mine else 0.6, f"{name} of a {what} task directory")
    return sniff


FORMAT = register_format(
    "cline", "Cline task directory (api_conversation_history.json + ui_messages.json + task_metadata.json)",
    sniff=_sniff_for("cline"), parse=lambda ctx: _parse_task(ctx, "cline"),
    profile="as-recorded",  # no preset mirrors Cline's auto-compaction yet
    raw_joiner=None, primary_of=primary_of)
ROO_FORMAT = register_format(
    "roo_code", "Roo Code task directory (api_conversation_history.json + ui_messages.json)",
    sniff=_sniff_for("roo_code"), parse=lambda ctx: _parse_task(ctx, "roo_code"),
    profile="as-recorded",  # no preset mirrors Roo Code's condensing yet
    raw_joiner=None, primary_of=primary_of)
parse, sniff = FORMAT.parse, FORMAT.sniff
