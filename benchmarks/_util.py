"""Small helpers shared by the benchmark scripts (run them with the project's venv)."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from contextlib import contextmanager


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


@contextmanager
def timer():
    box = {}
    t0 = time.perf_counter()
    yield box
    box["s"] = time.perf_counter() - t0


def in_subprocess(code: str) -> str:
    """Run ``code`` in a fresh interpreter (fresh peak-RSS counter); return its stdout."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def table(rows: list[tuple], headers: tuple[str, ...]) -> str:
    cols = list(zip(headers, *rows, strict=True))
    widths = [max(len(str(c)) for c in col) for col in cols]
    line = "  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "-" * len(line)]
    out += ["  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)
