"""Small integer codes used by the canonical format and by every kernel.

Codes are part of the on-disk format (``schema_version``); never renumber, only add.
"""

from __future__ import annotations

from enum import IntEnum, IntFlag


class EventKind(IntEnum):
    OPAQUE = 0  # a record kept only for its raw JSON (unknown or unmodelled type)
    MESSAGE = 1  # a conversational message (role says whose)
    TOOL_CALL = 2  # the model asks for a tool (call_id pairs it)
    TOOL_RESULT = 3  # the tool's answer (call_id pairs it)
    REASONING = 4  # thinking / reasoning output
    SIDE_EFFECT = 5  # dense non-message events: progress, file snapshots, hooks, telemetry
    COMPACTION = 6  # a recorded compaction boundary (trigger, pre_tokens)
    SUMMARY = 7  # a recorded summary that replaced history
    MEMORY_WRITE = 8  # an entry written to durable memory
    USAGE = 9  # a usage report without content (e.g. Codex token_count)
    META = 10  # session/turn metadata (model, cwd, instructions)


class Role(IntEnum):
    NONE = 0
    SYSTEM = 1
    USER = 2
    ASSISTANT = 3
    TOOL = 4
    DEVELOPER = 5


class Origin(IntEnum):
    """Where an event came from (ADR-0011 ``origin``)."""

    UNKNOWN = 0
    USER = 1
    AGENT = 2
    TOOL = 3
    SYSTEM = 4
    BACKGROUND = 5  # background workers: summarizers, memory jobs
    HARNESS = 6  # the runtime itself (hooks, progress, snapshots)


class CompactTrigger(IntEnum):
    NONE = 0
    AUTO = 1
    MANUAL = 2
    OTHER = 3


class EventFlag(IntFlag):
    NONE = 0
    UNPAIRED = 1  # a tool call without result, or a result without an earlier call
    OUTPUT = 2  # produced by the model (belongs to the request that produced it)
    SIDECHAIN = 4  # belongs to a sub-agent side chain
    META = 8  # harness-injected content the user did not type (isMeta)
    ERROR = 16  # tool result reported an error / interrupted
    PLANTED = 32  # carries a planted fact or secret (see the label tables)
    SKIPPED = 64  # placeholder for a source record that failed to parse (--on-error skip)


KIND_NAMES = {k.value: k.name.lower() for k in EventKind}
ROLE_NAMES = {r.value: r.name.lower() for r in Role}
ORIGIN_NAMES = {o.value: o.name.lower() for o in Origin}
TRIGGER_NAMES = {t.value: t.name.lower() for t in CompactTrigger}

# Kinds that a compile strategy treats as "message events" (ADR-0011: cut points anchor
# to messages, never to side effects).
MESSAGE_KINDS = (EventKind.MESSAGE,)
