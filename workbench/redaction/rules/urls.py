"""Credentials in URLs: the password of ``scheme://user:PASSWORD@host`` (also when the
URL is cut short after it), a token given as the user (``https://TOKEN@github.com``) and ``PASSWORD@host:port/``, the second half of a URL split
across messages. Scheme, user and host are not secret.

>>> out = []; _url_credentials("postgres://app:Xy7$k;Q9p@db:5432/x", out); out
[(15, 24, 'url_credentials')]
"""

from __future__ import annotations

import re

from workbench.redaction.rules.shape import (
    _CODEISH,
    _PLACEHOLDER_PASSWORDS,
    _PLACEHOLDER_WORDS,
    _TRAIL_PUNCT,
    Finding,
    _classes,
    _template,
    _weak_placeholder,
    is_wordy,
)

_R_SCHEME_REV = re.compile(r"[A-Za-z0-9+.-]{0,30}[A-Za-z]")
_R_USERINFO = re.compile(
    r"(?P<user>[^\s:/?#@\"'<>\[\]{}\\|^`]{0,128}):(?P<pw>[^\s/?#@\"<>\\`]{1,256})@"
    r"(?P<host>[A-Za-z0-9\[_%-])")


def _url_credentials(view: str, out: list[Finding]) -> None:
    pos = view.find("://")
    while pos != -1:
        # scheme just before
        seg = view[max(0, pos - 31):pos][::-1]
        sm = _R_SCHEME_REV.match(seg)
        if sm and sm.end() >= 2:
            m = _R_USERINFO.match(view, pos + 3)
            if m:
                pw, user = m.group("pw"), m.group("user")
                ps, pe = m.start("pw"), m.end("pw")
                if pw.startswith("[BYOK:") and pw.endswith("]"):
                    pw, ps, pe = pw[6:-1], ps + 6, pe - 1  # a marker around the password
                low = pw.lower()
                if (len(pw) >= 3 and not (pw.isdigit() and len(pw) < 24)
                        and low not in _PLACEHOLDER_PASSWORDS
                        and pw != user and not _template(pw) and not _weak_placeholder(pw)):
                    out.append((ps, pe, "url_credentials"))
            elif (t := _R_TOKEN_USER.match(view, pos + 3)) is not None:
                # a token as the user (git: https://TOKEN@github.com/...): letters and
                # digits, no word (x-access-token@ names the scheme of a token, no token)
                tok = t.group("tok")
                if (any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok)
                        and not is_wordy(tok) and not _weak_placeholder(tok)):
                    out.append((t.start("tok"), t.end("tok"), "url_credentials"))
            else:  # cut short: scheme://user:PASSWORD and then the text ends
                m = _R_USERINFO_CUT.match(view, pos + 3)
                if m:
                    vs, ve = m.start("pw"), m.end("pw")
                    while ve > vs and view[ve - 1] in _TRAIL_PUNCT:
                        ve -= 1
                    pw = view[vs:ve]
                    if any(c.isalpha() for c in pw) and _url_password_piece(pw, m.group("user")):
                        out.append((vs, ve, "url_credentials"))
        pos = view.find("://", pos + 3)


_R_TOKEN_USER = re.compile(r"(?P<tok>[A-Za-z0-9_-]{20,256})@(?P<host>[A-Za-z0-9\[_%-])")
_R_USERINFO_CUT = re.compile(
    r"(?P<user>[A-Za-z0-9._~-]{1,64}):(?P<pw>[^\s/?#@\"<>\\`\[\]{}]{4,256}?)"
    r"(?:\.\.\.)?(?=[\s\"'`]|\\[nrt\"]|$)")
_R_PW_TAIL = re.compile(
    r"(?P<pw>[A-Za-z0-9!$&'()*+,;=%~.-]{5,64})@(?P<host>[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|"
    r"\d{1,3}(?:\.\d{1,3}){3})(?::\d{2,5})?/")


_R_AT_HOST = re.compile(r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|\d{1,3}(?:\.\d{1,3}){3})(?::\d{2,5})?/")


def _url_password_piece(pw: str, user: str = "") -> bool:
    """A piece of a URL password (no ``@host`` after it): random-looking, not a port,
    a placeholder, a template or a word."""
    if len(pw) < 5 or pw.isdigit() or pw == user or _template(pw) or _weak_placeholder(pw):
        return False
    low = pw.lower()
    if low in _PLACEHOLDER_PASSWORDS or any(w in low for w in _PLACEHOLDER_WORDS):
        return False
    if pw.isalpha() and (pw.islower() or is_wordy(pw) or len(pw) < 8):
        return False
    return _classes(pw) >= 2 and not is_wordy(pw) and not _CODEISH.match(pw)


def _url_password_tails(view: str, out: list[Finding]) -> None:
    """``PASSWORD@host:port/path`` at a token start: the end of a URL whose start (and
    user) is elsewhere, e.g. the second half of a URL split across messages. An e-mail
    address has no ``:port/`` or ``/`` after its domain and a word for a local part."""
    pos = view.find("@")
    while pos != -1:
        if not _R_AT_HOST.match(view, pos + 1):
            pos = view.find("@", pos + 1)
            continue
        k = pos
        while k > 0 and pos - k < 64 and view[k - 1] not in " \t\n\"`<>[]{}|^\\/:":
            k -= 1
        if k < pos and (k == 0 or view[k - 1] in " \t\n\"`<>[]{}(|"
                         or view.startswith("\\n", k - 2)):
            start = k + 1 if view.startswith("\\n", k - 2) and view[k] == "n" and k else k
            m = _R_PW_TAIL.match(view, start)
            if m and m.end("pw") == pos:
                pw = m.group("pw")
                if (_url_password_piece(pw) and (_classes(pw) >= 3 or any(
                        c in pw for c in "!$&'()*+,;=%"))):
                    out.append((m.start("pw"), m.end("pw"), "url_credentials"))
        pos = view.find("@", pos + 1)

