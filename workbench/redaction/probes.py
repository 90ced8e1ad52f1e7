"""Partial-secret probes: what a summariser writes when it copies only part of a secret.

The evaluation pipeline's summariser (:mod:`workbench.summarize.modelled`) leaks secrets
in two partial shapes that whole-secret rules do not see:

* ``partial``: a fragment of the secret as it appears (>= 12 characters or >= 50% of it,
  60% of the time its beginning, else from anywhere) followed by an ellipsis, in place of
  the secret in a one-line snippet of its context;
* ``half``: one part of a secret that was split across two messages (the end of the first
  message or the start of the second), in a snippet of that message alone.

:func:`fragment_probes` draws such lines with the real format generators, contexts and
surface transforms of :mod:`workbench.synth.secrets`; :func:`fragment_recall` measures how
many the harness makes safe (no fragment of the leak criterion survives in any view of
the redacted line). Only probes whose *unredacted* line leaks are drawn, so every probe
is a leak to close.

>>> import numpy as np
>>> p = fragment_probes(np.random.default_rng(1), "github_classic", 3)
>>> len(p), all(pr.fmt == "github_classic" for pr in p)
(3, True)
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

ELLIPSIS = "\u2026"
#: Surface transforms a partial copy is drawn from (a fragment of the disguised secret).
PARTIAL_TRANSFORMS: tuple[str, ...] = (
    "none", "none", "none", "wrap_punct", "zero_width", "homoglyph", "fullwidth", "percent",
    "hex", "unicode_escape", "base64",
)
_WS = re.compile(r"\s+")
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
LIMIT = 240  # the modelled summariser's max_item_chars


@dataclass(frozen=True)
class Probe:
    fmt: str
    shape: str        # "partial" or "half"
    context: str
    transform: str    # surface transform of the copied text
    value: str        # the plaintext secret
    text: str         # the summary line


def _snippet(text: str, start: int, end: int, limit: int = LIMIT) -> tuple[str, int, int]:
    """The sentence holding ``text[start:end]`` when short enough, else a window on its line."""
    ls = text.rfind("\n", 0, start) + 1
    le = text.find("\n", end)
    le = len(text) if le < 0 else le
    line = text[ls:le]
    cuts = [0] + [m.end() for m in _SENT_END.finditer(line)] + [len(line)]
    for a, b in zip(cuts, cuts[1:], strict=False):
        if ls + a <= start and end <= ls + b and b - a <= limit:
            return line[a:b], start - ls - a, end - ls - a
    room = max(0, limit - (end - start)) // 2
    left = max(ls, start - room)
    right = min(le, end + room)
    return text[left:right], start - left, end - left


def _line(text: str, start: int, end: int, written: str) -> str:
    piece, s, e = _snippet(text, start, end)
    before = _WS.sub(" ", piece[:s]).lstrip()
    after = _WS.sub(" ", piece[e:]).rstrip()
    if "\n" in written:
        return f"- {before.rstrip()}\n```\n{written}\n```\n{after.lstrip()}".strip()
    return f"- {before}{written}{after}".strip()


def _fragment(rng: np.random.Generator, s: str) -> str:
    n = len(s)
    lo = min(12, math.ceil(n / 2))
    hi = max(lo, n - 1)
    length = int(rng.integers(lo, hi + 1))
    off = 0 if rng.random() < 0.6 else int(rng.integers(0, n - length + 1))
    return s[off:off + length]


def fragment_probes(rng: np.random.Generator, fmt: str, n: int, *,
                    shapes: Sequence[str] = ("partial", "half"),
                    transforms: Sequence[str] = PARTIAL_TRANSFORMS) -> list[Probe]:
    """``n`` leaking summary lines holding part of a fresh ``fmt`` secret."""
    from workbench.redaction.harness import leaked
    from workbench.synth import secrets as S

    contexts = [c for c in S.CONTEXTS]
    out: list[Probe] = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 200 * n:  # pragma: no cover - a format whose parts can never leak
            raise RuntimeError(f"cannot draw leaking {fmt} probes")
        shape = shapes[int(rng.integers(len(shapes)))]
        ctx = contexts[int(rng.integers(len(contexts)))]
        if shape == "half":
            if not S.compatible(fmt, ctx, "split_messages"):
                continue
            p = S.plant_secret(rng, fmt, ctx, "split_messages")
            k = int(rng.integers(2))
            text, s, e = p.parts[k]
            probe = Probe(fmt, shape, ctx, "split", p.value, _line(text, s, e, text[s:e]))
        else:
            tr = transforms[int(rng.integers(len(transforms)))]
            if not S.compatible(fmt, ctx, tr):
                continue
            try:
                p = S.plant_secret(rng, fmt, ctx, tr)
            except (ValueError, RuntimeError):
                continue
            text, s, e = p.parts[0]
            if p.variant:  # [BYOK:...] / marker tails are not partial copies
                continue
            frag = _fragment(rng, text[s:e])
            probe = Probe(fmt, shape, ctx, tr, p.value, _line(text, s, e, frag + ELLIPSIS))
        if leaked(probe.value, probe.text):
            out.append(probe)
    return out


def all_probes(seed: int, per_format: int, **kw) -> list[Probe]:
    """:func:`fragment_probes` for every format of :mod:`workbench.synth.secrets`."""
    from workbench.synth import secrets as S

    rng = np.random.default_rng(seed)
    return [p for fmt in S.SECRET_FORMATS for p in fragment_probes(rng, fmt, per_format, **kw)]


def fragment_recall(probes: Sequence[Probe], redact: Callable[[str], str] | None = None,
                    key: Callable[[Probe], str] = lambda p: p.fmt) -> dict[str, tuple[int, int]]:
    """``{group: (caught, n)}``: probes whose redacted line no longer leaks, per ``key``."""
    from workbench.redaction.harness import leaked
    from workbench.redaction.harness import redact as _redact

    redact = redact or (lambda t: _redact(t).text)
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for p in probes:
        row = out[key(p)]
        row[1] += 1
        row[0] += not leaked(p.value, redact(p.text))
    return {k: (v[0], v[1]) for k, v in out.items()}


__all__ = ["ELLIPSIS", "PARTIAL_TRANSFORMS", "Probe", "all_probes", "fragment_probes",
           "fragment_recall"]
