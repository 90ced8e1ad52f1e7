"""What every importer shares: the row builder, the format registry, error policy.

An importer is a :class:`SourceFormat` registered by name. ``sniff`` looks at a file's
path and first bytes and says how sure it is (and why, for error messages); ``parse``
turns the file into one or more :class:`ParsedContinuity` objects, each a set of rows
built with :class:`EventRows`. Importers never drop a record: anything they do not map
becomes an ``OPAQUE`` event that keeps its raw text, and a record that cannot be parsed
raises :class:`~workbench.errors.SourceError` naming file and line, unless
``on_error="skip"``, in which case it is counted (``ParseContext.skipped``), kept as an
``OPAQUE`` event flagged ``SKIPPED`` with its raw text, and reported in the manifest.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.continuity.enums import CompactTrigger, EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError

ON_ERROR = ("fail", "skip")
UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class ParseContext:
    """Per-file state handed to a parser: where we are and what to do on bad input.

    Parsers read the file with :meth:`read_bytes`, which strips a leading UTF-8 byte order
    mark (and sets ``bom``) so that no parser ever sees one; the BOM is put back on the
    round trip from a META ``bom`` event (see ``workbench.sources.lossless.add_bom_event``).
    ``data`` may hold the file's bytes already (the import driver has read them).
    """

    path: Path
    on_error: str = "fail"
    skipped: list[dict[str, Any]] = field(default_factory=list)
    data: bytes | None = field(default=None, repr=False)
    # other files of the same log the parser read (:meth:`read_companion`), for the manifest
    companions: list[dict[str, Any]] = field(default_factory=list)
    bom: bool = field(default=False, init=False)  # the file starts with a UTF-8 BOM (set by read_bytes)
    _reading: Path | None = field(default=None, init=False, repr=False)  # the companion being mapped
    _bom_marked: bool = field(default=False, init=False, repr=False)
    _body: bytes | None = field(default=None, init=False, repr=False)

    def read_bytes(self) -> bytes:
        """The file's bytes without a leading UTF-8 BOM (read once, then cached)."""
        if self._body is None:
            data = self.path.read_bytes() if self.data is None else self.data
            self.bom = data.startswith(UTF8_BOM)
            self._body = data[len(UTF8_BOM):] if self.bom else data
        return self._body

    def read_companion(self, path: Path) -> bytes:
        """The bytes of another file of the same log (a Cline task's ``ui_messages.json``, an
        opencode session's message files), without a UTF-8 BOM; its path, sha256 and size
        are recorded for the manifest (``companions``)."""
        import hashlib

        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SourceError(f"cannot read {path.name} ({exc.strerror or exc})", path=str(path),
                              expected=f"a readable file next to {self.path.name}") from None
        entry: dict[str, Any] = {"path": str(path), "sha256": hashlib.sha256(data).hexdigest(),
                                 "bytes": len(data)}
        if data.startswith(UTF8_BOM):
            entry["bom"] = True
            data = data[len(UTF8_BOM):]
        self.companions.append(entry)
        return data

    def take_bom(self) -> bool:
        """True exactly once per file when it had a BOM (whoever adds the marker event)."""
        self.read_bytes()
        if self.bom and not self._bom_marked:
            self._bom_marked = True
            return True
        return False

    @contextlib.contextmanager
    def reading(self, path: Path) -> Iterator[None]:
        """Bad records met inside name ``path`` (a companion file), not the primary file."""
        before, self._reading = self._reading, Path(path)
        try:
            yield
        finally:
            self._reading = before

    def bad_record(self, line: int | None, message: str, expected: str, raw: str | None,
                   rows: EventRows | None) -> None:
        """Fail, or (``on_error="skip"``) keep the raw text as a SKIPPED opaque event."""
        where = self._reading or self.path
        if self.on_error != "skip":
            raise SourceError(message, path=str(where), line=line, expected=expected)
        entry: dict[str, Any] = {"line": line, "error": message, "expected": expected}
        if self._reading is not None:
            entry["file"] = str(self._reading)
        self.skipped.append(entry)
        if rows is not None and raw is not None:
            rows.add(EventKind.OPAQUE, raw=raw, name="unparsed", source_line=line,
                     flags=EventFlag.SKIPPED)


@dataclass(frozen=True)
class Detection:
    score: float  # 0 = certainly not this format, 1 = certainly it
    reason: str


class EventRows:
    """Accumulates canonical event rows for one continuity; ``seq`` is assigned here.

    Usage columns use ``-1`` for "not recorded". ``request`` is the index of the model
    request the event belongs to: outputs carry the request that produced them, inputs
    the request that first sees them (``-1`` when the log has no notion of requests).
    """

    _INT_DEFAULTS = {
        "kind": 0, "role": 0, "origin": 0, "actor": 0, "flags": 0, "request": -1,
        "pair_seq": -1, "ts_ms": -1, "usage_input": -1, "usage_cache_read": -1,
        "usage_cache_write": -1, "usage_output": -1, "compact_trigger": 0,
        "compact_pre_tokens": -1, "source_line": -1,
    }
    _STR_COLUMNS = ("call_id", "message_id", "name", "text", "raw")

    def __init__(self) -> None:
        self.cols: dict[str, list] = {k: [] for k in (*self._INT_DEFAULTS, *self._STR_COLUMNS)}

    def __len__(self) -> int:
        return len(self.cols["kind"])

    def add(self, kind: EventKind, *, role: Role = Role.NONE, text: str | None = None,
            raw: str | None = None, origin: Origin = Origin.UNKNOWN, call_id: str | None = None,
            message_id: str | None = None, name: str | None = None, ts_ms: int = -1,
            request: int = -1, flags: int = 0, source_line: int | None = None,
            usage: tuple[int, int, int, int] | None = None,
            compact_trigger: CompactTrigger = CompactTrigger.NONE, compact_pre_tokens: int = -1,
            actor: int = 0) -> int:
        """Append one event; returns its row index (== its seq)."""
        c = self.cols
        c["kind"].append(int(kind))
        c["role"].append(int(role))
        c["origin"].append(int(origin))
        c["actor"].append(actor)
        c["flags"].append(int(flags))
        c["request"].append(request)
        c["pair_seq"].append(-1)
        c["ts_ms"].append(ts_ms)
        ui, ucr, ucw, uo = usage if usage is not None else (-1, -1, -1, -1)
        c["usage_input"].append(ui)
        c["usage_cache_read"].append(ucr)
        c["usage_cache_write"].append(ucw)
        c["usage_output"].append(uo)
        c["compact_trigger"].append(int(compact_trigger))
        c["compact_pre_tokens"].append(compact_pre_tokens)
        c["source_line"].append(-1 if source_line is None else source_line)
        c["call_id"].append(call_id)
        c["message_id"].append(message_id)
        c["name"].append(name)
        c["text"].append(text)
        c["raw"].append(raw)
        return len(c["kind"]) - 1

    def set(self, row: int, column: str, value) -> None:
        self.cols[column][row] = value


@dataclass
class ParsedContinuity:
    """One continuity read from a source file."""

    continuity_id: str
    source_format: str
    source_file: str
    rows: EventRows
    parent_id: str | None = None  # e.g. a Claude Code subagent's parent session
    model: str | None = None
    provider: str | None = None
    context_window: int = -1
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. model_stats totals


Parser = Callable[[ParseContext], list[ParsedContinuity]]
Sniffer = Callable[[Path, bytes], Detection]


@dataclass(frozen=True)
class SourceFormat:
    name: str
    description: str
    sniff: Sniffer
    parse: Parser
    # a raw record round-trips by joining the events' raw column with this separator
    # (JSONL: "\n"); None when the format keeps one raw document per file
    raw_joiner: str | None = "\n"
    # the harness preset (workbench.engine.presets) whose policy the recorded logs follow;
    # "as-recorded" when no preset mirrors the harness
    profile: str | None = None
    # a log spread over several files: for one of its other files, the file whose parser
    # reads it (the parser calls ParseContext.read_companion); None when it is not one
    primary_of: Callable[[Path], Path | None] | None = None


FORMATS: dict[str, SourceFormat] = {}


def register(fmt: SourceFormat) -> SourceFormat:
    if fmt.name in FORMATS:
        raise ValueError(f"source format {fmt.name!r} registered twice")
    FORMATS[fmt.name] = fmt
    return fmt


def iter_jsonl(ctx: ParseContext, rows: EventRows | None = None) -> Iterator[tuple[int, str, Any]]:
    """Yield (1-based line number, raw line, parsed JSON) for each non-blank line.

    A line that is not JSON goes through ``ctx.bad_record`` (fail or skip). A truncated
    last line (no trailing newline, not JSON) gets its own message.
    """
    import orjson

    data = ctx.read_bytes()
    if not data.strip():
        raise SourceError("file is empty", path=str(ctx.path), expected="at least one JSON record")
    lines = data.split(b"\n")
    last = len(lines) - (1 if lines[-1] == b"" else 0)
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            ctx.bad_record(i, f"line is not UTF-8 text ({exc.reason} at byte {exc.start})",
                           "a UTF-8 JSON object per line",
                           line.decode("utf-8", "backslashreplace"), rows)
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            truncated = i == last and not data.endswith(b"\n")
            msg = ("last line is truncated (no newline and not complete JSON)" if truncated
                   else f"line is not valid JSON: {exc}")
            ctx.bad_record(i, msg, "one complete JSON object per line", text, rows)
            continue
        yield i, text, obj
