"""Which source format is this file? Ask every registered format's ``sniff``.

>>> from pathlib import Path
>>> from workbench.sources.detect import detect_format
>>> fmt, seen = detect_format(Path("session.jsonl"), b'{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}\\n')
>>> fmt.name
'claude_code'
"""

from __future__ import annotations

from pathlib import Path

from workbench.errors import SourceError
from workbench.sources.base import UTF8_BOM, Detection, SourceFormat

HEAD_BYTES = 64 * 1024
THRESHOLD = 0.5  # the best score must reach this to be believed


def read_head(path: Path, n: int = HEAD_BYTES) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


def check_text(path: Path, data: bytes) -> None:
    """Reject empty and binary files with a clear message (before any format sees them).
    A UTF-8 byte order mark is not content: a file holding only one is empty."""
    if data.startswith(UTF8_BOM) and not data[len(UTF8_BOM):].strip():
        data = b""
    if not data.strip():
        raise SourceError("file is empty" if not data else "file holds only whitespace",
                          path=str(path), expected="an agent log with at least one record")
    head = data[:8192]
    nul = head.find(b"\x00")
    if nul >= 0:
        raise SourceError(f"binary file (NUL byte at offset {nul})", path=str(path),
                          expected="a UTF-8 text log (JSON, JSONL or Markdown)")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a stray bad byte in a later line is that line's problem (reported with its line
        # number); invalid UTF-8 in the first line, or more than 1% of the head, is binary
        first_nl = head.find(b"\n")
        in_first_line = first_nl < 0 or exc.start < first_nl
        cut_at_end = exc.start >= len(head) - 4 and len(data) > len(head)
        bad = head.decode("utf-8", "replace").count("\ufffd") - head.count(b"\xef\xbf\xbd")
        if not cut_at_end and (in_first_line or bad > max(2, len(head) // 100)):
            raise SourceError(f"not UTF-8 text ({exc.reason} at byte {exc.start}); binary file?",
                              path=str(path), expected="a UTF-8 text log (JSON, JSONL or Markdown)") from None


def sniff_all(path: Path, head: bytes, formats: dict[str, SourceFormat]) -> list[tuple[str, Detection]]:
    """Every format's verdict, best first (ties keep registry order)."""
    from workbench.sources.sniffing import sniff_safely

    # a broken sniffer must not hide the others (registered formats are guarded already)
    seen = [(name, sniff_safely(fmt.sniff, path, head)) for name, fmt in formats.items()]
    order = {n: i for i, n in enumerate(formats)}
    seen.sort(key=lambda nd: (-nd[1].score, order[nd[0]]))
    return seen


def describe(seen: list[tuple[str, Detection]]) -> str:
    return "; ".join(f"{name} {det.score:.2f} ({det.reason})" for name, det in seen)


def detect_format(path: Path, head: bytes | None = None,
                  formats: dict[str, SourceFormat] | None = None) -> tuple[SourceFormat, list[tuple[str, Detection]]]:
    """Return the best format for ``path`` and what every format said.

    Raises :class:`SourceError` listing each format's score and reason when no format
    reaches :data:`THRESHOLD`.
    """
    if formats is None:
        from workbench.sources import load_formats

        formats = load_formats()
    if head is None:
        head = read_head(path)
    seen = sniff_all(path, head, formats)
    if not seen or seen[0][1].score < THRESHOLD:
        raise SourceError(
            f"format not recognised (no format scored >= {THRESHOLD}); detection saw: "
            + (describe(seen) or "no formats registered"),
            path=str(path), expected="a log in one of: " + ", ".join(formats) + " (or pass --format)")
    return formats[seen[0][0]], seen
