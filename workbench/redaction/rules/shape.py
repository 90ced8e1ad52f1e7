"""Shape tests and allow-lists every rule shares: what a placeholder, a documentation
example, an English-looking identifier, a random credential piece or a template looks like.

Also the vocabulary of the rules (:data:`Finding`, the internal kind of random pieces,
decode depth) and the character-class proxies the token-run pass scans.

>>> is_placeholder("x" * 36), is_placeholder("Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b")
(True, False)
>>> random_shape("rhjvfst8k5i3k8r9"), random_shape("toHaveBeenCalledTimes2")
(True, False)
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from functools import lru_cache

Finding = tuple[int, int, str]

MAX_DEPTH = 2  # decode nesting (a base64 run inside a percent-encoded URL, ...)

#: Internal kind of prefix-less random pieces (reported as ``secret``): a random piece is
#: not joined across line or message breaks (each piece is judged on its own).
RANDOM_KIND = "secret~random"

# --------------------------------------------------------------------------- allow-lists

#: Documentation examples published by vendors: never secrets.
DOC_EXAMPLES = frozenset({
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AKIAI44QH8DHBEXAMPLE",
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
    "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "xoxb-not-a-real-token-this-will-not-work",
    # HTTP authentication examples: RFC 7617 (Basic), RFC 6750 (Bearer), RFC 2617 (Digest
    # response), the AWS Signature Version 4 documentation
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    "dXNlcjpwYXNzd29yZA==",  # user:password
    "mF_9.B5f-4.1JqM",
    "6629fae49393a05397450978507c4ef1",
    "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
})
_PLACEHOLDER_WORDS = ("example", "xxxx", "your", "placeholder", "redacted", "dummy", "sample",
                      "changeme", "replace", "insert", "secret_here", "token_here", "key_here",
                      "****", "....", "<", ">", "${", "{{", "%(")


#: Values whose shape tests are remembered (per process; a summary repeats its values).
VALUE_TESTS_CACHED = 1 << 14


def shannon(s: str) -> float:
    n = len(s)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


@lru_cache(maxsize=VALUE_TESTS_CACHED)  # (a pure test of a value: summaries repeat values)
def is_placeholder(body: str) -> bool:
    """Filler, documentation or template text in the secret part of a token."""
    if body in DOC_EXAMPLES:
        return True
    low = body.lower()
    if any(w in low for w in _PLACEHOLDER_WORDS):
        return True
    core = [c for c in body if c.isalnum()]
    n = len(core)
    if n < 4:
        return True
    if len(set(core)) <= max(3, min(n // 4, 8)):
        return True
    # sequential filler: abcdef..., 0123456789...
    steps = sum(1 for x, y in zip(core, core[1:], strict=False) if ord(y) - ord(x) == 1)
    if steps >= 0.5 * (n - 1):
        return True
    # periodic filler: abc123abc123...
    if n >= 12:
        s = "".join(core)
        p = (s + s).find(s, 1)
        if p <= n // 3:
            return True
    return False


_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWELS = frozenset("aeiouyAEIOUY")


def is_wordy(body: str) -> bool:
    """English-looking identifiers (camelCase, snake_case, paths, CONSTANTS), not random keys.

    Splits the alphanumerics into case/digit segments: words give few long segments with
    English vowel density, random keys many short ones (a 36-char random alphanumeric body
    is never wordy; see the tests for the measured rates).
    """
    core = "".join(c for c in body if c.isalnum())
    if len(core) < 8:
        return False
    letters = [c for c in core if c.isalpha()]
    if len(letters) < 0.5 * len(core):
        return False
    rate = len(_SEGMENT.findall(core)) / len(core)
    vowels = sum(c in _VOWELS for c in letters) / len(letters)
    return rate < 0.2 and vowels >= 0.2


_CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxzBCDFGHJKLMNPQRSTVWXZ]{4,}")
#: Literal heads that every token of a provider shares (published in its documentation):
#: alone, or followed by filler, they are no secret, though they look random.
#: (A Twitter app-only bearer token starts with the zero bytes of its encoded id: 20 or more
#: ``A``, which would read as filler.)
FIXED_HEADS = frozenset({"ATATT3xFfGF0", "pypi-AgEIcHlwaS5vcmc", "cmVmdGtuOjAxOj",
                         "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t", "A" * 20})


def after_fixed_head(value: str) -> str:
    """``value`` without the provider's fixed head it starts with (itself if none)."""
    for head in FIXED_HEADS:
        if value.startswith(head):
            return value[len(head):]
    return value
_R_TOKEN_HEAD = re.compile(r"(?:[A-Za-z0-9]{1,12}[_.~-]){1,3}")
_R_LETTER_HEAD = re.compile(r"[A-Za-z]{2,8}(?![A-Za-z])")


def reads_as_words(body: str) -> bool:
    """Letters only, three or more case segments, each a syllable or more:
    ``DoNotUseThisInProduction``, ``thisIsNotARealToken`` (short words that
    :func:`is_wordy`'s segment rate lets pass; one random lowercase run is no sentence)."""
    if len(body) < 8 or not body.isalpha():
        return False
    segs = _SEGMENT.findall(body)
    return (len(segs) >= 3 and sum(len(x) for x in segs) / len(segs) >= 3
            and sum(len(x) == 1 for x in segs) <= 1
            # each a word: not all capitals, a vowel in every four letters, as English has
            and all(len(x) == 1 or (not x.isupper() and 4 * sum(c in _VOWELS for c in x) >= len(x))
                    for x in segs))


def placeholder_after_head(value: str) -> bool:
    """Filler, or a token head (``lin_api_``, ``v1.0-``, ``sq0atp-``, ``4b1d``) followed by
    filler or documentation words: a placeholder written in a token's shape."""
    rest = after_fixed_head(value)
    if rest is not value:
        return not rest or is_placeholder(rest) or reads_as_words(rest)
    m = _R_TOKEN_HEAD.match(value) or _R_LETTER_HEAD.match(value)
    if m is not None and len(value) - m.end() >= 8:
        rest = value[m.end():]
        if is_placeholder(rest) or reads_as_words(rest):
            return True
    n = _words_tail(value)
    return n >= 14 and len(_R_COMMON_WORD.findall(value, len(value) - n)) >= 2


#: Words that documentation placeholders are made of (``thisIsNotARealToken``,
#: ``DoNotUseThisInProduction``): random letters that happen to read as words hold few.
_R_COMMON_WORD = re.compile(r"(?:[Tt]his|[Nn]ot|[Rr]eal|[Uu]se|[Ii]n|[Pp]roduction|[Hh]ere|[Gg]oes|"
                            r"[Rr]eplace|[Ss]ample|[Dd]ocs|[Oo]nly|[Ff]ake|[Vv]alue|[Tt]oken|[Kk]ey|"
                            r"[Dd]o|[Ii]s|[Tt]he|[Ff]or|[Yy]our)(?=[A-Z]|$)")


_R_CASE_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z](?![a-z])")


def _words_tail(value: str) -> int:
    """Length of the run of syllable-bearing case words that ends ``value``
    (``4b1dDoNotUseThisInProduction`` -> 24): a head glued to documentation words."""
    best = 0
    end = len(value)
    for m in reversed(list(_R_CASE_WORD.finditer(value))):
        w = m.group()
        if m.end() != end or (len(w) > 1 and not any(c in _VOWELS for c in w)):
            break
        end = m.start()
        if reads_as_words(value[end:]):  # (the longest suffix that reads as words)
            best = len(value) - end
    return best


def is_wordy_strict(body: str) -> bool:
    """:func:`is_wordy`, and few 4+ consonant clusters (for letters-only keys)."""
    if not is_wordy(body):
        return False
    letters = sum(c.isalpha() for c in body)
    return len(_CONSONANT_RUN.findall(body)) <= max(1, letters // 20)


def _classes(s: str) -> int:
    return (any(c.isupper() for c in s) + any(c.islower() for c in s)
            + any(c.isdigit() for c in s) + any(not c.isalnum() for c in s))


def secretish(s: str) -> bool:
    """A generic 'looks like a credential' test for content with no known prefix."""
    if len(s) < 10 or any(c.isspace() for c in s) or is_placeholder(s):
        return False
    if _classes(s) >= 3 and not is_wordy(s):
        return True
    return len(s) >= 20 and _classes(s) >= 2 and shannon(s) >= 3.5 and not is_wordy(s)


# Token runs are found on an ASCII proxy of the view (same length: every non-ASCII
# character becomes one "?"), translated to a two-letter alphabet so that the run regex has
# a literal prefix: SRE then scans with its fast literal search, ~3x faster than a class.
_RUN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_RUN_TABLE = bytearray(b" " * 256)
for _c in _RUN_CHARS:
    _RUN_TABLE[_c] = ord("a")
_RUN_TABLE[ord("=")] = ord("b")
_RUN_TABLE = bytes(_RUN_TABLE)
RUN_MIN = 12  # shortest run looked at (prefix-less fragments); prefixed formats need 20
_RUN_PROXY = re.compile(b"a" * RUN_MIN + b"a*b{0,2}")
# a second proxy with the character classes of a run: U(pper) l(ower) d(igit) s(eparator)
_CLS_TABLE = bytearray(b" " * 256)
for _c in range(256):
    ch = chr(_c)
    if "A" <= ch <= "Z":
        _CLS_TABLE[_c] = ord("U")
    elif "a" <= ch <= "z":
        _CLS_TABLE[_c] = ord("l")
    elif "0" <= ch <= "9":
        _CLS_TABLE[_c] = ord("d")
    elif ch in "+/_-":
        _CLS_TABLE[_c] = ord("s")
_CLS_TABLE = bytes(_CLS_TABLE)

# --------------------------------------------------------------------------- base64 text

_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_HEX_RUN = re.compile(r"(?:0x)?([0-9a-fA-F]{20,})")


def _printable_text(raw: bytes) -> str | None:
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not s or not s.replace("\n", "").replace("\r", "").replace("\t", "").isprintable():
        return None
    return s


def _b64_text(run: str) -> str | None:
    """The printable text a base64 run encodes, or None."""
    if len(run) % 4 == 1:
        return None
    has_std = "+" in run or "/" in run
    has_url = "-" in run or "_" in run
    if has_std and has_url:
        return None
    pad = run + "=" * (-len(run) % 4)
    try:
        raw = (base64.urlsafe_b64decode(pad) if has_url else base64.b64decode(pad, validate=True))
    except (binascii.Error, ValueError):
        return None
    return _printable_text(raw)


# --------------------------------------------------------------------------- random shape

#: Ids of agent platforms and registries (``toolu_01...``, ``call_...``, ``msg_...``,
#: ``req_...``, ``agent_msg_...``, ``sha512-...``): a lowercase word (>= 3 letters) then
#: ``_``/``-`` and one random part. Known credential prefixes are matched first.
_R_ID_PREFIX = re.compile(r"[a-z]{3,16}[0-9]{0,3}(?:_[a-z]{2,16}){0,3}[_-][A-Za-z0-9+/]{6,}={0,2}(?![A-Za-z0-9_-])")
_R_PIECE_SPLIT = re.compile(r"[-_./+]+")
_R_WORDISH = re.compile(r"[A-Z]?[a-z]{2,}")
_R_ALNUM_ONLY = re.compile(r"[^A-Za-z0-9]+")
_ID_KEY_ENDS = ("id", "ids", "uuid", "guid", "hash", "digest", "sha", "sha1", "sha256",
                "signature", "sig", "checksum", "etag", "nonce", "cursor", "integrity",
                "encryptedcontent", "ref", "commit", "revision", "version", "fingerprint")
_SECRET_KEY_WORDS = ("key", "secret", "token", "pass", "pwd", "auth", "cred", "bearer")
_B32 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


def _english_piece(w: str) -> bool:
    n = len(w)
    if n < 3:
        return False
    low = w.lower()
    v = (low.count("a") + low.count("e") + low.count("i") + low.count("o") + low.count("u")
         + low.count("y"))
    return 0.25 * n <= v <= 0.75 * n and not _CONSONANT_RUN.search(low)


def _path_like(core: str) -> bool:
    """A path, dotted or dashed identifier: two English-looking pieces, or one of >= 5."""
    words = 0
    for x in _R_PIECE_SPLIT.split(core):
        if len(x) >= 3 and x.isalpha() and (x.islower() or x.isupper() or x.istitle()) \
                and _english_piece(x):
            if len(x) >= 5 or words:
                return True
            words = 1
    return False


def _word_pieces(core: str) -> list[str]:
    """English-looking pieces of ``core``: ``[A-Z]?[a-z]{2,}`` with a word's vowel mix."""
    return [w for w in _R_WORDISH.findall(core) if _english_piece(w)]


def _key_before(view: str, rs: int) -> str:
    """The key a value at ``rs`` is assigned to (``"x-request-id": "VALUE"`` -> ``x-request-id``)."""
    k = rs
    lim = max(0, rs - 8)
    while k > lim and view[k - 1] in " \t\"'=:,\\":
        k -= 1
    if k == rs:
        return ""
    j = k
    while j > 0 and k - j < 48 and view[j - 1] in _KEY_CHARS:
        j -= 1
    return view[j:k]


def _id_key(key: str) -> bool:
    low = key.lower().replace("_", "").replace("-", "").replace(".", "")
    return bool(low) and low.endswith(_ID_KEY_ENDS) and not any(w in low for w in _SECRET_KEY_WORDS)


@lru_cache(maxsize=VALUE_TESTS_CACHED)  # (a pure test of a value: summaries repeat values)
def random_shape(core: str, loose: bool = False) -> bool:
    """Is ``core`` (a token without known prefix) shaped like a random credential or a
    piece of one? Mixed-case alphanumerics with digits; lowercase+digits with letters past
    ``f`` (not hex); base32 uppercase+digits (AWS key ids); with ``loose`` (a credential
    keyword or an ellipsis vouches for it) shorter pieces and mixed-case letters only.

    Rejected: ids with a lowercase-word prefix (``toolu_01...``), paths and dotted or
    dashed identifiers with a word piece, camelCase/snake_case identifiers (segment rate
    and English-looking cover), placeholders, hex, and base64 of readable text.
    """
    if len(core) > 200 or _R_ID_PREFIX.match(core):
        return False
    cls = core.encode("ascii", "replace").translate(_CLS_TABLE)
    up, lo, dg = cls.count(b"U"), cls.count(b"l"), cls.count(b"d")
    n = up + lo + dg
    if n < (10 if loose else 12):
        return False
    plain = n == len(core)  # no separators
    if not plain and _path_like(core):  # word pieces give a path or identifier away
        return False
    if up and lo and dg:
        if up < 2 or lo < 2:
            return False
        alnum = core if plain else _R_ALNUM_ONLY.sub("", core)
    elif lo and dg:
        if dg < (2 if loose else 3):
            return False
        alnum = core if plain else _R_ALNUM_ONLY.sub("", core)
        if sum(c > "f" for c in alnum if c >= "a") < 3:
            return False
    elif up and dg:
        if up < 5 or not (plain or loose):
            return False
        alnum = core if plain else _R_ALNUM_ONLY.sub("", core)
        if not _B32.issuperset(alnum):
            return False
        if not loose and len(_R_DIGITS.findall(alnum)) < 2 \
                and sum(map(alnum.count, "AEIOUY")) > 0.25 * up:
            return False
    elif up and lo and loose:
        if n < 12 or up < 3 or lo < 3:
            return False
        alnum = core if plain else _R_ALNUM_ONLY.sub("", core)
        if is_wordy_strict(alnum):
            return False
    else:
        return False
    # identifiers: few case/digit segments, or much of it English-looking pieces (a
    # lowercase+digit piece switches class less often; letters only need a keyword)
    rate, cover = ((0.2, 0.5) if not up else (0.15, 0.5) if not lo else (0.25, 0.6) if not dg
                   else (0.3, 0.5))
    if len(_SEGMENT.findall(alnum)) < rate * n:
        return False
    words = _word_pieces(core)
    if sum(map(len, words)) > cover * n or sum(len(w) >= 5 for w in words) >= 3:
        return False
    if is_placeholder(core) or shannon(alnum) < min(4.0, math.log2(n) - 0.8):
        return False
    return not _b64_readable(core)


def _b64_readable(run: str) -> bool:
    """Does ``run`` decode to readable ASCII text at some alignment (a piece of base64 may
    start inside a quantum)? Readable: printable ASCII, >= 75% letters and spaces."""
    core = run.rstrip("=")
    for off in range(4):
        seg = core[off:]
        cut = len(seg) // 4 * 4
        if cut < 8:
            break
        text = _b64_text(seg if len(seg) == cut and off == 0 and core == run else seg[:cut])
        if text is not None and text.isascii() and \
                sum(c.isalpha() or c == " " for c in text) >= 0.75 * len(text):
            return True
    return False


_R_DIGITS = re.compile(r"[0-9]+")


def _in_doc_example(view: str, s: int, e: int) -> bool:
    """Is ``view[s:e]`` part of a vendor documentation example (quoted whole or cut short)?"""
    tok = view[s:e].rstrip(".")
    for d, piece in _DOC_PIECES:
        n = len(d)
        if len(tok) <= n and (tok in piece or (d.startswith(tok) and len(tok) > n - len(piece))
                           or view.find(d, max(0, e - n), s + n) != -1):
            return True
        i = d.find(tok) if len(tok) >= 8 else -1
        if i >= 0:  # a piece of the example that the text goes on to complete
            rest = d[i + len(tok):i + len(tok) + 16]
            k = 0
            while k < len(rest) and e + k < len(view) and view[e + k] == rest[k]:
                k += 1
            if rest and k >= min(8 if i else 16, len(rest)):  # (JWTs share a header)
                return True
    return False


#: (example, the part of it a cut-short quote is matched against): every HS256 JWT shares
#: the documentation JWT's header, so a header alone is not "the documentation example".
_DOC_PIECES = tuple((d, d.split(".", 1)[1] if d.startswith("eyJ") else d) for d in DOC_EXAMPLES)


# --------------------------------------------------------------------------- values

_PLACEHOLDER_PASSWORDS = frozenset({
    "password", "pass", "passwd", "pwd", "secret", "changeme", "pw", "p", "xxx", "xxxx",
    "username", "user", "root", "admin", "postgres", "guest", "test", "example", "mypassword",
    "yourpassword", "your_password", "your-password", "token", "apikey", "api_key",
})


def _weak_placeholder(v: str) -> bool:
    """Placeholder test for free-form values (passwords): filler words, <3 distinct chars."""
    low = v.lower()
    if any(w in low for w in _PLACEHOLDER_WORDS) or len(set(v)) <= 2:
        return True
    core = [c for c in v if c.isalnum()]
    steps = sum(1 for x, y in zip(core, core[1:], strict=False) if ord(y) - ord(x) == 1)
    return len(core) >= 4 and steps >= 0.6 * (len(core) - 1)


def _template(v: str) -> bool:
    return (v[:1] in "$<{[" or "{{" in v or "${" in v or "%(" in v or v in ("%s", "%v", "%d")
            or v.startswith(("<%", ":")))


_R_WINDOWS_VAR = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*%")


def _env_reference(v: str) -> bool:
    """A template or an environment reference (``$TOKEN``, ``${TOKEN}``, ``%API_KEY%``)."""
    return _template(v) or bool(_R_WINDOWS_VAR.fullmatch(v))


_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_R_KEY_RIGHT = re.compile(r"[A-Za-z0-9_]*")

_CODEISH = re.compile(
    r"^[A-Za-z_]+(?:\.[A-Za-z_]+)+$"                      # attribute access, no digits
    r"|^(?:self|this|os|process|config|settings|env|args|opts|options|params|request|cfg)\."
    r"|^[A-Z0-9]+(?:_[A-Z0-9]+)+$|^[a-z]+(?:_[a-z]+)+$"   # CONSTANT_NAMES, snake_names
    r"|^(?i:true|false|null|none|nil|undefined|required|optional|str|string)$")
_TRAIL_PUNCT = ".,;:!?)]}'\""


def _clean_value(view: str, vs: int, ve: int) -> tuple[int, int]:
    while ve > vs and view[ve - 1] in _TRAIL_PUNCT:
        ve -= 1
    if ve > vs and view[vs] in "([{":
        vs += 1
    return vs, ve


def ascii_lower(text: str) -> str:
    """``text`` lowercased, every non-ASCII character as one ``?``: same length, so offsets
    carry over (the keywords searched are ASCII; other letters were folded by the
    normaliser). Through bytes: ``str.translate`` is ten times slower."""
    return text.encode("ascii", "replace").lower().decode("ascii")


def _lowered(view: str) -> str | None:
    """``view.lower()`` when that keeps every offset (ASCII), else None."""
    return view.lower() if view.isascii() else None
