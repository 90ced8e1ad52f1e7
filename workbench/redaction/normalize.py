"""Detection views of a text, each with an offset map back to the original characters.

Detectors never run on the raw text alone: an adversary (or a summariser) can hide a secret
behind invisible characters, lookalike letters, fullwidth forms or an encoding. A *view*
is a string derived from the original plus a map that sends any span of the view back to
the smallest span of the original that produced it:

* :func:`normalize`: strip format/invisible characters (Unicode ``Cf``: zero-width space,
  joiners, word joiner, BOM, soft hyphen, bidi marks; combining marks ``Mn``/``Me``), fold
  Cyrillic/Greek homoglyphs to the Latin letters they imitate, then NFKC (fullwidth forms,
  mathematical alphanumerics, ligatures). Only non-ASCII characters are touched, so an
  ASCII text is its own view and costs nothing.
* :func:`percent_decode` / :func:`unicode_unescape`: decode ``%XX`` / ``\\uXXXX`` runs
  character by character (each escape maps back to its own characters).
* base64 and hex runs are decoded by the rules module; a finding inside one maps back to
  the whole encoded run (:class:`WholeMap`).

Maps compose (``parent``), so a finding in the decoded view of a normalised view of a
text lands on the right characters of the text.

>>> view, m = normalize("key: AK\\u200bIA\\u0399OSF")
>>> view
'key: AKIAIOSF'
>>> m.span(5, 13)
(5, 14)
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right

# --------------------------------------------------------------------------- maps


class ViewMap:
    """Base: maps ``[a, b)`` in a view to ``[a', b')`` in the text it was derived from."""

    __slots__ = ("parent",)

    def __init__(self, parent: ViewMap | None = None):
        self.parent = parent

    def _local(self, a: int, b: int) -> tuple[int, int]:  # pragma: no cover - abstract
        raise NotImplementedError

    def span(self, a: int, b: int) -> tuple[int, int]:
        a, b = self._local(a, b)
        return self.parent.span(a, b) if self.parent is not None else (a, b)


class WholeMap(ViewMap):
    """Every span maps to one fixed source span (a decoded base64/hex run)."""

    __slots__ = ("start", "end")

    def __init__(self, start: int, end: int, parent: ViewMap | None = None):
        super().__init__(parent)
        self.start, self.end = start, end

    def _local(self, a, b):
        return self.start, self.end


class SegmentMap(ViewMap):
    """Identity except at recorded segments: ``view[vs:ve]`` came from ``source[os:oe]``.

    Segments are sorted and disjoint in both coordinates; deletions have ``vs == ve``.
    A span is mapped character by character: its first character's source start and its
    last character's source end, so characters deleted from inside the span (zero-width
    joiners inside a key) are covered too.
    """

    __slots__ = ("_vs", "_ve", "_os", "_oe", "offset")

    def __init__(self, segments: list[tuple[int, int, int, int]], offset: int = 0,
                 parent: ViewMap | None = None):
        super().__init__(parent)
        self._vs = [s[0] for s in segments]
        self._ve = [s[1] for s in segments]
        self._os = [s[2] for s in segments]
        self._oe = [s[3] for s in segments]
        self.offset = offset

    def _char(self, i: int) -> tuple[int, int]:
        k = bisect_right(self._vs, i) - 1
        # skip deletions and segments that end at or before i
        if k < 0:
            return i, i + 1
        if i < self._ve[k]:
            return self._os[k], self._oe[k]
        o = self._oe[k] + (i - self._ve[k])
        return o, o + 1

    def point(self, i: int) -> int:
        """Source position of view position ``i`` (a boundary, not a character)."""
        k = bisect_right(self._vs, i) - 1
        if k < 0:
            return i
        if i < self._ve[k]:
            return self._os[k]
        return self._oe[k] + (i - self._ve[k])

    def _local(self, a, b):
        if b <= a:
            p = self.point(a) + self.offset
            return p, p
        return self._char(a)[0] + self.offset, self._char(b - 1)[1] + self.offset


# --------------------------------------------------------------------------- confusables

# Cyrillic/Greek letters that render like Latin ones, by Unicode name (validated at import).
_CONFUSABLE_NAMES: dict[str, tuple[str, ...]] = {
    "A": ("CYRILLIC CAPITAL LETTER A", "GREEK CAPITAL LETTER ALPHA"),
    "B": ("CYRILLIC CAPITAL LETTER VE", "GREEK CAPITAL LETTER BETA"),
    "C": ("CYRILLIC CAPITAL LETTER ES", "GREEK CAPITAL LUNATE SIGMA SYMBOL"),
    "D": ("CYRILLIC CAPITAL LETTER KOMI DE",),
    "E": ("CYRILLIC CAPITAL LETTER IE", "GREEK CAPITAL LETTER EPSILON"),
    "H": ("CYRILLIC CAPITAL LETTER EN", "GREEK CAPITAL LETTER ETA",
          "CYRILLIC CAPITAL LETTER SHHA"),
    "I": ("CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "GREEK CAPITAL LETTER IOTA",
          "CYRILLIC LETTER PALOCHKA"),
    "J": ("CYRILLIC CAPITAL LETTER JE",),
    "K": ("CYRILLIC CAPITAL LETTER KA", "GREEK CAPITAL LETTER KAPPA"),
    "M": ("CYRILLIC CAPITAL LETTER EM", "GREEK CAPITAL LETTER MU"),
    "N": ("GREEK CAPITAL LETTER NU",),
    "O": ("CYRILLIC CAPITAL LETTER O", "GREEK CAPITAL LETTER OMICRON"),
    "P": ("CYRILLIC CAPITAL LETTER ER", "GREEK CAPITAL LETTER RHO"),
    "Q": ("CYRILLIC CAPITAL LETTER QA",),
    "S": ("CYRILLIC CAPITAL LETTER DZE",),
    "T": ("CYRILLIC CAPITAL LETTER TE", "GREEK CAPITAL LETTER TAU"),
    "W": ("CYRILLIC CAPITAL LETTER WE",),
    "X": ("CYRILLIC CAPITAL LETTER HA", "GREEK CAPITAL LETTER CHI"),
    "Y": ("CYRILLIC CAPITAL LETTER STRAIGHT U", "GREEK CAPITAL LETTER UPSILON",
          "CYRILLIC CAPITAL LETTER U"),
    "Z": ("GREEK CAPITAL LETTER ZETA",),
    "a": ("CYRILLIC SMALL LETTER A",),
    "c": ("CYRILLIC SMALL LETTER ES", "GREEK LUNATE SIGMA SYMBOL"),
    "d": ("CYRILLIC SMALL LETTER KOMI DE",),
    "e": ("CYRILLIC SMALL LETTER IE",),
    "h": ("CYRILLIC SMALL LETTER SHHA",),
    "i": ("CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", "GREEK SMALL LETTER IOTA"),
    "j": ("CYRILLIC SMALL LETTER JE", "GREEK LETTER YOT"),
    "k": ("GREEK SMALL LETTER KAPPA",),
    "l": ("CYRILLIC SMALL LETTER PALOCHKA",),
    "n": ("GREEK SMALL LETTER ETA",),
    "o": ("CYRILLIC SMALL LETTER O", "GREEK SMALL LETTER OMICRON"),
    "p": ("CYRILLIC SMALL LETTER ER", "GREEK SMALL LETTER RHO"),
    "q": ("CYRILLIC SMALL LETTER QA",),
    "s": ("CYRILLIC SMALL LETTER DZE",),
    "u": ("GREEK SMALL LETTER UPSILON",),
    "v": ("GREEK SMALL LETTER NU",),
    "w": ("CYRILLIC SMALL LETTER WE",),
    "x": ("CYRILLIC SMALL LETTER HA", "GREEK SMALL LETTER CHI"),
    "y": ("CYRILLIC SMALL LETTER U", "CYRILLIC SMALL LETTER STRAIGHT U",
          "GREEK SMALL LETTER GAMMA"),
}
CONFUSABLES: dict[str, str] = {
    unicodedata.lookup(name): latin
    for latin, names in _CONFUSABLE_NAMES.items() for name in names
}

# invisible characters that are not Cf/Mn but still render as nothing
_EXTRA_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u180e")
_STRIP_CATEGORIES = frozenset({"Cf", "Mn", "Me"})
_FOLD_CACHE: dict[str, str] = {}
_IDENTITY: set[str] = set()  # characters known to normalise to themselves


def fold_char(c: str) -> str:
    """The normalised form of one non-ASCII character ('' if it is invisible)."""
    r = _FOLD_CACHE.get(c)
    if r is not None:
        return r
    if c in _EXTRA_INVISIBLE or unicodedata.category(c) in _STRIP_CATEGORIES:
        r = ""
    elif c in CONFUSABLES:
        r = CONFUSABLES[c]
    else:
        n = unicodedata.normalize("NFKC", c)
        r = "".join(CONFUSABLES.get(x, x) for x in n
                    if unicodedata.category(x) not in _STRIP_CATEGORIES) if n != c else c
    _FOLD_CACHE[c] = r
    if r == c:
        _IDENTITY.add(c)
    return r


_NONASCII = re.compile(r"[^\x00-\x7f]+")


def normalize(text: str) -> tuple[str, SegmentMap | None]:
    """The detection view of ``text`` and its map (``None`` when the view is ``text``)."""
    if text.isascii():
        return text, None
    pieces: list[str] = []
    segs: list[tuple[int, int, int, int]] = []
    last = 0
    delta = 0  # view position - source position, outside segments
    for m in _NONASCII.finditer(text):
        run = m.group()
        if _IDENTITY.issuperset(run):
            continue
        for i in range(m.start(), m.end()):
            c = text[i]
            r = fold_char(c)
            if r == c:
                continue
            pieces.append(text[last:i])
            v = i + delta
            pieces.append(r)
            segs.append((v, v + len(r), i, i + 1))
            delta += len(r) - 1
            last = i + 1
    if not segs:
        return text, None
    pieces.append(text[last:])
    return "".join(pieces), SegmentMap(segs)


# --------------------------------------------------------------------------- decoders

_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
_UESC = re.compile(r"\\{1,2}u([0-9a-fA-F]{4})")


def _decode_with(pattern: re.Pattern, text: str, start: int, end: int,
                 parent: ViewMap | None) -> tuple[str, SegmentMap]:
    pieces: list[str] = []
    segs: list[tuple[int, int, int, int]] = []
    last = start
    vpos = 0
    for m in pattern.finditer(text, start, end):
        s, e = m.span()
        pieces.append(text[last:s])
        vpos += s - last
        pieces.append(chr(int(m.group(1), 16)))
        segs.append((vpos, vpos + 1, s - start, e - start))
        vpos += 1
        last = e
    pieces.append(text[last:end])
    return "".join(pieces), SegmentMap(segs, offset=start, parent=parent)


def percent_decode(text: str, start: int = 0, end: int | None = None,
                   parent: ViewMap | None = None) -> tuple[str, SegmentMap]:
    """Decode every ``%XX`` in ``text[start:end]`` (byte value as a Latin-1 character)."""
    return _decode_with(_PCT, text, start, len(text) if end is None else end, parent)


def unicode_unescape(text: str, start: int = 0, end: int | None = None,
                     parent: ViewMap | None = None) -> tuple[str, SegmentMap]:
    """Decode every ``\\uXXXX`` (or JSON-doubled ``\\\\uXXXX``) in ``text[start:end]``."""
    return _decode_with(_UESC, text, start, len(text) if end is None else end, parent)
