"""Prefix-less credentials found by shape alone: AWS secret access keys (40 characters,
mixed case, high entropy), pieces of Slack tokens (long digit groups) and random pieces of
any credential (:func:`~workbench.redaction.rules.shape.random_shape`), each unless its
context says otherwise (the value of an id/digest key, a documentation example, a line of
a wrapped base64 block).
"""

from __future__ import annotations

import re

from workbench.redaction.rules.shape import (
    _B64_CHARS,
    DOC_EXAMPLES,
    _b64_text,
    _id_key,
    _in_doc_example,
    _key_before,
    is_placeholder,
    is_wordy,
    random_shape,
    shannon,
)


def _line_is_b64_block(view: str, rs: int, re_: int) -> bool:
    """Is the run one line of a wrapped base64 block (PEM/cert body, base64 -w 64 output)?"""
    # previous line
    k = rs
    if view.startswith("\\n", k - 2):
        k -= 2
    elif k >= 1 and view[k - 1] == "\n":
        k -= 1
        if k >= 1 and view[k - 1] == "\r":
            k -= 1
    else:
        k = -1
    if k > 0:
        j = k
        while j > 0 and k - j < 80 and view[j - 1] in _B64_CHARS:
            j -= 1
        if k - j >= 60 or (j == k and view.endswith("-----", 0, k)):
            return True  # a full base64 line or an armor line before
    elif rs >= 1 and view[rs - 1] == " ":  # a block flattened onto one line
        k = rs - 1
        j = k
        while j > 0 and k - j < 80 and view[j - 1] in _B64_CHARS:
            j -= 1
        if k - j >= 60 or view.endswith("-----", 0, k):
            return True
    # next lines: a full base64 line, or short ones down to an armor line
    k = re_
    for _ in range(64):
        flat = False
        if view.startswith("\\n", k):
            k += 2
        elif view.startswith("\n", k):
            k += 1
        elif view.startswith("\r\n", k):
            k += 2
        elif view.startswith(" ", k):
            k += 1
            flat = True
        else:
            return False
        j = k
        while j < len(view) and j - k < 80 and view[j] in _B64_CHARS:
            j += 1
        if j - k >= 60 or view.startswith("-----END", j):
            return True
        if j == k or flat:
            return False
        k = j
    return False


def _aws_secret(view: str, rs: int, re_: int) -> bool:
    tok = view[rs:re_]
    if len(tok) != 40 or "_" in tok or "-" in tok:
        return False
    up = sum(c.isupper() for c in tok)
    lo = sum(c.islower() for c in tok)
    dg = sum(c.isdigit() for c in tok)
    if up < 3 or lo < 3 or dg < 1 or tok.count("/") > 4:
        return False
    if tok in DOC_EXAMPLES or is_placeholder(tok) or shannon(tok) < 4.2:
        return False
    if is_wordy(tok.replace("/", "").replace("+", "")):
        return False
    if _b64_text(tok) is not None:  # base64 of readable text: the decoder handles it
        return False
    return not _line_is_b64_block(view, rs, re_)


#: A piece of a Slack token without its ``xox?-`` prefix: two long digit groups (team,
#: user/bot or app ids), or a long digit group and the 32-hex tail of a user token.
_R_SLACK_PIECE = re.compile(
    r"[a-z]{0,3}-?(?:\d{1,13}-)*\d{9,13}-\d{9,13}(?:-\d{1,13})?(?:-[A-Za-z0-9]{0,32})?-?"
    r"|-?(?:\d{1,13}-)?\d{6,13}-[0-9a-f]{32}")


def _random_run(view: str, rs: int, re_: int) -> bool:
    """A prefix-less random run (a piece of a credential), not an id, digest or blob line.

    Base64 padding (``=``) marks encoded data (digests, integrity hashes, key bodies,
    encoded text), never a piece of a token format."""
    if view[re_ - 1] == "=":
        return False
    core_s, core_e = rs, re_
    while core_e > core_s and view[core_e - 1] in "+/_-":
        core_e -= 1
    while core_s < core_e and view[core_s] in "+/_-":
        core_s += 1
    return random_shape(view[core_s:core_e]) and _piece_context_ok(view, rs, re_)


def _piece_context_ok(view: str, rs: int, re_: int) -> bool:
    """Context of a prefix-less piece: not the value of an id/digest key, not part of a
    documentation example, not a line of a base64 block."""
    return not (_id_key(_key_before(view, rs)) or _in_doc_example(view, rs, re_)
                or _line_is_b64_block(view, rs, re_) or (rs and view[rs - 1] == "%"))

