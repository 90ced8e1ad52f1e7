"""What a sniffer may look at, and the shared ways of scoring a file's head: :func:`peek`
(the head text, the whole document when small enough, the first JSONL record),
:func:`sniff_jsonl_records` (share of leading lines that look like the format's records)
and :func:`sniff_safely` (a sniffer that raises means "not this format").

>>> head_records(b'{"a":1}\\nnot json\\n{"b"')
([{'a': 1}, None], True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from workbench.sources.base import UTF8_BOM, Detection

_PEEK_LIMIT = 32 << 20


def strip_bom(data: bytes) -> bytes:
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data


@dataclass
class Peek:
    """What a sniffer may look at: the head text, the whole document when small enough,
    or the first JSONL record."""

    name: str
    text: str
    doc: Any = None
    doc_ok: bool = False
    first: Any = None  # first JSONL record (when the file is not one JSON document)
    first_ok: bool = False
    starts: str = ""  # first non-blank character


_peek_cache: dict[tuple, Peek] = {}


def peek(path: Path, head: bytes) -> Peek:
    head = strip_bom(head)
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns, hash(head))
    except OSError:
        st = None
        key = None
    if key is not None and key in _peek_cache:
        return _peek_cache[key]
    text = head.decode("utf-8", "replace")
    stripped = text.lstrip("\ufeff \t\r\n")
    p = Peek(name=path.name.lower(), text=text, starts=stripped[:1])
    if p.starts in ("{", "["):
        data = head
        if st is not None and st.st_size > len(head) and st.st_size <= _PEEK_LIMIT:
            try:
                data = strip_bom(path.read_bytes())
            except OSError:
                data = head
        try:
            p.doc = orjson.loads(data)
            p.doc_ok = True
        except orjson.JSONDecodeError:
            first = data.split(b"\n", 1)[0]
            try:
                p.first = orjson.loads(first)
                p.first_ok = True
            except orjson.JSONDecodeError:
                pass
    if key is not None:
        if len(_peek_cache) > 64:
            _peek_cache.clear()
        _peek_cache[key] = p
    return p


def head_records(head: bytes, limit: int = 8) -> tuple[list[Any], bool]:
    """Parse up to ``limit`` complete leading lines of ``head``; (records, had_partial).
    A line that is not JSON is ``None``."""
    lines = head.split(b"\n")
    partial = not head.endswith(b"\n") and len(lines) >= 1
    complete = lines[:-1] if partial else lines
    out = []
    for ln in complete:
        if not ln.strip():
            continue
        try:
            out.append(orjson.loads(ln))
        except orjson.JSONDecodeError:
            out.append(None)
        if len(out) >= limit:
            break
    if not out and partial and lines[0].strip():
        try:  # a small file without trailing newline
            out.append(orjson.loads(lines[0]))
            partial = False
        except orjson.JSONDecodeError:
            pass
    return out, partial


def describe_records(recs: list[Any]) -> str:
    """A short description of what the leading lines were (for detection messages)."""
    bad = sum(r is None for r in recs)
    kinds = sorted({repr(r["type"]) if isinstance(r, dict) and isinstance(r.get("type"), str)
                    else "object without 'type'" if isinstance(r, dict)
                    else type(r).__name__ for r in recs if r is not None})[:4]
    parts = ([f"{bad} not JSON"] if bad else []) + ([f"saw {', '.join(kinds)}"] if kinds else [])
    return "; ".join(parts)


def sniff_jsonl_records(head: bytes, looks: Callable[[Any], bool], what: str, *,
                        detail: Callable[[list[Any]], str], bonus: float = 0.0,
                        long_first_line: Callable[[bytes], bool] = lambda head: False,
                        long_reason: str = "") -> Detection:
    """Score a JSONL head by the share of its leading lines that ``looks`` like ``what``
    records: ``0.95 · share + bonus`` (at most 1). A first line longer than the head is
    judged by ``long_first_line`` (0.7 with ``long_reason``)."""
    recs, partial = head_records(head)
    if not recs:
        if partial and long_first_line(head):
            return Detection(0.7, long_reason)
        return Detection(0.0, "no complete JSON line at the start")
    hits = sum(looks(r) for r in recs)
    if hits == 0:
        return Detection(0.0, f"0/{len(recs)} leading lines are {what} records ({describe_records(recs)})")
    return Detection(min(1.0, 0.95 * hits / len(recs) + bonus),
                     f"{hits}/{len(recs)} leading lines are {what} records ({detail(recs)})")


def is_message(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("role"), str)


def sniff_safely(fn: Callable[[Path, bytes], Detection], path: Path, head: bytes) -> Detection:
    """``fn``'s verdict on ``head`` without a BOM; a sniffer that raises, or returns
    anything but a Detection, means 'not this format' (sniffing is best effort)."""
    try:
        det = fn(Path(path), strip_bom(head))
    except Exception as exc:  # noqa: BLE001 - a broken sniffer must not hide the others
        return Detection(0.0, f"could not inspect ({type(exc).__name__}: {exc})")
    if not isinstance(det, Detection):
        return Detection(0.0, f"sniffer returned {type(det).__name__}")
    return det


def safe_sniff(fn: Callable[[Path, bytes], Detection]) -> Callable[[Path, bytes], Detection]:
    """``fn`` wrapped by :func:`sniff_safely`."""

    def wrapped(path: Path, head_bytes: bytes) -> Detection:
        return sniff_safely(fn, path, head_bytes)

    wrapped.__name__ = getattr(fn, "__name__", "sniff")
    wrapped.__doc__ = fn.__doc__
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped
