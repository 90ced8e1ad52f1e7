"""Redaction markers that leak: ``<REDACTED:kind>`` followed by the raw tail of a secret,
and ``[BYOK:...]`` wrapping secret-shaped content (kind ``marker_leak``). The harness's
own markers alone are never findings."""

from __future__ import annotations

import re
from collections.abc import Callable

from workbench.redaction.rules.shape import Finding, _clean_value, _path_like, secretish

_R_MARKER = re.compile(r"<REDACTED:([A-Za-z0-9_]{1,40})>")
#: A raw tail glued to a marker; ``:`` only inside it (``<REDACTED:x>8:ba01b5d3``, a key in
#: two halves); ``@`` only when no host follows (``@db.internal:5432/`` is
#: the rest of a URL whose password was redacted; ``...@058.`` ends a sentence).
_R_MARKER_TAIL = re.compile(
    r"(?:[A-Za-z0-9+/=_.~!$&'()*,;%#^-]|@(?![A-Za-z0-9-]+[.:/][A-Za-z0-9])"
    r"|:(?=[A-Za-z0-9]))+")
_R_BYOK = re.compile(r"\[BYOK:([^\]]{1,20000})\]")
_R_BYOK_OPEN = re.compile(r"\[BYOK:([^\s\]]{1,4096})")
_MARKER_BEFORE = re.compile(r"<REDACTED:[A-Za-z0-9_]{1,40}>$")
KNOWN_KINDS = frozenset({
    "aws_access_key_id", "aws_secret_key", "github_classic", "github_fine_grained", "gitlab_pat",
    "openai_project", "openai_legacy", "anthropic_api", "slack_token", "stripe_key",
    "google_api_key", "jwt", "pem_private_key", "huggingface", "npm", "sendgrid",
    "url_credentials", "password_in_prose", "marker_leak", "secret",
    "http_authorization", "api_key_header", "cli_password",
})


_R_NEXT_PARAM = re.compile(r"&[A-Za-z_][A-Za-z0-9_.-]*=")


def marker_tail_end(view: str, pos: int) -> int:
    """End of a raw secret tail glued to a marker ending at ``pos`` (``pos`` if none)."""
    m = _R_MARKER_TAIL.match(view, pos)
    if not m:
        return pos
    vs, ve = _clean_value(view, m.start(), m.end())
    if vs != pos:
        return pos
    tail = view[vs:ve]
    q = _R_NEXT_PARAM.search(tail)
    if q is not None:  # (a query string goes on: ``<REDACTED:x>&limit=500``)
        tail, ve = tail[:q.start()], vs + q.start()
    if tail.startswith("/") and _path_like(tail):
        return pos  # the rest of a path (``Credential=<REDACTED:...>/20260314/us-east-1/s3``)
    if len(tail) >= 4 and sum(c.isalnum() for c in tail) >= 3:
        return ve
    return pos


def _markers(view: str, out: list[Finding], depth: int,
             find: Callable[..., list[Finding]]) -> None:
    """Marker findings; ``find`` scans the content of a ``[BYOK:...]`` (the driver's ``_find``)."""
    pos = view.find("<REDACTED:")
    while pos != -1:
        m = _R_MARKER.match(view, pos)
        if m:
            te = marker_tail_end(view, m.end())
            if te > m.end():
                kind = m.group(1) if m.group(1) in KNOWN_KINDS else "secret"
                out.append((pos, te, kind))
        pos = view.find("<REDACTED:", pos + 10)
    pos = view.find("[BYOK:")
    while pos != -1:
        m = _R_BYOK.match(view, pos) or _R_BYOK_OPEN.match(view, pos)
        if m:
            content = m.group(1)
            if secretish(content.strip()) or find(content, depth + 1, junctions=False):
                out.append((pos, m.end(), "marker_leak"))
        pos = view.find("[BYOK:", pos + 6)

