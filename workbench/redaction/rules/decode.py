"""Encoded text: clusters of every character escape of
:data:`workbench.redaction.normalize.ESCAPES` (``%XX``, ``\\uXXXX`` / ``\\xXX``, HTML
references) decoded with exact offset maps, and base64 / base32 / hex runs (also cut
short, decoded from their start when they could encode ASCII
text). The decoded text is scanned again (``find_text``, one level deeper); a finding in a
base64 or hex run redacts the whole run."""

from __future__ import annotations

import re
from collections.abc import Callable

from workbench.redaction.normalize import ESCAPES, b32_bytes, decode_escapes
from workbench.redaction.rules.shape import _HEX_RUN, Finding, _b64_text, _printable_text

#: The scan of a decoded text (``find_text(text, depth)``), given by the driver.
FindText = Callable[[str, int], list[Finding]]

_URL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                      "-._~!$&'()*+,;=:@/?")


def _clusters(view: str, pattern: re.Pattern, max_gap: int, min_hits: int):
    start = end = -1
    hits = 0
    for m in pattern.finditer(view):
        s, e = m.span()
        if hits and s - end <= max_gap and all(c in _URL_SAFE for c in view[end:s]):
            end = e
            hits += 1
            continue
        if hits >= min_hits:
            yield start, end
        start, end, hits = s, e, 1
    if hits >= min_hits:
        yield start, end


#: Characters a value written with some of its characters escaped keeps literal (the
#: cluster around an HTML reference, ``ghp&lowbar;Q7wE...``, is widened over them).
_LITERAL_TOKEN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_.~-")


def _decode_runs(view: str, out: list[Finding], depth: int, find_text: FindText) -> None:
    for esc in ESCAPES:
        if not esc.possible(view):
            continue
        for s, e in _clusters(view, esc.pattern, esc.max_gap, esc.min_hits):
            if esc.name == "percent":
                # widen to the surrounding URL-ish characters (key names, the rest of a URL)
                while s > 0 and e - s < 20000 and view[s - 1] in _URL_SAFE and view[s - 1] != "?":
                    s -= 1
                while e < len(view) and view[e] in _URL_SAFE and view[e] != "&":
                    e += 1
            elif esc.name == "html_reference":
                while s > 0 and e - s < 20000 and view[s - 1] in _LITERAL_TOKEN:
                    s -= 1
                while e < len(view) and view[e] in _LITERAL_TOKEN:
                    e += 1
            if view.startswith("\u2026", e):  # a copy cut short: the decoded text says so too
                e += 1
            elif view.startswith("...", e):
                e += 3
            dec, dmap = decode_escapes(esc, view, s, e)
            for a, b, k in find_text(dec, depth + 1):
                out.append((*dmap.span(a, b), k))


#: The first character of every base64 quantum of ASCII text (a byte 0x20-0x7f, or a
#: tab/newline): indexes 2 and 8-31. Hex of ASCII text: a high nibble 2-7 every 2 digits.
_ASCII_B64_FIRST = frozenset("CIJKLMNOPQRSTUVWXYZabcdef")
_ASCII_HEX_HIGH = frozenset("234567")


def _decode_hex(view: str, rs: int, re_: int, out: list[Finding], depth: int,
                find_text: FindText) -> None:
    """Decode a hex run (a cut-short one from its start, as a reader would) and scan the
    text it encodes; a finding there redacts the whole run."""
    h = _HEX_RUN.fullmatch(view, rs, re_).group(1)
    if len(h) < 20:
        return
    if (len(h) < 32 or len(h) % 2) and not _ASCII_HEX_HIGH.issuperset(h[0:16:2]):
        return  # a cut-short run must at least start like ASCII text
    text = _printable_text(bytes.fromhex(h[:len(h) // 2 * 2]))
    if text is not None:
        found = find_text(text, depth + 1)
        if found:
            out.append((rs, re_, found[0][2]))


def _decode_b64(view: str, rs: int, re_: int, out: list[Finding], depth: int,
                find_text: FindText) -> None:
    """Decode a mixed-case base64 run (a cut-short one from its start) and scan the text."""
    run = view[rs:re_]
    n = len(run)
    if n % 4 or n < 24:
        cut = len(run.rstrip("=")) // 4 * 4
        if cut < 16 or "=" in run[:cut] or not _ASCII_B64_FIRST.issuperset(run[0:cut:4]):
            return  # a cut-short run must at least start like ASCII text
        run = run[:cut]
    text = _b64_text(run)
    if text is not None:
        found = find_text(text, depth + 1)
        if found:
            out.append((rs, re_, found[0][2]))



_R_B32 = re.compile(r"(?:[A-Z2-7]{16,}|[a-z2-7]{16,})=*")


def _decode_b32(view: str, rs: int, re_: int, out: list[Finding], depth: int,
                find_text: FindText) -> None:
    """Decode a single-case base32 run (``_R_B32``, checked by the caller; a cut-short one
    from its start) and scan the text it encodes; a finding there redacts the whole run."""
    raw = b32_bytes(view[rs:re_])
    text = None if raw is None or len(raw) < 8 else _printable_text(raw)
    if text is not None:
        found = find_text(text, depth + 1)
        if found:
            out.append((rs, re_, found[0][2]))
