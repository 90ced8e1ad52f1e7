"""Normalisation views and their offset maps."""

from __future__ import annotations

import unicodedata
import urllib.parse

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.redaction.normalize import (
    CONFUSABLES,
    fold_char,
    normalize,
    percent_decode,
    unicode_unescape,
)
from workbench.synth import secrets as S

INVISIBLE = list(S.ZERO_WIDTH) + ["\u200e", "\u202e", "\u034f", "\ufe0f"]
GLYPHS = [g for gs in S.HOMOGLYPHS.values() for g in gs]


def test_ascii_is_its_own_view():
    text = "plain ASCII, nothing to fold: AKIA1234"
    view, m = normalize(text)
    assert view is text and m is None


def test_every_planting_homoglyph_and_invisible_folds():
    for latin, glyphs in S.HOMOGLYPHS.items():
        for g in glyphs:
            assert fold_char(g) == latin, (latin, g, unicodedata.name(g))
    for z in S.ZERO_WIDTH:
        assert fold_char(z) == ""
    for c in "ＡＫＩＡ０９－＿":
        assert fold_char(c).isascii()
    assert all(v.isascii() for v in CONFUSABLES.values())


def test_fullwidth_and_zero_width_secret_maps_back():
    secret = "AKIAQ7WE9RT2YU4IO6PA"
    disguised = S.to_fullwidth(secret[:6]) + "\u200b" + secret[6:10] + "\u00ad" + secret[10:]
    text = "key=" + disguised + "."
    view, m = normalize(text)
    assert view == "key=" + secret + "."
    a = view.index(secret)
    assert m.span(a, a + len(secret)) == (4, 4 + len(disguised))


_chars = st.one_of(
    st.characters(min_codepoint=32, max_codepoint=126),
    st.sampled_from(INVISIBLE),
    st.sampled_from(GLYPHS),
    st.sampled_from(list("ＡＢｃ１２ﬁ…½")),
    st.sampled_from(list("─→✅é")),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_chars, max_size=60), st.data())
def test_offset_map_roundtrip(chars, data):
    text = "".join(chars)
    view, m = normalize(text)
    if m is None:
        assert view == text
        return
    n = len(view)
    a = data.draw(st.integers(0, n))
    b = data.draw(st.integers(a, n))
    oa, ob = m.span(a, b)
    assert 0 <= oa <= ob <= len(text)
    # the original span normalises to the view span (exactly, unless it cuts through the
    # expansion of one character, e.g. the "f" of "fi" from U+FB01, which maps to all of it)
    back = normalize(text[oa:ob])[0]
    assert view[a:b] in back
    if not any(len(fold_char(c)) > 1 for c in text[oa:ob]):
        assert back == view[a:b]
    if b > a:
        # and is the smallest such span: it starts and ends on characters that survive
        assert fold_char(text[oa]) != "" or text[oa].isascii()
        assert fold_char(text[ob - 1]) != "" or text[ob - 1].isascii()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
               max_size=40),
       st.lists(st.integers(0, 40), max_size=6),
       st.sampled_from(S.ZERO_WIDTH))
def test_zero_width_insertions_map_back(secret, cuts, zw):
    """Insert invisible characters into a token, find it in the view, map it back."""
    chars = list(secret)
    for c in sorted({min(c, len(secret)) for c in cuts}, reverse=True):
        chars.insert(c, zw)
    hidden = "".join(chars)
    text = "<< " + hidden + " >>"
    view, m = normalize(text)
    assert view == "<< " + secret + " >>"
    a = view.index(secret, 3)
    oa, ob = m.span(a, a + len(secret)) if m is not None else (a, a + len(secret))
    assert text[oa:ob] == hidden.strip(zw)


def test_percent_and_unicode_decode_maps():
    secret = "AKIAQ7WE9RT2YU4IO6PA"
    pieces = [f"%{ord(c):02X}" if i % 3 else c for i, c in enumerate(secret)]
    enc = "".join(pieces)
    text = "GET /x?api_key=" + enc + "&limit=5"
    s = text.index(enc)
    dec, m = percent_decode(text, s, s + len(enc))
    assert dec == urllib.parse.unquote(enc) == secret
    assert m.span(0, len(dec)) == (s, s + len(enc))
    pos = s
    for i, piece in enumerate(pieces):  # every decoded character maps to its own escape
        assert m.span(i, i + 1) == (pos, pos + len(piece))
        pos += len(piece)

    esc = S.unicode_escape(secret).replace("\\", "\\\\")  # JSON-doubled backslashes
    text = '{"k": "' + esc + '"}'
    s = text.index(esc)
    dec, m = unicode_unescape(text, s, s + len(esc))
    assert dec == secret
    a, b = m.span(0, 4)
    assert (a, b) == (s, s + 4 * 7)
    assert text[a:b] == esc[:28]


def _line_start_by_search(view: str, b0: int) -> int:
    """The start of the line a break at ``b0`` ends, searched back (the definition)."""
    real, escaped = view.rfind("\n", 0, b0), view.rfind("\\n", 0, b0)
    return max(real + 1 if real >= 0 else 0, escaped + 2 if escaped >= 0 else 0)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["\n", "\\n", "\\\\n", "\r\n", "\\r\\n", "+", "-", ">", "++", "a", "b1", " "]),
                max_size=40), st.booleans())
def test_line_breaks_take_a_continued_diff_mark_from_the_line_start(parts, token_next):
    from workbench.redaction.normalize import _R_BREAKS, _R_BREAKS_TOKEN, _line_starts, line_breaks

    view = "".join(parts)
    starts = _line_starts(view)
    assert starts == sorted(set(starts)) and starts[0] == 0
    expected = []
    for literal, pattern in zip(("\\n", "\n"), _R_BREAKS_TOKEN if token_next else _R_BREAKS, strict=True):
        if literal not in view:
            continue
        for m in pattern.finditer(view):
            b0, b1 = m.span()
            if b0 and view[b0 - 1] in "r\r":
                cr = "\r" if m.group() == "\n" else m.group()[:-1] + "r"
                if b0 >= len(cr) and view.startswith(cr, b0 - len(cr)):
                    b0 -= len(cr)
            if b1 < len(view) and view[b1] in "+->":
                ls = _line_start_by_search(view, b0)
                if view.startswith(view[b1], ls) and not view.startswith(view[b1] * 2, b1):
                    b1 += 1
            expected.append((b0, b1))
    assert list(line_breaks(view, token_next=token_next)) == expected


def test_line_breaks_scale_linearly_with_the_breaks():
    """A diff of many ``+`` lines: each break's line start is looked up, not searched back
    over the whole text (which took seconds at 20k lines)."""
    import time

    from workbench.redaction.normalize import line_breaks

    def seconds(n: int) -> float:
        view = "+x = 1\n" * n
        t0 = time.process_time()
        assert sum(1 for _ in line_breaks(view)) == n
        return time.process_time() - t0

    seconds(1000)
    small, big = seconds(4000), seconds(64000)
    assert big < 40 * max(small, 1e-3), (small, big)  # 16x the lines: linear, with slack
