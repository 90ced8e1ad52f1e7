"""Span detectors for every secret format, run over detection views.

:func:`scan` returns ``(start, end, kind)`` findings in the coordinates of the text it is
given. It works in passes designed for throughput on transcript text (most of which holds
no secret at all):

1. :func:`~workbench.redaction.normalize.normalize` (free for ASCII text);
2. one regex pass over *runs* of token characters ``[A-Za-z0-9+/_-]{12,}``: a literal-prefix
   search inside each run finds AWS/GitHub/GitLab/OpenAI/Anthropic/Slack/Stripe/Google/JWT/
   Hugging Face/npm candidates, whole or *cut short* (a known prefix with a shorter body,
   as a summary quoting half a key writes it: :func:`_truncated`); the same runs feed the
   prefix-less AWS secret key check (exactly 40 characters, mixed case, high entropy, not
   a line of a base64 block, not decodable text), the decoders (base64 / hex runs, also
   cut short, are decoded from their start when they could encode ASCII text, and the
   text is scanned recursively), pieces of Slack tokens (long digit groups), and the
   *random pieces* rule (:func:`random_shape`): a prefix-less run shaped like part of a
   credential (mixed case with digits; lowercase+digits beyond hex; base32 uppercase with
   digits) that is not an id (``toolu_01...``), a path or identifier (word pieces, case
   segments), hex, base64 of readable text or padded base64, a placeholder, the value of
   an id/digest key, part of a documentation example or a line of a base64 block;
3. a few literal searches: ``PRIVATE KEY`` (PEM blocks, truncated blocks and orphaned
   tails) and private-key armor lines, whole or cut short, with their adjacent body lines;
   ``SG.`` (SendGrid, whole or cut short); ``://`` (URL userinfo: only the password is a
   finding, also when the URL is cut short after it) and ``@`` (``PASSWORD@host:port/``,
   the second half of a URL split across messages); ``pass``/``pwd`` keywords (the value
   after ``password is``/``password:``/``PGPASSWORD=`` ..., or its start before an
   ellipsis), ``<REDACTED:`` (a marker followed by the raw tail of a secret) and
   ``[BYOK:`` (a marker wrapping secret-shaped content: kind ``marker_leak``); credential
   keywords (``token``, ``secret``, ``api_key``, ``access_key_id``, ``credential``,
   ``Bearer`` ...) followed by a random-looking value or a piece of one (kind ``secret``),
   and secrets cut short by an ellipsis (``ghp_Q7wE9r...``, ``...=Zq8xR2mN4v...``, as
   summaries quote them);
4. ``%XX`` and ``\\uXXXX`` clusters, decoded with exact offset maps and rescanned;
5. line junctions: where a line break (real or JSON-escaped) separates two token runs, the
   tail of the line and the head of the next are joined and rescanned, so a secret split
   across lines is found (both halves).

Boundaries are explicit: a prefix must not follow a letter or digit (a JSON ``\\n`` escape
is fine) and fixed-shape tokens must not run on into more token characters, but any
punctuation may follow (``. , ) ] > " ' `` `` ` ``). Documentation examples, placeholders
(``xxxx``, ``YOUR_KEY``, repeated or sequential filler), templates and English-looking
identifiers are rejected, so the hard negatives of ``workbench.synth.secrets`` never match.

>>> scan("export GITHUB_TOKEN=ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY1z2A" + ".")
[(20, 60, 'github_classic')]
>>> scan("see AKIAIOSFODNN7EXAMPLE and ghp_" + "x" * 36)
[]
>>> scan("- 1iigMUoIoLDPuBopdcpLeoxtOcLn (half a key), toolu_01VzQ2DNRY9oieQdcxz6kpn9")
[(2, 30, 'secret')]
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

from workbench.redaction.normalize import (
    SegmentMap,
    ShiftMap,
    ViewMap,
    WholeMap,
    normalize,
    percent_decode,
    unicode_unescape,
)

Finding = tuple[int, int, str]

MAX_DEPTH = 2  # decode nesting (a base64 run inside a percent-encoded URL, ...)

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
})
_PLACEHOLDER_WORDS = ("example", "xxxx", "your", "placeholder", "redacted", "dummy", "sample",
                      "changeme", "replace", "insert", "secret_here", "token_here", "key_here",
                      "****", "....", "<", ">", "${", "{{", "%(")


def shannon(s: str) -> float:
    n = len(s)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


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


# --------------------------------------------------------------------------- prefixed rules

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


def _runs(view: str):
    """Spans of maximal ``[A-Za-z0-9+/_-]{12,}={0,2}`` runs of ``view``."""
    proxy = view.encode("ascii", "replace").translate(_RUN_TABLE)
    return (m.span() for m in _RUN_PROXY.finditer(proxy))
_PREFIX = re.compile(
    r"AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|sk-|[sr]k_(?:live|test)_|"
    r"xox[abposr]-|AIza|eyJ|hf_|npm_"
)
#: Every known prefix, searched inside token runs. Written so that SRE scans fast (a
#: leading group of the four-letter ``A...`` literals; ``[sr]k_`` found by its ``k_``).
_PREFIX_SCAN = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA|AIza)|gh[pousr]_|github_pat_|glpat-|sk-|"
                          r"k_(?:live|test)_|xox[aboprs]-|eyJ|hf_|npm_")


_TAIL_ALNUM = r"(?![A-Za-z0-9])"
_TAIL_WORD_DASH = r"(?![A-Za-z0-9_-])"

_R_AWS_ID = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _TAIL_ALNUM)
_R_GH = re.compile(r"gh[pousr]_[A-Za-z0-9]{30,255}" + _TAIL_ALNUM)
_R_GH_FINE = re.compile(r"github_pat_[A-Za-z0-9_]{60,255}" + _TAIL_ALNUM)
_R_GITLAB = re.compile(r"glpat-[A-Za-z0-9_-]{20,255}" + _TAIL_WORD_DASH)
_R_ANTHROPIC = re.compile(r"sk-ant-(?:api|admin|sid|oat|ort)\d{2}-[A-Za-z0-9_-]{32,255}"
                          + _TAIL_WORD_DASH)
_R_OPENAI = re.compile(r"sk-(?:(proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,255}" + _TAIL_WORD_DASH)
_R_SLACK = re.compile(r"xox[abposr]-\d{6,20}-[A-Za-z0-9-]{10,200}" + _TAIL_WORD_DASH)
_R_STRIPE = re.compile(r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,255}" + _TAIL_ALNUM)
_R_GOOGLE = re.compile(r"AIza[A-Za-z0-9_-]{30,45}" + _TAIL_WORD_DASH)
_R_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]+)?"
                    + _TAIL_WORD_DASH)
_R_HF = re.compile(r"hf_[A-Za-z0-9]{30,255}" + _TAIL_ALNUM)
_R_NPM = re.compile(r"npm_[A-Za-z0-9]{36,255}" + _TAIL_ALNUM)
_R_SENDGRID = re.compile(r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}" + _TAIL_WORD_DASH)


def _left_ok(view: str, pos: int) -> bool:
    """A token may start here: not glued to a preceding letter/digit (JSON escapes are ok)."""
    if pos == 0:
        return True
    c = view[pos - 1]
    if not (c.isascii() and c.isalnum()):
        return True
    return pos >= 2 and view[pos - 2] == "\\" and c in "ntr"


def _jwt_ok(tok: str) -> bool:
    head = tok.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return raw[:2] == b'{"' and raw.isascii()


def _prefixed(view: str, pos: int) -> tuple[int, str] | None:
    """Match a prefixed format at ``pos``: (end, kind) or None."""
    c0 = view[pos]
    if c0 == "A":
        if view.startswith("AIza", pos):
            m = _R_GOOGLE.match(view, pos)
            if m and not is_placeholder(m.group()[4:]) and not is_wordy(m.group()[4:]):
                return m.end(), "google_api_key"
            return None
        m = _R_AWS_ID.match(view, pos)
        if m and not is_placeholder(m.group()[4:]) and m.group() not in DOC_EXAMPLES:
            return m.end(), "aws_access_key_id"
        return None
    if c0 == "g":
        if view.startswith("github_pat_", pos):
            m = _R_GH_FINE.match(view, pos)
            if m and not is_placeholder(m.group()[11:]) and not is_wordy(m.group()[11:]):
                return m.end(), "github_fine_grained"
            return None
        if view.startswith("glpat-", pos):
            m = _R_GITLAB.match(view, pos)
            if m and not is_placeholder(m.group()[6:]) and not is_wordy(m.group()[6:]):
                return m.end(), "gitlab_pat"
            return None
        m = _R_GH.match(view, pos)
        if m and not is_placeholder(m.group()[4:]) and not is_wordy(m.group()[4:]) \
                and m.group() not in DOC_EXAMPLES:
            return m.end(), "github_classic"
        return None
    if c0 == "s" or c0 == "r":
        if view.startswith("sk-ant-", pos):
            m = _R_ANTHROPIC.match(view, pos)
            if m and not is_placeholder(m.group()[14:]):
                return m.end(), "anthropic_api"
            return None
        if view.startswith("sk-", pos):
            m = _R_OPENAI.match(view, pos)
            if not m:
                return None
            tok = m.group()
            body = tok[3 + (len(m.group(1)) + 1 if m.group(1) else 0):]
            if is_placeholder(body):
                return None
            if "T3BlbkFJ" in body or (len(body) >= 32 and not is_wordy(body)
                                      and _classes(body) >= 3 and shannon(body) >= 4.0):
                return m.end(), ("openai_project" if m.group(1) else "openai_legacy")
            return None
        m = _R_STRIPE.match(view, pos)
        if m and not is_placeholder(m.group()[8:]) and not is_wordy(m.group()[8:]) \
                and m.group() not in DOC_EXAMPLES:
            return m.end(), "stripe_key"
        return None
    if c0 == "x":
        m = _R_SLACK.match(view, pos)
        if m and not is_placeholder(m.group()[5:]) and len(m.group()) >= 30:
            return m.end(), "slack_token"
        return None
    if c0 == "e":
        m = _R_JWT.match(view, pos)
        if m and _jwt_ok(m.group()) and m.group() not in DOC_EXAMPLES:
            return m.end(), "jwt"
        return None
    if c0 == "h":
        m = _R_HF.match(view, pos)
        if m and not is_placeholder(m.group()[3:]) and not is_wordy_strict(m.group()[3:]):
            return m.end(), "huggingface"
        return None
    if c0 == "n":
        m = _R_NPM.match(view, pos)
        if m:  # lowercase+digit bodies look wordy by chance: ask for both letters and digits
            body = m.group()[4:]
            if not is_placeholder(body) and any(c.isdigit() for c in body) \
                    and sum(c.isalpha() for c in body) >= 8:
                return m.end(), "npm"
        return None
    return None


# --------------------------------------------------------------------------- truncated

# A known prefix with a body shorter than the format's (a summary quoting half a key, a
# secret split across messages): ``(prefix regex, body regex, min body, kind, test)``. The
# minimum makes the piece a leak by the evaluations' criterion (>= 12 characters or >= 50%
# of the secret) while a bare prefix, as documentation writes it (``ghp_/gho_``), is not.
_R_TRUNC_BODY_ALNUM = re.compile(r"[A-Za-z0-9]*")
_R_TRUNC_BODY_WORD = re.compile(r"[A-Za-z0-9_]*")
_R_TRUNC_BODY_WORD_DASH = re.compile(r"[A-Za-z0-9_-]*")
_R_TRUNC_BODY_LETTERS = re.compile(r"[A-Za-z]*")
_R_TRUNC_BODY_LOWER = re.compile(r"[a-z0-9]*")
_R_TRUNC_BODY_UPPER = re.compile(r"[A-Z0-9]*")
_R_TRUNC_BODY_SLACK = re.compile(r"[A-Za-z0-9-]*")
_R_ANT_HEAD = re.compile(r"sk-ant-(?:api|admin)(?:\d\d-|\d{0,2}(?=\.\.\.|[^A-Za-z0-9_-]|$))")
_R_OPENAI_HEAD = re.compile(r"sk-(?:proj|svcacct|admin)-")
_TRUNC_STOP = re.compile(r"[A-Za-z0-9]")


def _body_ok(body: str, min_len: int) -> bool:
    if len(body) < min_len:
        return False
    if len(body) >= 4 and is_placeholder(body):
        return False
    if len(body) < 4 and (len(set(body.lower())) < len(body) or "x" in body.lower()):
        return False  # too short for is_placeholder: "xx", "00"
    return not any(w in body.lower() for w in ("xxx", "***", "your", "example"))


def _truncated(view: str, ps: int) -> tuple[int, str] | None:
    """A known prefix at ``ps`` followed by a cut-short body: ``(end, kind)`` or None."""
    c0 = view[ps]
    if c0 == "A":
        if view.startswith("AIza", ps):
            e = _R_TRUNC_BODY_WORD_DASH.match(view, ps + 4).end()
            body = view[ps + 4:e]
            if _body_ok(body, 8) and _classes(body) >= 2 and not is_wordy(body):
                return e, "google_api_key"
            return None
        e = _R_TRUNC_BODY_UPPER.match(view, ps + 4).end()
        body = view[ps + 4:e]
        if (6 <= len(body) < 16 and _body_ok(body, 6)
                and (any(c.isdigit() for c in body) or (
                    (len(body) >= 8 or view.startswith("...", e)) and _B32.issuperset(body)
                    and sum(c in "AEIOUY" for c in body) <= 0.3 * len(body)))
                and not any(d.startswith(view[ps:e]) for d in DOC_EXAMPLES)
                and not (e < len(view) and _TRUNC_STOP.match(view, e))):
            return e, "aws_access_key_id"
        return None
    if c0 == "g":
        if view.startswith("github_pat_", ps):
            e = _R_TRUNC_BODY_WORD.match(view, ps + 11).end()
            body = view[ps + 11:e]
            if _body_ok(body, 2) and not is_wordy(body):
                return e, "github_fine_grained"
            return None
        if view.startswith("glpat-", ps):
            e = _R_TRUNC_BODY_WORD_DASH.match(view, ps + 6).end()
            body = view[ps + 6:e]
            if _body_ok(body, 6) and _classes(body) >= 2 and not is_wordy(body):
                return e, "gitlab_pat"
            return None
        e = _R_TRUNC_BODY_ALNUM.match(view, ps + 4).end()
        body = view[ps + 4:e]
        if (_body_ok(body, 8) and _classes(body) >= 2 and not is_wordy(body)
                and not any(d.startswith(view[ps:e]) for d in DOC_EXAMPLES)):
            return e, "github_classic"
        return None
    if c0 == "s" or c0 == "r":
        if view.startswith("sk-ant-", ps):
            m = _R_ANT_HEAD.match(view, ps)
            if not m:
                return None
            e = _R_TRUNC_BODY_WORD_DASH.match(view, m.end()).end()
            body = view[m.end():e]
            if body and len(body) >= 4 and is_placeholder(body):
                return None
            if body:  # (a bare prefix, even cut short, is how placeholders begin)
                return e, "anthropic_api"
            return None
        if view.startswith("sk-", ps):
            m = _R_OPENAI_HEAD.match(view, ps)
            if m:
                e = _R_TRUNC_BODY_WORD_DASH.match(view, m.end()).end()
                body = view[m.end():e]
                if _body_ok(body, 2) and not is_wordy(body):
                    return e, "openai_project"
                return None
            e = _R_TRUNC_BODY_ALNUM.match(view, ps + 3).end()
            body = view[ps + 3:e]
            if _body_ok(body, 9) and (_classes(body) >= 3 or "T3BlbkFJ" in body) \
                    and not is_wordy(body):
                return e, "openai_legacy"
            return None
        if view.startswith("k_", ps + 1) and view.startswith(("live_", "test_"), ps + 3):
            e = _R_TRUNC_BODY_ALNUM.match(view, ps + 8).end()
            body = view[ps + 8:e]
            if (_body_ok(body, 4) and not is_wordy(body)
                    and not any(d.startswith(view[ps:e]) for d in DOC_EXAMPLES)):
                return e, "stripe_key"
        return None
    if c0 == "x":
        e = _R_TRUNC_BODY_SLACK.match(view, ps + 5).end()
        body = view[ps + 5:e]
        if _body_ok(body, 7) and sum(c.isdigit() for c in body) >= 4:
            return e, "slack_token"
        return None
    if c0 == "e":
        e = _R_TRUNC_BODY_WORD_DASH.match(view, ps + 3).end()
        tok = view[ps:e]
        if len(tok) >= 12:
            cut = len(tok) // 4 * 4
            try:
                raw = base64.urlsafe_b64decode(tok[:cut])
            except (binascii.Error, ValueError):
                return None
            if raw.startswith(_JWT_HEADS):
                return e, "jwt"
        return None
    if c0 == "h":
        e = _R_TRUNC_BODY_LETTERS.match(view, ps + 3).end()
        body = view[ps + 3:e]
        if (_body_ok(body, 9) and not (e < len(view) and _TRUNC_STOP.match(view, e))
                and sum(c.isupper() for c in body) >= 2 and sum(c.islower() for c in body) >= 2
                and not is_wordy_strict(body)):
            return e, "huggingface"
        return None
    if c0 == "n":
        e = _R_TRUNC_BODY_LOWER.match(view, ps + 4).end()
        body = view[ps + 4:e]
        if (_body_ok(body, 8) and sum(c.isalpha() for c in body) >= 3
                and (any(c.isdigit() for c in body) or (len(body) >= 10 and not is_wordy(body)
                                                        and _CONSONANT_RUN.search(body)))
                and not (e < len(view) and _TRUNC_STOP.match(view, e))):
            return e, "npm"
        return None
    return None


def _prefix_hit(view: str, ps: int) -> tuple[int, str] | None:
    """A prefixed format at ``ps``, whole or cut short (not a documentation example)."""
    hit = _prefixed(view, ps) or _truncated(view, ps)
    if hit is not None and _in_doc_example(view, ps, hit[0]):
        return None
    return hit


_JWT_HEADS = tuple(b'{"' + k.encode() + b'"' for k in ("alg", "typ", "kid", "sub", "iss", "aud",
                                                        "exp", "nbf", "iat", "jti"))
_R_SG_TRUNC = re.compile(r"SG\.[A-Za-z0-9_-]{9,}(?:\.[A-Za-z0-9_-]*)?")


def _sendgrid_truncated(view: str, start: int) -> int:
    """End of a cut-short SendGrid key at ``start`` (``SG.`` + >= 9 body chars), or -1."""
    m = _R_SG_TRUNC.match(view, start)
    if m is None:
        return -1
    body = m.group()[3:]
    first = body.split(".", 1)[0]
    if is_placeholder(first) or _classes(first) < 2 or is_wordy(first):
        return -1
    return m.end()


# --------------------------------------------------------------------------- AWS secret key

_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_STD_B64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
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


# --------------------------------------------------------------------------- random runs

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
_HEX_LETTERS = frozenset("abcdefABCDEF")


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
        if e - s <= n and (tok in piece or (d.startswith(tok) and len(tok) > n - len(piece))
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


#: Internal kind of :func:`_random_run` findings (reported as ``secret``): a random piece is
#: not joined across line or message breaks (each piece is judged on its own).
RANDOM_KIND = "secret~random"


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


# --------------------------------------------------------------------------- PEM

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


# --------------------------------------------------------------------------- URL credentials

_R_SCHEME_REV = re.compile(r"[A-Za-z0-9+.-]{0,30}[A-Za-z]")
_R_USERINFO = re.compile(
    r"(?P<user>[^\s:/?#@\"'<>\[\]{}\\|^`]{0,128}):(?P<pw>[^\s/?#@\"<>\\`]{1,256})@"
    r"(?P<host>[A-Za-z0-9\[_%-])")
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
                low = pw.lower()
                if (len(pw) >= 3 and not pw.isdigit() and low not in _PLACEHOLDER_PASSWORDS
                        and pw != user and not _template(pw) and not _weak_placeholder(pw)):
                    out.append((m.start("pw"), m.end("pw"), "url_credentials"))
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


# --------------------------------------------------------------------------- passwords

_PW_TRIGGERS = ("pass", "Pass", "PASS", "pwd", "Pwd", "PWD")
_PW_CONTINUATIONS = ("word", "wd", "phrase")
_R_PW_KEYWORD = re.compile(r"(?i)(?:pass(?:word|wd|phrase)?|pwd)(?![a-z])")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_R_KEY_RIGHT = re.compile(r"[A-Za-z0-9_]*")
_R_PW_VALUE = re.compile(
    r"""(?:\\?["'])?[ \t]*"""
    r"""(?:(?::=|=>|->|[:=])"""
    r"""|(?:[ \t]+(?:for|of|on)[ \t]+[\w .@'/-]{1,40}?)?[ \t]+"""
    r"""(?:(?:(?:was|is|has[ \t]+been)[ \t]+)?(?:set|changed|reset|updated)[ \t]+to"""
    r"""|will[ \t]+be|has[ \t]+been|is|was|are)"""
    r"""(?:[ \t]+(?:now|still|currently|just))?[ \t]*:?)"""
    r"""[ \t]*(?:\\?["'`(\[<]){0,2}"""
    r"""(?P<v>(?:\\{1,2}u[0-9a-fA-F]{4}|[^\s"'`<>\\])+)""",
    re.IGNORECASE)
_R_PW_CLI = re.compile(r"""[ \t]+(?P<v>(?:\\{1,2}u[0-9a-fA-F]{4}|[^\s"'`<>\\-][^\s"'`<>\\]*))""")
_CODEISH = re.compile(
    r"^[A-Za-z_]+(?:\.[A-Za-z_]+)+$"                      # attribute access, no digits
    r"|^(?:self|this|os|process|config|settings|env|args|opts|options|params|request|cfg)\."
    r"|^[A-Z0-9]+(?:_[A-Z0-9]+)+$|^[a-z]+(?:_[a-z]+)+$"   # CONSTANT_NAMES, snake_names
    r"|^(?i:true|false|null|none|nil|undefined|required|optional|str|string)$")
_TRAIL_PUNCT = ".,;:!?)]}'\""


def _password_key_ok(key: str) -> bool:
    low = key.lower().lstrip("-")
    for kw in ("password", "passwd", "passphrase"):
        if low.endswith(kw):
            return True
    for kw in ("pass", "pwd", "pw"):
        if low.endswith(kw):
            head = low[: -len(kw)]
            return head == "" or head[-1] in "_.-"
    return False


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


def _clean_value(view: str, vs: int, ve: int) -> tuple[int, int]:
    while ve > vs and view[ve - 1] in _TRAIL_PUNCT:
        ve -= 1
    if ve > vs and view[vs] in "([{":
        vs += 1
    return vs, ve


def _lowered(view: str) -> str | None:
    """``view.lower()`` when that keeps every offset (ASCII), else None."""
    return view.lower() if view.isascii() else None


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
            if password_value_ok(v):
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
    """The start of a password cut short by an ellipsis (5-7 characters): mixed classes,
    no word, placeholder or template."""
    if not 5 <= len(v) < 8 or _template(v) or any(c in v for c in "()[]{}/"):
        return False
    low = v.lower()
    if low in _PLACEHOLDER_PASSWORDS or any(w in low for w in _PLACEHOLDER_WORDS):
        return False
    return _classes(v) >= 3 and not _weak_placeholder(v) and not _CODEISH.match(v)


# --------------------------------------------------------------------------- generic keys

_GENERIC_TRIGGERS = ("token", "Token", "TOKEN", "secret", "Secret", "SECRET", "api_key",
                     "apiKey", "ApiKey", "API_KEY", "api-key", "apikey", "access_key",
                     "accessKey", "ACCESS_KEY", "credential", "Credential", "CREDENTIAL",
                     "Bearer", "bearer")
_GENERIC_TRIGGERS_LOW = ("token", "secret", "api_key", "apikey", "api-key", "access_key",
                         "accesskey", "credential", "bearer")
_GENERIC_KEY_ENDS = ("token", "secret", "apikey", "accesskey", "secretkey", "privatekey",
                     "credential", "credentials", "bearer", "authtoken", "accesskeyid")
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


def generic_value_ok(v: str, key: str = "") -> bool:
    """A value after a credential keyword (``key``, normalised) that looks like a credential
    or a cut-short piece of one: the keyword vouches for shorter, less mixed values
    (:func:`random_shape` with ``loose``), hex after a token/secret keyword, and base32
    uppercase after an access-key-id keyword."""
    core = v[:-3] if v.endswith("...") else v
    if _PREFIX_SCAN.match(core) or core.startswith(("sk_", "rk_", "SG.")):
        return False  # a known prefix: the prefixed rules judge it
    if random_token(core):
        return True
    if (len(core) < 10 or _template(core) or "://" in core or core[0] in "/~."
            or any(c in core for c in "()[]{} ") or _CODEISH.match(core) or is_placeholder(core)):
        return False
    if _HEXISH.fullmatch(core):
        return (len(core) >= 12 and "-" not in core and key.endswith(("token", "secret"))
                and any(c.isalpha() for c in core) and any(c.isdigit() for c in core))
    if key.endswith("keyid") and core.isupper() and core.isalnum() and _B32.issuperset(core):
        body = core[4:] if core.startswith(("AKIA", "ASIA", "ABIA", "ACCA")) else core
        return sum(c in "AEIOUY" for c in body) <= 0.3 * len(body)
    return random_shape(core, loose=True)


def _generic_keys(view: str, out: list[Finding], low: str | None = None) -> None:
    seen: set[int] = set()
    hay, trigs = (low, _GENERIC_TRIGGERS_LOW) if low is not None else (view, _GENERIC_TRIGGERS)
    for trig in trigs:
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
                    vs, ve = _clean_value(view, m.start("v"), m.end("v"))
                    if view.startswith("...", ve):
                        ve += 3
                    if generic_value_ok(view[vs:ve], key) and not _in_doc_example(view, vs, ve):
                        out.append((vs, ve, "secret"))
            pos = hay.find(trig, pos + n)


# --------------------------------------------------------------------------- truncated

_R_FRAGMENT_PREFIX = re.compile(
    r"(AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|sk-ant-|sk-|[sr]k_(?:live|test)_|"
    r"xox[abposr]-|AIza|eyJ|hf_|npm_|SG\.)")
_FRAGMENT_KINDS = {
    "AKIA": "aws_access_key_id", "ASIA": "aws_access_key_id", "ABIA": "aws_access_key_id",
    "ACCA": "aws_access_key_id", "github_pat_": "github_fine_grained", "glpat-": "gitlab_pat",
    "sk-ant-": "anthropic_api", "sk-": "openai_project", "AIza": "google_api_key",
    "eyJ": "jwt", "hf_": "huggingface", "npm_": "npm", "SG.": "sendgrid",
}
_R_FRAGMENT_REV = re.compile(r"[A-Za-z0-9+/=_.-]{1,300}")


def _fragments(view: str, out: list[Finding]) -> None:
    """Secrets cut short by an ellipsis (``ghp_Q7wE9rT2yU4i...``, as summaries write them)."""
    pos = view.find("...")
    while pos != -1:
        end = pos
        while end > 0 and view[end - 1] == ".":
            end -= 1
        m = _R_FRAGMENT_REV.match(view[max(0, end - 300):end][::-1])
        if m:
            start = end - m.end()
            while start < end and view[start] in "._-=":
                start += 1
            tok = view[start:end]
            pm = _R_FRAGMENT_PREFIX.match(tok)
            if not pm:  # the value after the last assignment in the token
                cut = max(tok.rfind("="), tok.rfind(":")) + 1
                while cut < len(tok) and tok[cut] in "=:":
                    cut += 1
                tok, start = tok[cut:], start + cut
                pm = _R_FRAGMENT_PREFIX.match(tok)
            if pm:
                body = tok[pm.end():]
                p = pm.group(1)
                if _left_ok(view, start) and not _in_doc_example(view, start, end) and (
                        (len(body) >= 8 and not is_placeholder(body) and not is_wordy(body)
                         and _classes(body) >= 2
                         and (p != "eyJ" or _truncated(view, start) is not None))
                        or (p != "SG." and _truncated(view, start) is not None)):
                    kind = _FRAGMENT_KINDS.get(p) or (
                        "github_classic" if p.startswith("gh") else
                        "stripe_key" if p[1:3] == "k_" else "slack_token")
                    out.append((start, pos + 3, kind))
            elif (len(tok) >= 10 and _left_ok(view, start) and not _R_ID_PREFIX.match(tok)
                  and ((len(tok) >= 16 and random_token(tok))
                       or (any(c.isdigit() for c in tok) and random_shape(tok, loose=True)))
                  and _piece_context_ok(view, start, end)):
                out.append((start, pos + 3, RANDOM_KIND))
        nxt = pos + 3
        while view.startswith(".", nxt):
            nxt += 1
        pos = view.find("...", nxt)


# --------------------------------------------------------------------------- markers

_R_MARKER = re.compile(r"<REDACTED:([A-Za-z0-9_]{1,40})>")
_R_MARKER_TAIL = re.compile(r"(?:[A-Za-z0-9+/=_.~!$&'()*,;%#^-]|@(?![A-Za-z0-9-]+[.:/]))+")
_R_BYOK = re.compile(r"\[BYOK:([^\]]{1,20000})\]")
_R_BYOK_OPEN = re.compile(r"\[BYOK:([^\s\]]{1,4096})")
_MARKER_BEFORE = re.compile(r"<REDACTED:[A-Za-z0-9_]{1,40}>$")
KNOWN_KINDS = frozenset({
    "aws_access_key_id", "aws_secret_key", "github_classic", "github_fine_grained", "gitlab_pat",
    "openai_project", "openai_legacy", "anthropic_api", "slack_token", "stripe_key",
    "google_api_key", "jwt", "pem_private_key", "huggingface", "npm", "sendgrid",
    "url_credentials", "password_in_prose", "marker_leak", "secret",
})


def marker_tail_end(view: str, pos: int) -> int:
    """End of a raw secret tail glued to a marker ending at ``pos`` (``pos`` if none)."""
    m = _R_MARKER_TAIL.match(view, pos)
    if not m:
        return pos
    vs, ve = _clean_value(view, m.start(), m.end())
    if vs != pos:
        return pos
    tail = view[vs:ve]
    if len(tail) >= 4 and sum(c.isalnum() for c in tail) >= 3:
        return ve
    return pos


def _markers(view: str, out: list[Finding], depth: int) -> None:
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
            if secretish(content.strip()) or _find(content, depth + 1, junctions=False):
                out.append((pos, m.end(), "marker_leak"))
        pos = view.find("[BYOK:", pos + 6)


# --------------------------------------------------------------------------- decoders

_R_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_R_UESC = re.compile(r"\\{1,2}u[0-9a-fA-F]{4}")
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


def _decode_runs(view: str, out: list[Finding], depth: int) -> None:
    if "%" in view:
        for s, e in _clusters(view, _R_PCT, 8, 3):
            # widen to the surrounding URL-ish characters (key names, the rest of a URL)
            while s > 0 and e - s < 20000 and view[s - 1] in _URL_SAFE and view[s - 1] != "?":
                s -= 1
            while e < len(view) and view[e] in _URL_SAFE and view[e] != "&":
                e += 1
            dec, dmap = percent_decode(view, s, e)
            for a, b, k in _find_text(dec, depth + 1):
                out.append((*dmap.span(a, b), k))
    if "\\u" in view:
        for s, e in _clusters(view, _R_UESC, 2, 4):
            dec, dmap = unicode_unescape(view, s, e)
            for a, b, k in _find_text(dec, depth + 1):
                out.append((*dmap.span(a, b), k))


#: The first character of every base64 quantum of ASCII text (a byte 0x20-0x7f, or a
#: tab/newline): indexes 2 and 8-31. Hex of ASCII text: a high nibble 2-7 every 2 digits.
_ASCII_B64_FIRST = frozenset("CIJKLMNOPQRSTUVWXYZabcdef")
_ASCII_HEX_HIGH = frozenset("234567")


def _decode_hex(view: str, rs: int, re_: int, out: list[Finding], depth: int) -> None:
    """Decode a hex run (a cut-short one from its start, as a reader would) and scan the
    text it encodes; a finding there redacts the whole run."""
    h = _HEX_RUN.fullmatch(view, rs, re_).group(1)
    if len(h) < 20:
        return
    if (len(h) < 32 or len(h) % 2) and not _ASCII_HEX_HIGH.issuperset(h[0:16:2]):
        return  # a cut-short run must at least start like ASCII text
    text = _printable_text(bytes.fromhex(h[:len(h) // 2 * 2]))
    if text is not None:
        found = _find_text(text, depth + 1)
        if found:
            out.append((rs, re_, found[0][2]))


def _decode_b64(view: str, rs: int, re_: int, out: list[Finding], depth: int) -> None:
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
        found = _find_text(text, depth + 1)
        if found:
            out.append((rs, re_, found[0][2]))


# --------------------------------------------------------------------------- line junctions

_JUNCTION_NEXT = r"(?=[A-Za-z0-9+/=_.~!#$%&*@^\-:;,'()?])"
_R_JUNCTION_ESC = re.compile(r"\\n" + _JUNCTION_NEXT)  # JSON-escaped line break
_R_JUNCTION_NL = re.compile(r"\n" + _JUNCTION_NEXT)     # real line break
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                         "+/=_.~!#$%&*@^-:;,'()?")
_R_TOKEN_FWD = re.compile(r"[A-Za-z0-9+/=_.~!#$%&*@^\-:;,'()?]{1,600}")


#: Canonical total lengths of fixed-length formats. A finding that only exists because two
#: lines (or messages) were joined must have one of these lengths: a complete token at the
#: end of a line followed by a word on the next line is not a split secret.
CANONICAL_LENGTHS: dict[str, frozenset[int]] = {
    "aws_access_key_id": frozenset({20}), "aws_secret_key": frozenset({40}),
    "github_classic": frozenset({40}), "github_fine_grained": frozenset({93}),
    "gitlab_pat": frozenset({26}), "openai_legacy": frozenset({51}),
    "openai_project": frozenset(range(132, 165)), "anthropic_api": frozenset({108, 110}),
    "stripe_key": frozenset({32, 107}), "google_api_key": frozenset({39}),
    "huggingface": frozenset({37}), "npm": frozenset({40}), "sendgrid": frozenset({69}),
}


_WORD_PIECE = re.compile(r"[A-Z]?[a-z]{1,24}|[A-Z]{2,24}")


def junction_ok(joined: str, a: int, b: int, cut: int, kind: str) -> bool:
    """Accept a finding ``joined[a:b]`` that straddles a line/message break at ``cut``?"""
    if not a < cut < b or kind == RANDOM_KIND:
        return False
    left = joined[a:cut]
    if left in DOC_EXAMPLES or left.startswith("<REDACTED:"):
        return False
    if sum(c.isalnum() for c in left) >= 12 and (is_placeholder(left) or _template(left)):
        return False  # a placeholder at the end of a line is not half a secret
    lengths = CANONICAL_LENGTHS.get(kind)
    if lengths is not None:
        return (b - a) in lengths
    # variable-length kinds (JWT, Slack, PEM, prose passwords): a complete finding at the
    # end of a line could swallow the first word of the next one. If the left piece alone
    # is already that finding, the continuation must not read as a word.
    right = joined[cut:b]
    if not (_WORD_PIECE.fullmatch(right) or is_wordy(right)):
        return True
    return not any(s == a and k == kind for s, _, k in _find(joined[:cut], MAX_DEPTH, False))


def _junction_points(view: str):
    if "\\n" in view:
        for m in _R_JUNCTION_ESC.finditer(view):
            b0, b1 = m.span()
            yield (b0 - 2 if view.startswith("\\r", b0 - 2) else b0), b1
    if "\n" in view:
        for m in _R_JUNCTION_NL.finditer(view):
            b0, b1 = m.span()
            yield (b0 - 1 if b0 and view[b0 - 1] == "\r" else b0), b1


_R_B64_TAIL = re.compile(r"[A-Za-z0-9+/]*$")
_R_B64_HEAD = re.compile(r"[A-Za-z0-9+/]*")


def _keyword_possible(text: str) -> bool:
    """Could a keyword-anchored finding (password, URL, marker) occur in ``text``?"""
    if "://" in text or "<REDACTED:" in text or "[BYOK:" in text:
        return True
    return any(True for _ in _pw_keywords(text))


def join_at(lsrc: str, b0: int, rsrc: str, b1: int, depth: int = 0,
            normalised: bool = False, keywords: bool | None = None
            ) -> list[tuple[int, int, str]]:
    """Secrets split by a break: ``lsrc[..b0]`` continued by ``rsrc[b1..]``.

    Joins the end of the line before ``b0`` (its last token plus up to 120 characters of
    context, for keywords such as ``password is``) with the token run starting at ``b1``,
    scans the joined string and keeps findings that need both sides
    (:func:`junction_ok`). Returns ``(start in lsrc, end in rsrc, kind)``. ``keywords``
    (may ``lsrc`` hold a password/URL/marker keyword at all?) is an optional speed hint.
    """
    if b0 == 0 or lsrc[b0 - 1] not in _TOKEN_CHARS:
        return []
    rm = _R_TOKEN_FWD.match(rsrc, b1)
    if rm is None or rm.end() - b1 < 2:
        return []
    right_tok = rm.group()
    j = b0 - _R_TOKEN_FWD.match(lsrc[max(0, b0 - 160):b0][::-1]).end()
    if b0 - j >= 160:  # long left token: look further back
        j = b0 - _R_TOKEN_FWD.match(lsrc[max(0, b0 - 600):b0][::-1]).end()
    n_tok = b0 - j + len(right_tok)
    if n_tok < 8:
        return []
    joined_tok = lsrc[j:b0] + right_tok
    if joined_tok.isalpha() and joined_tok.islower():
        return []
    # cheap triggers first: a token format needs its prefix (or the AWS secret shape)
    token_trigger = False
    if n_tok >= 20:
        if _PREFIX.search(joined_tok) or "SG." in joined_tok:
            token_trigger = True
        elif n_tok >= 40:  # an AWS secret key: a 40-char [A-Za-z0-9+/] run across the break
            lrun = _R_B64_TAIL.search(lsrc, max(0, b0 - 41), b0)
            rrun = _R_B64_HEAD.match(rsrc, b1)
            token_trigger = (lrun.end() - lrun.start()) + (rrun.end() - b1) == 40
    if not token_trigger and keywords is False:
        return []
    # the rest of the line on the left (keywords such as "password is")
    ls = max(j - 120, 0)
    for brk in ("\n", "\\n"):
        p = lsrc.rfind(brk, ls, j)
        if p != -1:
            ls = max(ls, p + len(brk))
    left = lsrc[ls:b0]
    if not token_trigger and not ("://" in left or "<REDACTED:" in left or "[BYOK:" in left
                                  or _R_PW_KEYWORD.search(left)):
        return []
    joined = left + right_tok
    cut = len(left)
    found = (_find(joined, depth, junctions=False, pieces=False) if normalised
             else _find_text(joined, depth, junctions=False, pieces=False))
    return [(ls + a, b1 + (b - cut), k) for a, b, k in found
            if junction_ok(joined, a, b, cut, k)]


def _junctions(view: str, out: list[Finding], depth: int) -> None:
    kw = _keyword_possible(view)
    for b0, b1 in _junction_points(view):
        out.extend(join_at(view, b0, view, b1, depth, normalised=True, keywords=kw))


# --------------------------------------------------------------------------- driver


def _find(view: str, depth: int = 0, junctions: bool = True, pieces: bool = True
          ) -> list[Finding]:
    """Findings in ``view`` itself (already normalised by the caller or ASCII).

    ``pieces=False`` skips the prefix-less random pieces (:func:`_random_run`): a join
    across a break keeps none of them anyway.
    """
    out: list[Finding] = []
    # 1. token runs: prefixed formats (whole or cut short), AWS secret keys, base64/hex
    #    decoding, prefix-less random pieces
    proxy = view.encode("ascii", "replace")
    cls = proxy.translate(_CLS_TABLE)
    search = _PREFIX_SCAN.search
    for m in _RUN_PROXY.finditer(proxy.translate(_RUN_TABLE)):
        rs, re_ = m.span()
        if view[rs - 1] == "\\" and rs and view[rs] in "ntrbf":
            rs += 1  # a JSON escape glued to the run
        p = search(view, rs, re_)
        owned = False  # a run starting with a known prefix is judged by the prefixed rules
        if p is not None:
            owned = p.start() == rs or (p.start() == rs + 1 and view[rs] in "sr")
            hits = 0
            while p is not None:
                ps = p.start()
                nxt = ps + 1
                if view[ps] == "k":  # sk_live_ / rk_test_ start one character earlier
                    ps -= 1
                    if ps < rs or view[ps] not in "sr":
                        p = search(view, nxt, re_)
                        continue
                hit = _prefix_hit(view, ps) if _left_ok(view, ps) else None
                if hit:
                    out.append((ps, hit[0], hit[1]))
                    hits += 1
                    nxt = hit[0]
                p = search(view, nxt, re_) if nxt < re_ else None
            if hits:
                continue
        n = re_ - rs
        if n < 16:
            if not pieces or owned or cls.find(b"d", rs, re_) == -1:
                continue
            up, lo, dg = cls.count(b"U", rs, re_), cls.count(b"l", rs, re_), 1
        else:  # (find stops at the first hit: cheaper than count on long runs)
            up, lo = cls.find(b"U", rs, re_) != -1, cls.find(b"l", rs, re_) != -1
            dg = cls.find(b"d", rs, re_) != -1
        if 40 <= n <= 42 and up and lo and dg:
            core_end = re_
            while view[core_end - 1] == "=":
                core_end -= 1
            if core_end - rs == 40 and re_ == core_end and _aws_secret(view, rs, re_) \
                    and not _in_doc_example(view, rs, re_):
                out.append((rs, re_, "aws_secret_key"))
                continue
        if n >= 16 and depth < MAX_DEPTH:
            k = len(out)
            if not (up and lo) or view.startswith("0x", rs):  # single-case: maybe hex
                if n >= 20 and dg and _HEX_RUN.fullmatch(view, rs, re_):
                    _decode_hex(view, rs, re_, out, depth)
            elif n >= 24 and not n % 4 or _ASCII_B64_FIRST.issuperset(view[rs:rs + 16:4]):
                _decode_b64(view, rs, re_, out, depth)
            if len(out) > k:
                continue
        if n > 202 or not pieces or not dg or owned:
            continue
        if n >= 16:
            up, lo = cls.count(b"U", rs, re_), cls.count(b"l", rs, re_)
        if n >= 20 and _R_SLACK_PIECE.fullmatch(view, rs, re_) and not is_placeholder(view[rs:re_]):
            out.append((rs, re_, "slack_token"))
            continue
        # cheap shape tests first: lowercase+digit pieces (npm) have no separators, and a
        # run with three slashes is a path
        if up:
            if (lo < 2 and (lo or up < 5)) or (up > 1 and view.count("/", rs, re_) > 2):
                continue
        elif lo < 3 or cls.find(b"s", rs, re_) != -1 or _HEXISH.fullmatch(view, rs, re_):
            continue
        if not _R_ID_PREFIX.match(view, rs) and _random_run(view, rs, re_):
            out.append((rs, re_, RANDOM_KIND))
    # 2. SendGrid keys (``SG.`` + two dot-separated parts), whole or cut short
    if "SG." in view:
        ps = view.find("SG.")
        while ps != -1:
            if _left_ok(view, ps):
                sm = _R_SENDGRID.match(view, ps)
                if sm and not is_placeholder(sm.group()[3:]):
                    out.append((ps, sm.end(), "sendgrid"))
                else:
                    te = _sendgrid_truncated(view, ps)
                    if te > 0:
                        out.append((ps, te, "sendgrid"))
            ps = view.find("SG.", ps + 3)
    # 3. literal triggers
    if "PRIVATE KEY" in view:
        _pem(view, out)
    if "-----BEGIN " in view or "-----END " in view:
        _pem_armor(view, out)
    if "://" in view:
        _url_credentials(view, out)
    if "@" in view:
        _url_password_tails(view, out)
    if "\n```" in view:
        _fenced_values(view, out)
    low = _lowered(view)
    _passwords(view, out, low)
    _generic_keys(view, out, low)
    if "..." in view:
        _fragments(view, out)
    if "<REDACTED:" in view or "[BYOK:" in view:
        _markers(view, out, depth)
    # 4. %XX and \uXXXX clusters
    if depth < MAX_DEPTH:
        _decode_runs(view, out, depth)
    # 5. secrets split across lines
    if junctions:
        _junctions(view, out, depth)
    return out


def _find_text(text: str, depth: int, junctions: bool = True, pieces: bool = True
               ) -> list[Finding]:
    view, vmap = normalize(text)
    found = _find(view, depth, junctions, pieces)
    if vmap is None or not found:
        return found
    return [(*vmap.span(a, b), k) for a, b, k in found]


def merge(findings: list[Finding], text: str | None = None) -> list[Finding]:
    """Sort, absorb a marker glued in front, and merge overlapping/touching spans."""
    if not findings:
        return []
    items = []
    for s, e, k in findings:
        if k == RANDOM_KIND:
            k = "secret"
        if text is not None and s >= 12:
            mm = _MARKER_BEFORE.search(text, max(0, s - 52), s)
            if mm:
                s = mm.start()
        items.append((s, e, k))
    items.sort(key=lambda t: (t[0], -t[1], t[2] == "secret"))  # a named kind wins ties
    merged: list[list] = []
    for s, e, k in items:
        if merged and s <= merged[-1][1]:
            last = merged[-1]
            if e > last[1]:
                # the wider finding names the merged span
                if (e - s) > (last[1] - last[0]) and last[2] != "marker_leak":
                    last[2] = k
                last[1] = e
        else:
            merged.append([s, e, k])
    return [(s, e, k) for s, e, k in merged]


def scan(text: str) -> list[Finding]:
    """All findings in ``text`` (original coordinates), merged and sorted.

    Decoded or normalised findings map back to the characters that produced them:
    the whole encoded run for base64/hex, exact characters otherwise.
    """
    return merge(_find_text(text, 0), text)


__all__ = [
    "DOC_EXAMPLES", "KNOWN_KINDS", "Finding", "is_placeholder", "is_wordy", "marker_tail_end",
    "merge", "password_value_ok", "random_shape", "scan", "secretish", "shannon",
]

# re-exported for the harness
_ = (SegmentMap, ShiftMap, ViewMap, WholeMap)
