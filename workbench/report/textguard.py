"""The one way a report shows text (summaries, excerpts, memory entries): the redaction
harness first, then a mask of the dataset's planted secret values (``texts.parquet`` holds
raw summarizer output for policies with SR-1 off, and a fragment the harness cannot
recognise must not reach a report either), then a length cap.

The mask looks for the planted values in every view a reader, a browser or a decoder has
of the text: :func:`workbench.redaction.normalize.reader_views`, the redactor's own
normalization (escapes, HTML references, percent, base64/base32/hex nested twice,
zero-width characters, homoglyphs, values split across lines or diff lines); each hit maps
back to the characters of the text that produced it.

>>> TextGuard(["sk-live-0123456789abcdefXYZ"])("key sk-live-0123456789abcdefXYZ ok", limit=80)
'key <REDACTED:planted> ok'
>>> TextGuard(["zq8Xw2Lm9Pk4Rt7Y"]).mask_known(r"as JSON: \\u007a\\u0071\\u0038\\u0058\\u0077\\u0032L&#109;9Pk4Rt7Y.")
'as JSON: <REDACTED:planted>.'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from workbench.redaction.normalize import join_lines, normalize, reader_views
from workbench.rundir.read import load_secret_values, load_table

PLANTED_MARKER = "<REDACTED:planted>"
MARKER_RE = re.compile(r"<REDACTED:[^<>\s]{0,48}>")  # a redaction marker in shown text
_MARKER = MARKER_RE


def fragment_size(value: str) -> int:
    """The shortest piece of ``value`` that must not be shown: 12 characters, or half of a
    short value (never under 6)."""
    return max(6, min(12, math.ceil(0.5 * len(value))))


class TextGuard:
    """The one way a report shows text: redaction harness, planted-value mask, length cap.

    ``known`` are secret values that must never be shown (the dataset's planted secrets);
    every fragment of >= 12 characters (or half of a short one) of a known value, in any
    view of the text (:func:`~workbench.redaction.normalize.reader_views`), is replaced by
    ``<REDACTED:planted>`` (the whole encoded run when it sits in a base64/base32/hex run).
    """

    def __init__(self, known: Iterable[str] = ()):
        self.fragments: dict[int, set[str]] = {}
        for value in known:
            plain = normalize(value)[0] if value else ""  # (matched as it reads)
            if len(plain.strip()) < 6:
                continue
            m = fragment_size(plain)
            forms = [(plain, m)]
            joined = join_lines(plain)[0]
            if joined != plain:
                # a multi-line value (a PEM key) is also matched with its lines joined, as the
                # line-joined view of a text shows it (its breaks written as JSON escapes
                # too); a fragment there stands for one with its breaks
                breaks = max(plain.count("\n", i, i + m) for i in range(len(plain) - m + 1))
                forms.append((joined, max(6, m - breaks)))
            for form, size in forms:
                for i in range(len(form) - size + 1):
                    frag = form[i:i + size]
                    if frag.strip():
                        self.fragments.setdefault(size, set()).add(frag)
        self._min_bytes = min(self.fragments, default=12)

    def known_spans(self, text: str) -> list[tuple[int, int]]:
        """Spans of ``text`` that show a fragment of a known value, in any view."""
        if not text or not self.fragments:
            return []
        found: list[tuple[int, int]] = []
        for view, vmap in reader_views(text, min_bytes=self._min_bytes):
            for m, frags in self.fragments.items():
                for i in range(len(view) - m + 1):
                    if view[i:i + m] in frags:
                        found.append((i, i + m) if vmap is None else vmap.span(i, i + m))
        return found

    @classmethod
    def for_run(cls, run_dir: str | Path) -> TextGuard:
        return cls(load_secret_values(run_dir))

    def mask_known(self, text: str) -> str:
        spans = self.known_spans(text)
        if not spans:
            return text
        marks = bytearray(len(text))
        for a, b in spans:
            marks[a:b] = b"\x01" * (b - a)
        out, i = [], 0
        while i < len(text):
            if marks[i]:
                j = i
                while j < len(text) and marks[j]:
                    j += 1
                out.append(PLANTED_MARKER)
                i = j
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    def __call__(self, text: str | None, limit: int | None = 600) -> str:
        from workbench.redaction.harness import redact

        if not text:
            return ""
        shown = redact(text).text
        cut = limit is not None and len(shown) > limit
        if cut:
            end = limit
            for m in _MARKER.finditer(shown, max(0, limit - 64)):
                if m.start() < limit < m.end():
                    end = m.end()  # never cut a marker in half
            shown = shown[:end]
        shown = self.mask_known(shown)
        return shown + (" …" if cut else "")


def text_samples(run_dir: str | Path, *, guard: TextGuard | None = None, per_policy: int = 1,
                 kinds: Sequence[str] = ("summary", "merge", "recorded"), limit: int = 600):
    """Stored texts (``texts.parquet``) to show, at most ``per_policy`` per policy and kind,
    every one through ``guard``; None when the redaction audit has not run."""
    import polars as pl

    tx = load_table(run_dir, "texts")
    if tx is None:
        return None
    guard = guard or TextGuard.for_run(run_dir)
    tx = tx.filter(pl.col("kind").is_in(list(kinds)) & pl.col("text").is_not_null() & (pl.col("text") != ""))
    tx = tx.group_by("policy", "kind", maintain_order=True).head(per_policy)
    shown = [guard(t, limit) for t in tx["text"].to_list()]
    return tx.select("policy", "continuity_id", "kind", "request", "artifact_id", "sr1", "redactions").with_columns(
        pl.Series("excerpt", shown, dtype=pl.String))


