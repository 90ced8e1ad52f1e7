"""PEM private keys: whole blocks, blocks cut short, orphaned tails, and armor lines
(``-----BEGIN OPENSSH PRI...``) with the base64 lines next to them."""

from __future__ import annotations

import re

from workbench.redaction.rules.shape import _B64_CHARS, Finding

_R_PEM_HEAD = re.compile(r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_R_PEM_END = re.compile(r"-----END ([A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_R_PEM_BODY = re.compile(
    r"(?:(?:\r?\n|\\r\\n|\\n|[ \t])*[A-Za-z0-9+/=]{1,120}(?=\r?\n|\\[nr]|$|[\"'`\\\-\s]))+")
_PEM_WINDOW = 64_000


def _b64_count(s: str) -> int:
    return sum(c in _B64_CHARS for c in s)


def _pem(view: str, out: list[Finding]) -> None:
    covered_until = -1
    pos = view.find("PRIVATE KEY")
    while pos != -1:
        line_start = view.rfind("-----", max(0, pos - 40), pos)
        if line_start != -1 and line_start >= covered_until:
            hs = line_start
            # BEGIN header?
            m = _R_PEM_HEAD.match(view, hs)
            if m:
                he = m.end()
                endpos = view.find("-----END", he, he + _PEM_WINDOW)
                nxt = view.find("-----BEGIN", he, endpos if endpos != -1 else he + _PEM_WINDOW)
                em = _R_PEM_END.match(view, endpos) if endpos != -1 and nxt == -1 else None
                if em:
                    body = view[he:endpos]
                    if not _pem_placeholder(body):
                        out.append((hs, em.end(), "pem_private_key"))
                        covered_until = em.end()
                else:  # truncated block: header + following base64 lines
                    bm = _R_PEM_BODY.match(view, he)
                    if bm and not _pem_placeholder(bm.group()):
                        out.append((hs, bm.end(), "pem_private_key"))
                        covered_until = bm.end()
            else:
                em = _R_PEM_END.match(view, line_start)
                if em:  # orphaned tail: base64 lines then END
                    start = _pem_tail_start(view, line_start)
                    if _b64_count(view[start:line_start]) >= 16:
                        out.append((start, em.end(), "pem_private_key"))
                        covered_until = em.end()
        pos = view.find("PRIVATE KEY", pos + 11)


def _pem_placeholder(body: str) -> bool:
    core = [c for c in body if c in _B64_CHARS]
    body = body.rstrip().rstrip(".").rstrip()  # a cut-short body ends in an ellipsis
    return len(core) < 32 or len(set(core)) <= 8 or "..." in body or "EXAMPLE" in body


#: A private-key PEM header or footer line, possibly cut short (``-----BEGIN OPENSSH PRI...``):
#: the armor names a key that was there, and the summary quoting it leaks its first line.
_R_PEM_ARMOR = re.compile(
    r"-----(?:BEGIN|END) (?:(?:RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?"
    r"(?:PRIVATE KEY(?: BLOCK)?-{0,5}|PR(?:I(?:V(?:A(?:T(?:E(?: (?:K(?:EY?)?)?)?)?)?)?)?)?"
    r"(?=\.\.\.|$|\\n|\n)"
    r"|(?:OPENSSH|ENCRYPTED)(?= ?(?:\.\.\.|$|\\n|\n)))(?:\.\.\.)?")


def _pem_armor(view: str, out: list[Finding]) -> None:
    """Private-key armor lines (whole or cut short) and the base64 lines next to them: the
    body after a header, the body before a footer."""
    for tag in ("-----BEGIN ", "-----END "):
        pos = view.find(tag)
        while pos != -1:
            m = _R_PEM_ARMOR.match(view, pos)
            if m:
                s, e = pos, m.end()
                if tag == "-----END ":
                    st = _pem_tail_start(view, pos)
                    if _b64_count(view[st:pos]) >= 16:
                        s = st
                else:
                    bm = _R_PEM_BODY.match(view, e)
                    if bm and _b64_count(bm.group()) >= 16:
                        e = bm.end()
                        while view.startswith(".", e):
                            e += 1
                out.append((s, e, "pem_private_key"))
            pos = view.find(tag, pos + 5)


def _pem_tail_start(view: str, end_line: int) -> int:
    start = end_line
    pos = end_line
    first = True
    while True:
        k = pos
        if view.startswith("\\n", k - 2):
            k -= 2
            if view.startswith("\\r", k - 2):
                k -= 2
        elif k >= 1 and view[k - 1] == "\n":
            k -= 1
            if k >= 1 and view[k - 1] == "\r":
                k -= 1
        elif not first:
            break
        while k > 0 and view[k - 1] in " \t":
            k -= 1
        j = k
        while j > 0 and k - j < 120 and view[j - 1] in _B64_CHARS:
            j -= 1
        if j >= 1 and view[j - 1] == "\\" and j < k and view[j] in "nr":
            j += 1  # the n of a JSON \n escape belongs to the line break
        if j == k:
            break
        start = pos = j
        first = False
    return start
