"""The one normalization of the workbench: every view a reader, a browser or a decoder has
of a text, each with an offset map back to the original characters. The redactor
(:mod:`workbench.redaction.rules`), the leak criterion of the evaluations
(:func:`workbench.redaction.harness.leak_views`) and the report guard
(:class:`workbench.report.textguard.TextGuard`) all read text through this module; an
encoding added here is seen by all three.

Detectors never run on the raw text alone: an adversary (or a summariser) can hide a secret
behind invisible characters, lookalike letters, fullwidth forms or an encoding. A *view*
is a string derived from the original plus a map that sends any span of the view back to
the smallest span of the original that produced it:

* :func:`normalize`: strip format/invisible characters (Unicode ``Cf``: zero-width space,
  joiners, word joiner, BOM, soft hyphen, bidi marks; combining marks ``Mn``/``Me``), fold
  Cyrillic/Greek homoglyphs to the Latin letters they imitate, then NFKC (fullwidth forms,
  mathematical alphanumerics, ligatures). Only non-ASCII characters are touched, so an
  ASCII text is its own view and costs nothing.
* :data:`ESCAPES` and :func:`decode_escapes`: character escapes decoded one by one, each
  decoded character mapping back to its own escape: percent-encoding
  (:func:`percent_decode`), backslash escapes ``\\uXXXX`` / ``\\xXX`` / ``\\UXXXXXXXX``, also
  with a doubled backslash (:func:`unicode_unescape`), HTML character references, named,
  decimal and hex (:func:`html_unescape`). An escape cut short by an ellipsis reads as
  nothing (a summariser's partial copy).
* :func:`line_breaks` / :func:`join_lines`: a value split across lines (real breaks or
  JSON-escaped ones, once or twice), also across unified-diff lines (``+``/``-``).
* :data:`BINARY_ENCODINGS` and :func:`binary_decodings`: base64 (standard and URL-safe),
  base32 and hex runs, decoded from every offset of their first quantum; a finding inside
  one maps back to the whole encoded run (:class:`WholeMap`).
* :func:`reader_views`: all of the above, again on what a decoding yields, two layers deep
  (:data:`MAX_NESTING`: ``base64(base64(x))``, ``%5Cu0041``).

Maps compose (``parent``), so a finding in the decoded view of a normalised view of a
text lands on the right characters of the text.

>>> view, m = normalize("key: AK\\u200bIA\\u0399OSF")
>>> view
'key: AKIAIOSF'
>>> m.span(5, 13)
(5, 14)
"""

from __future__ import annotations

import base64
import binascii
import html.entities
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache

from workbench.redaction.viewmap import SegmentMap, ViewMap, WholeMap  # noqa: F401 (the maps of the views)

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


def normalize(text: str, parent: ViewMap | None = None) -> tuple[str, SegmentMap | None]:
    """The detection view of ``text`` and its map (``None`` when the view is ``text``;
    ``parent``: the map of ``text`` itself, composed into the returned one)."""
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
    return "".join(pieces), SegmentMap(segs, parent=parent)


# --------------------------------------------------------------------------- escapes

#: How many encoding layers a view sees through (``base64(base64(x))``, ``%5Cu0054``).
MAX_NESTING = 2


@dataclass(frozen=True)
class Escape:
    """One kind of character escape: every match of ``pattern`` stands for the characters
    :meth:`chars` returns (``None``: not an escape after all, left as it is).

    ``triggers``: literals a text must hold for a match to be possible (any group, every
    literal of the group; a cheap test before the regex, :meth:`possible`);
    ``min_hits`` / ``max_gap`` say what a *cluster* of escapes worth decoding is for the
    redactor (how many escapes, how many literal characters between two of them).
    """

    name: str
    triggers: tuple[tuple[str, ...], ...]
    pattern: re.Pattern
    min_hits: int
    max_gap: int

    @cached_property
    def _shared(self) -> tuple[str, ...]:
        """Characters every trigger literal holds (one of them absent: no group can match)."""
        return tuple(sorted(set.intersection(*(set(lit) for g in self.triggers for lit in g))))

    def possible(self, text: str) -> bool:
        for c in self._shared:  # (one character: a memchr scan, ~20x faster than a 2-char one)
            if c not in text:
                return False
        for group in self.triggers:  # (plain loops: this runs on every text the redactor scans)
            for literal in group:
                if literal not in text:
                    break
            else:
                return True
        return False

    def chars(self, m: re.Match) -> str | None:
        return _ESCAPE_CHARS[self.name](m)


def _codepoint(value: int) -> str | None:
    return chr(value) if value <= 0x10FFFF else None


def _backslash_chars(m: re.Match) -> str | None:
    digits = m.group(1) or m.group(2) or m.group(3)
    return _codepoint(int(digits, 16)) if digits else ""  # (an escape cut short: nothing)


def _html_chars(m: re.Match) -> str | None:
    if m.group(1) is not None:
        return _codepoint(int(m.group(1), 16))
    if m.group(2) is not None:
        return _codepoint(int(m.group(2)))
    return html.entities.html5.get(m.group(3) + ";")


_ESCAPE_CHARS = {
    "percent": lambda m: chr(int(m.group(1), 16)) if m.group(1) else "",
    "backslash": _backslash_chars,
    "html_reference": _html_chars,
}

#: An escape cut short by an ellipsis (a summariser's partial copy, ``\u0041\u0…``) reads as
#: nothing: the ellipsis follows the characters before it.
_CUT = r"(?=\u2026|\.\.\.)"

#: Every character escape a log, a browser or a reader decodes, in the order a view decodes
#: them: percent-encoding (``%XX``, one byte as a Latin-1 character); backslash escapes of
#: JSON, Python and JavaScript (``\uXXXX``, ``\UXXXXXXXX``, ``\xXX``, also with the
#: backslash doubled by a second JSON encoding); HTML character references (named with
#: their semicolon, ``&#DDD;`` and ``&#xHH;`` with or without it, as browsers read them).
_BACKSLASH = r"\\{1,2}(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8}))"
_HTML_REFERENCE = r"&(?:#[xX]([0-9a-fA-F]{1,6});?|#([0-9]{1,7});?|([A-Za-z][A-Za-z0-9]{1,31});)"
ESCAPES: tuple[Escape, ...] = (
    Escape("percent", (("%",),), re.compile(r"%([0-9A-Fa-f]{2})|%[0-9A-Fa-f]?" + _CUT),
           min_hits=3, max_gap=8),
    Escape("backslash", (("\\u",), ("\\x",), ("\\U",)), re.compile(
        _BACKSLASH + r"|\\{1,2}(?:u[0-9a-fA-F]{0,3}|x[0-9a-fA-F]?|U[0-9a-fA-F]{0,7})" + _CUT),
           min_hits=4, max_gap=2),
    Escape("html_reference", (("&", ";"),), re.compile(_HTML_REFERENCE), min_hits=1, max_gap=8),
)
ESCAPE = {e.name: e for e in ESCAPES}

#: One escaped character (a backslash escape or an HTML reference) as a regex without
#: groups, for the rules whose value patterns read through escapes (a header, flag or keyed
#: value written escaped is the value it decodes to).
ESCAPED_CHAR = re.sub(r"\((?!\?)", "(?:", f"{_BACKSLASH}|{_HTML_REFERENCE}")


def has_escape(text: str) -> bool:
    """Could ``text`` hold an escape of :data:`ESCAPES` (a cheap literal test)?"""
    return any(esc.possible(text) for esc in ESCAPES)


def decode_escapes(escape: Escape, text: str, start: int = 0, end: int | None = None,
                   parent: ViewMap | None = None) -> tuple[str, SegmentMap]:
    """Decode every ``escape`` in ``text[start:end]``; each decoded character maps back to
    its own escape (the view is ``text[start:end]`` with the escapes replaced)."""
    end = len(text) if end is None else end
    pieces: list[str] = []
    segs: list[tuple[int, int, int, int]] = []
    last = start
    vpos = 0
    for m in escape.pattern.finditer(text, start, end):
        rep = escape.chars(m)
        if rep is None:
            continue
        s, e = m.span()
        pieces.append(text[last:s])
        vpos += s - last
        pieces.append(rep)
        segs.append((vpos, vpos + len(rep), s - start, e - start))
        vpos += len(rep)
        last = e
    pieces.append(text[last:end])
    return "".join(pieces), SegmentMap(segs, offset=start, parent=parent)


def percent_decode(text: str, start: int = 0, end: int | None = None,
                   parent: ViewMap | None = None) -> tuple[str, SegmentMap]:
    """Decode every ``%XX`` in ``text[start:end]`` (byte value as a Latin-1 character)."""
    return decode_escapes(ESCAPE["percent"], text, start, end, parent)


def unicode_unescape(text: str, start: int = 0, end: int | None = None,
                     parent: ViewMap | None = None) -> tuple[str, SegmentMap]:
    """Decode every ``\\uXXXX``, ``\\UXXXXXXXX`` and ``\\xXX`` (also with a JSON-doubled
    backslash, ``\\\\uXXXX``) in ``text[start:end]``."""
    return decode_escapes(ESCAPE["backslash"], text, start, end, parent)


def html_unescape(text: str, start: int = 0, end: int | None = None,
                  parent: ViewMap | None = None) -> tuple[str, SegmentMap]:
    """Decode every HTML character reference (named, ``&#DDD;``, ``&#xHH;``) in
    ``text[start:end]``."""
    return decode_escapes(ESCAPE["html_reference"], text, start, end, parent)


# --------------------------------------------------------------------------- line breaks

#: A line break as a reader sees one: real, or JSON-escaped once or twice (``\\n``,
#: ``\\r\\n``, ``\\\\n``); one pattern each (a literal first character keeps the scan fast).
_R_BREAKS = (re.compile(r"\\\\?n"), re.compile(r"\n"))
#: The characters a token may be made of (the redactor's ``TOKEN_CHARS``), as a regex class.
TOKEN_CLASS = r"A-Za-z0-9+/=_.~!#$%&*@^\-:;,'()?"
#: The same before a character that may continue a token (or a diff/quote mark): the only
#: breaks the redactor joins across.
_TOKEN_NEXT = rf"(?=[{TOKEN_CLASS}>])"
_R_BREAKS_TOKEN = (re.compile(r"\\\\?n" + _TOKEN_NEXT), re.compile(r"\n" + _TOKEN_NEXT))
#: What starts a continuation line without belonging to it: a unified diff's ``+``/``-``
#: (when the line before carries the same mark), a quote's ``>``.
_DIFF_MARKS = "+->"
#: The breaks a join can start at, a superset that one regex pass finds (the lookarounds are
#: what :func:`joinable_breaks` then checks exactly): a token character before the break (or
#: before its CR, written the same way), two token characters after it, past a mark or not.
_JOIN_NEXT = rf"(?=[+\->]?[{TOKEN_CLASS}]{{2}})"
_R_BREAKS_JOINABLE = (re.compile(rf"\\(?<=[{TOKEN_CLASS}]\\)\\?n" + _JOIN_NEXT),  # (the literal
                      re.compile(rf"\n(?<=[{TOKEN_CLASS}\r]\n)" + _JOIN_NEXT))  # first: a fast scan)
_R_TWO_TOKEN_CHARS = re.compile(rf"[{TOKEN_CLASS}]{{2}}")
_TOKEN_SET = frozenset(re.findall(rf"[{TOKEN_CLASS}]", "".join(map(chr, range(128)))))


def line_breaks(view: str, start: int = 0, end: int | None = None, *, token_next: bool = False):
    """``(b0, b1)`` per line break in ``view`` (escaped ones first, then real ones): the
    break starts at ``b0`` and the text it continues starts at ``b1`` (after a diff or
    quote mark that the line before shares); ``token_next``: only breaks followed by a
    character that may continue a token."""
    end = len(view) if end is None else end
    return _breaks(view, start, end, _R_BREAKS_TOKEN if token_next else _R_BREAKS)


def joinable_breaks(view: str) -> list[tuple[int, int]]:
    """The breaks of ``line_breaks(view, token_next=True)`` that a token may run across, in
    the same order: a token character just before ``b0`` and two from ``b1`` on. One regex
    pass skips every other line at C speed (a summary has thousands of lines, a handful of
    which end and start with a token)."""
    tokens, two = _TOKEN_SET, _R_TWO_TOKEN_CHARS.match
    return [(b0, b1) for b0, b1 in _breaks(view, 0, len(view), _R_BREAKS_JOINABLE)
            if b0 and view[b0 - 1] in tokens and two(view, b1)]


def _breaks(view: str, start: int, end: int, patterns: tuple[re.Pattern, re.Pattern]):
    """:func:`line_breaks` over the matches of ``patterns`` (escaped breaks, real breaks)."""
    starts = None  # the line starts, found once: a search back per break is quadratic
    for literal, pattern in zip(("\\n", "\n"), patterns, strict=True):
        if literal[0] not in view or literal not in view:  # (a backslash: a one-character
            continue  # scan, ~100x faster than one for "\\n", rules out most views)
        for m in pattern.finditer(view, start, end):
            b0, b1 = m.span()
            if b0 and view[b0 - 1] in "r\r":  # (cheap test first) a CR written the same way
                brk = m.group()
                cr = "\r" if brk == "\n" else brk[:-1] + "r"
                if b0 >= len(cr) and view.startswith(cr, b0 - len(cr)):
                    b0 -= len(cr)
            if b1 < end and view[b1] in _DIFF_MARKS:
                mark = view[b1]
                if starts is None:
                    starts = _line_starts(view)
                ls = starts[bisect_right(starts, b0) - 1]
                if view.startswith(mark, ls) and not view.startswith(mark * 2, b1):
                    b1 += 1
            yield b0, b1


def _line_starts(view: str) -> list[int]:
    """0 and the end of every real or escaped break: the line at ``i`` starts at the last one
    ``<= i`` (found with numpy: a diff has a break per line; a character outside ASCII
    stands as ``?``, one per code point, so the offsets stay the view's)."""
    import numpy as np

    a = np.frombuffer(view.encode("ascii", "replace"), dtype=np.uint8)
    ends = np.concatenate(([0], np.flatnonzero(a == 10) + 1,
                           np.flatnonzero((a[:-1] == 92) & (a[1:] == 110)) + 2))
    ends.sort()
    return ends.tolist()


def join_lines(text: str, parent: ViewMap | None = None) -> tuple[str, ViewMap | None]:
    """``text`` with every line break (and the diff mark of a continued diff line) removed,
    so a value split across lines reads whole; ``None`` map when there is no break."""
    segs: list[tuple[int, int, int, int]] = []
    pieces: list[str] = []
    last = vpos = 0
    for b0, b1 in sorted(line_breaks(text)):
        pieces.append(text[last:b0])
        vpos += b0 - last
        segs.append((vpos, vpos, b0, b1))
        last = b1
    if not segs:
        return text, parent
    pieces.append(text[last:])
    return "".join(pieces), SegmentMap(segs, parent=parent)


# --------------------------------------------------------------------------- binary runs

#: The shortest run decoded: 12 bytes (a leak is 12 characters, or half of a short secret).
MIN_RUN_BYTES = 12


@lru_cache(maxsize=16)
def _run_patterns(min_bytes: int) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """Run patterns long enough to hold ``min_bytes`` bytes (base64, base32, hex)."""
    b64, b32, hx = -(-min_bytes * 4 // 3), -(-min_bytes * 8 // 5), 2 * min_bytes
    return (re.compile(rf"[A-Za-z0-9+/_-]{{{b64},}}={{0,2}}"),
            re.compile(rf"(?:[A-Z2-7]{{{b32},}}|[a-z2-7]{{{b32},}})=*"),
            re.compile(rf"[0-9a-fA-F]{{{hx},}}"))


def b64_bytes(run: str) -> bytes | None:
    """The bytes a base64 run (standard or URL-safe alphabet, padded or not, possibly cut
    short: its whole quanta and a valid partial one) encodes, or None."""
    run = run.rstrip("=")
    if len(run) % 4 == 1:
        run = run[:-1]
    if not run:
        return None
    table = _URL_B64 if ("-" in run or "_" in run) else None
    try:
        return base64.b64decode((run.translate(table) if table else run) + "=" * (-len(run) % 4),
                                validate=True)
    except (binascii.Error, ValueError):
        return None


_URL_B64 = str.maketrans("-_", "+/")
_B32_PARTIAL = {0: 0, 2: 6, 4: 4, 5: 3, 7: 1}  # characters of a last quantum -> padding


def b32_bytes(run: str) -> bytes | None:
    """The bytes a base32 run (either case, padded or not, possibly cut short) encodes."""
    run = run.rstrip("=").upper()
    while len(run) % 8 not in _B32_PARTIAL:
        run = run[:-1]
    if not run:
        return None
    try:
        return base64.b32decode(run + "=" * _B32_PARTIAL[len(run) % 8])
    except (binascii.Error, ValueError):
        return None


def hex_bytes(run: str) -> bytes | None:
    run = run[: len(run) // 2 * 2]
    return bytes.fromhex(run) if run else None


#: Binary-to-text encodings: (name, quantum in characters, decoder); their run patterns
#: are :func:`_run_patterns`, in the same order.
BINARY_ENCODINGS = (
    ("base64", 4, b64_bytes),
    ("base32", 8, b32_bytes),
    ("hex", 2, hex_bytes),
)


def binary_decodings(view: str, min_bytes: int = MIN_RUN_BYTES, *, shifts: bool = True):
    """``(decoded text, start, end)`` for every base64 / base32 / hex run of ``view`` that
    can hold ``min_bytes`` bytes, decoded from every offset inside its first quantum (a run
    cut out of a longer encoding starts anywhere; ``shifts=False``: from its start only);
    bytes read as UTF-8, undecodable bytes replaced."""
    for (_name, quantum, decode), pattern in zip(BINARY_ENCODINGS, _run_patterns(min_bytes), strict=True):
        for m in pattern.finditer(view):
            rs, re_ = m.span()
            run = m.group()
            for shift in range(min(quantum, len(run)) if shifts else 1):
                raw = decode(run[shift:])
                if raw:
                    yield raw.decode("utf-8", "replace"), rs, re_


# --------------------------------------------------------------------------- all views


def reader_views(text: str, depth: int = MAX_NESTING, min_bytes: int = MIN_RUN_BYTES
                 ) -> list[tuple[str, ViewMap | None]]:
    """Every way a reader, a browser or a decoder may see ``text``, each with the map back
    to ``text`` (``None``: the view is ``text``).

    The normalised text (zero-width characters, homoglyphs, fullwidth), its line-joined
    form (a value split across lines or diff lines), every escape decoded (percent,
    backslash, HTML references), and every base64 / base32 / hex run decoded, all of it
    again on what a decoding yields, ``depth`` layers deep (runs shorter than ``min_bytes``
    decoded bytes are left alone). This is the view set of the
    report guard (:class:`workbench.report.textguard.TextGuard`); the redactor scans the
    same escapes and runs with detectors tuned for throughput
    (:mod:`workbench.redaction.rules.decode`).

    >>> [v for v, _ in reader_views("id: \\u0041\\u004b&#73;A")][-1]
    'id: AKIA'
    """
    out: list[tuple[str, ViewMap | None]] = []
    # a view is known by its text and where it came from: the same encoded run written
    # twice decodes to the same text twice, and each occurrence must map back
    seen: set[tuple[str, tuple[int, int] | None]] = set()

    def first_visit(view: str, vmap: ViewMap | None) -> bool:
        key = (view, None if vmap is None else vmap.span(0, len(view)))
        if key in seen:
            return False
        seen.add(key)
        return True

    # breadth first, so a view is decoded further whenever some path reaches it with
    # layers to spare (a run reached through the escape-decoded text too is still decoded)
    frontier: list[tuple[str, ViewMap | None]] = [(text, None)]
    for level in range(depth + 1):
        nxt: list[tuple[str, ViewMap | None]] = []
        for view, vmap in frontier:
            norm, nmap = normalize(view, parent=vmap)
            nmap = nmap if nmap is not None else vmap
            if not first_visit(norm, nmap):
                continue
            out.append((norm, nmap))
            readable = [(norm, nmap)]
            joined, jmap = join_lines(norm, parent=nmap)
            if joined is not norm and first_visit(joined, jmap):
                out.append((joined, jmap))
                readable.append((joined, jmap))  # (a run wrapped over lines decodes whole)
            if level == depth:
                continue
            for seen_view, smap in readable:
                dec, dmap = seen_view, smap
                for esc in ESCAPES:
                    if esc.possible(dec) and esc.pattern.search(dec):
                        dec, dmap = decode_escapes(esc, dec, parent=dmap)
                if dec != seen_view:
                    nxt.append((dec, dmap))
                nxt += [(decoded, WholeMap(rs, re_, parent=smap))
                        for decoded, rs, re_ in binary_decodings(seen_view, min_bytes)]
        frontier = nxt
    return out


#: Runs of escapes (with the literal characters such a run may hold, never a line break):
#: a URL's percent-encoded part, consecutive backslash escapes, HTML references amid
#: token characters.
_ESCAPE_RUNS = {
    "percent": re.compile(r"(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9._~!$&'()*+,;=:@/?-])*%[0-9A-Fa-f]{2}"
                          r"(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9._~!$&'()*+,;=:@/?-])*"),
    "backslash": re.compile(rf"(?:{_BACKSLASH})+"),
    "html_reference": re.compile(rf"[A-Za-z0-9._~+/=-]*(?:(?:{_HTML_REFERENCE})[A-Za-z0-9._~+/=-]*)+"),
}


def decoded_texts(view: str, min_bytes: int = MIN_RUN_BYTES) -> list[str]:
    """One decoding layer of ``view``, without maps (the leak criterion's views, line by
    line: no decoded text spans a line break): every run of escapes decoded, and every
    base64 / base32 / hex run decoded from its start."""
    out = [decode_escapes(esc, m.group())[0] for esc in ESCAPES if esc.possible(view)
           for m in _ESCAPE_RUNS[esc.name].finditer(view)]
    out += [text for text, _, _ in binary_decodings(view, min_bytes, shifts=False)]
    return out
