"""Compiled tool-call pairing: ``pair_seq`` and the UNPAIRED flag from ``call_id`` strings.

The rule (:func:`pair_tool_events_py`, the plain-Python oracle): walking the rows in order,
a TOOL_CALL opens its (continuity, call id), replacing any call of that key still open
(which then stays unpaired); a TOOL_RESULT closes the open call of its key and pairs with
it, or is unpaired when none is open. Rows without a call id, and other kinds, are
ignored.

:func:`pair_tool_events` gives the same result in one compiled pass
(:func:`pair_tool_events_nb`) over the call ids as an Arrow string column (offsets and
UTF-8 bytes): an open-addressing table keyed by (continuity, call id bytes) holds each
key's open call. Rows need not be grouped by continuity.

>>> import numpy as np
>>> pair, unpaired = pair_tool_events(np.zeros(4, np.int32), np.arange(4), np.array([2, 2, 3, 3]),
...                                   ["a", "b", "b", "a"])
>>> pair.tolist(), unpaired.tolist()
([3, 2, 1, 0], [False, False, False, False])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench._numba import njit
from workbench.continuity.enums import EventKind

_CALL = int(EventKind.TOOL_CALL)
_RESULT = int(EventKind.TOOL_RESULT)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit
def _same_key_nb(continuity, offsets, data, a, b):
    if continuity[a] != continuity[b]:
        return False
    a0, a1, b0 = offsets[a], offsets[a + 1], offsets[b]
    if a1 - a0 != offsets[b + 1] - b0:
        return False
    for t in range(a1 - a0):  # noqa: SIM110 - a plain loop for numba
        if data[a0 + t] != data[b0 + t]:
            return False
    return True


@njit
def pair_tool_events_nb(continuity, offsets, data, valid, kind, seq, call_kind, result_kind):
    """``pair`` (the partner's seq, -1 if none) per row.

    Row i's call id is ``data[offsets[i]:offsets[i+1]]`` (UTF-8 bytes) when ``valid[i]``.
    """
    n = kind.shape[0]
    pair = np.full(n, -1, np.int64)
    m = 0
    for i in range(n):
        if valid[i] and (kind[i] == call_kind or kind[i] == result_kind):
            m += 1
    size = 2
    while size < 2 * m:
        size *= 2
    mask = np.uint64(size - 1)
    key_row = np.full(size, -1, np.int64)  # a row whose (continuity, id) is the slot's key
    open_row = np.full(size, -1, np.int64)  # the key's open call, or -1
    for i in range(n):
        k = kind[i]
        if not valid[i] or (k != call_kind and k != result_kind):
            continue
        h = _FNV_OFFSET ^ (np.uint64(continuity[i]) * _MIX)
        for t in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[t])) * _FNV_PRIME
        h ^= h >> np.uint64(29)
        slot = h & mask
        while True:
            r = key_row[slot]
            if r < 0:
                key_row[slot] = i
                break
            if _same_key_nb(continuity, offsets, data, r, i):
                break
            slot = (slot + np.uint64(1)) & mask
        if k == call_kind:
            open_row[slot] = i
        else:
            j = open_row[slot]
            if j >= 0:
                pair[i] = seq[j]
                pair[j] = seq[i]
            open_row[slot] = -1
    return pair


def string_buffers(values: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(int64 offsets of n+1, uint8 UTF-8 bytes, bool valid) of a string column given as a
    sequence of ``str | None`` or an Arrow (large) string array."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    arr = values if isinstance(values, pa.Array) else pa.array(values, type=pa.large_string())
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.cast(pa.large_string())
    n = len(arr)
    bufs = arr.buffers()
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(bufs[1], dtype=width)[arr.offset:arr.offset + n + 1].astype(np.int64, copy=False)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else np.ones(n, bool)
    return offsets, data, valid


def pair_tool_events(continuity, seq, kind, call_ids) -> tuple[np.ndarray, np.ndarray]:
    """(pair_seq int64, unpaired mask): the result of :func:`pair_tool_events_py`.

    ``call_ids`` is a sequence of ``str | None`` or an Arrow string array.
    """
    kind = np.asarray(kind)
    seq = np.asarray(seq, dtype=np.int64)
    if seq.shape[0] == 0:
        return np.full(0, -1, np.int64), np.zeros(0, bool)
    offsets, data, valid = string_buffers(call_ids)
    with np.errstate(over="ignore"):  # the hash wraps around on purpose (uint64)
        pair = pair_tool_events_nb(np.asarray(continuity, dtype=np.int64), offsets, data, valid,
                                   kind.astype(np.int64, copy=False), seq, _CALL, _RESULT)
    pairable = (kind == EventKind.TOOL_CALL) | (kind == EventKind.TOOL_RESULT)
    return pair, pairable & (pair < 0)


def pair_tool_events_py(continuity, seq, kind, call_ids):
    """The plain-Python oracle (the original loop): (pair_seq, unpaired mask)."""
    n = len(seq)
    pair = np.full(n, -1, dtype=np.int64)
    open_calls: dict[tuple[int, str], int] = {}
    for i in range(n):
        k = kind[i]
        cid = call_ids[i]
        if cid is None:
            continue
        key = (int(continuity[i]), cid)
        if k == EventKind.TOOL_CALL:
            open_calls[key] = i
        elif k == EventKind.TOOL_RESULT:
            j = open_calls.pop(key, None)
            if j is not None:
                pair[i] = seq[j]
                pair[j] = seq[i]
    kind = np.asarray(kind)
    pairable = (kind == EventKind.TOOL_CALL) | (kind == EventKind.TOOL_RESULT)
    return pair, pairable & (pair < 0)
