"""Tokenizer speed and the estimator's error against exact cl100k counts on the real logs.

    .venv/bin/python benchmarks/bench_tokenize.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _util import table  # noqa: E402

from workbench.tokens.tokenizers import count_texts  # noqa: E402

RECORDED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "recorded"


def corpus() -> dict[str, list[str]]:
    """Text per source: one string per record line (JSONL) or per file."""
    out: dict[str, list[str]] = {}
    for path in sorted(RECORDED.rglob("*")):
        if path.is_file() and path.suffix in (".jsonl", ".json", ".traj", ".md") and path.name != "SOURCES.md":
            source = path.relative_to(RECORDED).parts[0]
            text = path.read_text(errors="replace")
            out.setdefault(source, []).extend(text.splitlines() if path.suffix == ".jsonl" else [text])
    return out


def rate(texts: list[str], tokenizer: str, repeat: int = 3) -> tuple[float, np.ndarray]:
    mb = sum(len(t.encode()) for t in texts) / 1e6
    count_texts(texts[:10], tokenizer)  # warm (numba compile / encoding load)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        counts = count_texts(texts, tokenizer)
        best = min(best, time.perf_counter() - t)
    return mb / best, counts


def main() -> None:
    if not RECORDED.is_dir():
        sys.exit(f"recorded logs not found at {RECORDED}")
    per_source = corpus()
    everything = [t for texts in per_source.values() for t in texts]
    mb = sum(len(t.encode()) for t in everything) / 1e6
    rows = []
    for tok in ("cl100k", "approx", "chars4"):
        speed, _ = rate(everything, tok)
        rows.append((tok, f"{mb:.1f}", f"{speed:,.1f}"))
    print("tokenizer throughput on the recorded logs' text (best of 3)")
    print(table(rows, ("tokenizer", "MB", "MB/s")))
    print()
    rows = []
    for source, texts in per_source.items():
        exact = count_texts(texts, "cl100k").astype(np.int64)
        for tok in ("approx", "chars4"):
            est = count_texts(texts, tok).astype(np.int64)
            nz = exact > 20
            rel = np.abs(est[nz] - exact[nz]) / exact[nz]
            rows.append((source, tok, f"{exact.sum():,}", f"{(est.sum() - exact.sum()) / exact.sum():+.1%}",
                         f"{np.median(rel):.1%}" if nz.any() else "-", f"{np.percentile(rel, 90):.1%}" if nz.any() else "-"))
    print("estimators vs exact cl100k (total error, and per-record median / p90 absolute error)")
    print(table(rows, ("source", "estimator", "exact tokens", "total err", "median", "p90")))


if __name__ == "__main__":
    main()
