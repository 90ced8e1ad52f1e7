"""Every encoding a reader, a browser or a decoder sees through, as this test suite's own
encoders, and a scan of written artefacts for planted values in any of them (issue 26
item 2, issue 34 item 3).

Independent of :mod:`workbench.redaction.normalize` (the code under test): the encoders use
the standard library, the disguises the generator's own tables (``workbench.synth.secrets``).
Import it from any test module (pytest puts ``tests/`` on the path for ``tests/conftest.py``).
"""

from __future__ import annotations

import base64
import html
import html.entities
import json
import math
import re
from pathlib import Path

import polars as pl

from workbench.synth import secrets as S


# ---- encoders (one per encoding; independent of the code under test) -------------------------
def _fragment_size(value: str) -> int:
    """The leak criterion of the evaluations: 12 characters, or half of a short secret."""
    return max(1, min(12, math.ceil(0.5 * len(value))))


def _html_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for name, chars in sorted(html.entities.html5.items()):
        if name.endswith(";") and len(chars) == 1:
            names.setdefault(chars, name)
    return names


_HTML_NAMES = _html_names()

#: Character-wise encodings: each character (or its UTF-8 bytes) becomes an escape.
CHAR_ENCODERS = {
    "json": lambda c: json.dumps(c)[1:-1],
    "json_twice": lambda c: json.dumps(json.dumps(c)[1:-1])[1:-1],
    "unicode_escape": lambda c: f"\\u{ord(c):04x}",
    "unicode_escape_upper": lambda c: f"\\u{ord(c):04X}",
    "unicode_escape_doubled": lambda c: f"\\\\u{ord(c):04x}",
    "hex_escape": lambda c: "".join(f"\\x{b:02x}" for b in c.encode()),
    "hex_escape_doubled": lambda c: "".join(f"\\\\x{b:02x}" for b in c.encode()),
    "html_decimal": lambda c: f"&#{ord(c)};",
    "html_hex": lambda c: f"&#x{ord(c):x};",
    "html_named": lambda c: f"&{_HTML_NAMES[c]}" if c in _HTML_NAMES else c,
    "html_escaped": lambda c: html.escape(c),
    "percent": lambda c: "".join(f"%{b:02X}" for b in c.encode()),
    "percent_lower": lambda c: "".join(f"%{b:02x}" for b in c.encode()),
}

#: Binary-to-text encodings: (encoder, characters per quantum, bytes per quantum).
BINARY_ENCODERS = {
    "base64": (lambda b: base64.b64encode(b).decode(), 4, 3),
    "base64url": (lambda b: base64.urlsafe_b64encode(b).decode(), 4, 3),
    "base32": (lambda b: base64.b32encode(b).decode(), 8, 5),
    "base32_lower": (lambda b: base64.b32encode(b).decode().lower(), 8, 5),
    "hex": (lambda b: b.hex(), 2, 1),
    "hex_upper": (lambda b: b.hex().upper(), 2, 1),
}
NESTED = (("base64", "base64"), ("base64", "hex"), ("hex", "base64"), ("base32", "base64"),
          ("base64", "base32"))

MAX_WINDOWS = 24  # fragments per value and encoding (a long PEM key is sampled)


def _windows(n: int, m: int) -> range:
    if n < m:
        return range(0)
    return range(0, n - m + 1, max(1, math.ceil((n - m + 1) / MAX_WINDOWS)))


def _binary_fragments(data: bytes, need: int, encoding: str) -> set[str]:
    """Encoded pieces of ``data`` that hold at least ``need`` of its bytes: whole quanta of
    the encoding of ``data`` at every alignment inside a longer encoded text."""
    enc, q, p = BINARY_ENCODERS[encoding]
    out: set[str] = set()
    span = math.ceil(need / p) * q  # characters of enough whole quanta
    for k in range(p):
        text = enc(b"\0" * k + data)
        whole = text.rstrip("=")
        first = q if k else 0  # the first quantum also encodes the padding bytes
        last = (len(data) + k) // p * q  # only whole quanta of the data
        body = whole[first:last]
        for i in _windows(len(body) // q, span // q):
            out.add(body[i * q:i * q + span])
    return {f for f in out if len(f) >= span}


def encoded_fragments(value: str) -> dict[str, set[str]]:
    """encoding -> pieces of ``value`` in that encoding, each showing >= the leak fragment."""
    m = _fragment_size(value)
    raw = value.encode()
    out: dict[str, set[str]] = {"plain": {value[i:i + m] for i in _windows(len(value), m)}}
    for name, enc in CHAR_ENCODERS.items():
        out[name] = {"".join(enc(c) for c in value[i:i + m]) for i in _windows(len(value), m)}
    for name in BINARY_ENCODERS:
        out[name] = _binary_fragments(raw, m, name)
    for inner, outer in NESTED:
        enc, q, p = BINARY_ENCODERS[inner]
        need = math.ceil(m / p) * q + q  # inner characters that surely hold m bytes
        out[f"{outer}({inner})"] = set().union(
            *(_binary_fragments(enc(b"\0" * k + raw).encode(), need, outer) for k in range(p)))
    return out


# ---- views of an artefact (what a reader, a browser or a decoder sees) --------------------------
_ZERO_WIDTH = "".join(S.ZERO_WIDTH) + "\u200e\u200f\u2061\u2062\u2063\u2064"
_FOLD = {ord(g): latin for latin, glyphs in S.HOMOGLYPHS.items() for g in glyphs}
_FOLD.update({c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)})  # fullwidth forms
_FOLD.update({ord(z): None for z in _ZERO_WIDTH})
_BREAK = re.compile(r"(?:\r?\n|(?:\\r)?\\n)[ \t]*[+\->]?")
_DATA_URI = re.compile(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=\s]+")
_STYLE = re.compile(r"<style[^>]*>.*?</style>", re.S)


def _views(body: str) -> list[str]:
    body = _DATA_URI.sub("data:image", _STYLE.sub("", body))  # figures' pixels; template CSS
    out = []
    for view in dict.fromkeys((body, html.unescape(body))):
        folded = view.translate(_FOLD)
        out += [view, folded, _BREAK.sub("", folded)]
    return list(dict.fromkeys(out))


def _strings(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for k, v in obj.items() if k != "image/png" for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


def artefact_texts(path: Path) -> list[str]:
    """The texts of one artefact: the file as written and, for a notebook, its strings
    JSON-decoded; for Parquet, every string cell."""
    if path.suffix == ".parquet":
        frame = pl.read_parquet(path)
        return ["\n".join(str(v) for v in frame[c].to_list() if v is not None)
                for c, t in frame.schema.items() if t == pl.String]
    body = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return [body, "\n".join(_strings(json.loads(body)))]
    return [body]


def planted_in(texts: list[str], fragments: dict[str, dict[str, set[str]]]) -> list[str]:
    """'value as encoding' for every planted fragment in any view of ``texts``."""
    views = [v for text in texts for v in _views(text)]
    found = []
    for value, by_encoding in fragments.items():
        for encoding, frags in by_encoding.items():
            hit = next((f for f in frags if any(f in v for v in views)), None)
            if hit is not None:
                found.append(f"{value[:6]}… as {encoding} ({hit[:40]!r})")
    return found


def find_planted(paths: list[Path], fragments: dict[str, dict[str, set[str]]]) -> list[str]:
    """'file: value as encoding' for every planted fragment in any view of any artefact."""
    return [f"{path.name}: {hit}" for path in paths for hit in planted_in(artefact_texts(path), fragments)]
