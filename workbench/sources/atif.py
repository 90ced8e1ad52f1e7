"""Agent Trajectory Interchange Format (ATIF, Harbor's RFC 0001, ``ATIF-v1.x``): import and export.

One JSON document per trajectory ``{schema_version: "ATIF-v1.8", session_id, agent: {name,
version, model_name}, steps: [...], final_metrics, extra}``; the models of the ``atif``
package (pydantic, ATIF v1.8) validate every step. See ``docs/atif.md`` for what the
format can and cannot carry.

Import (step -> events; each step's JSON is the raw of its first event, the document
layout of :mod:`workbench.sources.lossless` keeps the rest):

* ``source: "user"`` -> MESSAGE user (one per text part of a multimodal message; an image
  or audio part -> MESSAGE with a placeholder ``[image: image/png, path]``).
* ``source: "system"`` -> MESSAGE system.
* ``source: "agent"`` -> one request (none when ``llm_call_count`` is 0: a deterministic
  dispatch): REASONING (``reasoning_content``), MESSAGE assistant (``message``, omitted when
  empty and the step has reasoning or tool calls), TOOL_CALL per ``tool_calls`` entry
  (``call_id`` = ``tool_call_id``, ``name`` = ``function_name``, text = ``arguments`` as
  JSON), all flagged OUTPUT; then TOOL_RESULT per ``observation.results`` entry
  (``call_id`` = ``source_call_id``; a result of no call -> SIDE_EFFECT ``observation``).
* ``metrics`` -> the request's usage, on its first event: ATIF's ``prompt_tokens`` holds the
  cached tokens (``cached_tokens`` is a subset), the canonical ``usage_input`` does not, so
  ``usage_input = prompt_tokens - cached_tokens - cache writes``, ``usage_cache_read =
  cached_tokens``, ``usage_cache_write = metrics.extra.cache_creation_input_tokens`` (0 when
  absent: ATIF has no cache-write field), ``usage_output = completion_tokens``.
* ``extra.workbench`` (written by the export below) restores what ATIF has no field for:
  each event's kind, order inside the step, flags, origin, name, message id, timestamp and
  compaction trigger; a step without it gets the defaults above.

Export (:func:`export_dataset`): one ``<continuity id>.json`` per continuity, the inverse of
the import: user and system messages are steps of their own; a request's outputs (reasoning,
messages, tool calls) one agent step whose ``observation`` holds the results of its calls
and whose ``metrics`` hold the request's recorded usage and its cost (genai-prices, the
continuity's model); every other event (side effects, compaction boundaries, summaries,
opaque records, a result whose call is not in the log) a system step whose
``extra.workbench`` names its kind. Validated by the ``atif`` models before writing.

>>> from pathlib import Path
>>> FORMAT.sniff(Path("t.json"), b'{"schema_version": "ATIF-v1.8", "agent": {"name": "x", "version": "1"}, "steps": []}').score
0.98
"""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path
from typing import Any

import orjson

from workbench.continuity.enums import (
    KIND_NAMES,
    ORIGIN_NAMES,
    ROLE_NAMES,
    TRIGGER_NAMES,
    CompactTrigger,
    EventFlag,
    EventKind,
    Origin,
    Role,
)
from workbench.errors import SourceError
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder, load_document
from workbench.sources.checks import Malformed
from workbench.sources.lossless import roundtrip as roundtrip
from workbench.sources.lossless import start_document
from workbench.sources.registration import register_format
from workbench.sources.sniffing import peek
from workbench.sources.values import dumps, parse_ts

NAME = "atif"
SCHEMA_VERSION = "ATIF-v1.8"
EXPECTED = "an ATIF trajectory {schema_version: 'ATIF-v1.x', agent: {name, version}, steps: [...]}"
CACHE_WRITE_KEY = "cache_creation_input_tokens"  # Anthropic's name; ATIF has no such field
EXTRA_KEY = "workbench"

_KIND_OF = {v: EventKind(k) for k, v in KIND_NAMES.items()}
_ROLE_OF = {v: Role(k) for k, v in ROLE_NAMES.items()}
_ORIGIN_OF = {v: Origin(k) for k, v in ORIGIN_NAMES.items()}
_TRIGGER_OF = {v: CompactTrigger(k) for k, v in TRIGGER_NAMES.items()}
_OUTPUT_KINDS = (EventKind.MESSAGE, EventKind.REASONING, EventKind.TOOL_CALL)
# flags the importer derives again (OUTPUT from the agent step, UNPAIRED from pairing)
_DERIVED_FLAGS = int(EventFlag.OUTPUT | EventFlag.UNPAIRED)


# ============================================================================ import


def _step_lines(data: bytes) -> dict[int, int]:
    """1-based line of each element of the top-level ``steps`` array (by index); a small
    scanner over the JSON text, run only when a step is malformed."""
    text = data.decode("utf-8", "replace")
    lines: dict[int, int] = {}
    depth, i, n, line = 0, 0, len(text), 1
    in_steps, expect_value, index = False, False, 0
    last_key = None
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if depth == 1:
                last_key = text[i + 1:j]
            elif in_steps and depth == 2 and expect_value:
                lines[index] = line
                expect_value = False
            line += text.count("\n", i, j)
            i = j
        elif ch in "{[":
            if in_steps and depth == 2 and expect_value:
                lines[index] = line
                expect_value = False
            depth += 1
            if depth == 2 and ch == "[" and last_key == "steps":
                in_steps, expect_value, index = True, True, 0
        elif ch in "}]":
            depth -= 1
            if in_steps and depth == 1:
                break
        elif ch == "," and in_steps and depth == 2:
            index += 1
            expect_value = True
        elif in_steps and depth == 2 and expect_value and not ch.isspace():
            lines[index] = line
            expect_value = False
        i += 1
    return lines


def _validation_message(exc: Exception) -> str:
    errs = exc.errors()  # pydantic.ValidationError
    parts = []
    for e in errs[:3]:
        loc = ".".join(str(x) for x in e.get("loc", ()))
        parts.append(f"{loc or 'step'}: {e.get('msg')}")
    more = f" (and {len(errs) - 3} more)" if len(errs) > 3 else ""
    return "; ".join(parts) + more


def _text_parts(message: Any) -> list[str]:
    """A step's message (string or ContentPart list) as one text per part."""
    if isinstance(message, str):
        return [message]
    out = []
    for part in message:
        if part.type == "text":
            out.append(part.text)
        else:
            out.append(f"[{part.type}: {part.source.media_type}, {part.source.path}]")
    return out


def _result_text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    return "\n".join(_text_parts(content))


def _usage(metrics: Any) -> tuple[int, int, int, int] | None:
    if metrics is None or (metrics.prompt_tokens is None and metrics.completion_tokens is None):
        return None
    cached = metrics.cached_tokens or 0
    write = (metrics.extra or {}).get(CACHE_WRITE_KEY) or 0
    if not isinstance(write, int) or isinstance(write, bool) or write < 0:
        raise Malformed("metrics.extra." + CACHE_WRITE_KEY, f"is {write!r}", "a non-negative token count")
    prompt = metrics.prompt_tokens
    if prompt is not None and prompt < cached + write:
        raise Malformed("metrics", f"prompt_tokens {prompt} < cached_tokens {cached} + cache writes {write}",
                        "prompt_tokens that include the cached tokens (ATIF: cached_tokens is a subset)")
    return (-1 if prompt is None else prompt - cached - write, cached, write,
            -1 if metrics.completion_tokens is None else metrics.completion_tokens)


def _default_events(step: Any) -> list[dict[str, Any]]:
    """The events of a step without ``extra.workbench`` (a trajectory another tool wrote)."""
    evs: list[dict[str, Any]] = []
    if step.source == "agent" and step.reasoning_content is not None:
        evs.append({"kind": "reasoning"})
    texts = _text_parts(step.message)
    if step.source != "agent" or texts != [""] or not (evs or step.tool_calls):
        evs += [{"kind": "message"} for _ in texts]
    evs += [{"kind": "tool_call"} for _ in step.tool_calls or ()]
    for r in (step.observation.results if step.observation else []):
        evs.append({"kind": "tool_result"} if r.source_call_id is not None
                   else {"kind": "side_effect", "origin": "tool" if step.source == "agent" else "harness",
                         "name": "observation", "from": "observation"})
    return evs


def default_role_origin(kind: str, step_source: str) -> tuple[str, str]:
    """The role and origin an event of ``kind`` in a step of ``step_source`` has unless its
    description says otherwise (the export leaves out what equals these)."""
    if step_source == "agent":
        if kind in ("message", "reasoning", "tool_call"):
            return "assistant", "agent"
        if kind == "tool_result":
            return "tool", "tool"
    elif kind == "message":
        return ("user", "user") if step_source == "user" else ("system", "system")
    return "none", "unknown"


def _step_events(step: Any, where: str, b: Builder) -> list[dict[str, Any]]:
    """The events of one validated ATIF step (see the module docstring)."""
    wb = (step.extra or {}).get(EXTRA_KEY)
    described = wb.get("events") if isinstance(wb, dict) else None
    if described is not None and not (isinstance(described, list) and described
                                      and all(isinstance(d, dict) for d in described)):
        raise Malformed(f"{where}.extra.{EXTRA_KEY}.events", "is not a non-empty list of objects",
                        "the event descriptions `workbench export --format atif` writes")
    descs = described or _default_events(step)
    items = {"message": iter(_text_parts(step.message)),
             "tool_call": iter(step.tool_calls or ()),
             "tool_result": iter(step.observation.results if step.observation else ())}
    step_ts = parse_ts(step.timestamp)
    request = b.new_request() if step.source == "agent" and step.llm_call_count != 0 else None
    evs: list[dict[str, Any]] = []
    for k, d in enumerate(descs):
        w = f"{where}.extra.{EXTRA_KEY}.events[{k}]"
        kname = d.get("kind")
        if kname not in _KIND_OF:
            raise Malformed(w + ".kind", f"is {kname!r}", "an event kind: " + ", ".join(_KIND_OF))
        kind = _KIND_OF[kname]
        role0, origin0 = default_role_origin(kname, step.source)
        role, origin = _ROLE_OF.get(d.get("role", role0)), _ORIGIN_OF.get(d.get("origin", origin0))
        if role is None or origin is None:
            raise Malformed(w, f"role {d.get('role')!r} or origin {d.get('origin')!r} is unknown",
                            "role " + "|".join(_ROLE_OF) + ", origin " + "|".join(_ORIGIN_OF))
        flags = d.get("flags", 0)
        if not isinstance(flags, int) or isinstance(flags, bool):
            raise Malformed(w + ".flags", f"is {flags!r}", "an integer of event flags")
        ev: dict[str, Any] = dict(kind=kind, role=role, origin=origin, name=d.get("name"),
                                  message_id=d.get("message_id"),
                                  ts_ms=d["ts_ms"] if isinstance(d.get("ts_ms"), int) else step_ts,
                                  flags=flags & ~_DERIVED_FLAGS)
        if kind == EventKind.REASONING and step.source == "agent":
            ev["text"] = step.reasoning_content
        else:
            source = ("tool_call" if kind == EventKind.TOOL_CALL else
                      "tool_result" if kind == EventKind.TOOL_RESULT or d.get("from") == "observation"
                      else "message")
            item = next(items[source], None)
            if item is None:
                raise Malformed(w, f"describes more {source.replace('_', ' ')}s than the step has",
                                "one description per message part, tool call and observation result")
            if source == "message":
                ev["text"] = item
            elif source == "tool_call":
                ev.update(call_id=item.tool_call_id, name=item.function_name, text=dumps(item.arguments))
            else:
                ev.update(call_id=item.source_call_id if item.source_call_id is not None else d.get("call_id"),
                          text=_result_text(item.content))
        if "text" in d:  # what ATIF cannot hold as is (a part of several reasoning texts...)
            ev["text"] = d["text"]
        if d.get("null_text"):
            ev["text"] = None
        if kind == EventKind.COMPACTION:
            ev["compact_trigger"] = _TRIGGER_OF.get(d.get("trigger", "none"), CompactTrigger.OTHER)
            if isinstance(d.get("pre_tokens"), int):
                ev["compact_pre_tokens"] = d["pre_tokens"]
        if request is not None and kind in _OUTPUT_KINDS:
            ev.update(request=request, output=True)
        evs.append(ev)
    if request is not None:
        usage = _usage(step.metrics)
        if usage is not None:
            # the request's first event carries its usage (as every importer records it)
            first = next((e for e in evs if e.get("request") == request), None)
            if first is None:
                first = dict(kind=EventKind.USAGE, origin=Origin.HARNESS, name="metrics",
                             request=request, ts_ms=step_ts)
                evs.insert(0, first)
            first["usage"] = usage
    return evs


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    import atif
    import pydantic

    data = ctx.read_bytes()
    doc = load_document(ctx, EXPECTED)
    if not (isinstance(doc, dict) and isinstance(doc.get("steps"), list)):
        raise SourceError("top-level JSON is not an object with a 'steps' list", path=str(ctx.path),
                          expected=EXPECTED)
    head = {k: v for k, v in doc.items() if k not in ("steps", "subagent_trajectories")}
    try:
        traj = atif.Trajectory.model_validate({**head, "steps": []})
    except pydantic.ValidationError as exc:
        raise SourceError(f"not an ATIF trajectory: {_validation_message(exc)}", path=str(ctx.path),
                          line=1, expected=EXPECTED) from None
    if not str(traj.schema_version).startswith("ATIF-v1."):
        raise SourceError(f"schema_version {traj.schema_version!r} is not ATIF v1", path=str(ctx.path),
                          line=1, expected="schema_version 'ATIF-v1.0' to 'ATIF-v1.8'")
    b = Builder(ctx)
    lay = start_document(doc)
    lay.take_array("steps")
    lay.emit(b)
    step_lines: dict[int, int] | None = None

    def line_of(i: int) -> int | None:
        nonlocal step_lines
        if step_lines is None:
            step_lines = _step_lines(data)
        return step_lines.get(i)

    for i, raw_step in enumerate(doc["steps"]):
        where = f"steps[{i}]"
        raw = dumps(raw_step)

        def events(obj: Any, where: str, i: int = i) -> list[dict[str, Any]]:
            if isinstance(obj, dict) and obj.get("step_id") != i + 1:
                raise Malformed(f"{where}.step_id", f"is {obj.get('step_id')!r}, not {i + 1}",
                                "step ids 1, 2, 3... in order (ATIF)")
            try:
                step = atif.Step.model_validate(obj)
            except pydantic.ValidationError as exc:
                raise Malformed(where, _validation_message(exc), "an ATIF step (RFC 0001)") from None
            return _step_events(step, where, b)

        try:
            b.record(events, raw_step, where, raw, None)
        except SourceError as exc:
            if exc.line is None:  # name the step's line: the error is about this step
                raise SourceError(str(exc).split(": ", 1)[1].rsplit(" (expected", 1)[0],
                                  path=exc.path, line=line_of(i), expected=exc.expected) from None
            raise
    if ctx.skipped:
        for entry in ctx.skipped:
            if entry.get("line") is None:
                m = re.match(r"steps\[(\d+)\]", entry.get("error", ""))
                if m:
                    entry["line"] = line_of(int(m.group(1)))
    rows = b.finish()
    wb = (traj.extra or {}).get(EXTRA_KEY) or {}
    cid = wb.get("continuity_id") or traj.session_id or traj.trajectory_id or ctx.path.stem
    meta: dict[str, Any] = {"atif_schema_version": traj.schema_version, "agent": traj.agent.name,
                            "agent_version": traj.agent.version}
    if traj.final_metrics is not None and traj.final_metrics.total_cost_usd is not None:
        meta["total_cost_usd"] = traj.final_metrics.total_cost_usd
    window = wb.get("context_window")
    return [ParsedContinuity(continuity_id=str(cid), source_format=NAME, source_file=str(ctx.path), rows=rows,
                             parent_id=wb.get("parent_continuity_id"), model=traj.agent.model_name,
                             provider=wb.get("provider"),
                             context_window=window if isinstance(window, int) else -1, meta=meta)]


def _sniff(path: Path, head_bytes: bytes) -> Detection:
    p = peek(path, head_bytes)
    if p.doc_ok:
        d = p.doc
        version = d.get("schema_version") if isinstance(d, dict) else None
        if isinstance(version, str) and version.startswith("ATIF-") and isinstance(d.get("steps"), list):
            return Detection(0.98, f"JSON object with schema_version {version!r} and steps")
        return Detection(0.0, "no ATIF schema_version with a steps list")
    if p.starts == "{" and re.search(r'"schema_version"\s*:\s*"ATIF-', p.text):
        return Detection(0.8, "JSON object with an ATIF schema_version (too large to parse)")
    return Detection(0.0, "not an ATIF trajectory")


FORMAT = register_format(
    NAME, "Agent Trajectory Interchange Format (Harbor ATIF v1.x trajectory JSON)",
    sniff=_sniff, parse=_parse,
    profile="as-recorded",  # ATIF records many harnesses; no one preset mirrors them all
    raw_joiner=None,
)
parse, sniff = FORMAT.parse, FORMAT.sniff


# ============================================================================ export


def _iso(ts_ms: int) -> str | None:
    if ts_ms < 0:
        return None
    return _dt.datetime.fromtimestamp(ts_ms / 1000, _dt.UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def _describe(ev: dict[str, Any], step_source: str) -> dict[str, Any]:
    """What ATIF has no field for, about one event (the import's ``extra.workbench``)."""
    kind = KIND_NAMES[ev["kind"]]
    d: dict[str, Any] = {"kind": kind}
    role0, origin0 = default_role_origin(kind, step_source)
    if ROLE_NAMES[ev["role"]] != role0:
        d["role"] = ROLE_NAMES[ev["role"]]
    if ORIGIN_NAMES[ev["origin"]] != origin0:
        d["origin"] = ORIGIN_NAMES[ev["origin"]]
    for key in ("name", "message_id"):
        if ev[key] is not None:
            d[key] = ev[key]
    if ev["ts_ms"] >= 0:
        d["ts_ms"] = ev["ts_ms"]
    if flags := ev["flags"] & ~_DERIVED_FLAGS:
        d["flags"] = flags
    if ev["text"] is None:
        d["null_text"] = True
    if ev["kind"] == EventKind.COMPACTION:
        d["trigger"] = TRIGGER_NAMES[ev["compact_trigger"]]
        if ev["compact_pre_tokens"] >= 0:
            d["pre_tokens"] = ev["compact_pre_tokens"]
    return d


class _Steps:
    """The ATIF steps of one continuity, built event by event in ``seq`` order."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.agent_step: dict[int, dict[str, Any]] = {}  # request -> its agent step
        self.call_step: dict[str, dict[str, Any]] = {}  # call_id -> the agent step that made it

    def _new(self, source: str, ts_ms: int) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source}
        if (ts := _iso(ts_ms)) is not None:
            step["timestamp"] = ts
        step["message"] = ""
        step["extra"] = {EXTRA_KEY: {"events": []}}
        step["_parts"] = []
        self.steps.append(step)
        return step

    def add(self, ev: dict[str, Any]) -> None:
        kind, role, request = EventKind(ev["kind"]), ev["role"], ev["request"]
        if ev["flags"] & EventFlag.OUTPUT and request >= 0 and kind in _OUTPUT_KINDS:
            step = self.agent_step.get(request)
            if step is None:
                step = self.agent_step[request] = self._new("agent", ev["ts_ms"])
            d = _describe(ev, "agent")
            if kind == EventKind.MESSAGE:
                step["_parts"].append(ev["text"] or "")
            elif kind == EventKind.REASONING:
                step.setdefault("_reasoning", []).append(ev["text"] or "")
                d["text"] = ev["text"]  # dropped again in finish() unless the step has several
            else:
                step.setdefault("tool_calls", []).append(self._call(ev, d))
                if ev["call_id"] is not None:
                    self.call_step[ev["call_id"]] = step
        elif kind == EventKind.TOOL_RESULT and ev["call_id"] in self.call_step:
            step = self.call_step[ev["call_id"]]
            step.setdefault("observation", {"results": []})["results"].append(
                {"source_call_id": ev["call_id"], "content": ev["text"] or ""})
            d = _describe(ev, "agent")
        elif kind == EventKind.MESSAGE and role == Role.ASSISTANT:
            # an assistant message no request produced (a notice the harness wrote): an
            # agent step without an LLM call, which ATIF says with llm_call_count 0
            step = self._new("agent", ev["ts_ms"])
            step["llm_call_count"] = 0
            step["_parts"].append(ev["text"] or "")
            d = _describe(ev, "agent")
        else:
            source = "user" if kind == EventKind.MESSAGE and role == Role.USER else "system"
            step = self._new(source, ev["ts_ms"])
            d = _describe(ev, source)
            if kind == EventKind.TOOL_RESULT:  # a result whose call is not in the log
                step["observation"] = {"results": [{"content": ev["text"] or ""}]}
                if ev["call_id"] is not None:
                    d["call_id"] = ev["call_id"]
            else:
                step["_parts"].append(ev["text"] or "")
        step["extra"][EXTRA_KEY]["events"].append(d)

    @staticmethod
    def _call(ev: dict[str, Any], d: dict[str, Any]) -> dict[str, Any]:
        """A tool call; its input, when not a JSON object, rides in the description."""
        try:
            args = orjson.loads(ev["text"]) if ev["text"] else {}
        except orjson.JSONDecodeError:
            args = None
        if not isinstance(args, dict):
            args = {}
        if ev["text"] is not None and dumps(args) != ev["text"]:
            d["text"] = ev["text"]
        return {"tool_call_id": ev["call_id"] or f"call-{ev['seq']}", "function_name": ev["name"] or "",
                "arguments": args}

    def finish(self, usage: dict[int, tuple[int, int, int, int]], cost) -> list[dict[str, Any]]:
        """The steps, with each request's recorded usage and cost as its step's metrics."""
        for request, step in self.agent_step.items():
            if request in usage:
                step["metrics"] = _metrics(*usage[request], cost)
        for step in self.steps:
            parts = step.pop("_parts")
            if parts:
                step["message"] = parts[0] if len(parts) == 1 else [{"type": "text", "text": t} for t in parts]
            reasoning = step.pop("_reasoning", None)
            if reasoning is not None:
                step["reasoning_content"] = "\n\n".join(reasoning)
                if len(reasoning) == 1:  # ATIF holds one reasoning text; several ride in the descriptions
                    for d in step["extra"][EXTRA_KEY]["events"]:
                        if d["kind"] == "reasoning" and d.get("text") is not None:
                            del d["text"]
        return self.steps


def _metrics(ui: int, cr: int, cw: int, out: int, cost) -> dict[str, Any]:
    """ATIF metrics of a request's recorded usage (canonical: input excludes the cache)."""
    m: dict[str, Any] = {}
    if ui >= 0:
        m["prompt_tokens"] = ui + max(cr, 0) + max(cw, 0)
        m["cached_tokens"] = max(cr, 0)
        m["extra"] = {CACHE_WRITE_KEY: max(cw, 0)}
    if out >= 0:
        m["completion_tokens"] = out
    c = cost(ui, cr, cw, out)
    if c is not None:
        m["cost_usd"] = c
    return m


def safe_file_name(continuity_id: str) -> str:
    """A file name for a continuity id (``session/agent-x`` -> ``session__agent-x``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", continuity_id.replace("/", "__")).strip("._") or "continuity"
    return name[:180]


def _request_usage(ev) -> dict[int, tuple[int, int, int, int]]:
    """Each request's recorded usage: the sum over its usage events (as the fidelity audit
    reads it; a cache count not recorded counts 0)."""
    import polars as pl

    agg = (ev.filter((pl.col("usage_input") >= 0) & (pl.col("request") >= 0)).group_by("request")
           .agg(pl.col("usage_input").sum(), pl.col("usage_cache_read").clip(lower_bound=0).sum(),
                pl.col("usage_cache_write").clip(lower_bound=0).sum(),
                pl.col("usage_output").clip(lower_bound=0).sum()))
    return {r: (ui, cr, cw, out) for r, ui, cr, cw, out in agg.iter_rows()}


def _coster(model: str | None, provider: str | None):
    """``cost(ui, cr, cw, out)`` in $ for ``model`` (None when genai-prices has no price), and
    a note when it has none."""
    import numpy as np

    from workbench.engine.pricing import UnknownModelError, price_table_for

    if not model:
        return (lambda *_: None), "no model recorded: no cost per step"
    try:
        table, note = price_table_for(model, provider)
    except UnknownModelError as exc:
        return (lambda *_: None), f"no cost per step: {exc}"

    def cost(ui: int, cr: int, cw: int, out: int) -> float | None:
        if ui < 0:
            return None
        cr, cw, out = max(cr, 0), max(cw, 0), max(out, 0)
        a = lambda x: np.array([x], dtype=np.int64)  # noqa: E731
        return round(float(table.cost(a(ui + cr + cw), a(cr), a(cw), a(ui), a(out))[0]), 10)

    return cost, note


def trajectory_of(ev, row: dict[str, Any], parent_id: str | None) -> dict[str, Any]:
    """One continuity (its events, ``seq`` order, and its ``continuities`` row) as an ATIF
    trajectory document."""
    b = _Steps()
    for e in ev.iter_rows(named=True):
        b.add(e)
    cost, note = _coster(row["model"], row["provider"])
    steps = b.finish(_request_usage(ev), cost)
    wb: dict[str, Any] = {"continuity_id": row["continuity_id"], "source_format": row["source_format"]}
    if parent_id is not None:
        wb["parent_continuity_id"] = parent_id
    if row["provider"]:
        wb["provider"] = row["provider"]
    if row["context_window"] >= 0:
        wb["context_window"] = row["context_window"]
    metrics = [s["metrics"] for s in steps if "metrics" in s]
    final = {"total_prompt_tokens": sum(m.get("prompt_tokens", 0) for m in metrics),
             "total_completion_tokens": sum(m.get("completion_tokens", 0) for m in metrics),
             "total_cached_tokens": sum(m.get("cached_tokens", 0) for m in metrics),
             "total_steps": len(steps)}
    costs = [m["cost_usd"] for m in metrics if "cost_usd" in m]
    if costs:
        final["total_cost_usd"] = round(sum(costs), 10)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "session_id": row["continuity_id"],
        "agent": {"name": row["source_format"], "version": "unknown",
                  **({"model_name": row["model"]} if row["model"] else {})},
        "steps": steps, "final_metrics": final, "extra": {EXTRA_KEY: wb}}
    notes = ["exported by continuity-workbench; agent.version: the canonical dataset does not keep "
             "the harness version; extra.workbench carries what ATIF has no field for"]
    if note:
        notes.append(note)
    doc["notes"] = "; ".join(notes)
    return doc


def export_dataset(dataset: str | Path, out: str | Path, *, force: bool = False) -> list[Path]:
    """Write every continuity of ``dataset`` as ``out/<continuity id>.json`` (ATIF v1.8),
    each validated by the ``atif`` models first; ``out`` follows the output rule of
    :mod:`workbench.rundir.output` (a new or empty directory, or an export it wrote)."""
    import atif
    import polars as pl

    from workbench.continuity.dataset import load_dataset
    from workbench.rundir.markers import Kind
    from workbench.rundir.output import replace_dir

    ds = load_dataset(dataset)
    events = ds.events().sort("continuity", "seq")
    conts = ds.continuities().sort("continuity")
    ids = dict(zip(conts["continuity"].to_list(), conts["continuity_id"].to_list(), strict=True))
    docs: list[tuple[str, bytes]] = []
    used: set[str] = set()
    for row in conts.iter_rows(named=True):
        ev = events.filter(pl.col("continuity") == row["continuity"])
        doc = trajectory_of(ev, row, ids.get(row["parent"]))
        atif.Trajectory.model_validate(doc)  # never write what is not ATIF
        name = safe_file_name(row["continuity_id"])
        stem, k = name, 1
        while name.lower() in used:
            k += 1
            name = f"{stem}-{k}"
        used.add(name.lower())
        docs.append((f"{name}.json", _dump_document(doc)))
    written = []
    with replace_dir(out, Kind.EXPORT, force=force) as tmp:
        for name, data in docs:
            (tmp / name).write_bytes(data)
            written.append(Path(out) / name)
    return written


def _dump_document(doc: dict[str, Any]) -> bytes:
    """Indented JSON with one step per line (readable, and a step's line names it in errors)."""
    head = {k: v for k, v in doc.items() if k != "steps"}
    body = orjson.dumps(head, option=orjson.OPT_INDENT_2).decode()
    steps = ",\n".join("    " + orjson.dumps(s).decode() for s in doc["steps"])
    block = '  "steps": [\n' + steps + ("\n  ]" if steps else "]")
    return (body[:-2] + ",\n" + block + "\n}\n").encode()
