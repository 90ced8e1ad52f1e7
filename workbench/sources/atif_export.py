"""ATIF export: a dataset's continuities as ATIF v1.8 trajectories, the inverse of the import
in :mod:`workbench.sources.atif` (whose docstring gives the mapping both follow).

One ``<continuity id>.json`` per continuity: user and system messages are steps of their
own; a request's outputs (reasoning, messages, tool calls) one agent step whose
``observation`` holds the results of its calls and whose ``metrics`` hold the request's
recorded usage and its cost (genai-prices, the continuity's model); every other event (side
effects, compaction boundaries, summaries, opaque records, a result whose call is not in the
log) a system step whose ``extra.workbench`` names its kind. Each document is validated by
the ``atif`` models before anything is written.

>>> import json, tempfile
>>> from pathlib import Path
>>> import workbench
>>> from workbench.sources.importer import import_paths
>>> log = Path(workbench.__file__).parents[1] / "datasets" / "bundled" / "claude-code" / "short.jsonl"
>>> tmp = Path(tempfile.mkdtemp())
>>> _ = import_paths([log], tmp / "ds")
>>> [path] = export_dataset(tmp / "ds", tmp / "atif")
>>> doc = json.loads(path.read_text())
>>> doc["schema_version"], doc["final_metrics"]["total_prompt_tokens"], doc["final_metrics"]["total_cached_tokens"]
('ATIF-v1.8', 25353, 11515)
>>> import shutil; shutil.rmtree(tmp)
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
    EventFlag,
    EventKind,
    Role,
)
from workbench.sources.atif import (
    CACHE_WRITE_KEY,
    DERIVED_FLAGS,
    EXTRA_KEY,
    OUTPUT_KINDS,
    SCHEMA_VERSION,
    default_role_origin,
)
from workbench.sources.values import dumps


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
    if flags := ev["flags"] & ~DERIVED_FLAGS:
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
        if ev["flags"] & EventFlag.OUTPUT and request >= 0 and kind in OUTPUT_KINDS:
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
        if ev["call_id"] is None:  # ATIF requires an id: one is made up, and said so
            d["no_call_id"] = True
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
