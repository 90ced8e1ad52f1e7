"""Length-keeping redaction placeholders: count a redacted text as the text it replaced.

Teams share agent logs through redaction tools that replace each text (or each secret) by
a placeholder recording the original's length, such as ``[REDACTED len=13131 sha=…]``.
Counted as written, a redacted rollout's prompts are a tenth of the recorded ones, so
presets never reach their thresholds and costs are off by as much. The import therefore
counts every placeholder as that many characters' worth of tokens: a text's count is the
count of what is left around its placeholders plus, per placeholder, its ``len`` divided
by :data:`CHARS_PER_TOKEN` (4: the characters-per-token rule harnesses budget with; the
redacted text itself is gone, so any ratio is an estimate). The text itself is
kept as written (the round trip is lossless); only the ``tokens_*`` columns change, so
calibration, presets, fidelity and costs all act on the expanded counts.

Built-in placeholder forms (:data:`BUILTIN_PATTERNS`, case-insensitive), each with a
named group ``len``:

* ``[REDACTED len=13131 sha=…]``, ``[REDACTED: length=42]``, ``[redacted len:7]``;
* ``<redacted len="13131" …/>`` (an XML-ish tag with a ``len``/``length`` attribute);
* ``[13131 chars redacted]``, ``[redacted 13131 chars]``.

Other forms: ``workbench import --placeholder-pattern REGEX`` (repeatable), a regular
expression with a named group ``len`` (the original length in characters).

>>> ph = Placeholders.compile()
>>> ph.original_chars("see [REDACTED len=400 sha=ab12] and [12 chars redacted]")
(412, 2)
>>> int(ph.expand(["[REDACTED len=400]"], np.array([5]), "chars4")[0][0])
100
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workbench.errors import SourceError

BUILTIN_PATTERNS = (
    r"\[redacted\b[^\]\n]{0,40}?\blen(?:gth)?\s*[=:]\s*(?P<len>\d{1,9})[^\]\n]{0,200}\]",
    r"<redacted\b[^>\n]{0,200}?\blen(?:gth)?\s*=\s*[\"']?(?P<len>\d{1,9})[\"']?[^>\n]{0,200}>",
    r"\[(?P<len>\d{1,9}) char(?:acter)?s? redacted\]",
    r"\[redacted (?P<len>\d{1,9}) char(?:acter)?s?\]",
)
# characters per token of a redacted text. Measured on the texts of 64+ characters of the
# bundled logs (cl100k), the ratio depends on the log more than on anything a placeholder
# shows: 3.6 over all of them, tool output 3.2 (Claude Code, line-numbered file reads) to
# 3.7 (Codex shell output), prose 3.9 to 4.8. So the rule of thumb, not a fit: on the bundled
# Codex rollout redacted whole (tests/sources/test_placeholders.py) the replayed prompts
# come out 3.8 % low; a Claude Code log, whose tool output is denser, would come out lower.
CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True)
class Placeholders:
    """The placeholder patterns an import recognises (built-in first, then the user's)."""

    patterns: tuple[str, ...]
    _regex: Any = field(repr=False, compare=False, default=None)
    extra: tuple[str, ...] = ()  # the user's patterns (the prefilter runs them as regexes)

    @classmethod
    def compile(cls, extra: Sequence[str] = (), *, builtin: bool = True) -> Placeholders:
        """Built-in patterns plus ``extra`` (each must compile and have a named group ``len``)."""
        pats = (*BUILTIN_PATTERNS, *extra) if builtin else tuple(extra)
        for p in extra:
            try:
                rx = re.compile(p)
            except re.error as exc:
                raise SourceError(f"--placeholder-pattern {p!r} is not a regular expression ({exc})",
                                  expected="a Python regular expression with a named group len, "
                                  r"e.g. '\[MASKED (?P<len>\d+)\]'") from None
            if "len" not in rx.groupindex:
                raise SourceError(f"--placeholder-pattern {p!r} has no named group 'len'",
                                  expected="a named group (?P<len>\\d+) holding the original length in characters")
        # one alternation; each alternative's len group renamed so they can coexist
        parts = [re.sub(r"\(\?P<len>", f"(?P<len{i}>", p) for i, p in enumerate(pats)]
        regex = re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE) if parts else None
        return cls(pats, regex, tuple(extra))

    def original_chars(self, text: str) -> tuple[int, int]:
        """(characters the placeholders in ``text`` stand for, how many placeholders)."""
        if self._regex is None or not text:
            return 0, 0
        total = n = 0
        for m in self._regex.finditer(text):
            value = next(v for k, v in m.groupdict().items() if v is not None and k.startswith("len"))
            total += int(value)
            n += 1
        return total, n

    def candidates(self, texts) -> np.ndarray:
        """Rows whose text may hold a placeholder (a vectorised prefilter: every built-in form
        says "redacted"; the user's patterns run as regexes); :meth:`expand` decides."""
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(texts, type=pa.large_string())
        hit = pc.match_substring(arr, "redacted", ignore_case=True)
        for p in self.extra:
            hit = pc.or_(hit, pc.match_substring_regex(arr, _loose(p)))
        return np.flatnonzero(pc.fill_null(hit, False).to_numpy(zero_copy_only=False))

    def expand(self, texts, counts: np.ndarray, tokenizer: str,
               candidates: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, int]]:
        """``counts`` (one per text, as ``tokenizer`` counted them) with every text that holds
        placeholders recounted: what is left around them plus their original lengths in
        tokens. ``candidates``: :meth:`candidates` of ``texts``, when already found. Returns
        (new counts, stats: texts expanded, placeholders, characters)."""
        from workbench.tokens.tokenizers import count_texts

        stats = {"texts_expanded": 0, "placeholders": 0, "original_chars": 0}
        if self._regex is None or len(counts) == 0:
            return counts, stats
        candidates = self.candidates(texts) if candidates is None else candidates
        if candidates.size == 0:
            return counts, stats
        items = texts.to_pylist() if hasattr(texts, "to_pylist") else list(texts)
        rows, rests, extra = [], [], []
        for i in candidates.tolist():
            text = items[i]
            chars, n = self.original_chars(text)
            if n == 0:
                continue
            rows.append(i)
            rests.append(self._regex.sub("", text))
            extra.append(int(round(chars / CHARS_PER_TOKEN)))
            stats["placeholders"] += n
            stats["original_chars"] += chars
        if not rows:
            return counts, stats
        out = np.array(counts, copy=True)
        rest = count_texts(rests, tokenizer)
        out[np.asarray(rows)] = np.minimum(np.asarray(rest, np.int64) + np.asarray(extra, np.int64),
                                           np.iinfo(np.int32).max).astype(out.dtype)
        stats["texts_expanded"] = len(rows)
        return out, stats


def _loose(pattern: str) -> str:
    """``pattern`` for RE2 (Arrow), case-insensitive like the matching itself: Python's named
    groups ``(?P<x>`` are RE2's too; a pattern RE2 cannot take falls back to every text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        pc.match_substring_regex(pa.array([""]), "(?i)" + pattern)
        return "(?i)" + pattern
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return "."
