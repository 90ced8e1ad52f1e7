"""Credentials in HTTP headers: ``Authorization`` in every scheme, and API-key headers.

* ``Authorization: <scheme> <credentials>`` (also ``Proxy-Authorization``; as a raw header
  line, ``-H 'Authorization: ...'``, ``--header=...``, a JSON or Python header map
  ``"Authorization": "..."``): the credentials are the finding (kind
  ``http_authorization``) whatever their shape, because the header vouches for them, unless
  they are a placeholder, a template or a documentation example. Basic, Bearer, Token,
  ApiKey, SSWS and any custom scheme: the token after the scheme (Basic: not when the
  ``user:password`` it encodes has a placeholder password); a value without a scheme: the
  value. Digest: the ``response``; AWS4-HMAC-SHA256: the ``Signature`` (the access key id
  of ``Credential=`` is found by the prefixed rules). Those two are also found without the
  header name (a decoded header value, half a header at a line junction), anchored by
  their neighbours: ``response=`` after ``Digest``/``nonce=``, ``Signature=`` after
  ``AWS4-HMAC-SHA256``/``SignedHeaders=``, and ``X-Amz-Signature=`` in presigned URLs.
* Key headers ``X-...-Key``, ``X-...-Token``, ``X-...-Secret``, ``X-...-Auth`` and
  ``Api-Key``/``Private-Token``/``Ocp-Apim-Subscription-Key``: the value (kind
  ``api_key_header``), hex and UUIDs included; headers that name ids or digests
  (``X-Request-Id``, ``X-Idempotency-Key``, ``X-Cache-Key``) are not credentials.

>>> def find(text):
...     out = []; _headers(text, out, text.lower()); return out
>>> find("Authorization: Basic ZGVwbG95OlRyMHViNGRvciZCeUdpUjE=")
[(21, 53, 'http_authorization'), (21, 53, 'http_authorization')]
>>> find("-H 'X-Api-Key: 4f9a8c2e1b7d3f6a0e5c9b2d8f1a4e7c'")
[(15, 47, 'api_key_header')]
"""

from __future__ import annotations

import re

from workbench.redaction.normalize import ESCAPED_CHAR
from workbench.redaction.rules.shape import (
    _CODEISH,
    _PLACEHOLDER_PASSWORDS,
    _PLACEHOLDER_WORDS,
    DOC_EXAMPLES,
    Finding,
    _b64_text,
    _classes,
    _clean_value,
    _env_reference,
    _in_doc_example,
    _template,
    _weak_placeholder,
    is_wordy,
    placeholder_after_head,
)

#: ``name`` + separator of a header written as a raw line, a curl argument, a JSON or
#: Python map entry (``"Authorization": "``, ``\\"X-Api-Key\\": \\"``) or a YAML key.
_R_HEADER_SEP = re.compile(r"""(?:\\?["'])?[ \t]*(?::|=>|=)[ \t]*(?:\\?["'])?[ \t]*""")
#: A credential token: anything but whitespace, quotes and brackets (``\\uXXXX`` escapes of
#: an encoded value included).
_CRED = rf"""(?:{ESCAPED_CHAR}|[^\s"'`<>\\,;])+"""
_R_CRED = re.compile(_CRED)
#: A scheme name: letters and dashes (AWS4-HMAC-SHA256 aside); a token with digits is a
#: bare credential (``Authorization: QmVhcmVy...``, an encoded header value).
_R_SCHEME = re.compile(r"(AWS4-HMAC-SHA256|[A-Za-z][A-Za-z_-]{1,30})[ \t]+(?=[^\s\"'\\])",
                       re.IGNORECASE)
_R_HEX = re.compile(r"[0-9a-fA-F]{8,}")
_R_PARAM_VALUE = re.compile(r"""(?:\\?["'])?(?P<v>[0-9a-fA-F]{8,})""")
#: The schemes whose credential is not the token after them (their own rules find it).
_PARAM_SCHEMES = ("digest", "aws4-hmac-sha256")
_PARAM_SCHEME_HEADS = ("AWS4-", "DIGEST")  # (a scheme name cut short is no credential)


def _finds(low: str, word: str):
    """Positions of ``word`` (lowercase) in ``low`` (the view, ASCII-lowercased)."""
    pos = low.find(word)
    while pos != -1:
        yield pos
        pos = low.find(word, pos + 1)


def _value_noise(v: str) -> bool:
    """A template, placeholder, documentation text, code, path or URL, not a credential."""
    low = v.lower()
    return (_env_reference(v) or "://" in v
            or v[0] in "/~." or any(c in v for c in "()[]{}") or low in _PLACEHOLDER_PASSWORDS
            or any(w in low for w in _PLACEHOLDER_WORDS) or _weak_placeholder(v)
            or placeholder_after_head(v)
            or bool(_CODEISH.match(v)))


def header_value_ok(v: str) -> bool:
    """Could ``v``, the value of a credential header, be a credential (or a piece of one)?

    The header vouches for the shape (hex, UUIDs, base64 and opaque tokens all count):
    only placeholders, templates, code, words and short or one-class values are refused.
    """
    core = v[:-3] if v.endswith("...") else v
    if len(core) < 8 or len(core) > 4096 or _value_noise(core):
        return False
    if core.isdigit():  # (a hex key hex-encoded again is digits only)
        return len(core) >= 24
    if _classes(core) < 2:
        return len(core) >= 16 and core.isalpha() and not is_wordy(core) and not core.islower()
    return not is_wordy(core) or any(c.isdigit() for c in core)


def _basic_ok(v: str) -> bool:
    """A Basic credential, unless it encodes a placeholder password (``user:password``; a
    cut-short value decodes to a piece of the password, which is no placeholder)."""
    v = v.rstrip(".")
    text = _b64_text(v) if len(v) % 4 == 0 else None
    if text is not None and ":" in text:
        pw = text.split(":", 1)[1]
        if not pw or pw.lower() in _PLACEHOLDER_PASSWORDS or _template(pw) or _weak_placeholder(pw):
            return False
    return True


def _value_end(view: str, vs: int) -> int:
    m = _R_CRED.match(view, vs)
    return m.end() if m else vs


def _doc_example(view: str, vs: int, ve: int) -> bool:
    return view[vs:ve] in DOC_EXAMPLES or _in_doc_example(view, vs, ve)


def _authorization(view: str, out: list[Finding], low: str) -> None:
    for pos in _finds(low, "authorization"):
        ke = pos + 13
        if ke < len(view) and (view[ke].isalnum() or view[ke] == "_"):
            continue  # authorizationCode, authorization_url: another key
        sep = _R_HEADER_SEP.match(view, ke)
        if sep is None or sep.end() == ke:
            continue  # "the authorization header ...": no value follows
        vs = sep.end()
        if view.startswith("[BYOK:", vs):
            vs += 6  # a marker around the value: the value inside still counts
        sm = _R_SCHEME.match(view, vs)
        if sm is None:  # a bare value (no scheme): the credential itself
            if not view[vs:vs + 16].upper().startswith(_PARAM_SCHEME_HEADS):
                _credential(view, vs, "", out, min_len=12)
        elif sm.group(1).lower() not in _PARAM_SCHEMES:  # (their own rule)
            _credential(view, sm.end(), sm.group(1).lower(), out)


def _credential(view: str, vs: int, scheme: str, out: list[Finding], min_len: int = 8) -> None:
    """The credential token at ``vs`` after ``scheme`` (``""``: no scheme), if it is one."""
    ve = _value_end(view, vs)
    vs, ve = _clean_value(view, vs, ve)
    v = view[vs:ve]
    if (ve - vs >= min_len and header_value_ok(v) and (scheme != "basic" or _basic_ok(v))
            and not _doc_example(view, vs, ve)):
        out.append((vs, ve, "http_authorization"))


_R_BASIC = re.compile(r"Basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")


def _basic_credentials(view: str, out: list[Finding]) -> None:
    """``Basic <base64 of user:password>`` without the header name (a decoded header, a log
    line): the base64 must decode to ``user:password`` text."""
    pos = view.find("Basic")
    while pos != -1:
        m = _R_BASIC.match(view, pos)
        if m and (pos == 0 or not view[pos - 1].isalnum()):
            text = _b64_text(m.group(1))
            if text is not None and 0 < text.find(":") < len(text) - 1 and _basic_ok(m.group(1)) \
                    and not _doc_example(view, m.start(1), m.end(1)):
                out.append((m.start(1), m.end(1), "http_authorization"))
        pos = view.find("Basic", pos + 5)


def _line_before(view: str, pos: int, width: int = 400) -> str:
    """The text before ``pos`` on its line (real or JSON-escaped break), lowercased."""
    ls = max(0, pos - width)
    for brk in ("\n", "\\n"):
        p = view.rfind(brk, ls, pos)
        if p != -1:
            ls = max(ls, p + len(brk))
    return view[ls:pos].lower()


def _param_credentials(view: str, out: list[Finding], low: str) -> None:
    """Digest ``response=`` and AWS SigV4 ``Signature=`` values, by their neighbours."""
    for word, anchors in (("response=", ("digest ", "nonce=")),
                          ("signature=", ("aws4-hmac-sha256", "signedheaders=", "x-amz-"))):
        for pos in _finds(low, word):
            m = _R_PARAM_VALUE.match(view, pos + len(word))
            if m is None or (pos and view[pos - 1].isalnum() and word == "response="):
                continue
            before = _line_before(view, pos)
            if not any(a in before for a in anchors):
                continue
            if "akiaiosfodnn7example" in before:
                continue  # the AWS documentation example, whatever its signature
            vs, ve = m.start("v"), m.end("v")
            if ve < len(view) and view[ve].isalnum():
                continue  # not a hex value (runs on into other letters)
            if not _doc_example(view, vs, ve) and not _weak_placeholder(view[vs:ve]):
                out.append((vs, ve, "http_authorization"))


#: Header names that carry a credential without the X- prefix.
_KEY_HEADER_NAMES = frozenset({"api-key", "private-token", "ocp-apim-subscription-key",
                               "x-api-key", "apikey-token", "access-token", "auth-token"})
_KEY_HEADER_ENDS = ("-key", "-token", "-secret", "-auth", "-apikey", "-password", "-passwd")
#: Header names of ids, digests and caches: never credentials.
_NOT_KEY_WORDS = ("idempotency", "cache", "request-id", "trace", "correlation", "public",
                  "content", "page", "cursor", "next", "continuation", "csrf-token-name",
                  "signature-input")
_HEADER_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")


def key_header_name(name: str) -> bool:
    """Is ``name`` a header that carries a credential (``X-Api-Key``, ``X-Vault-Token`` ...)?"""
    low = name.lower()
    if not low.endswith(_KEY_HEADER_ENDS) or any(w in low for w in _NOT_KEY_WORDS):
        return low in _KEY_HEADER_NAMES
    return low.startswith("x-") or low in _KEY_HEADER_NAMES


def _key_headers(view: str, out: list[Finding], low: str) -> None:
    seen: set[int] = set()
    for trig in ("-key", "-token", "-secret", "-auth", "-pass"):
        for pos in _finds(low, trig):
            ne = pos + len(trig)
            while ne < len(view) and view[ne] in _HEADER_NAME_CHARS:
                ne += 1
            if ne in seen:
                continue
            seen.add(ne)
            ns = pos
            while ns > 0 and pos - ns < 64 and view[ns - 1] in _HEADER_NAME_CHARS:
                ns -= 1
            if ns == pos or not key_header_name(view[ns:ne]) or view.endswith("://", 0, ns):
                continue  # (``https://x-access-token:...@``: the user of a URL)
            sep = _R_HEADER_SEP.match(view, ne)
            if sep is None or sep.end() == ne:
                continue
            vs = sep.end()
            ve = _value_end(view, vs)
            vs, ve = _clean_value(view, vs, ve)
            if ve > vs and header_value_ok(view[vs:ve]) and not _doc_example(view, vs, ve):
                out.append((vs, ve, "api_key_header"))


def _headers(view: str, out: list[Finding], low: str) -> None:
    """Every header rule over ``view`` (``low``: :func:`~.shape.ascii_lower` of it)."""
    if "authorization" in low:
        _authorization(view, out, low)
    if "response=" in low or "signature=" in low:
        _param_credentials(view, out, low)
    if "Basic" in view:
        _basic_credentials(view, out)
    if "-" in view:
        _key_headers(view, out, low)


#: Words (lowercase) that anchor a header credential on the left of a line or message break.
HEADER_ANCHOR_WORDS = ("authoriz", "authoris", "-key", "-token", "-secret", "-auth",
                       "response=", "signature=")
