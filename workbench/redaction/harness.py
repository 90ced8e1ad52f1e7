"""The redaction harness: span-based redaction of transcript text, and leak measurement.

Public API:

* :func:`redact(text) <redact>` -> :class:`RedactionResult` (``text``, ``spans``): every
  finding replaced by ``<REDACTED:kind>``; ``spans`` are ``(start, end, kind)`` in the
  *original* text. Idempotent by construction (the output is rescanned until nothing new
  is found, so ``redact(redact(t).text).text == redact(t).text``); the harness's own
  markers are never flagged, but a marker with a raw secret tail glued to it is.
* :func:`redact_messages(texts) <redact_messages>`: the same over consecutive messages,
  plus the junction of every neighbouring pair (tail of one + head of the next) so a
  secret split across two messages is found and both parts are redacted.
* :func:`scan(text) <scan>`: the findings without rewriting.
* :func:`surviving_fragment` / :func:`leaked`: the leak criterion of the evaluations (a
  fragment of >= 12 characters, or >= 50% of the secret, found in the text or in its
  normalised / decoded / line-joined views).

>>> r = redact("token ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b" + ", done")
>>> r.text
'token <REDACTED:github_classic>, done'
>>> redact(r.text).text == r.text
True
>>> [t.text for t in redact_messages(["key is AKIAQ7WE", "9RT2YU4IO6PA please"])]
['key is <REDACTED:aws_access_key_id>', '<REDACTED:aws_access_key_id> please']
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.redaction import rules
from workbench.redaction.normalize import SegmentMap, decoded_texts, join_lines, normalize

Span = tuple[int, int, str]

MARKER_PREFIX = "<REDACTED:"
MAX_PASSES = 4           # rescans of the output until it is a fixpoint


def marker(kind: str) -> str:
    return f"{MARKER_PREFIX}{kind}>"


@dataclass(frozen=True)
class RedactionResult:
    """Redacted text and the redacted spans of the original text."""

    text: str
    spans: tuple[Span, ...]

    @property
    def changed(self) -> bool:
        return bool(self.spans)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(k for _, _, k in self.spans)


def scan(text: str) -> list[Span]:
    """Findings ``(start, end, kind)`` in ``text``, merged and sorted (no rewriting)."""
    return rules.scan(text)


def _apply(text: str, spans: Sequence[Span]) -> tuple[str, SegmentMap]:
    pieces: list[str] = []
    segs: list[tuple[int, int, int, int]] = []
    last = 0
    vpos = 0
    for s, e, k in spans:
        pieces.append(text[last:s])
        vpos += s - last
        m = marker(k)
        pieces.append(m)
        segs.append((vpos, vpos + len(m), s, e))
        vpos += len(m)
        last = e
    pieces.append(text[last:])
    return "".join(pieces), SegmentMap(segs)


_PARAGRAPH = re.compile(r"(?:\n[ \t]*\n|(?:\\n){2})")
MAX_HEADS = 64  # paragraph starts of the next message tried per boundary


def _heads(b: str) -> list[int]:
    """Where a continuation may start in message ``b``: its start and its paragraph starts."""
    heads = [0]
    for m in _PARAGRAPH.finditer(b):
        if len(heads) >= MAX_HEADS:
            break
        if m.end() < len(b):
            heads.append(m.end())
    return heads


def _junction(a: str, b: str) -> tuple[list[Span], list[Span]]:
    """Findings that straddle the boundary between message ``a`` and message ``b``.

    The end of ``a`` is joined with the start of ``b`` and with the start of every
    paragraph of ``b`` (a continuation is often preceded by other text in the next
    message); only findings that need both sides count (:func:`rules.junction_ok`).
    """
    if not a or not b or a[-1] not in rules.TOKEN_CHARS:
        return [], []
    fa: list[Span] = []
    fb: list[Span] = []
    kw = rules.keyword_possible(a[-800:])
    for h in _heads(b):
        for s, e, k in rules.join_at(a, len(a), b, h, keywords=kw):
            fa.append((s, len(a), k))
            fb.append((h, e, k))
    return fa, fb


def redact_messages(texts: Sequence[str], *, junctions: bool = True,
                    visible: Sequence[bool] | None = None) -> list[RedactionResult]:
    """Redact consecutive messages, including secrets split across a message boundary.

    Neighbours are consecutive non-empty texts (an event without text does not separate
    two halves of a secret for a reader). ``visible`` (one flag per text) restricts the
    neighbour relation to the texts a reader sees in sequence, e.g. the model-visible
    events of a continuity, so a reasoning block between two messages does not hide a
    split; texts with ``visible=False`` are still redacted on their own.
    """
    texts = list(texts)
    n = len(texts)
    if visible is not None and len(visible) != n:
        raise ValueError("visible must have one flag per text")
    found: list[list[Span]] = [rules.find_text(t, 0) for t in texts]
    # neighbours: consecutive (visible) texts, skipping events without text
    nonempty = [i for i, t in enumerate(texts) if t and (visible is None or visible[i])]
    pairs = list(zip(nonempty, nonempty[1:], strict=False)) if junctions else []
    for i, j in pairs:
        fa, fb = _junction(texts[i], texts[j])
        found[i] += fa
        found[j] += fb
    spans = [rules.merge(f, t) for f, t in zip(found, texts, strict=True)]
    applied = [_apply(t, s) for t, s in zip(texts, spans, strict=True)]
    for _ in range(MAX_PASSES):
        new: list[list[Span]] = [[] for _ in range(n)]
        dirty = [bool(spans[i]) for i in range(n)]
        for i in range(n):
            if dirty[i]:
                out, omap = applied[i]
                new[i] += [(*omap.span(a, b), k) for a, b, k in rules.find_text(out, 0)]
        for i, j in pairs:
            if dirty[i] or dirty[j]:
                (oa, ma), (ob, mb) = applied[i], applied[j]
                fa, fb = _junction(oa, ob)
                new[i] += [(*ma.span(a, b), k) for a, b, k in fa]
                new[j] += [(*mb.span(a, b), k) for a, b, k in fb]
        grew = False
        for i in range(n):
            if new[i]:
                merged = rules.merge(spans[i] + new[i], texts[i])
                if merged != spans[i]:
                    spans[i] = merged
                    applied[i] = _apply(texts[i], merged)
                    grew = True
        if not grew:
            break
    return [RedactionResult(text=applied[i][0], spans=tuple(spans[i])) for i in range(n)]


def redact(text: str) -> RedactionResult:
    """Redact one text: every finding becomes ``<REDACTED:kind>``."""
    return redact_messages([text], junctions=False)[0]


# --------------------------------------------------------------------------- leak measurement

#: Shortest base64/base32/hex run the leak criterion decodes, in bytes (16 hex digits).
MIN_LEAK_RUN_BYTES = 8


def leak_views(text: str) -> list[str]:
    """The text, its normalised view, its line-joined view and its decoded texts (every
    escape and base64 / base32 / hex run of the shared normalization,
    :func:`~workbench.redaction.normalize.decoded_texts`)."""
    norm, _ = normalize(text)
    views = [text] if norm == text else [text, norm]
    views.append(join_lines(norm)[0])
    views += decoded_texts(norm, min_bytes=MIN_LEAK_RUN_BYTES)
    return views


def fragment_length(secret: str) -> int:
    """Shortest surviving fragment that counts as a leak: 12 chars or half the secret."""
    return max(1, min(12, math.ceil(0.5 * len(secret))))


def surviving_fragment(secret: str, texts: str | Sequence[str]) -> str | None:
    """A fragment of ``secret`` that survives in ``texts`` (any view), or None.

    Several texts are also checked joined pairwise (a reader sees consecutive messages).
    """
    if isinstance(texts, str):
        texts = [texts]
    m = fragment_length(secret)
    views: list[str] = []
    for t in texts:
        views += leak_views(t)
    for a, b in zip(texts, texts[1:], strict=False):
        views += leak_views(a + b)
    for i in range(len(secret) - m + 1):
        frag = secret[i:i + m]
        if frag.strip() and any(frag in v for v in views):
            return frag
    return None


def leaked(secret: str, texts: str | Sequence[str]) -> bool:
    return surviving_fragment(secret, texts) is not None
