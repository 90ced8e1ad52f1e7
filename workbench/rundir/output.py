"""The one rule for every output path.

A path may be written only if it does not exist, is an empty directory, or is a directory
this workbench wrote of the same kind (its marker says so, and every name in it is one the
workbench wrote). ``force=True`` also allows a workbench directory of another kind; nothing
else is ever replaced, and a file is never replaced by a directory.

Two ways to write:

* :func:`replace_dir` (datasets, runs): the new directory is built in a temporary sibling,
  its marker written last, then swapped in with one ``renameat2(RENAME_EXCHANGE)`` (two
  renames where the kernel lacks it); the old copy is deleted only after the new one is in
  place, and only if it still holds nothing but what the workbench wrote.
* :func:`update_dir` (sweeps, reports, audit outputs, files added to a run): the directory
  is created if missing; each file is written atomically; a name that exists and is not
  one of the marker's entries is never overwritten.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / "mine").mkdir(); _ = (root / "mine" / "NOTES.txt").write_text("keep")
>>> try:
...     check_output(root / "mine", Kind.DATASET)
... except OutputError as exc:
...     print(str(exc).split(":", 1)[1].strip()[:59])
refusing to write a dataset here: it holds NOTES.txt, which
>>> import shutil; shutil.rmtree(root)
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.rundir.lock import exclusive
from workbench.rundir.markers import (
    MARKER,
    Kind,
    Marker,
    file_record,
    now,
    read_marker,
    update_marker,
    write_marker,
)
from workbench.rundir.temp import make_temp_dir, remove_stale


class OutputError(WorkbenchError):
    """An output path the workbench must not write (exit code 2)."""


def _a(kind: str) -> str:
    """``kind`` with its article: a run, an audit."""
    return f"{'an' if str(kind)[:1] in 'aeiou' else 'a'} {kind}"


def _listing(names: Iterable[str], limit: int = 5) -> str:
    names = sorted(names)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_output(path: str | Path, kind: Kind, *, force: bool = False,
                 accept: Iterable[Kind] = (), replacing: bool = True) -> Marker | None:
    """Raise :class:`OutputError` unless ``path`` may receive a ``kind`` directory.

    Returns the marker of the directory already there (None when there is none or it is
    empty). ``accept`` lists other kinds that may be written into without ``force`` (files
    an audit adds to a run). ``replacing=False`` checks a directory files are added to:
    names the workbench did not write may sit beside them (they are never touched)."""
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise OutputError(f"{path}: a dangling symbolic link; remove it or choose another path")
    if not path.exists():
        return None
    if not path.is_dir():
        raise OutputError(f"{path}: is a file; a file is never replaced by {_a(kind)} directory "
                          "(choose another path)")
    names = {p.name for p in path.iterdir()}
    if not names:
        return None
    marker = read_marker(path)
    if marker is None:
        raise OutputError(f"{path}: refusing to write {_a(kind)} here: it holds {_listing(names)}, "
                          "which the workbench did not write (choose a new or empty directory)")
    if marker.kind != kind and marker.kind not in set(accept) and not force:
        raise OutputError(f"{path}: is a workbench {marker.kind} directory, not {_a(kind)} one; "
                          f"pass --force to replace it, or choose another path")
    foreign = names - set(marker.entries) - {MARKER}
    if foreign and replacing:
        raise OutputError(f"{path}: refusing to replace this workbench {marker.kind} directory: "
                          f"it also holds {_listing(foreign)}, which the workbench did not write "
                          "(move them away or choose another path)")
    return marker


WRITERS = {Kind.DATASET: "`workbench generate` or `workbench import`", Kind.RUN: "`workbench simulate`",
           Kind.SWEEP: "`workbench sweep`", Kind.REPORT: "`workbench report`",
           Kind.AUDIT: "`workbench audit determinism|fidelity --out`", Kind.EXPORT: "`workbench export`"}


class IncompleteError(WorkbenchError):
    """A directory a command was adding files to when it stopped (or is adding to now)."""


# the command this process runs (e.g. "audit redaction"), set by :func:`rerunning`
_RUNNING: ContextVar[str | None] = ContextVar("workbench_running_command", default=None)


@contextlib.contextmanager
def rerunning(what: str) -> Iterator[None]:
    """While ``what`` runs (a command as markers name it, e.g. ``"audit redaction"``), a
    directory that same command left incomplete is complete to it: running the stopped
    command again is the remedy :func:`check_complete` names (it reads the run it adds to).
    Any other reader still refuses the directory, and nobody reads one being written now."""
    token = _RUNNING.set(what)
    try:
        yield
    finally:
        _RUNNING.reset(token)


def check_complete(path: Path, marker: Marker) -> None:
    from workbench.rundir.lock import is_locked, lock_path

    if marker.complete:
        return
    if is_locked(lock_path(path)):
        raise IncompleteError(f"{path}: `workbench {marker.writing}` is writing it right now; wait for it "
                              "to finish")
    if marker.writing == _RUNNING.get():
        return  # the stopped command, run again: it re-writes what it was adding
    raise IncompleteError(f"{path} is incomplete: `workbench {marker.writing}` stopped before it "
                          f"finished; run it again for this directory")


def require(path: str | Path, kind: Kind, *, complete: bool = True) -> Marker:
    """The marker of ``path``, which an input option says is a ``kind`` directory (and, with
    ``complete``, one no command left half-written)."""
    path = Path(path)
    if not path.is_dir():
        raise OutputError(f"{path}: no such {kind} directory (one is written by {WRITERS[kind]})")
    marker = read_marker(path)
    if marker is None:
        raise OutputError(f"{path}: not {_a(kind)} directory the workbench wrote (one is written by "
                          f"{WRITERS[kind]})")
    if marker.kind != kind:
        raise OutputError(f"{path}: is a {marker.kind} directory, not {_a(kind)} (one is written by "
                          f"{WRITERS[kind]})")
    if complete:
        check_complete(path, marker)
    return marker


# ---- atomic exchange --------------------------------------------------------------------------
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2
_AT_FDCWD = -100


def _libc():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        lib = ctypes.CDLL(name, use_errno=True)
        return lib if hasattr(lib, "renameat2") else None
    except OSError:
        return None


_LIBC = _libc()


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """True when done; False when the system has no renameat2 (then the caller falls back)."""
    if _LIBC is None:
        return False
    rc = _LIBC.renameat2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL):  # old kernel or a file system without it
        return False
    raise OSError(err, os.strerror(err), str(dst))


def _swap_in(tmp: Path, target: Path) -> Path | None:
    """Put ``tmp`` at ``target``; return where the old directory now is (or None)."""
    if not target.exists():
        if not _renameat2(tmp, target, _RENAME_NOREPLACE):
            os.rename(tmp, target)
        return None
    if _renameat2(tmp, target, _RENAME_EXCHANGE):
        return tmp  # tmp now holds the old directory
    old = tmp.with_name(tmp.name.replace(".tmp", ".old"))
    os.rename(target, old)
    os.rename(tmp, target)
    return old


def _discard_old(old: Path, kind: Kind, target: Path, force: bool) -> None:
    """Delete the replaced directory, unless something foreign appeared in it meanwhile."""
    try:
        check_output(old, kind, force=force)
    except OutputError:
        kept = old.with_name(f".{target.name}.replaced-{now().replace(':', '')}")
        os.rename(old, kept)
        raise OutputError(f"{target}: replaced, but the previous directory gained files the "
                          f"workbench did not write while it ran; it is kept at {kept}") from None
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def replace_dir(target: str | Path, kind: Kind, *, force: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling to fill; on success it replaces ``target`` whole.

    The rule is checked before any work and again just before the swap; no other command
    may write ``target`` meanwhile (:func:`~workbench.rundir.lock.exclusive`)."""
    target = Path(target).resolve() if Path(target).is_symlink() else Path(target)
    check_output(target, kind, force=force)
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(target):
        remove_stale(target.parent)
        tmp = make_temp_dir(target)
        try:
            yield tmp
            (tmp / ".owner").unlink(missing_ok=True)
            entries = {p.name for p in tmp.iterdir()}
            files = {p.name: file_record(p) for p in tmp.iterdir() if p.is_file()}
            write_marker(tmp, kind, entries, files=files)  # last: the directory is complete
            check_output(target, kind, force=force)
            if target.is_dir():
                # the directory at this path keeps its permissions (a user's empty 0755 one,
                # or a run a team shares): only a new one takes the umask's
                os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
            old = _swap_in(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        if old is not None:
            _discard_old(old, kind, target, force)


def update_dir(target: str | Path, kind: Kind, *, accept: Iterable[Kind] = (),
               force: bool = False) -> Path:
    """Make ``target`` ready to receive files of a ``kind`` directory (or of one of the
    ``accept`` kinds already there); returns it. Write files with :func:`write_file`,
    inside :func:`adding` so that an interrupted write leaves the directory marked
    incomplete."""
    target = Path(target)
    marker = check_output(target, kind, force=force, accept=accept, replacing=False)
    target.mkdir(parents=True, exist_ok=True)
    remove_stale(target.parent)
    remove_stale(target)
    if marker is None or marker.legacy or (force and marker.kind not in {kind, *accept}):
        keep_kind = marker.kind if marker is not None and marker.kind in {kind, *accept} else kind
        write_marker(target, keep_kind, marker.entries if marker is not None else ())
    return target


@contextlib.contextmanager
def adding(target: str | Path, kind: Kind, what: str, *, accept: Iterable[Kind] = (),
           force: bool = False) -> Iterator[Path]:
    """Hold ``target`` while ``what`` (e.g. "audit redaction") adds files to it: the marker
    says so until the block ends; if the block fails or the process dies first, the
    directory stays marked incomplete and readers refuse it until ``what`` runs again."""
    with exclusive(target):
        target = update_dir(target, kind, accept=accept, force=force)
        update_marker(target, read_marker(target), writing=what)
        yield target
        update_marker(target, read_marker(target), writing=None)


def claim(target: Path, names: Iterable[str]) -> None:
    """Refuse names in ``target`` that exist and are not the workbench's; then record them
    as the marker's entries (call before writing them)."""
    target = Path(target)
    marker = read_marker(target)
    if marker is None:
        raise OutputError(f"{target}: not a workbench directory; call update_dir first")
    names = set(names)
    foreign = {n for n in names - set(marker.entries) if (target / n).exists()}
    if foreign:
        raise OutputError(f"{target}: refusing to overwrite {_listing(foreign)}, which the "
                          "workbench did not write")
    if not names <= set(marker.entries):
        update_marker(target, marker, entries=set(marker.entries) | names)


def write_file(target: Path, name: str, data: bytes) -> Path:
    """Write ``target/name`` atomically after :func:`claim`-ing it; its size and hash go
    into the marker."""
    from workbench.util.atomic import atomic_write_bytes

    claim(target, [name])
    path = Path(target) / name
    atomic_write_bytes(path, data)
    marker = read_marker(target)
    update_marker(target, marker, files={**marker.files, name: file_record(path)})
    return path


def write_parquet(target: Path, name: str, frame) -> Path:
    """A polars frame as ``target/name`` (zstd), atomically, after claiming the name."""
    import io

    buf = io.BytesIO()
    frame.write_parquet(buf, compression="zstd")
    return write_file(target, name, buf.getvalue())
