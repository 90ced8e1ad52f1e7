"""Transforms: how a secret is disguised before it is embedded (split across messages or
lines, encoded, zero-width characters, homoglyphs, fullwidth, wrapping punctuation,
placeholder markers)."""

from __future__ import annotations

import base64
import math
import unicodedata
from dataclasses import dataclass

from workbench.synth.secrets.draw import Rng, _pick

TRANSFORMS: tuple[str, ...] = (
    "none", "split_messages", "split_lines", "base64", "hex", "percent", "unicode_escape",
    "zero_width", "homoglyph", "fullwidth", "wrap_punct", "placeholder_marker",
)
ENCODING_TRANSFORMS = frozenset({"base64", "hex", "percent", "unicode_escape"})

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")

# Latin letter -> Cyrillic/Greek lookalikes, by Unicode name (checked at import). Kept apart
# from the redactor's wider table (redaction/normalize.py) on purpose: the generator must not
# plant only what the redactor already lists, or the leakage test would grade itself.
_HOMOGLYPH_NAMES: dict[str, tuple[str, ...]] = {
    "A": ("CYRILLIC CAPITAL LETTER A", "GREEK CAPITAL LETTER ALPHA"),
    "B": ("CYRILLIC CAPITAL LETTER VE", "GREEK CAPITAL LETTER BETA"),
    "C": ("CYRILLIC CAPITAL LETTER ES", "GREEK CAPITAL LUNATE SIGMA SYMBOL"),
    "E": ("CYRILLIC CAPITAL LETTER IE", "GREEK CAPITAL LETTER EPSILON"),
    "H": ("CYRILLIC CAPITAL LETTER EN", "GREEK CAPITAL LETTER ETA"),
    "I": ("CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "GREEK CAPITAL LETTER IOTA"),
    "J": ("CYRILLIC CAPITAL LETTER JE",),
    "K": ("CYRILLIC CAPITAL LETTER KA", "GREEK CAPITAL LETTER KAPPA"),
    "M": ("CYRILLIC CAPITAL LETTER EM", "GREEK CAPITAL LETTER MU"),
    "N": ("GREEK CAPITAL LETTER NU",),
    "O": ("CYRILLIC CAPITAL LETTER O", "GREEK CAPITAL LETTER OMICRON"),
    "P": ("CYRILLIC CAPITAL LETTER ER", "GREEK CAPITAL LETTER RHO"),
    "S": ("CYRILLIC CAPITAL LETTER DZE",),
    "T": ("CYRILLIC CAPITAL LETTER TE", "GREEK CAPITAL LETTER TAU"),
    "X": ("CYRILLIC CAPITAL LETTER HA", "GREEK CAPITAL LETTER CHI"),
    "Y": ("CYRILLIC CAPITAL LETTER STRAIGHT U", "GREEK CAPITAL LETTER UPSILON"),
    "Z": ("GREEK CAPITAL LETTER ZETA",),
    "a": ("CYRILLIC SMALL LETTER A",),
    "c": ("CYRILLIC SMALL LETTER ES", "GREEK LUNATE SIGMA SYMBOL"),
    "d": ("CYRILLIC SMALL LETTER KOMI DE",),
    "e": ("CYRILLIC SMALL LETTER IE",),
    "h": ("CYRILLIC SMALL LETTER SHHA",),
    "i": ("CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I",),
    "j": ("CYRILLIC SMALL LETTER JE", "GREEK LETTER YOT"),
    "o": ("CYRILLIC SMALL LETTER O", "GREEK SMALL LETTER OMICRON"),
    "p": ("CYRILLIC SMALL LETTER ER", "GREEK SMALL LETTER RHO"),
    "q": ("CYRILLIC SMALL LETTER QA",),
    "s": ("CYRILLIC SMALL LETTER DZE",),
    "v": ("GREEK SMALL LETTER NU",),
    "w": ("CYRILLIC SMALL LETTER WE",),
    "x": ("CYRILLIC SMALL LETTER HA",),
    "y": ("CYRILLIC SMALL LETTER U",),
}
HOMOGLYPHS: dict[str, tuple[str, ...]] = {
    latin: tuple(unicodedata.lookup(n) for n in names) for latin, names in _HOMOGLYPH_NAMES.items()
}

_WRAPPERS = (("(", ")"), ("[", "]"), ("<", ">"), ('"', '"'), ("'", "'"), ("`", "`"))


def _inner_positions(n: int) -> range:
    return range(1, n) if n > 1 else range(0)


def to_fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in s)


def percent_encode(rng: Rng, s: str) -> str:
    """Percent-encode every byte, except that ~25% of unreserved characters stay literal."""
    out = []
    for ch in s:
        if (ch.isascii() and (ch.isalnum() or ch in "-._~")) and rng.random() < 0.25:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode())
    return "".join(out)


def unicode_escape(s: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in s)


@dataclass(frozen=True)


class _Shaped:
    embedded: str          # what replaces the raw secret string in the context
    region: tuple[int, int]  # the (transformed) secret inside ``embedded``
    cut: int = -1          # split_messages: split offset inside ``embedded``
    variant: str = ""


def _transform(rng: Rng, fmt: str, raw: str, core: tuple[int, int], transform: str) -> _Shaped:
    cs, ce = core
    value = raw[cs:ce]
    n = len(value)
    if transform == "none":
        return _Shaped(raw, core)
    if transform == "split_messages":
        k = int(rng.integers(max(1, math.ceil(0.3 * n)), max(2, math.floor(0.7 * n)) + 1))
        return _Shaped(raw, core, cut=cs + k)
    if transform == "split_lines":
        k = int(rng.integers(max(1, math.ceil(0.3 * n)), max(2, math.floor(0.7 * n)) + 1))
        return _Shaped(raw[:cs + k] + "\n" + raw[cs + k:], (cs, ce + 1))
    if transform in ENCODING_TRANSFORMS:
        if transform == "base64":
            enc = base64.b64encode(raw.encode()).decode()
        elif transform == "hex":
            enc = raw.encode().hex()
        elif transform == "percent":
            enc = percent_encode(rng, raw)
        else:
            enc = unicode_escape(raw)
        return _Shaped(enc, (0, len(enc)))
    if transform == "zero_width":
        pos = sorted(set(rng.choice(list(_inner_positions(n)),
                                    size=min(n - 1, int(rng.integers(1, 5))),
                                    replace=False).tolist()))
        chars = list(value)
        for p in reversed(pos):
            chars.insert(p, _pick(rng, ZERO_WIDTH))
        new = "".join(chars)
        return _Shaped(raw[:cs] + new + raw[ce:], (cs, cs + len(new)))
    if transform == "homoglyph":
        eligible = [i for i, c in enumerate(value) if c in HOMOGLYPHS]
        if not eligible:
            raise ValueError(f"no homoglyph-able letter in this {fmt}")
        k = min(len(eligible), int(rng.integers(1, 5)))
        chars = list(value)
        for i in rng.choice(eligible, size=k, replace=False).tolist():
            chars[i] = _pick(rng, HOMOGLYPHS[chars[i]])
        return _Shaped(raw[:cs] + "".join(chars) + raw[ce:], core)
    if transform == "fullwidth":
        new = to_fullwidth(value)
        return _Shaped(raw[:cs] + new + raw[ce:], core)
    if transform == "wrap_punct":
        o, c = _pick(rng, _WRAPPERS)
        trail = _pick(rng, (".", ","))
        return _Shaped(o + raw + c + trail, (cs + len(o), ce + len(o)))
    if transform == "placeholder_marker":
        if rng.random() < 0.5:
            return _Shaped("[BYOK:" + raw + "]", (cs + 6, ce + 6), variant="byok")
        t = int(rng.integers(math.ceil(0.4 * n), math.floor(0.6 * n) + 1))
        marker = f"<REDACTED:{fmt}>"
        emb = raw[:cs] + marker + value[n - t:] + raw[ce:]
        start = cs + len(marker)
        return _Shaped(emb, (start, start + t), variant="redacted_tail")
    raise ValueError(f"unknown transform {transform!r}")
