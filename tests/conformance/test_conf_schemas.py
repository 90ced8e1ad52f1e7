"""JSON Schemas: the RFCs' own examples validate, malformed shapes do not."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.conformance import schemas as S
from workbench.rundir import wire as W

# RFC 0012 §A, verbatim
RFC0012_MEMORY = {
    "supported": True,
    "maxEntrySizeBytes": 65536,
    "ttlSupported": True,
    "compaction": {"supported": True, "trigger": "host-managed", "maxInputEntries": 1000,
                   "maxOutputBytes": 65536},
}
# RFC 0012 §B, verbatim
RFC0012_EVENT = {
    "type": "memory.compacted",
    "ts": "2026-05-13T03:00:00.000Z",
    "memoryRef": "mem_<tenantId>_<agentId>_longTerm",
    "outputId": "mem_<id>",
    "sourceIds": ["mem_<id1>", "mem_<id2>", "..."],
    "sourceCount": 47,
    "trigger": "host-managed",
    "byteSize": 12044,
}
# RFC 0080 "Updated": the MyndHyve advertisement on the live wire
RFC0080_MYNDHYVE = {
    "supported": True, "writable": True, "ttlSupported": True,
    "search": {"supported": True, "modes": ["filter"]},
    "retention": {"ttl": True, "forget": True},
    "attribution": {"supported": True, "emitsWriteEvents": True},
}
# RFC 0080 Examples: the full-memory host
RFC0080_FULL = {
    "memory": {"supported": True, "search": {"supported": True, "modes": ["semantic"]},
               "compaction": {"supported": True, "trigger": "host-managed"},
               "attribution": {"supported": True}, "retention": {"ttl": True, "forget": True}},
    "agents": {"memoryBackends": ["long-term"]},
}
FRAME = {
    "type": "continuity_compaction_checkpoint_created", "seq": 3000, "from_seq": 1,
    "from_message_id": "evt_1", "to_seq": 1045, "to_message_id": "evt_1045",
    "summary_artifact_id": "art_161b54f736a072e7", "cut_rule_id": "stride_v1(every_messages=10000)",
    "summary_kind": "llm_summary_v1", "actor_id": "workbench-compactor", "origin": "background",
}
ARTIFACT = {
    "schema": "rip.compaction_summary.v1", "artifact_id": "art_1",
    "coverage": {"thread_id": "t1", "from_seq": 1, "from_message_id": "m1", "to_seq": 9, "to_message_id": "m9"},
    "provenance": {"actor_id": "workbench-compactor", "origin": "background", "produced_by": "llm"},
    "summary": {"format": "markdown", "text": "## Summary\n- fixed the retry loop\n"},
}


def with_(obj, path: str, value):
    """A deep copy of ``obj`` with ``a.b.c`` set (``value is DEL`` removes it)."""
    out = copy.deepcopy(obj)
    *parents, leaf = path.split(".")
    cur = out
    for p in parents:
        cur = cur[p]
    if value is DEL:
        del cur[leaf]
    else:
        cur[leaf] = value
    return out


DEL = object()


def test_every_schema_is_a_valid_2020_12_schema():
    Draft202012Validator = S._import_jsonschema().Draft202012Validator  # fast import (see schemas)
    for kind in S.KINDS:
        Draft202012Validator.check_schema(S.schema(kind))
        assert S.schema(kind)["$schema"].endswith("2020-12/schema")


@pytest.mark.parametrize(("kind", "obj"), [
    ("memory-capability", RFC0012_MEMORY),
    ("capabilities", {"memory": RFC0012_MEMORY}),
    ("capabilities", {"capabilities": "are passed through", "memory": RFC0012_MEMORY}),
    ("memory.compacted", RFC0012_EVENT),
    ("memory-capability", RFC0080_MYNDHYVE),
    ("capabilities", RFC0080_FULL),
    ("memory-capability", {"supported": True, "writable": False}),  # RFC 0080 read-only host
    ("memory-capability", {"supported": True, "compaction": {"supported": False}}),  # no trigger needed
    ("memory-capability", {"supported": False}),
    ("continuity_compaction_checkpoint_created", FRAME),
    ("continuity_compaction_checkpoint_created",
     {**FRAME, "summary_kind": "truncation_v1", "summary_artifact_id": None}),
    ("rip.compaction_summary.v1", ARTIFACT),
    ("agent-inventory-entry", {"id": "a", "memoryDegraded": True, "degradedMemoryDimensions": ["write", "long-term"]}),
    ("agent-inventory-entry", {"id": "satisfied"}),
    ("memory-shape", {"scratchpad": True, "longTerm": True}),
])
def test_examples_validate(kind, obj):
    assert S.validate(kind, obj) == []


def test_rfc0062_amendment_and_unknown_fields_are_accepted():
    ev = {**RFC0012_EVENT, "distillation": {"tokenBudget": 4000, "tokensUsed": 3120, "indexUpdated": True},
          "x-vendor": {"anything": [1, 2]}}
    assert S.validate("memory.compacted", ev) == []
    assert S.validate("memory.compacted", {**ev, "distillation": {"tokensUsed": "many"}}) == [
        "$.distillation.tokensUsed: 'many' is not of type 'integer'"]
    ev.pop("sourceIds")  # optional: hosts may rely on sourceCount + the provenance tag
    assert S.validate("memory.compacted", ev) == []


@pytest.mark.parametrize(("kind", "obj", "expected"), [
    ("memory-capability", with_(RFC0012_MEMORY, "compaction.trigger", DEL), "$.compaction: 'trigger' is a required property"),
    ("memory-capability", with_(RFC0012_MEMORY, "compaction.trigger", "nightly"), "$.compaction.trigger: 'nightly' is not one of"),
    ("memory-capability", with_(RFC0012_MEMORY, "compaction.supported", DEL), "$.compaction: 'supported' is a required property"),
    ("memory-capability", with_(RFC0012_MEMORY, "compaction.maxInputEntries", 1.5), "$.compaction.maxInputEntries: 1.5 is not of type 'integer'"),
    ("memory-capability", with_(RFC0012_MEMORY, "supported", "yes"), "$.supported: 'yes' is not of type 'boolean'"),
    ("memory-capability", {"supported": True, "retention": {"ttl": "yes"}}, "$.retention.ttl: 'yes' is not of type 'boolean'"),
    ("memory-capability", {"supported": True, "search": {"modes": ["semantic"]}}, "$.search: 'supported' is a required property"),
    ("memory-capability", {"supported": True, "search": {"supported": True, "modes": ["fuzzy"]}}, "$.search.modes[0]: 'fuzzy' is not one of"),
    ("memory-capability", {"supported": True, "writable": "no"}, "$.writable: 'no' is not of type 'boolean'"),
    ("capabilities", {"memory": {"supported": True}, "agents": {"memoryBackends": "long-term"}},
     "$.agents.memoryBackends: 'long-term' is not of type 'array'"),
    ("memory.compacted", with_(RFC0012_EVENT, "outputId", DEL), "$: 'outputId' is a required property"),
    ("memory.compacted", with_(RFC0012_EVENT, "type", "memory.compact"), "$.type: 'memory.compacted' was expected"),
    ("memory.compacted", with_(RFC0012_EVENT, "sourceCount", "47"), "$.sourceCount: '47' is not of type 'integer'"),
    ("memory.compacted", with_(RFC0012_EVENT, "sourceIds", "mem_1"), "$.sourceIds: 'mem_1' is not of type 'array'"),
    ("memory.compacted", with_(RFC0012_EVENT, "sourceIds", ["a", 7]), "$.sourceIds[1]: 7 is not of type 'string'"),
    ("memory.compacted", with_(RFC0012_EVENT, "sourceCount", 2), "$.sourceIds: 3 ids listed but sourceCount is 2"),
    ("memory.compacted", with_(RFC0012_EVENT, "byteSize", -1), "$.byteSize: -1 is less than the minimum of 0"),
    ("memory.compacted", with_(RFC0012_EVENT, "trigger", "cron"), "$.trigger: 'cron' is not one of"),
    ("memory.compacted", with_(RFC0012_EVENT, "ts", "yesterday"), "$.ts: 'yesterday' does not match"),
    ("continuity_compaction_checkpoint_created", with_(FRAME, "from_seq", 2000), "$.from_seq: from_seq 2000 > to_seq 1045"),
    ("continuity_compaction_checkpoint_created", with_(FRAME, "seq", 1000), "$.seq: the frame (seq 1000) must come after its cut point"),
    ("continuity_compaction_checkpoint_created", with_(FRAME, "cut_rule_id", DEL), "$: 'cut_rule_id' is a required property"),
    ("continuity_compaction_checkpoint_created", with_(FRAME, "summary_artifact_id", None),
     "$.summary_artifact_id: None is not of type 'string'"),
    ("continuity_compaction_checkpoint_created", {**FRAME, "summary_kind": "truncation_v1"},
     "$.summary_artifact_id: 'art_161b54f736a072e7' is not of type 'null'"),
    ("continuity_compaction_checkpoint_created", with_(FRAME, "to_message_id", ""), "$.to_message_id: '' should be non-empty"),
    ("rip.compaction_summary.v1", with_(ARTIFACT, "coverage.thread_id", DEL), "$.coverage: 'thread_id' is a required property"),
    ("rip.compaction_summary.v1", with_(ARTIFACT, "schema", "rip.compaction_summary.v2"), "$.schema: 'rip.compaction_summary.v1' was expected"),
    ("rip.compaction_summary.v1", with_(ARTIFACT, "summary.format", "html"), "$.summary.format: 'markdown' was expected"),
    ("rip.compaction_summary.v1", with_(ARTIFACT, "provenance.origin", DEL), "$.provenance: 'origin' is a required property"),
    ("agent-inventory-entry", {"memoryDegraded": True}, "$: 'degradedMemoryDimensions' is a required property"),
    ("agent-inventory-entry", {"memoryDegraded": True, "degradedMemoryDimensions": ["longTerm"]},
     "$.degradedMemoryDimensions[0]: 'longTerm' is not one of"),
    ("agent-inventory-entry", {"memoryDegraded": True, "degradedMemoryDimensions": []}, "$.degradedMemoryDimensions: [] should be non-empty"),
])
def test_malformed_is_rejected_with_a_json_path(kind, obj, expected):
    errors = S.validate(kind, obj)
    assert any(e.startswith(expected) for e in errors), errors


def test_validate_aliases_and_unknown_kind():
    assert S.validate("checkpoint", FRAME) == S.validate("continuity_compaction_checkpoint_created", FRAME) == []
    assert S.validate("memory_compacted", RFC0012_EVENT) == []
    with pytest.raises(KeyError):
        S.validate("memory.flushed", {})


def test_advisories_are_not_errors():
    mem = with_(RFC0012_MEMORY, "compaction.maxOutputBytes", 100_000)
    assert S.validate("memory-capability", mem) == []
    assert any("maxOutputBytes" in a for a in S.advisories("memory-capability", mem))
    both = with_(RFC0012_EVENT, "trigger", "both")
    assert S.validate("memory.compacted", both) == []
    assert any("'both'" in a for a in S.advisories("memory.compacted", both))
    assert any("exhaustive" in a for a in S.advisories("memory.compacted", RFC0012_EVENT))  # 3 of 47 listed


def test_to_wire_memory_compacted_and_frame():
    row = {"run_id": "run_1", "policy": "p", "continuity_id": "c", "event_type": "memory.compacted",
           "ts": "2026-01-01T00:00:00.000Z", "memoryRef": "mem_c_p_context", "outputId": "art_1",
           "sourceIds": None, "sourceCount": 150, "trigger": "host-managed", "byteSize": 400,
           "tags": ["compacted-from:run_1"], "frame_seq": None, "tokens_before": 9}
    wire = S.to_wire(row)
    assert wire == {"type": "memory.compacted", "ts": "2026-01-01T00:00:00.000Z", "memoryRef": "mem_c_p_context",
                    "outputId": "art_1", "sourceCount": 150, "trigger": "host-managed", "byteSize": 400}
    assert S.validate("memory.compacted", wire) == []
    wire = S.to_wire({**row, "sourceIds": ["evt_1", "evt_2"], "sourceCount": 2})
    assert wire["sourceIds"] == ["evt_1", "evt_2"]
    frame_row = {"event_type": "continuity_compaction_checkpoint_created", "frame_seq": 3000, "policy": "p",
                 **{k: v for k, v in FRAME.items() if k not in ("type", "seq")}, "to_is_message": True}
    assert S.to_wire(frame_row) == FRAME
    with pytest.raises(ValueError):
        S.to_wire({"event_type": "memory.flushed"})


# ---- fuzzing ----------------------------------------------------------------------------

ids = st.lists(st.text(min_size=0, max_size=6), max_size=8)


@settings(max_examples=150, deadline=None)
@given(count=st.integers(min_value=-3, max_value=12), source_ids=st.one_of(st.none(), ids))
def test_fuzz_source_ids_and_count(count, source_ids):
    ev = dict(RFC0012_EVENT, sourceCount=count)
    ev.pop("sourceIds")
    if source_ids is not None:
        ev["sourceIds"] = source_ids
    ok = count >= 0 and (source_ids is None or (len(source_ids) <= count and all(source_ids)
                                                and len(set(source_ids)) == len(source_ids)))
    assert (S.validate("memory.compacted", ev) == []) == ok


json_values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
                        st.lists(st.integers(), max_size=2))


@settings(max_examples=120, deadline=None)
@given(trigger=st.one_of(st.sampled_from(W.COMPACTION_TRIGGERS), st.text(max_size=12)),
       supported=json_values, ttl=json_values)
def test_fuzz_capability_fields(trigger, supported, ttl):
    mem = {"supported": True, "compaction": {"supported": supported, "trigger": trigger},
           "retention": {"ttl": ttl}}
    ok = trigger in W.COMPACTION_TRIGGERS and isinstance(supported, bool) and isinstance(ttl, bool)
    assert (S.validate("memory-capability", mem) == []) == ok
    # the trigger is only required when compaction is supported
    mem["compaction"].pop("trigger")
    ok_without = isinstance(supported, bool) and supported is False and isinstance(ttl, bool)
    assert (S.validate("memory-capability", mem) == []) == ok_without


@settings(max_examples=80, deadline=None)
@given(from_seq=st.integers(0, 50), to_seq=st.integers(0, 50), seq=st.integers(0, 60),
       kind=st.sampled_from(["llm_summary_v1", "truncation_v1", "provider_opaque_v1"]),
       art=st.one_of(st.none(), st.just("art_x")))
def test_fuzz_checkpoint_frame(from_seq, to_seq, seq, kind, art):
    frame = {**FRAME, "from_seq": from_seq, "to_seq": to_seq, "seq": seq, "summary_kind": kind,
             "summary_artifact_id": art}
    ok = from_seq <= to_seq < seq and ((art is None) == (kind == "truncation_v1"))
    assert (S.validate("checkpoint", frame) == []) == ok
