"""Values named by a keyword: passwords (``password is``, ``password:``, ``PGPASSWORD=``,
``--password VALUE`` ...), values written in a code fence of their own after the keyword,
and credential keys (``token``, ``secret``, ``api_key``, ``access_key_id``, ``credential``,
``Bearer`` ...) followed by a random-looking value or a piece of one (kind ``secret``): hex
and UUID-shaped keys too after an API-key/token/secret key (unless the key names an id or
a cursor). A value written escaped or encoded (``%XX``, ``\\uXXXX``, base64) is judged by
what it encodes; a query parameter's value ends at the next ``&``.

>>> out = []; _passwords("the password is Velvet-harbor#4821.", out); out
[(16, 34, 'password_in_prose')]
"""

from __future__ import annotations

import re
from functools import lru_cache

from workbench.redaction.normalize import ESCAPED_CHAR, ESCAPES, decode_escapes, has_escape
from workbench.redaction.rules.prefixed import _PREFIX_SCAN
from workbench.redaction.rules.shape import (
    _B32,
    _CODEISH,
    _KEY_CHARS,
    _PLACEHOLDER_PASSWORDS,
    _PLACEHOLDER_WORDS,
    _R_KEY_RIGHT,
    VALUE_TESTS_CACHED,
    Finding,
    _b64_readable,
    _b64_text,
    _classes,
    _clean_value,
    _in_doc_example,
    _path_like,
    _template,
    _weak_placeholder,
    is_placeholder,
    is_wordy,
    placeholder_after_head,
    random_shape,
    shannon,
)
from workbench.redaction.rules.urls import _url_password_piece

_PW_TRIGGERS = ("pass", "Pass", "PASS", "pwd", "Pwd", "PWD")
_PW_CONTINUATIONS = ("word", "wd", "phrase")
_R_PW_KEYWORD = re.compile(r"(?i)(?:pass(?:word|wd|phrase)?|pwd)(?![a-z])")
_R_PW_VALUE = re.compile(
    r"""(?:\\?["'])?[ \t]*"""
    r"""(?:(?::=|=>|->|[:=])"""
    r"""|(?:[ \t]+(?:for|of|on)[ \t]+[\w .@'/-]{1,40}?)?[ \t]+"""
    r"""(?:(?:(?:was|is|has[ \t]+been)[ \t]+)?(?:set|changed|reset|updated)[ \t]+to"""
    r"""|will[ \t]+be|has[ \t]+been|is|was|are)"""
    r"""(?:[ \t]+(?:now|still|currently|just))?[ \t]*:?)"""
    r"""[ \t]*(?:\\?["'`(\[<]){0,2}"""
    rf"""(?P<v>(?:{ESCAPED_CHAR}|[^\s"'`<>\\])+)""",
    re.IGNORECASE)
#: ``--password VALUE`` (also quoted: ``--password 'VALUE'``)
_R_PW_CLI = re.compile(
    rf"""[ \t]+(?:\\?["'])?(?P<v>(?:{ESCAPED_CHAR}|[^\s"'`<>\\-][^\s"'`<>\\]*))""")


def _password_key_ok(key: str) -> bool:
    low = key.lower().lstrip("-")
    if low.endswith("sshpass"):  # (the environment variable sshpass -e reads)
        return True
    for kw in ("password", "passwd", "passphrase"):
        if low.endswith(kw):
            return True
    for kw in ("pass", "pwd", "pw"):
        if low.endswith(kw):
            head = low[: -len(kw)]
            return head == "" or head[-1] in "_.-"
    return False


@lru_cache(maxsize=VALUE_TESTS_CACHED)  # (a pure test of a value: summaries repeat values)
def password_value_ok(v: str) -> bool:
    """Could ``v`` (after a password keyword) be a real password?"""
    if len(v) < 8 or len(v) > 200:
        return False
    if _template(v) or "://" in v or v[0] in "/~." or any(c in v for c in "()[]{}"):
        return False
    low = v.lower()
    if low in _PLACEHOLDER_PASSWORDS or any(w in low for w in _PLACEHOLDER_WORDS):
        return False
    if not any(c.isalpha() for c in v):
        return False
    if _CODEISH.match(v) or _weak_placeholder(v):
        return False
    if any(c.isdigit() or not c.isalnum() for c in v):
        return True
    # letters only: accept long random-looking values (an encoded password), not words
    return len(v) >= 16 and _classes(v) >= 2 and not is_wordy(v) and shannon(v) >= 3.5


def _pw_keywords(view: str, low: str | None = None):
    """Positions of password keywords (``pass``/``pwd`` not followed by other letters,
    except ``password``/``passwd``/``passphrase``) and their trigger length."""
    hay, trigs = (low, ("pass", "pwd")) if low is not None else (view, _PW_TRIGGERS)
    for trig in trigs:
        n = len(trig)
        pos = hay.find(trig)
        while pos != -1:
            nxt = view[pos + n:pos + n + 6]
            if not nxt[:1].isalpha() or (n == 4 and nxt.lower().startswith(_PW_CONTINUATIONS)):
                yield pos, n
            pos = hay.find(trig, pos + n)


_PW_CASES = (("pass", ("pass", "Pass", "PASS")), ("pwd", ("pwd", "Pwd", "PWD")))


def pw_keyword_in(view: str, low: str) -> bool:
    """``any(_pw_keywords(view))`` (the case-sensitive triggers) through ``low``, the view
    ASCII-lowercased: every ``pass``/``pwd`` of ``low`` written as one of the triggers in
    ``view`` (neither word overlaps itself, so a scan of ``low`` meets every occurrence)."""
    for trig, cases in _PW_CASES:
        n = len(trig)
        pos = low.find(trig)
        while pos != -1:
            if view[pos:pos + n] in cases:
                nxt = view[pos + n:pos + n + 6]
                if not nxt[:1].isalpha() or (n == 4 and nxt.lower().startswith(_PW_CONTINUATIONS)):
                    return True
            pos = low.find(trig, pos + n)
    return False


def _passwords(view: str, out: list[Finding], low: str | None = None) -> None:
    seen: set[int] = set()
    for pos, n in _pw_keywords(view, low):
        ks = pos
        while ks > 0 and pos - ks < 64 and view[ks - 1] in _KEY_CHARS:
            ks -= 1
        ke = _R_KEY_RIGHT.match(view, pos + n).end()
        if ke in seen or not _password_key_ok(view[ks:ke]) or view.endswith(("${", "{{"), 0, ks):
            continue  # (a template variable such as ${DB_PASSWORD:-default} names no password)
        seen.add(ke)
        m = _R_PW_VALUE.match(view, ke)
        if m is None and view.startswith("--", ks):
            m = _R_PW_CLI.match(view, ke)
        if m:
            vs, ve = _clean_value(view, m.start("v"), m.end("v"))
            v = view[vs:ve]
            if password_value_ok(v) or has_escape(v) and password_value_ok(_unescaped(v)):
                out.append((vs, ve, "password_in_prose"))
            elif view.startswith(("...", "\\..."), ve) and _password_piece(v):
                out.append((vs, ve, "password_in_prose"))  # cut short by an ellipsis


#: A value written on its own lines inside a code fence right after its keyword (a summary
#: quoting a secret that was split across lines: ``password='`` + fence + two lines).
_R_FENCED_VALUE = re.compile(
    r"(?:(?i:pass(?:word|wd|phrase)?|pwd)[\"']?\s*[:=]\s*|://[^\s:/@]{1,64}:)[\"'`]?[ \t]*"
    r"\n```[A-Za-z]*\n(?P<body>(?:[^\n`]{1,200}\n){1,4})```")


def _fenced_values(view: str, out: list[Finding]) -> None:
    for m in _R_FENCED_VALUE.finditer(view):
        lines = m.group("body").split("\n")[:-1]
        v = "".join(x.strip() for x in lines)
        ok = password_value_ok(v) if "://" not in m.group() else _url_password_piece(v)
        if ok and len(lines) > 1:
            out.append((m.start("body"), m.end("body") - 1, "password_in_prose"
                        if "://" not in m.group() else "url_credentials"))


def _password_piece(v: str) -> bool:
    """The start of a password cut short by an ellipsis: 5-7 characters of mixed classes,
    or longer pieces :func:`password_value_ok` refuses as whole values (mixed-case letters
    only, or 16+ digits: the start of an encoded password); no word, placeholder or
    template."""
    if len(v) < 5 or len(v) > 200 or _template(v) or any(c in v for c in "()[]{}/"):
        return False
    low = v.lower()
    if low in _PLACEHOLDER_PASSWORDS or any(w in low for w in _PLACEHOLDER_WORDS):
        return False
    if _weak_placeholder(v) or _CODEISH.match(v):
        return False
    if len(v) < 8:
        return _classes(v) >= 3
    if v.isdigit():
        return len(v) >= 16
    return v.isalpha() and _classes(v) >= 2 and not is_wordy(v)


# --------------------------------------------------------------------------- generic keys

_GENERIC_TRIGGERS = ("token", "Token", "TOKEN", "secret", "Secret", "SECRET", "api_key",
                     "apiKey", "ApiKey", "API_KEY", "api-key", "apikey", "access_key",
                     "accessKey", "ACCESS_KEY", "credential", "Credential", "CREDENTIAL",
                     "Bearer", "bearer")
_GENERIC_TRIGGERS_LOW = ("token", "secret", "api_key", "apikey", "api-key", "access_key",
                         "accesskey", "credential", "bearer")
_GENERIC_KEY_ENDS = ("token", "secret", "apikey", "accesskey", "secretkey", "privatekey",
                     "credential", "credentials", "bearer", "authtoken", "accesskeyid")
#: Credential keys (lowercase) that anchor a value on the left of a line or message break.
GENERIC_ANCHOR_WORDS = ("token", "secret", "api_key", "apikey", "api-key", "access_key",
                        "access-key", "accesskey", "credential", "bearer")  # (common first)
_R_GENERIC_FILLER = re.compile(r"[^\n:=\"'`\\]{0,60}?(?=[:=])")
_R_BEARER_VALUE = re.compile(r"[ \t]+(?P<v>[A-Za-z0-9+/=_.~-]{8,})")
_HEXISH = re.compile(r"[0-9a-fA-F-]+")


def random_token(v: str) -> bool:
    """A random-looking credential with no known prefix: >= 12 chars with upper, lower and
    digits (or >= 20 with two of them and high entropy); not a word, path, URL, template,
    placeholder, hex digest/UUID or the base64 of readable text."""
    if len(v) < 12 or _template(v) or "://" in v or v[0] in "/~." or _HEXISH.fullmatch(v):
        return False
    if any(c in v for c in "()[]{} ") or _CODEISH.match(v) or is_placeholder(v) \
            or (not v.isalnum() and _path_like(v)):
        return False
    alnum = (any(c.isupper() for c in v) + any(c.islower() for c in v)
             + any(c.isdigit() for c in v))
    if alnum == 2:
        return len(v) >= 20 and shannon(v) >= 3.5 and random_shape(v, loose=True)
    if alnum != 3:
        return False
    return not is_wordy(v) and not _b64_readable(v)


def _unescaped(v: str) -> str:
    """``v`` with every escape of the shared normalization decoded (``%XX``, ``\\uXXXX`` /
    ``\\xXX``, HTML references), or the text a base64 value encodes (a value written
    encoded is judged by what it encodes: a hex key is only hex once decoded, a random key
    only random once decoded)."""
    decoded = v
    for esc in ESCAPES:
        if esc.possible(decoded):
            decoded = decode_escapes(esc, decoded)[0]
    if "%" not in v and len(v) >= 16 and (text := _b64_text(v)) is not None:
        decoded = text
    return decoded


_HEX_KEY_ENDS = ("token", "secret", "apikey", "secretkey")
_R_UUID_START = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{1,4}(?:(?<=-[0-9a-fA-F]{4})-[0-9a-fA-F]{1,4}"
    r"(?:(?<=-[0-9a-fA-F]{4})-[0-9a-fA-F]{1,4}(?:(?<=-[0-9a-fA-F]{4})-[0-9a-fA-F]{1,12})?)?)?")
#: Keys whose UUID values are ids or cursors, not credentials.
_UUID_ID_WORDS = ("page", "next", "cursor", "continuation", "idempotency", "sync", "resume",
                  "request", "client", "session")


def _hex_value_ok(core: str, key: str) -> bool:
    """Hex after a token/secret/API-key keyword: hex keys (with letters and digits, or 24+
    digits: a hex key hex-encoded again), and UUID-shaped keys unless the key names an id."""
    if len(core) < 12 or not key.endswith(_HEX_KEY_ENDS):
        return False
    if "-" in core:  # a UUID, or its start (cut short)
        return bool(_R_UUID_START.fullmatch(core)) and not any(w in key for w in _UUID_ID_WORDS)
    return any(c.isdigit() for c in core) and (any(c.isalpha() for c in core) or len(core) >= 24)


@lru_cache(maxsize=VALUE_TESTS_CACHED)  # (a pure test of a value: summaries repeat values)
def generic_value_ok(v: str, key: str = "") -> bool:
    """A value after a credential keyword (``key``, normalised) that looks like a credential
    or a cut-short piece of one: the keyword vouches for shorter, less mixed values
    (:func:`random_shape` with ``loose``), hex after a token/secret keyword, and base32
    uppercase after an access-key-id keyword."""
    core = v[:-3] if v.endswith("...") else v
    if _PREFIX_SCAN.match(core) or core.startswith(("sk_", "rk_", "SG.")):
        return False  # a known prefix: the prefixed rules judge it
    if placeholder_after_head(core):
        return False
    if random_token(core):
        return True
    if core.isdigit() and len(core) >= 24 and key.endswith(_HEX_KEY_ENDS):
        return not _weak_placeholder(core)  # (a hex key hex-encoded again: digits only)
    if (len(core) < 10 or _template(core) or "://" in core or core[0] in "/~."
            or any(c in core for c in "()[]{} ") or _CODEISH.match(core) or is_placeholder(core)
            or placeholder_after_head(core)):
        return False
    if _HEXISH.fullmatch(core):
        return _hex_value_ok(core, key)
    if key.endswith("keyid") and core.isupper() and core.isalnum() and _B32.issuperset(core):
        body = core[4:] if core.startswith(("AKIA", "ASIA", "ABIA", "ACCA")) else core
        return sum(c in "AEIOUY" for c in body) <= 0.3 * len(body)
    return random_shape(core, loose=True)


#: Heads several credential key words share (``api_key``, ``apikey``, ``api-key``): a text
#: without the head holds none of them, found with one scan instead of one per word.
_KEY_WORD_HEADS = ("api", "access")


def key_words_possible(words: tuple[str, ...], hay: str):
    """The words of ``words``, in order, less those whose head (:data:`_KEY_WORD_HEADS`)
    ``hay`` does not hold (each head looked for once, when a word first needs it)."""
    held: dict[str, bool] = {}
    for w in words:
        head = next((h for h in _KEY_WORD_HEADS if w.startswith(h)), None)
        if head is not None:
            if head not in held:
                held[head] = head in hay
            if not held[head]:
                continue
        yield w


def _generic_keys(view: str, out: list[Finding], low: str | None = None) -> None:
    seen: set[int] = set()
    hay, trigs = (low, _GENERIC_TRIGGERS_LOW) if low is not None else (view, _GENERIC_TRIGGERS)
    for trig in key_words_possible(trigs, hay):
        n = len(trig)
        pos = hay.find(trig)
        while pos != -1:
            ks = pos
            while ks > 0 and pos - ks < 64 and view[ks - 1] in _KEY_CHARS:
                ks -= 1
            ke = _R_KEY_RIGHT.match(view, pos + n).end()
            key = view[ks:ke].lower().replace("_", "").replace("-", "").replace(".", "")
            if ke not in seen and key.endswith(_GENERIC_KEY_ENDS):
                seen.add(ke)
                if key.endswith("bearer"):
                    m = _R_BEARER_VALUE.match(view, ke)
                else:
                    m = _R_PW_VALUE.match(view, ke)
                    if m is None and key.endswith(("credential", "credentials")):
                        # "Credential seen in event 12 (kind): value"
                        f = _R_GENERIC_FILLER.match(view, ke)
                        m = _R_PW_VALUE.match(view, f.end()) if f else None
                if m:
                    vs, ve = m.start("v"), m.end("v")
                    if ks and view[ks - 1] in "?&":  # a query parameter ends at the next one
                        amp = view.find("&", vs, ve)
                        ve = ve if amp == -1 else amp
                    vs, ve = _clean_value(view, vs, ve)
                    if view.startswith("...", ve):
                        ve += 3
                    v = view[vs:ve]
                    if ((generic_value_ok(v, key) or generic_value_ok(_unescaped(v), key))
                            and not _in_doc_example(view, vs, ve)):
                        out.append((vs, ve, "secret"))
            pos = hay.find(trig, pos + n)

