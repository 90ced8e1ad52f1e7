"""Compiled gather of pooled strings into one Arrow string column.

``pyarrow.compute.take`` on large strings copies byte by byte through generic code
(about 4 s per GB here); this kernel copies each string with one slice assignment.
``gather_strings_py`` is its pure-Python twin (the test oracle).
"""

from __future__ import annotations

import numpy as np

from workbench._numba import njit


@njit
def gather_strings_nb(data, offsets, idx, out_offsets, out):
    """``out[out_offsets[i]:out_offsets[i+1]] = data[offsets[idx[i]]:offsets[idx[i]+1]]``."""
    for i in range(idx.shape[0]):
        j = idx[i]
        start = offsets[j]
        length = offsets[j + 1] - start
        dst = out_offsets[i]
        out[dst:dst + length] = data[start:start + length]
    return out


def gather_strings_py(texts: list[str], idx) -> list[str]:
    return [texts[int(i)] for i in idx]


def gather_strings(pool, idx: np.ndarray):
    """Arrow ``large_string`` array with ``pool[idx[i]]`` at row ``i``."""
    import pyarrow as pa

    arr = pool if isinstance(pool, pa.Array) else pa.array(pool, type=pa.large_string())
    arr = arr.cast(pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(0, np.uint8)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    lengths = (offsets[1:] - offsets[:-1])[idx]
    out_offsets = np.zeros(idx.size + 1, np.int64)
    np.cumsum(lengths, out=out_offsets[1:])
    out = np.empty(int(out_offsets[-1]), np.uint8)
    gather_strings_nb(data, offsets, idx, out_offsets, out)
    return pa.LargeStringArray.from_buffers(idx.size, pa.py_buffer(out_offsets), pa.py_buffer(out))
