"""RFC 0080: the eight-dimension memory capability model and the degraded projection.

**§A dimensions**, read from a host capability document (``{"memory": ..., "agents": ...,
"multiAgent": ...}``, or the same wrapped in ``{"capabilities": ...}``), in the RFC's
table order (which is also the order of ``degradedMemoryDimensions``):

================  ===========================================================================
read              ``memory.supported``
write             ``memory.supported`` and ``memory.writable`` is not ``false`` (absent ⇒
                  writable: RFC 0080 UQ1)
search            ``memory.supported`` and ``memory.search.supported``
long-term         ``agents.memoryBackends`` contains ``"long-term"``
compaction        ``memory.supported`` and (``memory.compaction.supported`` or
                  ``memory.distillation.supported``)
attribution       ``memory.supported`` and ``memory.attribution.supported``
replay-snapshot   derived: ``agents.memoryBackends`` contains ``"long-term"`` and
                  ``multiAgent.executionModel.version >= 2``
retention-forget  ``memory.supported`` and (``memory.retention.ttl`` or
                  ``memory.retention.forget``); without a ``retention`` block the RFC 0004
                  ``memory.ttlSupported`` flag stands in for ``retention.ttl``
================  ===========================================================================

Every ``memory.*`` dimension needs ``memory.supported: true`` (no adapter, nothing to
search or compact); ``long-term`` and ``replay-snapshot`` read ``agents.*`` exactly as the
RFC table says, so a host may advertise a long-term backend without the adapter (it then
still lacks read/write).

**memoryShape → requested dimensions** (our mapping; RFC 0080 leaves it to hosts):

* ``scratchpad: true``   → read, write (a per-run working area the agent writes and reads);
* ``conversation: true`` → read, write (per-thread memory, not durable across runs);
* ``longTerm: true``     → read, write, long-term (the RFC's example: a read-only host is
  degraded on ``["write", "long-term"]``);
* explicit requests (workbench extension, validated by the ``memory-shape`` schema):
  ``search``, ``compaction``, ``attribution``, ``replaySnapshot``, ``retention`` (booleans)
  and ``dimensions: [<§A names>]``.

Keys set to ``false`` request nothing. :func:`degraded_projection` returns ``{}`` when every
requested dimension is satisfied and otherwise ``{"memoryDegraded": True,
"degradedMemoryDimensions": [...]}`` in §A order.

>>> degraded_projection(HOST_PROFILES["read-only"], {"longTerm": True})
{'memoryDegraded': True, 'degradedMemoryDimensions': ['write', 'long-term']}
>>> degraded_projection(HOST_PROFILES["full-memory"], {"longTerm": True})
{}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from workbench.errors import WorkbenchError
from workbench.rundir import wire as W

DIMENSIONS: tuple[str, ...] = ("read", "write", "search", "long-term", "compaction", "attribution",
                               "replay-snapshot", "retention-forget")
_ORDER = {d: i for i, d in enumerate(DIMENSIONS)}

#: memoryShape key -> the §A dimensions it requests when true.
SHAPE_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "scratchpad": ("read", "write"),
    "conversation": ("read", "write"),
    "longTerm": ("read", "write", "long-term"),
    "search": ("read", "search"),
    "compaction": ("compaction",),
    "attribution": ("attribution",),
    "replaySnapshot": ("replay-snapshot",),
    "retention": ("retention-forget",),
}
LONG_TERM_BACKEND = "long-term"
REPLAY_SNAPSHOT_MIN_VERSION = 2


class CapabilityError(WorkbenchError):
    """A host capability document or memoryShape that fails its schema."""


# --------------------------------------------------------------------------- reading


def capabilities_of(host: Mapping[str, Any]) -> dict[str, Any]:
    """The bare capabilities object of a host document (unwraps ``{"capabilities": ...}``)."""
    if not isinstance(host, Mapping):
        raise CapabilityError(f"a host capability document must be a mapping, got {type(host).__name__}")
    inner = host.get("capabilities")
    return dict(inner) if isinstance(inner, Mapping) else dict(host)


def check_capabilities(host: Mapping[str, Any]) -> dict[str, Any]:
    """Validate against the ``capabilities`` schema; the bare capabilities object."""
    from workbench.conformance.schemas import validate

    caps = capabilities_of(host)
    errors = validate("capabilities", caps)
    if errors:
        raise CapabilityError("invalid host capability document: " + "; ".join(errors))
    return caps


def _flag(block: Any, key: str) -> bool:
    return isinstance(block, Mapping) and block.get(key) is True


def dimensions(host: Mapping[str, Any], *, validate: bool = True) -> dict[str, bool]:
    """The eight §A dimensions of a host capability document, in §A order."""
    caps = check_capabilities(host) if validate else capabilities_of(host)
    mem = caps.get("memory") if isinstance(caps.get("memory"), Mapping) else {}
    agents = caps.get("agents") if isinstance(caps.get("agents"), Mapping) else {}
    backends = agents.get("memoryBackends") or []
    version = ((caps.get("multiAgent") or {}).get("executionModel") or {}).get("version")
    supported = mem.get("supported") is True
    long_term = LONG_TERM_BACKEND in backends
    retention = mem.get("retention")
    if isinstance(retention, Mapping):
        retain = retention.get("ttl") is True or retention.get("forget") is True
    else:
        retain = mem.get("ttlSupported") is True
    return {
        "read": supported,
        "write": supported and mem.get("writable", True) is not False,
        "search": supported and _flag(mem.get("search"), "supported"),
        "long-term": long_term,
        "compaction": supported and (_flag(mem.get("compaction"), "supported")
                                     or _flag(mem.get("distillation"), "supported")),
        "attribution": supported and _flag(mem.get("attribution"), "supported"),
        "replay-snapshot": long_term and isinstance(version, int) and not isinstance(version, bool)
        and version >= REPLAY_SNAPSHOT_MIN_VERSION,
        "retention-forget": supported and retain,
    }


def compaction_supported(host: Mapping[str, Any]) -> bool:
    """RFC 0012 gating: ``capabilities.memory.compaction.supported is true``."""
    caps = capabilities_of(host)
    mem = caps.get("memory")
    return isinstance(mem, Mapping) and _flag(mem.get("compaction"), "supported")


def memory_profiles(host: Mapping[str, Any]) -> list[str]:
    """Derived RFC 0080 §D profiles the host satisfies.

    ``openwop-memory`` (read + write + long-term) is the shipped profile; the tiers
    ``openwop-memory-search`` and ``openwop-memory-managed`` (+ compaction + attribution +
    retention) are deferred by the RFC (UQ4) and computed here for reporting only.
    """
    d = dimensions(host)
    out: list[str] = []
    if d["read"] and d["write"] and d["long-term"]:
        out.append("openwop-memory")
        if d["search"]:
            out.append("openwop-memory-search")
        if d["compaction"] and d["attribution"] and d["retention-forget"]:
            out.append("openwop-memory-managed")
    return out


# --------------------------------------------------------------------------- projection


def sort_dimensions(names) -> list[str]:
    """Deterministic §A order (the RFC's example lists ``["write", "long-term"]``)."""
    unknown = [n for n in names if n not in _ORDER]
    if unknown:
        raise CapabilityError(f"unknown memory dimension(s) {sorted(set(unknown))}; known: {list(DIMENSIONS)}")
    return sorted(set(names), key=_ORDER.__getitem__)


def requested_dimensions(memory_shape: Mapping[str, Any] | None) -> list[str]:
    """The §A dimensions a memoryShape requests (see the module docstring), in §A order."""
    from workbench.conformance.schemas import validate

    if not memory_shape:
        return []
    errors = validate("memory-shape", memory_shape)
    if errors:
        raise CapabilityError("invalid memoryShape: " + "; ".join(errors))
    wanted: set[str] = set()
    for key, dims in SHAPE_DIMENSIONS.items():
        if memory_shape.get(key) is True:
            wanted.update(dims)
    wanted.update(memory_shape.get("dimensions") or ())
    return sort_dimensions(wanted)


def degraded_projection(host_caps: Mapping[str, Any], memory_shape: Mapping[str, Any] | None) -> dict[str, Any]:
    """RFC 0080 §C: ``{}`` when satisfied, else ``memoryDegraded`` + ``degradedMemoryDimensions``.

    Raises :class:`CapabilityError` when either input fails its schema (e.g.
    ``retention.ttl: "yes"``). The output validates against ``agent-inventory-entry``.
    """
    have = dimensions(host_caps)
    missing = [d for d in requested_dimensions(memory_shape) if not have[d]]
    if not missing:
        return {}
    return {"memoryDegraded": True, "degradedMemoryDimensions": missing}


def project_inventory_entry(entry: Mapping[str, Any], host_caps: Mapping[str, Any]) -> dict[str, Any]:
    """An inventory entry (with ``memoryShape``) stamped per §C; stale stamps are removed."""
    out = {k: v for k, v in entry.items() if k not in ("memoryDegraded", "degradedMemoryDimensions")}
    out.update(degraded_projection(host_caps, entry.get("memoryShape")))
    return out


# --------------------------------------------------------------------------- catalogue

_FULL_MEMORY = {
    "memory": {
        "supported": True, "writable": True, "maxEntrySizeBytes": 65_536, "ttlSupported": True,
        "search": {"supported": True, "modes": ["semantic", "filter"]},
        "compaction": {"supported": True, "trigger": W.TRIGGER_HOST, "maxInputEntries": 1_000,
                       "maxOutputBytes": 65_536},
        "attribution": {"supported": True, "emitsWriteEvents": True},
        "retention": {"ttl": True, "forget": True},
    },
    "agents": {"memoryBackends": ["long-term"]},
    "multiAgent": {"executionModel": {"version": 2}},
}

#: Generic host profiles (the RFC 0080 examples and the hosts its status notes describe).
GENERIC_HOST_PROFILES: dict[str, dict[str, Any]] = {
    "full-memory": _FULL_MEMORY,
    "read-only": {"memory": {"supported": True, "writable": False}},
    "ephemeral-in-memory": {"memory": {"supported": True, "ttlSupported": True,
                                       "retention": {"ttl": True, "forget": False}}},
    "no-memory": {"memory": {"supported": False}},
}

# Per-harness facts the policy dataclass does not carry (what the host *is*, beyond how
# it compacts). Everything else is derived from the preset by host_caps_for_policy.
_HARNESS_EXTRAS: dict[str, dict[str, Any]] = {
    # Letta: archival memory (long-term) with semantic search; recall memory; summarizer.
    "letta": {"long_term": True, "search": ["semantic"], "attribution": False, "forget": True},
    # OpenClaw: the pre-compaction flush writes memory files (long-term, file-based).
    "openclaw-flush": {"long_term": True},
    # RIP: the continuity log is the durable truth; replays read recorded snapshots.
    "rip-adr0011": {"long_term": True, "execution_model": 2, "attribution": True},
}
_PRODUCES_ENTRY = ("summary", "opaque", "recorded")


def host_caps_for_policy(policy) -> dict[str, Any]:
    """The host capability document of a host running ``policy`` (a Policy or preset name).

    * ``memory.supported``: always (the session context is the memory scope compacted);
    * ``memory.compaction``: supported iff the strategy produces a distilled entry
      (summary, opaque item, recorded summary) — truncation, clearing tool uses and
      masking drop or edit context without producing one, so RFC 0012 does not apply;
      ``trigger: "host-managed"``; ``maxOutputBytes`` = summary cap × 4 bytes/token;
    * ``agents.memoryBackends: ["long-term"]`` when a pre-compaction flush writes durable
      memory entries (or the harness is known to keep long-term memory: Letta, RIP);
    * search / attribution / replay-snapshot from the per-harness table (Letta searches
      its archival memory; RIP records provenance and replays recorded snapshots).
    """
    from workbench.engine.policy import Policy
    from workbench.engine.presets import get_policy

    pol = policy if isinstance(policy, Policy) else get_policy(str(policy))
    extra = _HARNESS_EXTRAS.get(pol.name, {})
    mem: dict[str, Any] = {"supported": True, "writable": True}
    if pol.compaction.kind in _PRODUCES_ENTRY:
        comp: dict[str, Any] = {"supported": True, "trigger": W.TRIGGER_HOST}
        if pol.compaction.kind in ("summary", "opaque") and pol.compaction.cap > 0:
            comp["maxOutputBytes"] = int(pol.compaction.cap) * W.BYTES_PER_TOKEN
        mem["compaction"] = comp
    else:
        mem["compaction"] = {"supported": False}
    if extra.get("search"):
        mem["search"] = {"supported": True, "modes": list(extra["search"])}
    if extra.get("attribution"):
        mem["attribution"] = {"supported": True, "emitsWriteEvents": True}
    if extra.get("forget"):
        mem["retention"] = {"ttl": False, "forget": True}
    caps: dict[str, Any] = {"memory": mem}
    if pol.flush.enabled or extra.get("long_term"):
        caps["agents"] = {"memoryBackends": ["long-term"]}
    if extra.get("execution_model"):
        caps["multiAgent"] = {"executionModel": {"version": int(extra["execution_model"])}}
    return caps


def _harness_profiles() -> dict[str, dict[str, Any]]:
    from workbench.engine.presets import PRESETS

    return {name: host_caps_for_policy(pol) for name, pol in PRESETS.items()}


#: Generic profiles + one per harness preset (``claude-code``, ``openclaw-flush``, ``letta`` ...).
HOST_PROFILES: dict[str, dict[str, Any]] = {**GENERIC_HOST_PROFILES, **_harness_profiles()}

#: Agent memoryShapes used in the degraded matrix.
MEMORY_SHAPES: dict[str, dict[str, Any]] = {
    "stateless": {},
    "scratchpad": {"scratchpad": True},
    "conversational": {"scratchpad": True, "conversation": True},
    "long-term": {"longTerm": True},
    "deep-research": {"scratchpad": True, "longTerm": True},
    "long-term-search": {"longTerm": True, "search": True},
    "managed": {"longTerm": True, "compaction": True, "retention": True},
    "auditable-replay": {"conversation": True, "attribution": True, "replaySnapshot": True},
}


def host_profile(name: str) -> dict[str, Any]:
    """A deep copy of a catalogue profile."""
    if name not in HOST_PROFILES:
        raise CapabilityError(f"unknown host profile {name!r}; known: {', '.join(HOST_PROFILES)}")
    return copy.deepcopy(HOST_PROFILES[name])


def dimensions_frame(hosts: Mapping[str, Mapping[str, Any]] | None = None):
    """One row per host: the eight §A dimensions (bool columns) and derived profiles."""
    import polars as pl

    hosts = HOST_PROFILES if hosts is None else hosts
    rows = []
    for name, caps in hosts.items():
        d = dimensions(caps)
        rows.append({"host": name, **{k.replace("-", "_"): v for k, v in d.items()},
                     "profiles": memory_profiles(caps)})
    schema = {"host": pl.String, **{d.replace("-", "_"): pl.Boolean for d in DIMENSIONS},
              "profiles": pl.List(pl.String)}
    return pl.DataFrame(rows, schema=schema)


def degraded_matrix(hosts: Mapping[str, Mapping[str, Any]] | None = None,
                    shapes: Mapping[str, Mapping[str, Any]] | None = None):
    """Host × memoryShape degraded projection as a tidy polars frame (a report table).

    Columns: ``host``, ``memory_shape``, ``requested`` (§A dimensions), ``memory_degraded``,
    ``degraded_dimensions`` (empty list when satisfied), ``n_degraded``. Rows follow the
    order of ``hosts`` then ``shapes``.
    """
    import polars as pl

    hosts = HOST_PROFILES if hosts is None else hosts
    shapes = MEMORY_SHAPES if shapes is None else shapes
    rows = []
    for hname, caps in hosts.items():
        for sname, shape in shapes.items():
            proj = degraded_projection(caps, shape)
            dims = proj.get("degradedMemoryDimensions", [])
            rows.append({"host": hname, "memory_shape": sname, "requested": requested_dimensions(shape),
                         "memory_degraded": bool(proj.get("memoryDegraded", False)),
                         "degraded_dimensions": dims, "n_degraded": len(dims)})
    schema = {"host": pl.String, "memory_shape": pl.String, "requested": pl.List(pl.String),
              "memory_degraded": pl.Boolean, "degraded_dimensions": pl.List(pl.String),
              "n_degraded": pl.Int64}
    return pl.DataFrame(rows, schema=schema)
