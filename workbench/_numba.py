"""The one place that owns numba settings.

* The on-disk cache lives inside the project (``.numba_cache/`` beside the package's
  parent directory, or ``$WORKBENCH_NUMBA_CACHE``), never in an unwritable
  site-packages directory.
* ``WORKBENCH_DISABLE_JIT=1`` turns compilation off: every ``@njit`` kernel runs as
  plain Python (slow, but debuggable and used to check kernels against their oracles).

Kernel modules import :func:`njit` and :func:`prange` from here, never from numba.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """Directory numba writes its compiled-kernel cache to."""
    override = os.environ.get("WORKBENCH_NUMBA_CACHE")
    return Path(override) if override else _PROJECT_ROOT / ".numba_cache"


def jit_disabled() -> bool:
    return os.environ.get("WORKBENCH_DISABLE_JIT", "").strip().lower() in {"1", "true", "yes"}


def _configure() -> None:
    # numba reads these at import time, so they must be set before the first import.
    os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir()))
    if jit_disabled():
        os.environ["NUMBA_DISABLE_JIT"] = "1"


_configure()

import numba  # noqa: E402  (configured above on purpose)

prange = numba.prange


def njit(*args, **kwargs):
    """``numba.njit`` with the project's defaults: cached, no Python fallback."""
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    if args and callable(args[0]) and len(args) == 1 and not kwargs.get("_explicit"):
        return numba.njit(**kwargs)(args[0])
    return numba.njit(*args, **kwargs)


def set_num_threads(n: int) -> None:
    if not jit_disabled():
        numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
