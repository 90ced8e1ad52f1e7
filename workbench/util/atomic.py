"""Atomic file writes: a reader never sees a half-written file. Whole directories are
written through :mod:`workbench.rundir` (the rule for output paths lives there).

Files and directories are created with modes 0o666 / 0o777 and the kernel applies the
user's umask, as for anything a shell command creates (``tempfile.mkstemp``/``mkdtemp``
would make them 0600 / 0700 whatever the umask, and a report written for a team would be
unreadable to it)."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

_ATTEMPTS = 100


def temp_prefix(path: Path) -> str:
    """``.NAME.PID.``: the start of the name of a temporary being written for ``path``; the
    rest is a random part and ``.tmp`` (:mod:`workbench.rundir.temp` recognises leftovers)."""
    return f".{Path(path).name}.{os.getpid()}."


def _create(path: Path, make):
    path = Path(path)
    for _ in range(_ATTEMPTS):
        tmp = path.parent / f"{temp_prefix(path)}{secrets.token_hex(6)}.tmp"
        try:
            return make(tmp), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name}")


def create_temp_file(path: Path) -> tuple[int, Path]:
    """A new, empty temporary file beside ``path`` (mode 0o666 less the umask), opened for
    writing: ``(fd, temp path)``."""
    return _create(path, lambda tmp: os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666))


def create_temp_dir(path: Path) -> Path:
    """A new, empty temporary directory beside ``path`` (mode 0o777 less the umask)."""
    return _create(path, lambda tmp: os.mkdir(tmp, 0o777))[1]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # .NAME.PID.RANDOM.tmp: a leftover of a killed writer is recognised (workbench.rundir.temp)
    fd, tmp = create_temp_file(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_owned_json(path: str | Path, *, schema: str, what: str) -> dict:
    """A ``what`` file the workbench wrote (a JSON object whose ``schema`` field is ``schema``),
    or a clear error naming the file: unreadable, not JSON, or another kind of file."""
    import orjson

    from workbench.errors import WorkbenchError

    p = Path(path)
    try:
        doc = orjson.loads(p.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise WorkbenchError(f"{p}: not a readable {what} file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise WorkbenchError(f"{p}: not a {what} file (schema {schema!r} expected)")
    return doc


def write_owned_json(path: str | Path, doc: dict, *, schema: str, what: str, example: str,
                     option: str) -> Path:
    """Write ``doc`` as sorted, indented JSON atomically at ``path``: a new path, or a ``what``
    file the workbench wrote (its ``schema`` field is ``schema``); anything else is refused,
    never overwritten (``option`` is the flag that names the path, ``example`` a file name)."""
    import orjson

    from workbench.errors import WorkbenchError

    p = Path(path)
    if p.is_dir():
        raise WorkbenchError(f"{p} is a directory; give a file name, e.g. {p / example}")
    if p.exists():
        try:
            current = orjson.loads(p.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            current = None
        if not isinstance(current, dict) or current.get("schema") != schema:
            raise WorkbenchError(f"{p} exists and is not a {what} file the workbench wrote; "
                                 f"refusing to replace it (choose another {option})")
    atomic_write_bytes(p, orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    return p
