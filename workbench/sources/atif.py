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
* ``extra.workbench`` (written by the export) restores what ATIF has no field for:
  each event's kind, order inside the step, flags, origin, name, message id, timestamp and
  compaction trigger; a step without it gets the defaults above.

Export: :mod:`workbench.sources.atif_export` (``workbench export --format atif``), the inverse.

>>> from pathlib import Path
>>> FORMAT.sniff(Path("t.json"), b'{"schema_version": "ATIF-v1.8", "agent": {"name": "x", "version": "1"}, "steps": []}').score
0.98
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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
SCAN_LINES_BYTES = 16 << 20  # above this, only a malformed step's line is looked up (a pure-Python scan)

_KIND_OF = {v: EventKind(k) for k, v in KIND_NAMES.items()}
_ROLE_OF = {v: Role(k) for k, v in ROLE_NAMES.items()}
_ORIGIN_OF = {v: Origin(k) for k, v in ORIGIN_NAMES.items()}
_TRIGGER_OF = {v: CompactTrigger(k) for k, v in TRIGGER_NAMES.items()}
OUTPUT_KINDS = (EventKind.MESSAGE, EventKind.REASONING, EventKind.TOOL_CALL)
# flags the importer derives again (OUTPUT from the agent step, UNPAIRED from pairing)
DERIVED_FLAGS = int(EventFlag.OUTPUT | EventFlag.UNPAIRED)


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
    """A step's message (string or ContentPart list) as one text per part (an empty list is
    one empty message: every step gives at least one event, which keeps its raw)."""
    if isinstance(message, str) or not message:
        return [message or ""]
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
                                  flags=flags & ~DERIVED_FLAGS)
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
                ev.update(call_id=None if d.get("no_call_id") else item.tool_call_id, name=item.function_name,
                          text=dumps(item.arguments))
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
        if request is not None and kind in OUTPUT_KINDS:
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


def _header(doc: Any, where: str, ctx: ParseContext, line: int | None):
    """The validated trajectory without its steps and subagents (a SourceError otherwise)."""
    import atif
    import pydantic

    if not (isinstance(doc, dict) and isinstance(doc.get("steps"), list)):
        raise SourceError(f"{where or 'top-level JSON'} is not an object with a 'steps' list",
                          path=str(ctx.path), line=line, expected=EXPECTED)
    head = {k: v for k, v in doc.items() if k not in ("steps", "subagent_trajectories")}
    try:
        traj = atif.Trajectory.model_validate({**head, "steps": []})
    except pydantic.ValidationError as exc:
        raise SourceError(f"{where or 'not'} an ATIF trajectory: {_validation_message(exc)}",
                          path=str(ctx.path), line=line, expected=EXPECTED) from None
    if not str(traj.schema_version).startswith("ATIF-v1."):
        raise SourceError(f"schema_version {traj.schema_version!r} is not ATIF v1", path=str(ctx.path),
                          line=line, expected="schema_version 'ATIF-v1.0' to 'ATIF-v1.8'")
    return traj


def _trajectory(ctx: ParseContext, doc: dict[str, Any], where: str, b: Builder, line_of,
                parent_id: str | None, top: bool, step_lines: bool = True) -> list[ParsedContinuity]:
    """One trajectory's continuity, then those of its embedded subagents (ATIF v1.7+). A
    subagent's steps stay in the document's raw (its first ``document`` event), so their
    events carry no raw of their own."""
    import atif
    import pydantic

    traj = _header(doc, where, ctx, 1 if top else None)
    for i, raw_step in enumerate(doc["steps"]):
        w = f"{where}steps[{i}]"
        try:
            if isinstance(raw_step, dict) and raw_step.get("step_id") != i + 1:
                raise Malformed(f"{w}.step_id", f"is {raw_step.get('step_id')!r}, not {i + 1}",
                                "step ids 1, 2, 3... in order (ATIF)")
            try:
                step = atif.Step.model_validate(raw_step)
            except pydantic.ValidationError as exc:
                raise Malformed(w, _validation_message(exc), "an ATIF step (RFC 0001)") from None
            evs = _step_events(step, w, b)
        except Malformed as exc:
            ctx.bad_record(line_of(i) if top else None, exc.message, exc.expected,
                           dumps(raw_step) if top else None, b.rows)
            continue
        b.commit(evs, raw=dumps(raw_step) if top else None, line=line_of(i) if top and step_lines else None)
    rows = b.finish()
    wb = (traj.extra or {}).get(EXTRA_KEY) or {}
    cid = str(wb.get("continuity_id") or traj.trajectory_id or traj.session_id or ctx.path.stem)
    meta: dict[str, Any] = {"atif_schema_version": traj.schema_version, "agent": traj.agent.name,
                            "agent_version": traj.agent.version}
    if traj.final_metrics is not None and traj.final_metrics.total_cost_usd is not None:
        meta["total_cost_usd"] = traj.final_metrics.total_cost_usd
    window = wb.get("context_window")
    out = [ParsedContinuity(continuity_id=cid, source_format=NAME, source_file=str(ctx.path), rows=rows,
                            parent_id=wb.get("parent_continuity_id") or parent_id, model=traj.agent.model_name,
                            provider=wb.get("provider"), context_window=window if isinstance(window, int) else -1,
                            meta=meta)]
    subs = doc.get("subagent_trajectories") or []
    if not isinstance(subs, list):
        raise SourceError(f"{where}subagent_trajectories is not a list", path=str(ctx.path),
                          expected="a list of embedded ATIF trajectories")
    for k, sub in enumerate(subs):
        out += _trajectory(ctx, sub, f"{where}subagent_trajectories[{k}].", Builder(ctx),
                           lambda i: None, cid, False)
    return out


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    data = ctx.read_bytes()
    doc = load_document(ctx, EXPECTED)
    _header(doc, "", ctx, 1)
    b = Builder(ctx)
    lay = start_document(doc)
    lay.take_array("steps")
    lay.emit(b)
    step_lines: dict[int, int] | None = None

    def line_of(i: int) -> int | None:
        # the scan runs only when a step is malformed or the file is small
        nonlocal step_lines
        if step_lines is None:
            step_lines = _step_lines(data)
        return step_lines.get(i)

    return _trajectory(ctx, doc, "", b, line_of, None, True, step_lines=len(data) <= SCAN_LINES_BYTES)


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
