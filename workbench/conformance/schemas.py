"""JSON Schemas (draft 2020-12) for the wire shapes the workbench emits or reads, and the
conversion of ``events.parquet`` rows to those shapes.

Kinds (``SCHEMA_FILES``):

* ``memory-capability`` — the ``capabilities.memory`` block: RFC 0004 ``supported`` /
  ``maxEntrySizeBytes`` / ``ttlSupported``, the RFC 0012 ``compaction`` sub-block
  (``supported``; ``trigger`` closed enum, required when supported), RFC 0080's additive
  ``writable``, ``search {supported, modes}``, ``retention {ttl, forget}``;
* ``capabilities`` — a host capability document (``memory`` + ``agents.memoryBackends`` +
  ``multiAgent.executionModel.version``; everything else passes);
* ``memory.compacted`` — the RFC 0012 §B event (camelCase, ``additionalProperties: true``);
* ``continuity_compaction_checkpoint_created`` — the ADR-0011 frame (snake_case);
* ``rip.compaction_summary.v1`` — the ADR-0011 summary artifact;
* ``agent-inventory-entry`` — RFC 0080 §C ``memoryDegraded`` / ``degradedMemoryDimensions``;
* ``memory-shape`` — ``AgentManifest.memoryShape`` (+ our explicit dimension requests).

:func:`validate` returns error messages prefixed with the JSON path of the offending
value (``$.compaction.trigger: ...``); on top of the schema it checks the rules JSON
Schema cannot say (``len(sourceIds) <= sourceCount``, ``from_seq <= to_seq < seq``).
SHOULD-level advice (``maxOutputBytes <= maxEntrySizeBytes``, ``trigger: "both"`` on an
event) comes from :func:`advisories` and never fails validation.

>>> validate("memory.compacted", {"type": "memory.compacted"})[0]
"$: 'byteSize' is a required property"
>>> validate("memory-capability", {"supported": True, "retention": {"ttl": "yes"}})
["$.retention.ttl: 'yes' is not of type 'boolean'"]
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
from collections.abc import Mapping
from importlib import resources
from typing import Any

from workbench.rundir import wire as W
from workbench.rundir.wire import CHECKPOINT_EVENT, COMPACTED_EVENT, SUMMARY_SCHEMA, WIRE_EVENT_TYPES

SCHEMA_FILES: dict[str, str] = {
    "memory-capability": "memory-capability.schema.json",
    "capabilities": "capabilities.schema.json",
    W.COMPACTED_EVENT: "memory-compacted.schema.json",
    W.CHECKPOINT_EVENT: "compaction-checkpoint.schema.json",
    W.SUMMARY_SCHEMA: "compaction-summary.schema.json",
    "agent-inventory-entry": "agent-inventory-entry.schema.json",
    "memory-shape": "memory-shape.schema.json",
}
ALIASES = {
    "memory_capability": "memory-capability",
    "memory_compacted": W.COMPACTED_EVENT,
    "checkpoint": W.CHECKPOINT_EVENT,
    "compaction_checkpoint": W.CHECKPOINT_EVENT,
    "compaction_summary": W.SUMMARY_SCHEMA,
    "summary_artifact": W.SUMMARY_SCHEMA,
    "inventory_entry": "agent-inventory-entry",
    "memory_shape": "memory-shape",
}
KINDS = tuple(SCHEMA_FILES)


_CHECKPOINT_FIELDS = ("from_seq", "from_message_id", "to_seq", "to_message_id", "summary_artifact_id",
                      "cut_rule_id", "summary_kind", "actor_id", "origin")


def canonical_kind(kind: str) -> str:
    k = ALIASES.get(kind, kind)
    if k not in SCHEMA_FILES:
        raise KeyError(f"unknown schema kind {kind!r}; known: {', '.join(KINDS)}")
    return k


@functools.cache
def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema document of ``kind`` (package data, read once)."""
    name = SCHEMA_FILES[canonical_kind(kind)]
    text = resources.files("workbench.conformance").joinpath("schemas", name).read_text("utf-8")
    return json.loads(text)


def _import_jsonschema():
    """``import jsonschema`` without building rfc3987_syntax's lark grammars.

    jsonschema's format module imports ``rfc3987_syntax`` (when installed) only for the
    ``iri`` / ``iri-reference`` formats, and that import compiles ~40 lark grammars
    (seconds of CPU per process). None of our schemas uses those formats, so when
    jsonschema is not loaded yet we hide the package for the duration of the import and
    then restore ``sys.modules`` (later explicit imports of rfc3987_syntax work normally;
    only jsonschema's iri checkers stay unregistered in this process).
    """
    import sys

    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        import jsonschema

        return jsonschema
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
    try:
        import jsonschema
    finally:
        if sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]
    return jsonschema


@functools.cache
def _registry():
    from referencing import Registry, Resource

    resources_ = []
    for kind, name in SCHEMA_FILES.items():
        doc = schema(kind)
        res = Resource.from_contents(doc)
        resources_.append((doc["$id"], res))
        resources_.append((name, res))  # relative refs resolve against the $id base anyway
    return Registry().with_resources(resources_)


@functools.cache
def validator(kind: str):
    """A cached ``Draft202012Validator`` (with format checking) for ``kind``."""
    Draft202012Validator = _import_jsonschema().Draft202012Validator

    doc = schema(kind)
    Draft202012Validator.check_schema(doc)
    return Draft202012Validator(doc, registry=_registry(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def _sort_key(err) -> tuple:
    return (list(map(str, err.absolute_path)), err.message)


def _schema_errors(kind: str, obj: Any) -> list[str]:
    errs = sorted(validator(kind).iter_errors(obj), key=_sort_key)
    return [f"{e.json_path}: {e.message}" for e in errs]


def _semantic_errors(kind: str, obj: Any) -> list[str]:
    """MUST-level rules JSON Schema cannot express (only on schema-valid parts)."""
    out: list[str] = []
    if not isinstance(obj, Mapping):
        return out
    if kind == COMPACTED_EVENT:
        ids, count = obj.get("sourceIds"), obj.get("sourceCount")
        if isinstance(ids, list) and isinstance(count, int) and not isinstance(count, bool) and len(ids) > count:
            out.append(f"$.sourceIds: {len(ids)} ids listed but sourceCount is {count} "
                       "(sourceCount counts every source, enumerated or not)")
    elif kind == CHECKPOINT_EVENT:
        f, t, s = obj.get("from_seq"), obj.get("to_seq"), obj.get("seq")
        if _is_int(f) and _is_int(t) and f > t:
            out.append(f"$.from_seq: from_seq {f} > to_seq {t} (coverage is inclusive, from <= to)")
        if _is_int(t) and _is_int(s) and s <= t:
            out.append(f"$.seq: the frame (seq {s}) must come after its cut point (to_seq {t})")
    elif kind == SUMMARY_SCHEMA:
        cov = obj.get("coverage")
        if isinstance(cov, Mapping) and _is_int(cov.get("from_seq")) and _is_int(cov.get("to_seq")) \
                and cov["from_seq"] > cov["to_seq"]:
            out.append(f"$.coverage.from_seq: from_seq {cov['from_seq']} > to_seq {cov['to_seq']}")
    return out


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def validate(kind: str, obj: Any) -> list[str]:
    """Error messages (``"<json path>: <message>"``) for ``obj`` against ``kind``; [] if valid.

    The schema's errors (sorted by path) followed by the MUST-level rules JSON Schema
    cannot express (``semantic_errors``).
    """
    k = canonical_kind(kind)
    return _schema_errors(k, obj) + _semantic_errors(k, obj)


def schema_errors(kind: str, obj: Any) -> list[str]:
    """Only the JSON Schema's errors (no cross-field rules)."""
    return _schema_errors(canonical_kind(kind), obj)


def semantic_errors(kind: str, obj: Any) -> list[str]:
    """Only the cross-field MUST rules (``len(sourceIds) <= sourceCount``, ``from <= to < seq``)."""
    return _semantic_errors(canonical_kind(kind), obj)


def is_valid(kind: str, obj: Any) -> bool:
    return not validate(kind, obj)


def advisories(kind: str, obj: Any) -> list[str]:
    """SHOULD-level advice that never fails validation."""
    k = canonical_kind(kind)
    out: list[str] = []
    if not isinstance(obj, Mapping):
        return out
    if k in ("memory-capability", "capabilities"):
        mem = obj.get("memory", {}) if k == "capabilities" else obj
        comp = mem.get("compaction") if isinstance(mem, Mapping) else None
        if isinstance(comp, Mapping):
            mo, me = comp.get("maxOutputBytes"), mem.get("maxEntrySizeBytes")
            if _is_int(mo) and _is_int(me) and mo > me:
                out.append(f"$.compaction.maxOutputBytes: {mo} > maxEntrySizeBytes {me} (SHOULD be <=)")
            if comp.get("supported") is True and comp.get("trigger") in (W.TRIGGER_CLIENT, "both"):
                out.append(f"$.compaction.trigger: {comp['trigger']!r} is reserved; v1.x normates only host-managed")
    elif k == COMPACTED_EVENT:
        if obj.get("trigger") == "both":
            out.append("$.trigger: 'both' names a capability, not the path that drove one run")
        count = obj.get("sourceCount")
        if "sourceIds" in obj and _is_int(count) and isinstance(obj["sourceIds"], list) \
                and len(obj["sourceIds"]) < count:
            out.append(f"$.sourceIds: {len(obj['sourceIds'])} of {count} sources listed; a host that "
                       "includes sourceIds MUST be exhaustive")
    return out


# --------------------------------------------------------------------------- rows -> wire


def _clean(v: Any) -> Any:
    """Polars/numpy scalars to plain JSON values (NaN -> None)."""
    if v is None:
        return None
    if hasattr(v, "item") and not isinstance(v, (list, tuple, str, bytes)):
        with contextlib.suppress(ValueError, AttributeError):
            v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "to_list"):
        v = v.to_list()
    if isinstance(v, tuple):
        v = list(v)
    return v


def to_wire(row: Mapping[str, Any]) -> dict[str, Any]:
    """One ``events.parquet`` row as its wire object.

    * ``memory.compacted`` -> the RFC 0012 §B event, camelCase; ``sourceIds`` is omitted
      when null (the engine omits it above 100 sources);
    * ``continuity_compaction_checkpoint_created`` -> the ADR-0011 frame, snake_case, with
      ``seq`` = the frame's ``frame_seq`` and ``summary_artifact_id`` null when the action
      produced no artifact (truncation).

    Engine-only columns (tokens, policy, run id, tags ...) are not part of either wire shape.
    The provenance ``tags`` belong to the compacted *entry*, not to the event; see
    :func:`workbench.conformance.scenarios.modelled_artifact_store`.
    """
    etype = _clean(row.get("event_type", row.get("type")))
    if etype == COMPACTED_EVENT:
        out: dict[str, Any] = {"type": COMPACTED_EVENT}
        for key in ("ts", "memoryRef", "outputId"):
            out[key] = _clean(row.get(key))
        ids = _clean(row.get("sourceIds"))
        if ids is not None:
            out["sourceIds"] = list(ids)
        for key in ("sourceCount", "trigger", "byteSize"):
            out[key] = _clean(row.get(key))
        dist = _clean(row.get("distillation"))
        if dist is not None:
            out["distillation"] = dist
        return out
    if etype == CHECKPOINT_EVENT:
        out = {"type": CHECKPOINT_EVENT, "seq": _clean(row.get("frame_seq", row.get("seq")))}
        for key in _CHECKPOINT_FIELDS:
            out[key] = _clean(row.get(key))
        return out
    raise ValueError(f"no wire shape for event_type {etype!r}; known: {', '.join(WIRE_EVENT_TYPES)}")


def validate_events(events):
    """Validate every wire row of an events frame: a polars frame of errors.

    Columns: ``row`` (index in ``events``), ``policy``, ``continuity_id``, ``event_type``,
    ``error``. Empty when every event and frame is valid.
    """
    import polars as pl

    rows: list[dict[str, Any]] = []
    schema_ = {"row": pl.Int64, "policy": pl.String, "continuity_id": pl.String,
               "event_type": pl.String, "error": pl.String}
    if events.height and "event_type" in events.columns:
        idx = events.with_row_index("__row").filter(pl.col("event_type").is_in(list(WIRE_EVENT_TYPES)))
        for r in idx.iter_rows(named=True):
            for err in validate(r["event_type"], to_wire(r)):
                rows.append({"row": r["__row"], "policy": r.get("policy"),
                             "continuity_id": r.get("continuity_id"), "event_type": r["event_type"],
                             "error": err})
    return pl.DataFrame(rows, schema=schema_)
