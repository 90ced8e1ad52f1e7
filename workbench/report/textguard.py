"""The one way a report shows text (summaries, excerpts, memory entries): the redaction
harness first, then a mask of the dataset's planted secret values (``texts.parquet`` holds
raw summarizer output for policies with SR-1 off, and a fragment the harness cannot
recognise must not reach a report either), then a length cap.

>>> TextGuard(["sk-live-0123456789abcdefXYZ"])("key sk-live-0123456789abcdefXYZ ok", limit=80)
'key <REDACTED:planted> ok'
"""

from __future__ import annotations

import base64
import math
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from pathlib import Path

from workbench.rundir.read import load_secret_values, load_table

PLANTED_MARKER = "<REDACTED:planted>"
MARKER_RE = re.compile(r"<REDACTED:[^<>\s]{0,48}>")  # a redaction marker in shown text
_MARKER = MARKER_RE


def _variants(value: str) -> list[str]:
    raw = value.encode("utf-8", "surrogatepass")
    out = [value, base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("="),
           raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe="")]
    return list(dict.fromkeys(v for v in out if v))


class TextGuard:
    """The one way a report shows text: redaction harness, planted-value mask, length cap.

    ``known`` are secret values that must never be shown (the dataset's planted secrets);
    every fragment of >= 12 characters (or half of a short one) of a known value, in plain,
    base64, hex or percent-encoded form, is replaced by ``<REDACTED:planted>``.
    """

    def __init__(self, known: Iterable[str] = ()):
        self.fragments: dict[int, set[str]] = {}
        for value in known:
            if not value or len(value.strip()) < 6:
                continue
            for var in _variants(value):
                m = max(6, min(12, math.ceil(0.5 * len(var))))
                for i in range(len(var) - m + 1):
                    frag = var[i:i + m]
                    if frag.strip():
                        self.fragments.setdefault(m, set()).add(frag)

    @classmethod
    def for_run(cls, run_dir: str | Path) -> TextGuard:
        return cls(load_secret_values(run_dir))

    def mask_known(self, text: str) -> str:
        if not text or not self.fragments:
            return text
        marks = bytearray(len(text))
        for m, frags in self.fragments.items():
            for i in range(len(text) - m + 1):
                if text[i:i + m] in frags:
                    marks[i:i + m] = b"\x01" * m
        if not any(marks):
            return text
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


