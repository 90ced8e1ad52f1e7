"""One writer per output path: a second command writing the same path is refused, not
interleaved.

The lock is an ``flock`` on ``.NAME.lock`` beside the target (the target itself may not
exist yet, or be replaced whole while locked). The holder removes the file when it is done;
if the holder is killed the kernel still releases the lock, and the next writer takes the
file over (``workbench clean`` removes unlocked leftovers). A lock is taken on the file
that is at the path after the ``flock`` (a file removed meanwhile is retried). Within one
process the lock is re-entrant, so a command may hold it while the library functions it
calls take it again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from workbench.errors import WorkbenchError

_HELD: dict[str, tuple[int, int]] = {}  # lock path -> (fd, depth)


class LockedError(WorkbenchError):
    """Another command is writing this path."""


def lock_path(target: Path) -> Path:
    target = Path(os.path.abspath(target))
    return target.parent / f".{target.name}.lock"


@contextlib.contextmanager
def exclusive(target: str | Path) -> Iterator[None]:
    """Hold the write lock of ``target`` (non-blocking: raises :class:`LockedError`)."""
    path = lock_path(Path(target))
    key = str(path)
    if key in _HELD:
        fd, depth = _HELD[key]
        _HELD[key] = (fd, depth + 1)
        try:
            yield
        finally:
            fd, depth = _HELD[key]
            _HELD[key] = (fd, depth - 1)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _acquire(path, target)
    _HELD[key] = (fd, 1)
    try:
        yield
    finally:
        fd, depth = _HELD.pop(key)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # still holding it: a waiter that opened the old file retries
        os.close(fd)  # releases the flock


def _acquire(path: Path, target) -> int:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)  # less the umask
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise LockedError(f"{target}: another workbench command (pid {holder}) is writing it; wait "
                              "for it to finish or choose another path") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            return fd
        os.close(fd)  # the holder removed it as we opened it: take the new one


def is_locked(path: Path) -> bool:
    """Whether a lock file is held by some process now."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
