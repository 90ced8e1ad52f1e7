"""The wire vocabulary: every name a run writes into ``events.parquet`` and its documents
(event types, summary kinds, RFC 0012 and ADR-0011 names), spelled once. Every other module
imports them from here (``tests/test_architecture.py`` fails on a copy); the rows themselves
are built by :mod:`workbench.rundir.event_frames`, the file names are in
:mod:`workbench.rundir.names`.

Plain strings only, no imports: the engines, the evaluations, the conformance checks and
the reports all read these names, and none of them should pull in another for it.

>>> CHECKPOINT_EVENT, COMPACTED_EVENT
('continuity_compaction_checkpoint_created', 'memory.compacted')
>>> COMPACTED_EVENT in WIRE_EVENT_TYPES and PROVIDER_EVENT not in WIRE_EVENT_TYPES
True
"""

from __future__ import annotations

# ---- event types (the ``event_type`` column of a run's events) -------------------------------
CHECKPOINT_EVENT = "continuity_compaction_checkpoint_created"  # ADR-0011 checkpoint frame
COMPACTED_EVENT = "memory.compacted"  # RFC 0012: what a summary artifact compacted
FLUSH_EVENT = "memory.flushed"  # a pre-compaction memory flush
OVERFLOW_EVENT = "context.overflow"  # the context exceeded the window
EDIT_EVENT = "context.edited"  # tool results cleared or masked in place
MERGE_EVENT = "summary.merged"  # accumulated summary segments merged into one
TRUNCATION_EVENT = "context.truncated"  # overflow handling dropped the oldest events
LOCAL_EVENT = "local.checkpoint"  # a two-layer policy's local semantic checkpoint
REBUILD_EVENT = "provider_window.rebuilt"  # the provider window rebuilt from a local checkpoint
PROVIDER_EVENT = "provider.compacted"  # an opaque provider item's metadata (Holon §4.2)

#: the event types with a published wire shape (JSON Schema, :mod:`workbench.conformance.schemas`)
WIRE_EVENT_TYPES = (CHECKPOINT_EVENT, COMPACTED_EVENT)

# ---- summary kinds (``summary_kind`` of a frame, ADR-0011) ------------------------------------
SUMMARY_KIND = "llm_summary_v1"  # a modelled (or LLM-written) summary
OPAQUE_KIND = "provider_opaque_v1"  # a provider's opaque compaction item
TRUNCATION_KIND = "truncation_v1"
RECORDED_KIND = "recorded_summary_v1"  # the summary a log recorded, replayed as it was
CLEAR_KIND = "clear_tool_uses_v1"
MERGE_KIND = "hierarchical_merge_v1"

# ---- documents and RFC 0012 fields -------------------------------------------------------------
SUMMARY_SCHEMA = "rip.compaction_summary.v1"  # a summary artifact's document
TRIGGER_HOST = "host-managed"  # memory.compacted ``trigger``: the host decided to compact
TRIGGER_CLIENT = "client-requested"
COMPACTION_TRIGGERS = (TRIGGER_HOST, TRIGGER_CLIENT, "both")
SOURCE_IDS_LIMIT = 100  # memory.compacted lists ``sourceIds`` up to this many, else the count alone
# modelled summaries have a size, not a text: their ``byteSize`` (and a capability's
# ``maxOutputBytes``) is modelled at this many bytes a token
BYTES_PER_TOKEN = 4
