"""Record/replay cassettes for the HTTP summarizer, so replays stay deterministic.

A cassette is a JSONL file, one recorded exchange a line, keyed by a stable hash of
``(method, path, canonical JSON body)``: the path is relative to the endpoint's base URL and
headers are never part of the key (nor stored), so a cassette recorded against one host
replays against any other and never holds an API key. The file is rewritten atomically,
sorted by key, on every new recording: its bytes depend only on what was recorded, not on
the order calls happened in. Several instances may share one file: each recording is
merged with what is on disk (under a per-file lock within the process; separate processes
should record to separate files).

Modes: ``record`` (always call the endpoint and store the answer), ``replay`` (never touch
the network; a request the cassette does not hold raises :class:`CassetteMissError` naming
its key), ``auto`` (replay when present, else call and record). Only final answers are
stored: a transient failure that exhausted its retries is never recorded, while a
permanent one (e.g. a 404 that negative-caches the compact route) is, so a replay repeats
the same decisions.

>>> cassette_key("POST", "/chat/completions", {"b": 1, "a": [1, 2]}) == \\
...     cassette_key("post", "/chat/completions", {"a": [1, 2], "b": 1})
True
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.summarize.base import CassetteError, CassetteMissError

MODES = ("record", "replay", "auto")
_PATH_LOCKS: dict[str, threading.Lock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def _path_lock(path: Path) -> threading.Lock:
    """One lock per cassette file in this process (instances sharing a file take turns)."""
    key = str(Path(path).resolve())
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(key, threading.Lock())


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: the same value always gives the same text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def cassette_key(method: str, path: str, body: Any) -> str:
    """sha256 of the canonical JSON of ``[METHOD, path, body]``."""
    blob = canonical_json([method.upper(), path, body])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CassetteEntry:
    key: str
    method: str
    path: str
    status: int
    response: str            # the response body text, exactly as received
    request: Any = None      # the request body (for reading a cassette; not used to match)

    def to_json(self) -> dict:
        d = {"key": self.key, "method": self.method, "path": self.path, "status": self.status,
             "response": self.response}
        if self.request is not None:
            d["request"] = self.request
        return d


class Cassette:
    """A JSONL cassette file in one of :data:`MODES`. Thread-safe within a process."""

    def __init__(self, path: str | Path, mode: str = "auto", *, store_requests: bool = True):
        if mode not in MODES:
            raise CassetteError(f"unknown cassette mode {mode!r}; known: {', '.join(MODES)}")
        self.path = Path(path)
        self.mode = mode
        self.store_requests = store_requests
        self._lock = threading.Lock()
        self._entries: dict[str, CassetteEntry] = {}
        if self.path.exists():
            self._load()
        elif mode == "replay":
            raise CassetteError(f"{self.path}: cassette not found (mode 'replay' needs a recorded file)")

    def _load(self) -> None:
        self._entries.update(self._read())

    def _read(self) -> dict[str, CassetteEntry]:
        entries: dict[str, CassetteEntry] = {}
        if not self.path.exists():
            return entries
        with open(self.path, encoding="utf-8") as fh:
            for no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                    entry = CassetteEntry(key=d["key"], method=d["method"], path=d["path"],
                                          status=int(d["status"]), response=d["response"],
                                          request=d.get("request"))
                except (ValueError, KeyError, TypeError) as exc:
                    raise CassetteError(f"{self.path}:{no}: malformed cassette line ({exc}); "
                                        "expected a JSON object with key, method, path, "
                                        "status, response") from exc
                entries[entry.key] = entry
        return entries

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    @property
    def may_replay(self) -> bool:
        return self.mode in ("replay", "auto")

    @property
    def may_call(self) -> bool:
        return self.mode in ("record", "auto")

    def get(self, key: str) -> CassetteEntry | None:
        with self._lock:
            return self._entries.get(key)

    def require(self, key: str, method: str, path: str) -> CassetteEntry:
        entry = self.get(key)
        if entry is None:
            raise CassetteMissError(
                f"cassette {self.path} has no recording for {method.upper()} {path} "
                f"(key {key}); mode {self.mode!r} never calls the endpoint, so record it "
                "first (mode 'record' or 'auto')", key=key)
        return entry

    def record(self, key: str, method: str, path: str, status: int, response: str,
               request: Any = None) -> CassetteEntry:
        entry = CassetteEntry(key=key, method=method.upper(), path=path, status=int(status),
                              response=response,
                              request=request if self.store_requests else None)
        from workbench.util.atomic import atomic_write_bytes

        # merge with what is on disk now: other instances (or processes) may share the file
        with self._lock, _path_lock(self.path):
            self._entries = {**self._entries, **self._read(), key: entry}
            lines = [canonical_json(self._entries[k].to_json()) for k in sorted(self._entries)]
            try:
                atomic_write_bytes(self.path, ("\n".join(lines) + "\n").encode("utf-8"))
            except OSError as exc:
                raise CassetteError(f"{self.path}: cannot write cassette ({exc})") from exc
        return entry
