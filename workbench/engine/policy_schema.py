"""The schema of a policy spec: every field's type and allowed values, checked before any
work (a spec file is untrusted input).

One JSON Schema (draft 2020-12, :func:`policy_schema`) is built from the policy dataclasses'
annotations and :data:`RULES` (ranges and choices); :func:`check_policy` validates a policy
mapping against it and :func:`check_field` one dotted key's value (sweep parameters). An
error names where the spec came from, the dotted field, the value and what is allowed.
Relations between fields (a floor above the cap, a stride trigger without a stride) are
checked when the policy is built; relations with the context window when it is lowered
against a continuity.

>>> check_field("trigger.reserve_tokens", 40_000)
>>> try:
...     check_field("trigger.reserve_tokens", -5000, where="my.yaml")
... except Exception as exc:
...     print(exc)
my.yaml: trigger.reserve_tokens: -5000 is not allowed (an integer >= 0)
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from workbench.engine.policy import SECTIONS as SECTION_CLASSES
from workbench.errors import PolicyError

SECTIONS = tuple(SECTION_CLASSES)
# ranges and choices beyond the annotation's type (keys: dotted field names); a share in [0, 1]
# is its annotation (``policy.Share``: pruning's ratios too, as OpenClaw clamps them)
RULES: dict[str, dict[str, Any]] = {
    "trigger.kind": {"enum": "TRIGGERS"},
    "trigger.scope": {"enum": "SCOPES"},
    "compaction.kind": {"enum": "STRATEGIES"},
    "compaction.retain": {"enum": "RETAIN"},
    "compile.strategy": {"enum": "COMPILES"},
    "provider.cache": {"enum": "CACHE_MODES"},
    "provider.context_window": {"minimum": 1},
    "provider.max_output": {"minimum": 1},
    "provider.granularity": {"minimum": 1},
    "emergency": {"enum": "EMERGENCY"},
    "summarizer.prompt": {"minLength": 1},
    "summarizer.model": {"minLength": 1},
    "pruning.mode": {"enum": "PRUNING_MODES"},
}
# numbers are counts, sizes, durations: never negative unless a rule says otherwise
DEFAULT_MINIMUM = 0


def _choices(name: str) -> list[str]:
    from workbench.engine import policy as P

    values = getattr(P, name)
    return sorted(values) if isinstance(values, dict) else list(values)


def _type_schema(annotation: str) -> dict[str, Any]:
    base = annotation.replace(" ", "")
    nullable = base.endswith("|None")
    base = base.removesuffix("|None")
    schema: dict[str, Any]
    if base == "bool":
        schema = {"type": "boolean"}
    elif base == "int":
        schema = {"type": "integer"}
    elif base == "float":
        schema = {"type": "number"}
    elif base == "Share":
        schema = {"type": "number", "minimum": 0.0, "maximum": 1.0}
    elif base == "str":
        schema = {"type": "string"}
    elif base.startswith("tuple[str"):
        schema = {"type": "array", "items": {"type": "string"}}
    else:  # pragma: no cover - a new annotation must be added here
        raise TypeError(f"no schema for annotation {annotation!r}")
    return {"anyOf": [schema, {"type": "null"}]} if nullable else schema


def _field(dotted: str, annotation: str) -> dict[str, Any]:
    schema = _type_schema(annotation)
    rules = dict(RULES.get(dotted, {}))
    target = schema["anyOf"][0] if "anyOf" in schema else schema
    if "enum" in rules:
        target.pop("type", None)
        target["enum"] = _choices(rules.pop("enum"))
    elif target.get("type") in ("integer", "number"):
        target["minimum"] = rules.pop("minimum", target.get("minimum", DEFAULT_MINIMUM))
    target.update(rules)
    return schema


@functools.cache
def policy_schema() -> dict[str, Any]:
    """The JSON Schema of a full policy mapping (``Policy.to_dict`` / a spec's ``policy:``)."""
    classes = SECTION_CLASSES
    props: dict[str, Any] = {
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string"},
        "base_description": {"type": "string"},  # Policy.base_description: what the digest hashes
        "emergency": _field("emergency", "str"),
    }
    for section, cls in classes.items():
        props[section] = {"type": "object", "additionalProperties": False,
                          "properties": {f.name: _field(f"{section}.{f.name}", str(f.type))
                                         for f in dataclasses.fields(cls)}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "additionalProperties": False, "required": ["name"], "properties": props}


def field_schema(dotted: str) -> dict[str, Any]:
    schema = policy_schema()["properties"]
    section, dot, name = dotted.partition(".")
    if not dot:
        if section not in schema or section in SECTIONS:
            raise PolicyError(f"unknown policy field {dotted!r}")
        return schema[section]
    if section not in SECTIONS or name not in schema[section]["properties"]:
        raise PolicyError(f"unknown policy field {dotted!r}")
    return schema[section]["properties"][name]


def describe(schema: dict[str, Any]) -> str:
    """What a field allows, in words."""
    if "anyOf" in schema:
        return " or ".join(describe(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(map(str, schema["enum"]))
    t = schema.get("type")
    words = {"integer": "an integer", "number": "a number", "boolean": "true or false", "string": "a string",
             "null": "null", "array": "a list of strings", "object": "a mapping"}.get(t, str(t))
    if t == "string" and schema.get("minLength"):
        words = "a non-empty string"
    if "minimum" in schema and "maximum" in schema:
        words += f" from {schema['minimum']} to {schema['maximum']}"
    elif "minimum" in schema:
        words += f" >= {schema['minimum']}"
    return words


def _validator(schema):
    import jsonschema

    return jsonschema.Draft202012Validator(schema)


def _where(where: str) -> str:
    return f"{where}: " if where else ""


def _reject_bools_as_numbers(schema: dict[str, Any], value: Any) -> bool:
    """JSON Schema takes true for neither an integer nor a number; Python's bool is an int,
    so check it explicitly."""
    types = {s.get("type") for s in schema.get("anyOf", [schema])}
    return isinstance(value, bool) and not (types & {"boolean"}) and bool(types & {"integer", "number"})


def check_field(dotted: str, value: Any, *, where: str = "") -> None:
    """Raise :class:`PolicyError` unless ``value`` is allowed for the dotted policy field."""
    schema = field_schema(dotted)
    if _reject_bools_as_numbers(schema, value) or next(iter(_validator(schema).iter_errors(_plain(value))), None):
        raise PolicyError(f"{_where(where)}{dotted}: {value!r} is not allowed ({describe(schema)})")


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def check_policy(data: dict[str, Any], *, where: str = "") -> None:
    """Raise :class:`PolicyError` naming the first field of ``data`` that the schema refuses."""
    if not isinstance(data, dict):
        raise PolicyError(f"{_where(where)}a policy must be a mapping, got {type(data).__name__}")
    for key, value in data.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise PolicyError(f"{_where(where)}{key}: must be a mapping of parameters, got {value!r}")
            known = policy_schema()["properties"][key]["properties"]
            for name, v in value.items():
                if name not in known:
                    raise PolicyError(f"{_where(where)}unknown {key} parameter {name!r}; known: {sorted(known)}")
                check_field(f"{key}.{name}", v, where=where)
        elif key in ("name", "description", "base_description", "emergency"):
            schema = policy_schema()["properties"][key]
            if next(iter(_validator(schema).iter_errors(value)), None):
                raise PolicyError(f"{_where(where)}{key}: {value!r} is not allowed ({describe(schema)})")
        else:
            raise PolicyError(f"{_where(where)}unknown policy key {key!r}; known: name, description, "
                              f"emergency, {', '.join(SECTIONS)}")


def coerce_field(dotted: str, value: Any) -> Any:
    """The value as the dataclass field holds it: an integral float for an int field becomes
    an int, a list for a tuple field a tuple."""
    schema = field_schema(dotted)
    types = {s.get("type") for s in schema.get("anyOf", [schema])}
    if "integer" in types and isinstance(value, float) and value.is_integer():
        return int(value)
    if "array" in types and isinstance(value, list):
        return tuple(value)
    return value


def check_relations(policy, *, where: str = ""):
    """Relations between fields of a spec'd policy (the engines accept any combination; a
    spec that asks for one of these is a mistake). Returns the policy."""
    c = policy.compaction
    if c.floor > c.cap:
        raise PolicyError(f"{_where(where)}policy {policy.name!r}: compaction.floor ({c.floor:,}) exceeds "
                          f"compaction.cap ({c.cap:,})")
    m = policy.masking
    if m.keep_tokens and m.after_turns:
        raise PolicyError(f"{_where(where)}policy {policy.name!r}: masking.keep_tokens ({m.keep_tokens:,}) and "
                          f"masking.after_turns ({m.after_turns}) are two masking rules; give one of them")
    return policy


def check_window(policy, window: int, *, where: str = "") -> None:
    """Relations between a policy and the context window it is replayed with: a token
    threshold must lie inside the window (a threshold at or below zero compacts on every
    request; one above the window never fires before the context overflows)."""
    t = policy.trigger
    if t.kind == "tokens":
        threshold = t.threshold(window)
        field = "trigger.tokens" if t.tokens else "trigger.fraction" if t.fraction else "trigger.reserve_tokens"
        if not 0 < threshold <= window:
            raise PolicyError(f"{_where(where)}policy {policy.name!r}: {field} puts the compaction threshold at "
                              f"{threshold:,} tokens, outside the {window:,}-token context window (it must be "
                              f"above 0 and at most the window)")
    if policy.flush.enabled:
        threshold = policy.flush_threshold(window)
        if not 0 < threshold <= window:
            raise PolicyError(f"{_where(where)}policy {policy.name!r}: the flush threshold ({threshold:,} tokens: "
                              f"flush.soft_threshold_tokens below the compaction threshold) lies outside the "
                              f"{window:,}-token context window")
