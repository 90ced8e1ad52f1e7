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
