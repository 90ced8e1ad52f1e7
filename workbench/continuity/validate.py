"""Invariants of the canonical format.

Hard errors (raise :class:`ValidationError`): ``seq`` not strictly increasing within a
continuity, unknown kind codes. Soft findings (counted in the manifest, never dropped):
tool calls without results and results without an earlier call, which must carry the
``UNPAIRED`` flag.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from workbench.continuity.enums import EventFlag, EventKind
from workbench.errors import ValidationError


@dataclass(frozen=True)
class ValidationReport:
    events: int
    unpaired_calls: int
    unpaired_results: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def validate_events(events) -> ValidationReport:
    """Check an Arrow events table; return counts of soft findings."""
    import numpy as np

    n = events.num_rows
    if n == 0:
        return ValidationReport(0, 0, 0)
    cont = events.column("continuity").to_numpy()
    seq = events.column("seq").to_numpy()
    kind = events.column("kind").to_numpy()
    flags = events.column("flags").to_numpy()
    pair = events.column("pair_seq").to_numpy()

    if np.any(np.diff(cont) < 0):
        raise ValidationError("events are not grouped by continuity in ascending order")
    same = np.diff(cont) == 0
    bad = np.flatnonzero(same & (np.diff(seq) <= 0))
    if bad.size:
        i = int(bad[0]) + 1
        raise ValidationError(
            f"seq must be strictly increasing within a continuity: row {i} has seq {int(seq[i])} "
            f"after {int(seq[i - 1])} (continuity {int(cont[i])})")
    known = np.array([k.value for k in EventKind], dtype=kind.dtype)
    unknown = ~np.isin(kind, known)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise ValidationError(f"row {i}: unknown event kind code {int(kind[i])}; "
                              "unknown record types must be stored as kind OPAQUE")
    is_pairable = (kind == EventKind.TOOL_CALL) | (kind == EventKind.TOOL_RESULT)
    unflagged = is_pairable & (pair < 0) & ((flags & EventFlag.UNPAIRED) == 0)
    if unflagged.any():
        i = int(np.flatnonzero(unflagged)[0])
        raise ValidationError(f"row {i} (seq {int(seq[i])}): tool event without a pair "
                              "must carry the UNPAIRED flag")
    # a result must pair with an *earlier* call
    res = (kind == EventKind.TOOL_RESULT) & (pair >= 0)
    if np.any(pair[res] >= seq[res]):
        i = int(np.flatnonzero(res & (pair >= seq))[0])
        raise ValidationError(f"row {i} (seq {int(seq[i])}): tool result pairs with a later call")
    unpaired = (flags & EventFlag.UNPAIRED) != 0
    return ValidationReport(
        events=n,
        unpaired_calls=int(np.sum(unpaired & (kind == EventKind.TOOL_CALL))),
        unpaired_results=int(np.sum(unpaired & (kind == EventKind.TOOL_RESULT))),
    )


def pair_tool_events(continuity, seq, kind, call_ids):
    """Compute ``pair_seq`` and the UNPAIRED flag from ``call_id`` strings.

    A result pairs with the most recent earlier unmatched call of the same id in the
    same continuity; anything left over is unpaired. Returns (pair_seq, unpaired_mask).
    Vectorised (:mod:`workbench.continuity.pairing`; its ``pair_tool_events_py`` is the
    plain-Python oracle this must agree with). ``call_ids`` may be an Arrow string array.
    """
    from workbench.continuity.pairing import pair_tool_events as vectorised

    return vectorised(continuity, seq, kind, call_ids)
