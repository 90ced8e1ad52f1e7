"""Hand-built run events and dataset events for the invariant tests (test_invariants_*).

A few rows written out make each broken rule and the exact finding it must produce easy to
read; every row is valid on the wire unless a test breaks it, so a finding is the test's own.
"""

from __future__ import annotations

import polars as pl

from workbench.conformance.invariants import check_invariants
from workbench.continuity.enums import EventFlag, EventKind

CP = "continuity_compaction_checkpoint_created"
MC = "memory.compacted"
RUN = "run_0123456789ab"
RULE = "tokens_v1(tokens=1000)"

EVENT_SCHEMA = {
    "event_type": pl.String, "continuity_id": pl.String, "policy": pl.String, "request": pl.Int64,
    "run_id": pl.String, "frame_seq": pl.Int64, "from_seq": pl.Int64, "from_message_id": pl.String,
    "to_seq": pl.Int64, "to_message_id": pl.String, "to_is_message": pl.Boolean,
    "summary_artifact_id": pl.String, "summary_kind": pl.String, "cut_rule_id": pl.String,
    "actor_id": pl.String, "origin": pl.String, "ts": pl.String, "memoryRef": pl.String,
    "outputId": pl.String, "sourceIds": pl.List(pl.String), "sourceCount": pl.Int64, "trigger": pl.String,
    "byteSize": pl.Int64, "tags": pl.List(pl.String),
}
_UNSET = object()


def cp(frame_seq, from_seq, to_seq, *, cid="c1", pol="p", art=_UNSET, kind="llm_summary_v1", rule=RULE,
       request=None, **extra) -> dict:
    """A checkpoint frame; message ids m<seq>, artifact a<frame_seq> unless given."""
    row = {"event_type": CP, "continuity_id": cid, "policy": pol, "request": request, "run_id": RUN,
           "frame_seq": frame_seq, "from_seq": from_seq, "to_seq": to_seq,
           "from_message_id": None if from_seq is None else f"m{from_seq}",
           "to_message_id": None if to_seq is None else f"m{to_seq}",
           "summary_artifact_id": f"a{frame_seq}" if art is _UNSET else art, "summary_kind": kind,
           "cut_rule_id": rule, "actor_id": "workbench", "origin": "replay"}
    row.update(extra)
    return row


def mc(output_id, *, cid="c1", pol="p", ids=("e1",), count=None, tags=_UNSET, **extra) -> dict:
    """The memory.compacted event of ``output_id``, tagged with this run."""
    ids = None if ids is None else list(ids)
    row = {"event_type": MC, "continuity_id": cid, "policy": pol, "run_id": RUN, "ts": "2026-01-01T00:00:00Z",
           "memoryRef": "mem_1", "outputId": output_id, "sourceIds": ids,
           "sourceCount": len(ids or []) if count is None else count, "trigger": "host-managed", "byteSize": 10,
           "tags": [f"compacted-from:{RUN}"] if tags is _UNSET else tags}
    row.update(extra)
    return row


def marker(event_type, request, *, cid="c1", pol="p", **extra) -> dict:
    """A context.overflow / context.truncated / summary.merged row."""
    return {"event_type": event_type, "continuity_id": cid, "policy": pol, "request": request, "run_id": RUN,
            **extra}


def events(*rows, compacted=True, drop=()) -> pl.DataFrame:
    """The rows as an events frame; with ``compacted``, every checkpoint artifact that has no
    memory.compacted row gets one (so only the rule a test breaks yields findings)."""
    rows = list(rows)
    if compacted:
        named = {r.get("outputId") for r in rows if r["event_type"] == MC}
        for r in list(rows):
            art = r.get("summary_artifact_id")
            if r["event_type"] == CP and art is not None and art not in named:
                rows.append(mc(art, cid=r["continuity_id"], pol=r["policy"]))
                named.add(art)
    schema = {k: v for k, v in EVENT_SCHEMA.items() if k not in drop}
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema)


M, CALL, RESULT, REASON = int(EventKind.MESSAGE), int(EventKind.TOOL_CALL), int(EventKind.TOOL_RESULT), \
    int(EventKind.REASONING)
SIDE = int(EventFlag.SIDECHAIN)

# continuity c1: (seq, kind, flags, pair_seq, message_id)
C1 = [
    (0, M, 0, None, "m0"),
    (1, M, 0, None, "m1"),
    (2, CALL, 0, 3, None),      # a tool call and its result: no cut at 2
    (3, RESULT, 0, 2, None),
    (4, M, 0, None, "m4"),
    (5, CALL, 0, 7, "m5"),      # open over 5 and 6
    (6, M, SIDE, None, "m6"),   # a side-chain message is not model-visible
    (7, RESULT, 0, 5, "m7"),
    (8, M, 0, None, "m8"),
    (9, REASON, 0, None, "m9"),
    (10, M, 0, None, ""),       # an empty message id: the engine names it evt_10
    (11, CALL, SIDE, 13, "m11"),  # a side chain's tool pair may be cut
    (12, M, 0, None, "m12"),
    (13, RESULT, SIDE, 11, "m13"),
    (14, M, 0, None, "m14"),
]


def dataset_events(spec=None, *, cid="c1", message_ids=True) -> pl.DataFrame:
    spec = C1 if spec is None else spec
    data = {"continuity_id": [cid] * len(spec), "seq": [s[0] for s in spec], "kind": [s[1] for s in spec],
            "flags": [s[2] for s in spec], "pair_seq": [s[3] for s in spec]}
    if message_ids:
        data["message_id"] = [s[4] for s in spec]
    return pl.DataFrame(data, schema_overrides={"seq": pl.Int64, "pair_seq": pl.Int64, "kind": pl.Int8,
                                                "flags": pl.Int32})


def findings(events_frame, dataset=None, **kwargs) -> list[tuple]:
    """check_invariants' findings as (check, continuity_id, policy, severity, detail) rows."""
    return check_invariants(events_frame, dataset, **kwargs).findings.rows()
