"""The ``rip.compaction_summary.v1`` document of each summary artifact a run produces
(ADR-0011): coverage ``{thread_id, from/to seq, from/to message id}``, provenance
``{actor_id, origin, produced_by}`` and the summary payload. Modelled runs have summary
sizes, not texts: the payload says so. The document names nothing run-specific (no run id,
no artifact number), so the same summary of the same range is the same document in every
run, and its id (:func:`workbench.rundir.artifacts.artifact_id`, the hash of the canonical
document) is stable; the run's ``compacted-from:<runId>`` tag stays on ``memory.compacted``.

The engine names artifacts with it while it builds a run's events
(:func:`workbench.rundir.event_frames.events_frame`) and the store is written from the same
documents (:func:`workbench.conformance.scenarios.modelled_artifact_store`).

>>> docs = SummaryDocs()
>>> row = {"event_type": "continuity_compaction_checkpoint_created", "continuity_id": "c", "policy": "p",
...        "summary_kind": "llm_summary_v1", "item_tokens": 40, "from_seq": 0, "from_message_id": "m0",
...        "to_seq": 9, "to_message_id": "m9", "actor_id": "a", "origin": "background"}
>>> doc = docs.add(row)
>>> doc["coverage"]["to_seq"], doc["provenance"]["produced_by"]
(9, 'workbench:p:llm_summary_v1')
>>> from workbench.rundir.artifacts import artifact_id
>>> artifact_id(doc) == artifact_id(SummaryDocs().add(row)) != artifact_id(SummaryDocs().add({**row, "item_tokens": 41}))
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from workbench.rundir import wire as W
from workbench.rundir.wire import CHECKPOINT_EVENT, LOCAL_EVENT, MERGE_KIND, SUMMARY_SCHEMA

_COVERAGE = ("from_seq", "from_message_id", "to_seq", "to_message_id")
#: the columns of an events row a document is built from
ROW_FIELDS = ("event_type", "continuity_id", "policy", "summary_kind", "item_tokens", *_COVERAGE, "actor_id",
              "origin")


def summary_document(coverage: Mapping[str, Any], provenance: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The ``rip.compaction_summary.v1`` document: the one shape of a run's artifacts and of a
    summarizer's result (:func:`workbench.summarize.artifact_document`). It holds no id: its
    id is its hash (:func:`workbench.rundir.artifacts.artifact_id`)."""
    return {"schema": SUMMARY_SCHEMA, "coverage": dict(coverage), "provenance": dict(provenance),
            "summary": {"format": "markdown", "text": text}}


def modelled_text(summary_kind: str | None, item_tokens: Any, from_seq: Any, to_seq: Any) -> str:
    """The payload of a modelled summary: its kind, size and range (no text was produced)."""
    kind = summary_kind or "summary"
    if kind == W.OPAQUE_KIND:
        return (f"_Opaque provider compaction item ({item_tokens} tokens); the provider's encrypted "
                "content is not readable._\n")
    return (f"_Modelled {kind} ({item_tokens} tokens) of events {from_seq}..{to_seq}; "
            "the text is not materialised in a modelled run._\n")


def position_key(continuity_id: str, policy_digest: str, artifact_no: int, from_seq: int | None,
                 to_seq: int | None) -> str:
    """A compaction's position in its run: the continuity, the policy (its digest), the
    artifact's number and its range (None: a merge). Not an artifact's id (that is its
    content's hash): what a seeded summarizer draws from (``SummaryRequest.draw_key``), so
    the draws of a compaction never depend on the document they produce."""
    lo, hi = (-1 if from_seq is None else from_seq), (-1 if to_seq is None else to_seq)
    key = f"{continuity_id}|{policy_digest}|{artifact_no}|{lo}|{hi}"
    return "art_" + hashlib.sha256(key.encode()).hexdigest()[:16]


class SummaryDocs:
    """Documents of the artifacts of a stream of checkpoint frames, local checkpoints (the
    two-layer policies' readable layer) and merges, in stream order: :meth:`add` one row at a
    time (a merge covers every checkpoint frame with an artifact of its continuity x policy so
    far). ``text`` gives the payload of a row (default:
    :func:`modelled_text`); ``actor_id`` overrides the rows' actor."""

    def __init__(self, text=None, actor_id: str | None = None):
        self._text = text
        self._actor = actor_id
        self._covered: dict[tuple, list[Mapping[str, Any]]] = {}

    def add(self, r: Mapping[str, Any]) -> dict[str, Any] | None:
        """The document of row ``r``, a row that produced an artifact (a checkpoint frame
        with one, or a merge); None for a merge with no checkpoint before it to cover."""
        scope = (r.get("continuity_id"), r.get("policy"))
        if r["event_type"] in (CHECKPOINT_EVENT, LOCAL_EVENT):
            if r["event_type"] == CHECKPOINT_EVENT:  # a merge covers the frames, not the local layer
                self._covered.setdefault(scope, []).append(r)
            cov, last, kind = r, r, r.get("summary_kind")
        else:
            prior = self._covered.get(scope, [])
            if not prior:
                return None
            first = min(prior, key=lambda c: c["from_seq"])
            last = max(prior, key=lambda c: c["to_seq"])
            cov = {"from_seq": first["from_seq"], "from_message_id": first["from_message_id"],
                   "to_seq": last["to_seq"], "to_message_id": last["to_message_id"]}
            kind = MERGE_KIND
        coverage = {"thread_id": r.get("continuity_id"), **{k: cov.get(k) for k in _COVERAGE}}
        row = {**r, "summary_kind": kind, "from_seq": coverage["from_seq"], "to_seq": coverage["to_seq"]}
        text = self._text(row) if self._text else modelled_text(kind, r.get("item_tokens"), coverage["from_seq"],
                                                                 coverage["to_seq"])
        return summary_document(coverage, {"actor_id": self._actor or last.get("actor_id"), "origin": last.get("origin"),
                                           "produced_by": f"workbench:{r.get('policy')}:{kind}"}, text)
