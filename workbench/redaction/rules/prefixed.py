"""Formats with a known literal prefix (AWS key ids, GitHub, GitLab, OpenAI, Anthropic,
Slack, Stripe, Google, JWT, Hugging Face, npm, SendGrid), whole or cut short.

A prefix is searched inside token runs (:data:`PREFIX_SCAN`); :func:`prefix_hit` judges the
token at a prefix: the full format (:func:`_prefixed`) or a shorter body, as a summary
quoting half a key writes it (:func:`_truncated`: long enough to count as a leak, while a
bare prefix as documentation writes it, ``ghp_/gho_``, is not).

>>> _prefixed("ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b", 0)
(40, 'github_classic')
>>> _truncated("AKIAQ7WE9RT2... (truncated)", 0)
(12, 'aws_access_key_id')
"""

from __future__ import annotations

import base64
import binascii
import re

from workbench.redaction.rules.shape import (
    _B32,
    _CONSONANT_RUN,
    DOC_EXAMPLES,
    Finding,
    _classes,
    _in_doc_example,
    is_placeholder,
    is_wordy,
    is_wordy_strict,
    reads_as_words,
    shannon,
)

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
            if m and not is_placeholder(m.group()[6:]) and not is_wordy(m.group()[6:]) \
                    and not reads_as_words(m.group()[6:]):
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
            if _body_ok(body, 6) and _classes(body) >= 2 and not is_wordy(body) \
                    and not reads_as_words(body):
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



def _sendgrid(view: str, out: list[Finding]) -> None:
    """SendGrid keys (``SG.`` + two dot-separated parts), whole or cut short."""
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
