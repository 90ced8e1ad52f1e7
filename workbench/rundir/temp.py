"""Temporaries of interrupted writes: named so they can be found, owned so they can be judged.

A directory being written is ``.NAME.PID.RANDOM.tmp`` beside its target, holding ``.owner``
(host, pid and the process's start time); a file being written is ``.NAME.PID.RANDOM.tmp``;
``.NAME.lock`` is a writer's lock (stale when nobody holds it).
A temporary is *stale* when its writer is gone: same host, and no process with that pid
or one started after the temporary was made (a reused pid). Stale temporaries in a
directory are removed at the next write into it, and ``workbench clean`` lists and removes
them anywhere below a path. Nothing that does not match these names is ever touched;
directories of writers on another host are left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

OWNER = ".owner"
# ours: .NAME.PID.RANDOM.tmp ; before this version: .NAME.RANDOM.tmp and .NAME.old.PID
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.(?P<rand>[A-Za-z0-9_]+)\.(?:tmp|old)$")
_LOCK = re.compile(r"^\.(?P<name>.+)\.lock$")  # workbench.rundir.lock
_LEGACY = re.compile(r"^\.(?P<name>.+)\.(?:[A-Za-z0-9_]{8}\.tmp|old\.\d+)$")
# a temporary with no owner record (a file, or an older version's directory) is judged by
# its pid alone once it is this old, so a writer that just started is never raced
LEGACY_AGE_S = 3600.0


def _process_started(pid: int) -> float | None:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def make_temp_dir(target: Path) -> Path:
    """A fresh temporary directory beside ``target``, recording who writes it."""
    from workbench.util.atomic import create_temp_dir

    tmp = create_temp_dir(target)
    started = _process_started(os.getpid())
    (tmp / OWNER).write_bytes(orjson.dumps({"host": socket.gethostname(), "pid": os.getpid(),
                                            "process_started": started}))
    return tmp


@dataclass(frozen=True)
class Temporary:
    path: Path
    stale: bool
    reason: str
    age_s: float
    bytes: int
    legacy: bool = False  # named by an older version (no pid): only `workbench clean` removes it


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_size
    return total


def judge(path: Path) -> Temporary | None:
    """What ``path`` is, if it is a temporary of ours; None otherwise."""
    if _LOCK.match(path.name) and path.is_file() and path.stat().st_size <= 20 \
            and path.read_bytes().strip().isdigit():  # ours hold the writer's pid, nothing else
        from workbench.rundir.lock import is_locked

        held = is_locked(path)
        age = time.time() - path.lstat().st_mtime
        return Temporary(path, not held, "writer running" if held else "lock left by a killed writer",
                         age, path.stat().st_size)
    m = _TEMP.match(path.name)
    legacy = m is None
    if legacy and not _LEGACY.match(path.name):
        return None
    try:
        age = time.time() - path.lstat().st_mtime
    except OSError:
        return None
    owner = None
    if path.is_dir() and (path / OWNER).is_file():
        try:
            owner = orjson.loads((path / OWNER).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            owner = None
    if owner is not None:
        if owner.get("host") != socket.gethostname():
            return Temporary(path, False, f"written on {owner.get('host')}", age, _size(path))
        started = _process_started(int(owner.get("pid", -1)))
        alive = started is not None and (owner.get("process_started") is None
                                         or abs(started - owner["process_started"]) < 1.0)
        return Temporary(path, not alive, "writer running" if alive else "writer gone", age, _size(path))
    pid = int(m.group("pid")) if m else None
    alive = pid is not None and _process_started(pid) is not None
    if alive:
        return Temporary(path, False, "writer may be running", age, _size(path), legacy)
    if age < LEGACY_AGE_S:
        return Temporary(path, False, "too recent to judge", age, _size(path), legacy)
    return Temporary(path, True, "writer gone", age, _size(path), legacy)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_stale(directory: Path) -> list[Temporary]:
    """Remove the stale temporaries directly inside ``directory``; returns them."""
    removed = []
    try:
        entries = list(Path(directory).iterdir())
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith("."):
            t = judge(entry)
            if t is not None and t.stale and not t.legacy:
                _remove(entry)
                removed.append(t)
    return removed


SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".numba_cache"}


def find_temporaries(root: Path) -> Iterator[Temporary]:
    """Every temporary of ours below ``root`` (symbolic links are not followed)."""
    for dirpath, dirnames, filenames in os.walk(root):
        keep = []
        for d in dirnames:
            t = judge(Path(dirpath) / d) if d.startswith(".") else None
            if t is not None:
                yield t
            elif d not in SKIP_DIRS:
                keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            if f.startswith("."):
                t = judge(Path(dirpath) / f)
                if t is not None:
                    yield t


def clean(root: Path, *, dry_run: bool = False) -> list[Temporary]:
    """List the temporaries below ``root``; remove the stale ones unless ``dry_run``."""
    found = sorted(find_temporaries(Path(root)), key=lambda t: str(t.path))
    if not dry_run:
        for t in found:
            if t.stale:
                _remove(t.path)
    return found
