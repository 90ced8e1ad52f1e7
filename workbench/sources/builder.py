"""Building one continuity's rows: :class:`Builder` (EventRows plus request bookkeeping
and tool-call pairing), :func:`guard_record` (one record through a mapper, a bad one
reported) and the whole-file JSON documents a Builder starts from (:func:`open_document`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from workbench.continuity.enums import EventFlag, EventKind
from workbench.errors import SourceError
from workbench.sources.base import EventRows, ParseContext, iter_jsonl
from workbench.sources.checks import Malformed
from workbench.sources.lossless import DocumentLayout, add_bom_event, start_document
from workbench.sources.values import dumps

# ===================================================================== building

# what a mapper may raise on a record of surprising structure when the format chooses to
# report it as a bad record rather than as an importer bug
RECORD_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


def guard_record(ctx: ParseContext, rows: EventRows | None, line: int | None, raw: str | None,
                 fn: Callable[..., Any], *args: Any, expected: str | None = None) -> Any:
    """``fn(*args)``, or None after ``ctx.bad_record`` when it raised :class:`Malformed`
    (or, when ``expected`` is given, one of :data:`RECORD_ERRORS`: "unexpected record
    structure"; without ``expected`` those propagate, as parser bugs)."""
    try:
        return fn(*args)
    except Malformed as exc:
        ctx.bad_record(line, exc.message, exc.expected, raw, rows)
    except RECORD_ERRORS as exc:
        if expected is None:
            raise
        ctx.bad_record(line, f"unexpected record structure ({type(exc).__name__}: {exc})",
                       expected, raw, rows)
    return None


class Builder:
    """EventRows plus request bookkeeping and tool-call pairing for one continuity.

    Outputs (and usage reports) are added with an explicit ``request`` (pinned; outputs are
    flagged OUTPUT). :meth:`finish` gives every other event the next request, the first
    one that can see it (one past the latest pinned request before it; ``-1`` when no
    request follows), the same convention as the Claude Code and Codex importers, and
    fills ``pair_seq``/UNPAIRED from ``call_id`` like the canonical validator expects.
    The first Builder of a file that starts with a BOM begins with the META ``bom`` event.
    """

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.rows = EventRows()
        self.n_requests = 0
        self._pinned: set[int] = set()
        add_bom_event(ctx, self.add)

    def new_request(self) -> int:
        r = self.n_requests
        self.n_requests += 1
        return r

    def add(self, kind: EventKind, *, request: int | None = None, output: bool = False,
            flags: int = 0, **kw: Any) -> int:
        if output:
            flags |= EventFlag.OUTPUT
        row = self.rows.add(kind, request=-1 if request is None else request, flags=flags, **kw)
        if request is not None and request >= 0:
            self._pinned.add(row)
        return row

    def commit(self, events: list[dict[str, Any]], *, raw: str | None, line: int | None = None) -> None:
        """Add the events of one source record; its raw goes on the first one."""
        for i, ev in enumerate(events):
            ev = dict(ev)
            kind = ev.pop("kind")
            self.add(kind, raw=raw if i == 0 else None, source_line=line, **ev)

    def bad(self, exc: Malformed, raw: str | None, line: int | None = None) -> None:
        self.ctx.bad_record(line, exc.message, exc.expected, raw, self.rows)

    def record(self, fn: Callable[[Any, str], list[dict[str, Any]]], obj: Any, where: str,
               raw: str | None, line: int | None = None) -> bool:
        """Map one source record with ``fn(obj, where)`` and commit its events; a Malformed
        record is reported (fail, or kept as a SKIPPED event). True when committed."""
        evs = guard_record(self.ctx, self.rows, line, raw, fn, obj, where)
        if evs is None:
            return False
        self.commit(evs, raw=raw, line=line)
        return True

    def record_elements(self, items: Iterable[Any], where: str,
                        fn: Callable[[Any, str], list[dict[str, Any]]]) -> None:
        """Every element of a JSON array (``where[i]``), each raw its compact JSON."""
        for i, item in enumerate(items):
            self.record(fn, item, f"{where}[{i}]", dumps(item))

    def record_lines(self, fn: Callable[[Any, str], list[dict[str, Any]]]) -> None:
        """Every JSONL line of the file (``line N``), each raw the line's text."""
        for line, text, obj in iter_jsonl(self.ctx, self.rows):
            self.record(fn, obj, f"line {line}", text, line)

    def finish(self) -> EventRows:
        import numpy as np

        from workbench.continuity.validate import pair_tool_events

        c = self.rows.cols
        n = len(self.rows)
        last_out = -1
        for i in range(n):
            if i in self._pinned:
                last_out = max(last_out, c["request"][i])
                continue
            nxt = last_out + 1
            c["request"][i] = nxt if nxt < self.n_requests else -1
        if n:
            kind = np.asarray(c["kind"], dtype=np.int8)
            pair, unpaired = pair_tool_events(np.zeros(n, np.int32), np.arange(n, dtype=np.int64),
                                              kind, c["call_id"])
            c["pair_seq"] = [int(x) for x in pair]
            for i in np.flatnonzero(unpaired):
                c["flags"][i] |= int(EventFlag.UNPAIRED)
        return self.rows


def load_document(ctx: ParseContext, expected: str) -> Any:
    """Parse a whole-file JSON document; a syntax error names line and column."""
    data = ctx.read_bytes()
    if not data.strip():
        raise SourceError("file is empty", path=str(ctx.path), expected=expected)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise SourceError(f"not valid JSON: {exc}", path=str(ctx.path), line=line,
                          expected=expected) from None


def open_document(ctx: ParseContext, expected: str, ok: Callable[[Any], bool],
                  not_ok: str) -> tuple[Any, Builder, DocumentLayout]:
    """Load a whole-file JSON document that passes ``ok`` (else SourceError "top-level JSON
    is <not_ok>"); return it, the continuity's Builder and the document's layout."""
    doc = load_document(ctx, expected)
    if not ok(doc):
        raise SourceError(f"top-level JSON is {not_ok}", path=str(ctx.path), expected=expected)
    return doc, Builder(ctx), start_document(doc)


def is_message_list(doc: Any) -> bool:
    """A list of messages, or an object with a ``messages`` list (see ``take_messages``)."""
    return isinstance(doc, list) or (isinstance(doc, dict) and isinstance(doc.get("messages"), list))
