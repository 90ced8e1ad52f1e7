"""The one place that owns numba settings.

* The on-disk cache lives inside the project (``.numba_cache/`` beside the package's
  parent directory, or ``$WORKBENCH_NUMBA_CACHE``), never in an unwritable
  site-packages directory.
* Inside it, compiled code is kept under a key: a hash of every kernel source
  (:func:`kernel_sources`: the ``*_nb.py`` files and the package modules they import, whose
  constants are frozen into the machine code). numba checks only the file that defines a
  function, so a kernel calling another file's kernel would keep its stale machine code
  after an edit of that file; under a new key everything compiles afresh. Older keys are
  pruned (the :data:`KEEP_CACHES` most recently used stay).
* ``WORKBENCH_DISABLE_JIT=1`` turns compilation off: every ``@njit`` kernel runs as
  plain Python (slow, but debuggable and used to check kernels against their oracles).

Kernel modules import :func:`njit` and :func:`prange` from here, never from numba.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_PROJECT_ROOT = _PACKAGE.parent
KEEP_CACHES = 4  # cache keys kept: a few checkouts or branches can alternate without recompiling
_KEY = re.compile(r"[0-9a-f]{16}")
_UNKEYED = re.compile(r"\w+_[0-9a-f]{40}")  # numba's own directories: a cache from before the keys


def cache_root() -> Path:
    """Directory holding one compiled-kernel cache per kernel-source key."""
    override = os.environ.get("WORKBENCH_NUMBA_CACHE")
    return Path(override) if override else _PROJECT_ROOT / ".numba_cache"


def _module_file(module: str) -> Path | None:
    """The source file of a package module (``workbench.a.b``), or None."""
    parts = module.split(".")
    if parts[0] != _PACKAGE.name:
        return None
    base = _PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# import statements, found with a pattern rather than ast: parsing the kernel takes longer
# than the rest of the start-up work here (this runs whenever kernels are imported)
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))",
                     re.MULTILINE)


def _names(clause: str) -> list[str]:
    """``a as b, c`` or ``(a,\n b)`` (comments dropped) -> ``["a", "c"]``."""
    clause = re.sub(r"#[^\n]*", "", clause).strip("() \t\n")
    return [part.split()[0] for part in clause.split(",") if part.strip()]


def _imported_package_files(path: Path) -> set[Path]:
    """Package source files ``path`` imports: ``from workbench.a import b`` is the module
    ``workbench.a.b`` when that is a module, else ``b`` is a name in ``workbench.a``."""
    found: set[Path | None] = set()
    for m in _IMPORT.finditer(path.read_text()):
        module, names, plain = m.groups()
        if module:
            found.update(_module_file(f"{module}.{name}") or _module_file(module) for name in _names(names))
        else:
            found.update(_module_file(name) for name in _names(plain))
    found.discard(None)
    return found  # type: ignore[return-value]


def kernel_sources() -> list[Path]:
    """Every source file compiled kernels depend on: each ``*_nb.py`` of the package, the
    package modules those import (transitively), and this file (the compile options)."""
    todo = sorted(_PACKAGE.rglob("*_nb.py"))
    seen: set[Path] = {Path(__file__).resolve()}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(_imported_package_files(path) - seen)
    return sorted(seen)


def cache_key() -> str:
    """A hash of the kernel sources' paths (relative to the package) and bytes."""
    h = hashlib.sha256()
    for path in kernel_sources():
        h.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """Directory numba writes its compiled-kernel cache to: ``cache_root() / cache_key()``."""
    return cache_root() / cache_key()


def _prune(current: Path) -> None:
    """Remove key directories beside ``current`` beyond the :data:`KEEP_CACHES` most
    recently used (``current`` always stays) and numba directories written there before
    caches had keys; nothing else in the root is touched."""
    try:
        dirs = [p for p in current.parent.iterdir() if p.is_dir() and p != current]
    except OSError:
        return
    keys = sorted((p for p in dirs if _KEY.fullmatch(p.name)), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in keys[KEEP_CACHES - 1:] + [p for p in dirs if _UNKEYED.fullmatch(p.name)]:
        shutil.rmtree(stale, ignore_errors=True)


def jit_disabled() -> bool:
    return os.environ.get("WORKBENCH_DISABLE_JIT", "").strip().lower() in {"1", "true", "yes"}


def _configure() -> Path:
    # numba reads these at import time, so they must be set before the first import. The
    # directory is always ours: one inherited from another checkout's process would hold
    # that checkout's kernels.
    directory = cache_dir()
    os.environ["NUMBA_CACHE_DIR"] = str(directory)
    if jit_disabled():
        os.environ["NUMBA_DISABLE_JIT"] = "1"
        return directory
    try:
        directory.mkdir(parents=True, exist_ok=True)
        os.utime(directory)  # most recently used
        _prune(directory)
    except OSError:  # an unwritable cache only costs compile time; numba warns itself
        pass
    return directory


_CACHE_DIR = _configure()

import numba  # noqa: E402  (configured above on purpose)

numba.config.CACHE_DIR = str(_CACHE_DIR)  # in case numba was imported (and configured) before us

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
