"""RFC 0080: the eight dimensions, the §C degraded projection, the catalogue and matrix."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.conformance import capability as C
from workbench.conformance.schemas import validate

# ---- the RFC's §C / Examples ------------------------------------------------------------

def test_full_memory_host_is_not_degraded():
    host = {"memory": {"supported": True, "search": {"supported": True, "modes": ["semantic"]},
                       "compaction": {"supported": True, "trigger": "host-managed"},
                       "attribution": {"supported": True}, "retention": {"ttl": True, "forget": True}},
            "agents": {"memoryBackends": ["long-term"]}}
    assert C.degraded_projection(host, {"longTerm": True}) == {}
    assert "openwop-memory" in C.memory_profiles(host)
    assert C.degraded_projection(C.HOST_PROFILES["full-memory"], {"longTerm": True}) == {}


def test_read_only_host_is_degraded_on_write_and_long_term():
    host = {"memory": {"supported": True, "writable": False}}
    proj = C.degraded_projection(host, {"longTerm": True})
    assert proj == {"memoryDegraded": True, "degradedMemoryDimensions": ["write", "long-term"]}
    assert validate("agent-inventory-entry", proj) == []


def test_retention_ttl_yes_fails_schema_validation():
    host = {"memory": {"supported": True, "retention": {"ttl": "yes"}}}
    assert validate("capabilities", host) == ["$.memory.retention.ttl: 'yes' is not of type 'boolean'"]
    with pytest.raises(C.CapabilityError, match="retention.ttl"):
        C.degraded_projection(host, {"longTerm": True})


def test_myndhyve_live_advertisement_serves_the_non_degraded_direction():
    host = {"capabilities": {
        "memory": {"supported": True, "writable": True, "ttlSupported": True,
                   "search": {"supported": True, "modes": ["filter"]},
                   "retention": {"ttl": True, "forget": True},
                   "attribution": {"supported": True, "emitsWriteEvents": True}},
        "agents": {"memoryBackends": ["long-term"], "manifestRuntime": True}}}
    entry = {"id": "core.openwop.agents.deep-research.default",
             "memoryShape": {"scratchpad": True, "longTerm": True}}
    stamped = C.project_inventory_entry(entry, host)
    assert "memoryDegraded" not in stamped and "degradedMemoryDimensions" not in stamped
    # and a stale stamp is removed rather than left behind
    assert C.project_inventory_entry({**entry, "memoryDegraded": True,
                                      "degradedMemoryDimensions": ["write"]}, host) == entry


# ---- the dimension rules ----------------------------------------------------------------

def test_dimension_rules():
    d = C.dimensions({"memory": {"supported": True}})
    assert list(d) == list(C.DIMENSIONS)
    assert d["read"] and d["write"]  # writable absent => writable (UQ1)
    assert not any(d[k] for k in ("search", "long-term", "compaction", "attribution", "replay-snapshot",
                                  "retention-forget"))
    assert not any(C.dimensions({"memory": {"supported": False, "writable": True,
                                            "search": {"supported": True}}}).values())
    assert C.dimensions({})["read"] is False
    lt = {"memory": {"supported": True}, "agents": {"memoryBackends": ["long-term"]}}
    assert C.dimensions(lt)["long-term"] and not C.dimensions(lt)["replay-snapshot"]
    lt2 = {**lt, "multiAgent": {"executionModel": {"version": 2}}}
    assert C.dimensions(lt2)["replay-snapshot"]
    assert not C.dimensions({**lt, "multiAgent": {"executionModel": {"version": 1}}})["replay-snapshot"]
    # replay-snapshot is derived from long-term + execution model, whatever memory says
    assert not C.dimensions({"memory": {"supported": True}, "multiAgent": {"executionModel": {"version": 3}}})[
        "replay-snapshot"]
    # compaction via RFC 0012 or RFC 0062
    assert C.dimensions({"memory": {"supported": True, "distillation": {"supported": True}}})["compaction"]
    # retention: the RFC 0080 block, or the RFC 0004 ttlSupported flag without it
    assert C.dimensions({"memory": {"supported": True, "ttlSupported": True}})["retention-forget"]
    assert not C.dimensions({"memory": {"supported": True, "ttlSupported": True,
                                        "retention": {"ttl": False}}})["retention-forget"]
    assert C.dimensions({"memory": {"supported": True, "retention": {"forget": True}}})["retention-forget"]


def test_memory_shape_mapping_and_order():
    assert C.requested_dimensions(None) == C.requested_dimensions({}) == []
    assert C.requested_dimensions({"scratchpad": True}) == ["read", "write"]
    assert C.requested_dimensions({"conversation": True}) == ["read", "write"]
    assert C.requested_dimensions({"longTerm": True, "scratchpad": False}) == ["read", "write", "long-term"]
    assert C.requested_dimensions({"dimensions": ["retention-forget", "read", "replay-snapshot"]}) == [
        "read", "replay-snapshot", "retention-forget"]
    assert C.requested_dimensions({"retention": True, "search": True, "replaySnapshot": True}) == [
        "read", "search", "replay-snapshot", "retention-forget"]
    with pytest.raises(C.CapabilityError):
        C.requested_dimensions({"dimensions": ["longTerm"]})
    with pytest.raises(C.CapabilityError):
        C.requested_dimensions({"longTerm": "yes"})
    no_mem = C.HOST_PROFILES["no-memory"]
    assert C.degraded_projection(no_mem, {}) == {}
    assert C.degraded_projection(no_mem, {"scratchpad": True})["degradedMemoryDimensions"] == ["read", "write"]


# ---- the catalogue and the matrix ------------------------------------------------------

def test_catalogue_profiles_validate_and_describe_the_harnesses():
    for name, caps in C.HOST_PROFILES.items():
        assert validate("capabilities", caps) == [], name
    d = {name: C.dimensions(caps) for name, caps in C.HOST_PROFILES.items()}
    assert d["claude-code"]["compaction"] and not d["claude-code"]["long-term"]
    assert d["openclaw-flush"]["compaction"] and d["openclaw-flush"]["long-term"]
    assert d["letta"]["long-term"] and d["letta"]["search"]
    for name in ("anthropic-clear-tool-uses", "observation-masking", "no-compaction"):
        assert not d[name]["compaction"], name  # no distilled entry: RFC 0012 does not apply
    assert d["ephemeral-in-memory"]["write"] and not d["ephemeral-in-memory"]["long-term"]
    assert C.host_profile("letta") == C.HOST_PROFILES["letta"] and C.host_profile("letta") is not C.HOST_PROFILES["letta"]
    with pytest.raises(C.CapabilityError):
        C.host_profile("nope")


def test_host_caps_for_policy_follows_the_policy():
    from workbench.engine.presets import get_policy

    caps = C.host_caps_for_policy("claude-code")
    assert caps["memory"]["compaction"] == {"supported": True, "trigger": "host-managed", "maxOutputBytes": 48_000}
    flush = C.host_caps_for_policy(get_policy("claude-code", {"flush.enabled": True}, rename="cc-flush"))
    assert flush["agents"]["memoryBackends"] == ["long-term"]
    trunc = C.host_caps_for_policy(get_policy("claude-code", {"compaction.kind": "truncate"}, rename="cc-trunc"))
    assert trunc["memory"]["compaction"] == {"supported": False}
    assert not C.compaction_supported(trunc)


def test_degraded_matrix_frame():
    m = C.degraded_matrix()
    assert m.columns == ["host", "memory_shape", "requested", "memory_degraded", "degraded_dimensions", "n_degraded"]
    assert m.height == len(C.HOST_PROFILES) * len(C.MEMORY_SHAPES)
    for r in m.iter_rows(named=True):
        assert r["memory_degraded"] == (r["n_degraded"] > 0)
        assert set(r["degraded_dimensions"]) <= set(r["requested"])
        assert r["degraded_dimensions"] == C.sort_dimensions(r["degraded_dimensions"])
    row = m.filter((m["host"] == "read-only") & (m["memory_shape"] == "long-term")).row(0, named=True)
    assert row["degraded_dimensions"] == ["write", "long-term"]
    assert not m.filter(m["memory_shape"] == "stateless")["memory_degraded"].any()
    assert C.degraded_matrix().equals(m)  # deterministic
    small = C.degraded_matrix({"h": {"memory": {"supported": True}}}, {"s": {"longTerm": True}})
    assert small.to_dicts() == [{"host": "h", "memory_shape": "s", "requested": ["read", "write", "long-term"],
                                 "memory_degraded": True, "degraded_dimensions": ["long-term"], "n_degraded": 1}]
    dims = C.dimensions_frame()
    assert dims.height == len(C.HOST_PROFILES)
    assert dims.filter(dims["host"] == "full-memory")["profiles"].to_list()[0] == [
        "openwop-memory", "openwop-memory-search", "openwop-memory-managed"]


# ---- property: the projection is "requested minus available", in §A order --------------

flags = st.one_of(st.none(), st.booleans())


@st.composite
def hosts(draw):
    mem: dict = {"supported": draw(st.booleans())}
    for key in ("writable", "ttlSupported"):
        v = draw(flags)
        if v is not None:
            mem[key] = v
    for key in ("search", "compaction", "attribution", "distillation"):
        v = draw(flags)
        if v is not None:
            mem[key] = {"supported": v, **({"trigger": "host-managed"} if key == "compaction" else {})}
    if draw(st.booleans()):
        mem["retention"] = {k: draw(st.booleans()) for k in draw(st.sets(st.sampled_from(["ttl", "forget"])))}
    caps: dict = {"memory": mem}
    if draw(st.booleans()):
        caps["agents"] = {"memoryBackends": draw(st.lists(st.sampled_from(["long-term", "session"]), unique=True))}
    if draw(st.booleans()):
        caps["multiAgent"] = {"executionModel": {"version": draw(st.integers(1, 3))}}
    return caps


shapes = st.fixed_dictionaries({}, optional={k: st.booleans() for k in C.SHAPE_DIMENSIONS}) | st.fixed_dictionaries(
    {"dimensions": st.lists(st.sampled_from(C.DIMENSIONS), unique=True)})


@settings(max_examples=200, deadline=None)
@given(host=hosts(), shape=shapes)
def test_projection_is_requested_minus_available(host, shape):
    proj = C.degraded_projection(host, shape)
    have = C.dimensions(host)
    missing = [d for d in C.requested_dimensions(shape) if not have[d]]
    assert validate("agent-inventory-entry", proj) == []
    if missing:
        assert proj == {"memoryDegraded": True, "degradedMemoryDimensions": missing}
        assert missing == C.sort_dimensions(missing)
    else:
        assert proj == {}
