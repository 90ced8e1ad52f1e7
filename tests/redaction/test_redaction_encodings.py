"""The redactor finds a secret in every encoding a log or a reader decodes (issue 34 item 3),
through the one normalization the report guard also uses (:mod:`workbench.redaction.normalize`).

Every secret format is planted plainly (``transform="none"``), then its carrier string is
rewritten with each encoding of ``tests/planted_encodings.py`` (this suite's own encoders)
and embedded again; the redacted text must show no fragment of the value in any encoding.
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from planted_encodings import BINARY_ENCODERS, CHAR_ENCODERS, encoded_fragments, planted_in

from workbench.redaction.harness import redact, redact_messages
from workbench.synth import secrets as S


#: Encodings a reader decodes that are written over a whole carrier string.
def _char_wise(enc):
    return lambda s: "".join(enc(c) for c in s)


def _binary(enc):
    return lambda s: enc(s.encode())


WHOLE = {
    **{name: _char_wise(enc) for name, enc in CHAR_ENCODERS.items()
       if name not in ("json", "json_twice", "html_escaped")},
    **{name: _binary(enc) for name, (enc, _, _) in BINARY_ENCODERS.items()},
    "base64(base64)": lambda s: base64.b64encode(base64.b64encode(s.encode())).decode(),
    "hex(base64)": lambda s: base64.b64encode(s.encode()).hex(),
    "base32(base64)": lambda s: base64.b32encode(base64.b64encode(s.encode())).decode(),
    "base64(hex)": lambda s: base64.b64encode(s.encode().hex().encode()).decode(),
}


def _plain_plants() -> list:
    """One plain plant per secret format, in a context that does not escape it."""
    rng = np.random.default_rng(34)
    plants = {}
    for fmt, context, transform in S.compatible_combinations():
        if transform != "none" or fmt in plants or fmt == "pem_private_key":
            continue
        p = S.plant_secret(rng, fmt, context, transform)
        text, start, end = p.parts[0]
        if not p.escaped and len(p.parts) == 1 and p.carrier and p.carrier in text:
            plants[fmt] = p
    return list(plants.values())


PLANTS = _plain_plants()


def _leaks(value: str, texts: list[str]) -> list[str]:
    return planted_in(texts, {value: encoded_fragments(value)})


def test_every_format_has_a_plain_plant():
    assert {p.kind for p in PLANTS} >= set(S.SECRET_FORMATS) - {"pem_private_key"}


@pytest.mark.parametrize("encoding", sorted(WHOLE))
def test_redactor_finds_every_format_in_every_encoding(encoding):
    encode = WHOLE[encoding]
    missed = []
    for p in PLANTS:
        text = p.parts[0][0]
        assert not _leaks(p.value, [redact(text).text]), f"{p.kind} plain in {p.context}"
        shown = text.replace(p.carrier, encode(p.carrier))
        out = redact(shown).text
        if _leaks(p.value, [out]):
            missed.append(f"{p.kind} in {p.context}: {out[:160]!r}")
    assert not missed, "\n".join(missed)


@pytest.mark.parametrize("disguise", ["zero_width", "homoglyph", "split_lines", "diff_lines",
                                      "escaped_json", "escaped_json_lines", "split_messages"])
def test_redactor_sees_through_disguises(disguise):
    missed = []
    for p in PLANTS:
        text = p.parts[0][0]
        v = p.carrier
        k = len(v) // 2
        if disguise == "zero_width":
            shown = [text.replace(v, v[:k] + "\u200b" + v[k:k + 3] + "\u2060" + v[k + 3:])]
        elif disguise == "homoglyph":
            shown = [text.replace(v, "".join(S.HOMOGLYPHS[c][-1] if c in S.HOMOGLYPHS and i % 3 == 0 else c
                                             for i, c in enumerate(v)))]
        elif disguise == "split_lines":
            shown = [text.replace(v, v[:k] + "\n" + v[k:])]
        elif disguise == "diff_lines":
            shown = ["@@ -1,2 +1,2 @@\n" + "\n".join("+" + line for line in text.replace(v, v[:k] + "\n" + v[k:])
                                                     .split("\n"))]
        elif disguise == "escaped_json":
            shown = [json.dumps({"output": json.dumps({"text": text})})]
        elif disguise == "escaped_json_lines":
            shown = [json.dumps({"output": text.replace(v, v[:k] + "\n" + v[k:])})]
        else:
            a, b = text.split(v, 1)
            shown = [a + v[:k], v[k:] + b]
        out = [r.text for r in redact_messages(shown)]
        if _leaks(p.value, out):
            missed.append(f"{p.kind} in {p.context}: {out!r}"[:240])
    assert not missed, "\n".join(missed)


# ---- the normalization itself: decoded characters map back to their escapes ---------------------
def test_every_escape_decodes_and_maps_back():
    from workbench.redaction.normalize import ESCAPES, html_unescape, reader_views, unicode_unescape

    secret = "AKIAQ7WE9RT2YU4IO6PA"
    for name in ("unicode_escape", "unicode_escape_doubled", "hex_escape", "hex_escape_doubled",
                 "html_decimal", "html_hex", "html_named", "percent", "percent_lower"):
        pieces = [CHAR_ENCODERS[name](c) for c in secret]
        if "".join(pieces) == secret:
            continue  # (no named reference for these characters: nothing to decode)
        text = "key: " + "".join(pieces) + " end"
        views = {v: m for v, m in reader_views(text)}
        view = next(v for v in views if secret in v)
        a = view.index(secret)
        assert views[view].span(a, a + len(secret)) == (5, 5 + len("".join(pieces))), name
        pos = 5
        for i, piece in enumerate(pieces):  # each character maps to its own escape
            assert views[view].span(a + i, a + i + 1) == (pos, pos + len(piece)), (name, i)
            pos += len(piece)
    assert {e.name for e in ESCAPES} == {"percent", "backslash", "html_reference"}
    assert html_unescape("&lowbar;&#x41;&#66&amp;")[0] == "_AB&"
    assert unicode_unescape(r"\x41\\u0042\U00000043\u00")[0] == "ABC\\u00"
    assert unicode_unescape("\\u0041\\u0…")[0] == "A…"  # a copy cut short inside an escape


def test_nested_twice_and_cut_short_runs_are_seen():
    from workbench.redaction.normalize import reader_views

    secret = "zq8Xw2Lm9Pk4Rt7Yv1Bn3Cd6"
    inner = base64.b64encode(("token " + secret).encode()).decode()
    for shown in (base64.b64encode(inner.encode()).decode()[5:],  # cut out of a longer run
                  base64.b32encode(inner.encode()).decode().lower(),
                  inner.encode().hex()[3:]):
        views = reader_views("x " + shown + " y")
        hit = [(v, m) for v, m in views if secret[6:18] in v]
        assert hit, shown
        v, m = hit[0]
        assert m.span(0, 1) == (2, 2 + len(shown))  # the whole encoded run


def test_lines_join_across_diff_marks_only_when_the_line_before_has_one():
    from workbench.redaction.normalize import join_lines

    assert join_lines("+a = 'AKIAQ7WE\n+9RT2YU4IO6PA'")[0] == "+a = 'AKIAQ7WE9RT2YU4IO6PA'"
    assert join_lines("a = 'AKIAQ7WE\n-9RT2'")[0] == "a = 'AKIAQ7WE-9RT2'"
    assert join_lines("x\\n+y")[0] == "x+y"
    view, m = join_lines("-ab\r\n-cd")
    assert view == "-abcd" and m.span(2, 4) == (2, 7)  # "b" .. "c": the break and mark between
