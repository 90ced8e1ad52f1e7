"""The scan driver: the passes over a detection view, line junctions, merging.

:func:`_find` runs every rule over one view (already normalised): token runs (prefixed
formats, AWS secret keys, base64/base32/hex decoding, random pieces), SendGrid, the
literal triggers (PEM, URLs, passwords, credential keys, HTTP headers, command-line flags,
ellipses, markers), escape clusters (``%XX``, ``\\uXXXX``, HTML references), and line
junctions. :func:`join_at` joins the tail of one line (or message) with the head of the
next and keeps the findings that need both sides; a keyword, header name or flag on the
left vouches for a value without a shape of its own. :func:`scan` normalises, finds and merges.

>>> scan("export GITHUB_TOKEN=ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY1z2A" + ".")
[(20, 60, 'github_classic')]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from workbench.redaction.normalize import joinable_breaks, normalize
from workbench.redaction.rules.command_line import _command_lines, cli_flag_in
from workbench.redaction.rules.decode import (
    _ASCII_B64_FIRST,
    _R_B32,
    _decode_b32,
    _decode_b64,
    _decode_hex,
    _decode_runs,
)
from workbench.redaction.rules.fragments import _fragments
from workbench.redaction.rules.headers import HEADER_ANCHOR_WORDS, _headers
from workbench.redaction.rules.keyed import (
    _HEXISH,
    _R_PW_KEYWORD,
    GENERIC_ANCHOR_WORDS,
    _fenced_values,
    _generic_keys,
    _passwords,
    key_words_possible,
    pw_keyword_in,
)
from workbench.redaction.rules.markers import _MARKER_BEFORE, _markers
from workbench.redaction.rules.pem import _pem, _pem_armor
from workbench.redaction.rules.pieces import _R_SLACK_PIECE, _aws_secret, _random_run
from workbench.redaction.rules.prefixed import (
    _PREFIX,
    _PREFIX_SCAN,
    _left_ok,
    _prefix_hit,
    _sendgrid,
)
from workbench.redaction.rules.shape import (
    _CLS_TABLE,
    _HEX_RUN,
    _R_ID_PREFIX,
    _RUN_PROXY,
    _RUN_TABLE,
    DOC_EXAMPLES,
    FIXED_HEADS,
    MAX_DEPTH,
    RANDOM_KIND,
    Finding,
    _in_doc_example,
    _lowered,
    _template,
    after_fixed_head,
    ascii_lower,
    is_placeholder,
    is_wordy,
)
from workbench.redaction.rules.urls import _url_credentials, _url_password_tails
from workbench.redaction.rules.vendors import (
    HEADS2,
    VENDOR_KINDS,
    VENDOR_LENGTHS,
    VENDOR_PREFIXES,
    vendor_inside,
    vendor_run,
    vendor_trigger,
)

# --------------------------------------------------------------------------- line junctions

TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
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
    **VENDOR_LENGTHS,
}


_WORD_PIECE = re.compile(r"[A-Z]?[a-z]{1,24}|[A-Z]{2,24}")
#: The case pattern of words (``timeout``, ``HTTPServer``, ``toHaveBeenCalled``): a capital
#: starts a word or a run of capitals, so random letters that happen to have a word's
#: vowels (``HdkIkoiespnjmuvP``) do not read as one.
_IDENT_SHAPE = re.compile(r"(?:[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+)+")


def junction_ok(joined: str, a: int, b: int, cut: int, kind: str) -> bool:
    """Accept a finding ``joined[a:b]`` that straddles a line/message break at ``cut``?"""
    if not a < cut < b or kind == RANDOM_KIND:
        return False
    left = joined[a:cut]
    if left in DOC_EXAMPLES or left.startswith("<REDACTED:"):
        return False
    body = after_fixed_head(left)  # (a provider's fixed head is no filler: ``AAAA...``)
    if sum(c.isalnum() for c in body) >= 12 and (is_placeholder(body) or _template(body)):
        return False  # a placeholder at the end of a line is not half a secret
    lengths = CANONICAL_LENGTHS.get(kind)
    if lengths is not None:
        return (b - a) in lengths
    # variable-length kinds (JWT, Slack, PEM, passwords, keyed values): a complete finding
    # at the end of a line could swallow the first word of the next one. If the left piece
    # alone is already a finding (of any kind: a keyed value may hold a prefixed or an
    # encoded token), the continuation must not read as a word.
    right = joined[cut:b]
    if "." in right[1:-1] and kind in VENDOR_KINDS:
        return True  # (a word does not carry a token's dotted suffix: ``...P7`` + ``3.01.5hj``)
    if not (_WORD_PIECE.fullmatch(right) or (is_wordy(right) and not (
            right.isalpha() and not _IDENT_SHAPE.fullmatch(right)))):
        return True
    return not any(s == a for s, _, _ in _find(joined[:cut], 0, False))  # (decoding too)


_R_B64_TAIL = re.compile(r"[A-Za-z0-9+/]*$")
_R_B64_HEAD = re.compile(r"[A-Za-z0-9+/]*")


#: The next line starts an assignment of its own: a complete value at the end of a line
#: must not take the next line's ``KEY=value`` with it (base64 padding is no assignment).
_R_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*[ \t]*[=:](?![=\s]|$)")


def _slot_anchor(text: str, low: str) -> bool:
    """A header name or command-line flag that vouches for the value after it (for a
    value split by a break: the name or flag is on the left)."""
    # (``in`` per word: ~10x faster than one regex alternation of them on long texts)
    return any(w in low for w in HEADER_ANCHOR_WORDS) or cli_flag_in(text)


#: A credential key followed by its assignment (``GITHUB_TOKEN=``, ``"api_key": ``, also
#: JSON-escaped), one regex per key word: a literal prefix lets SRE scan fast, and
#: ``input_tokens`` is none.
_R_GENERIC_ASSIGNED = {w: re.compile(re.escape(w) + r"""\\?["']?[ \t]*(?:=>|[:=])""")
                       for w in GENERIC_ANCHOR_WORDS if w != "bearer"}
_GENERIC_ASSIGNED_WORDS = tuple(_R_GENERIC_ASSIGNED)


def _generic_anchor(low: str) -> bool:
    """A credential key with its assignment, or ``bearer``: it vouches for a value split
    by a break when it is just before the left piece (:func:`join_at`), unless the next
    line starts an assignment."""
    return "bearer " in low or any(w in low and _R_GENERIC_ASSIGNED[w].search(low) is not None
                                   for w in key_words_possible(_GENERIC_ASSIGNED_WORDS, low))



def _anchor_word_in(text: str) -> bool:
    """A credential key word (:data:`~.keyed.GENERIC_ANCHOR_WORDS`) anywhere in ``text``."""
    low = ascii_lower(text)  # (once, not once per word)
    return any(w in low for w in GENERIC_ANCHOR_WORDS)


def keyword_possible(text: str) -> bool:
    """Could a keyword-anchored finding (password, URL, marker, header, command-line flag)
    occur in ``text``?"""
    if "://" in text or "<" in text and "<REDACTED:" in text or "Y" in text and "[BYOK:" in text:
        return True  # (one-character scans first, as in _find)
    low = ascii_lower(text)  # (the tests most often true first; the password keyword, rarely
    # true, last and through ``low``: two scans, not six)
    return _generic_anchor(low) or _slot_anchor(text, low) or pw_keyword_in(text, low)


def join_at(lsrc: str, b0: int, rsrc: str, b1: int, depth: int = 0,
            normalised: bool = False, keywords: bool | Callable[[], bool] | None = None
            ) -> list[tuple[int, int, str]]:
    """Secrets split by a break: ``lsrc[..b0]`` continued by ``rsrc[b1..]``.

    Joins the end of the line before ``b0`` (its last token plus up to 120 characters of
    context, for keywords such as ``password is``) with the token run starting at ``b1``,
    scans the joined string and keeps findings that need both sides
    (:func:`junction_ok`). Returns ``(start in lsrc, end in rsrc, kind)``. ``keywords``
    (may ``lsrc`` hold a password/URL/marker keyword at all?) is an optional speed hint,
    a bool or a function that gives it (asked only when a join needs it).
    """
    if b0 == 0 or lsrc[b0 - 1] not in TOKEN_CHARS:
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
    if n_tok >= 16 and vendor_trigger(joined_tok):
        token_trigger = True
    elif n_tok >= 20:
        if _PREFIX.search(joined_tok) or "SG." in joined_tok:
            token_trigger = True
        elif n_tok >= 40:  # an AWS secret key: a 40-char [A-Za-z0-9+/] run across the break
            lrun = _R_B64_TAIL.search(lsrc, max(0, b0 - 41), b0)
            rrun = _R_B64_HEAD.match(rsrc, b1)
            token_trigger = (lrun.end() - lrun.start()) + (rrun.end() - b1) == 40
    if not token_trigger and keywords is not None \
            and (keywords() if callable(keywords) else keywords) is False:
        return []
    # the rest of the line on the left (keywords such as "password is")
    ls = max(j - 120, 0)
    for brk in ("\n", "\\n"):
        p = lsrc.rfind(brk, ls, j)
        if p != -1:
            ls = max(ls, p + len(brk))
    left = lsrc[ls:b0]
    if not token_trigger and not (
            "://" in left or "<REDACTED:" in left or "[BYOK:" in left
            or _R_PW_KEYWORD.search(left) or _slot_anchor(left, ascii_lower(left))
            or (_anchor_word_in(lsrc[max(ls, j - 40):min(b0, j + 64)])
                and not _R_ASSIGNMENT.match(rsrc, b1))):
        return []
    joined = left + right_tok
    cut = len(left)
    found = (_find(joined, depth, junctions=False, pieces=False) if normalised
             else find_text(joined, depth, junctions=False, pieces=False))
    return [(ls + a, b1 + (b - cut), k) for a, b, k in found
            if junction_ok(joined, a, b, cut, k)]


def _junctions(view: str, out: list[Finding], depth: int) -> None:
    """Secrets split by a line break of ``view``: :func:`join_at` at every break a token may
    run across (:func:`~workbench.redaction.normalize.joinable_breaks`: real or escaped,
    after a shared diff mark; the others cannot start a join)."""
    points = joinable_breaks(view)
    if not points:
        return
    kw = functools.cache(functools.partial(keyword_possible, view))  # (most joins never ask)
    for b0, b1 in points:
        out.extend(join_at(view, b0, view, b1, depth, normalised=True, keywords=kw))


# --------------------------------------------------------------------------- driver

#: A character before a run that a rule below reads (a JSON escape glued to the run, the
#: dotted or tilde head of a vendor token): such a run always goes through the rules.
_LIVE_BEFORE = frozenset("\\.~=")
_DIGITS = frozenset("0123456789")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def inert_run(run: str) -> bool:
    """Does every per-run rule of :func:`_find` turn down the token run ``run`` (preceded by
    a character other than ``\\ . ~ =``, so the run is read as it is), whatever surrounds it?

    Only from the tests the rules make first on the run's own characters: no known prefix
    and no start a vendor prefix could have (:data:`~.vendors.HEADS2` and a prefix that
    agrees with the run as far as both go; a Discord token's ``M N O``), so neither the
    prefixed nor the vendor rules start; then, without a digit, shorter than 16 characters
    (a prefix-less piece needs a digit, decoding starts at 16), or not base32 (one letter
    case) or not base64 (both cases: the quanta could not start ASCII text); with a digit,
    no capital and one of ``+ / _`` (neither hex nor base32 nor a Slack piece, and a
    lowercase piece with a separator is a path or an identifier).
    ``tests/redaction/test_redaction_scan_shortcuts.py`` holds the table and the parity tests."""
    if run[0] in "MNO" or _PREFIX_SCAN.search(run) is not None:
        return False
    if run[:2] in HEADS2 and any(run[:len(p)] == p[:len(run)] for p in VENDOR_PREFIXES):
        return False
    chars = set(run)
    upper = not _UPPER.isdisjoint(chars)
    if _DIGITS.isdisjoint(chars):
        n = len(run)
        if n < 16:
            return True
        if upper and not _LOWER.isdisjoint(chars):
            return not (n >= 24 and not n % 4 or _ASCII_B64_FIRST.issuperset(run[:16:4]))
        return _R_B32.fullmatch(run) is None
    return not upper and not chars.isdisjoint("+/_")


#: :func:`inert_run` per run seen (a summary repeats its paths and identifiers); emptied
#: when full.
_INERT_RUNS: dict[str, bool] = {}
_INERT_RUNS_MAX = 1 << 16



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
    any_run = False
    inert = _INERT_RUNS
    for m in _RUN_PROXY.finditer(proxy.translate(_RUN_TABLE)):
        rs, re_ = m.span()
        any_run = True
        if rs and view[rs - 1] not in _LIVE_BEFORE:
            run = view[rs:re_]
            dead = inert.get(run)
            if dead is None:
                dead = inert_run(run)
                if len(inert) >= _INERT_RUNS_MAX:
                    inert.clear()
                inert[run] = dead
            if dead:
                continue
        if view[rs - 1] == "\\" and rs and view[rs] in "ntrbf":
            rs += 1  # a JSON escape glued to the run
        if view[rs:rs + 2] in HEADS2 or view[rs - 1] in ".~=" or view[rs] in "MNO":
            vendor_run(view, rs, re_, out)  # (provider token shapes: :mod:`.vendors`)
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
                    _decode_hex(view, rs, re_, out, depth, find_text)
                if len(out) == k and _R_B32.fullmatch(view, rs, re_):
                    _decode_b32(view, rs, re_, out, depth, find_text)
            elif n >= 24 and not n % 4 or _ASCII_B64_FIRST.issuperset(view[rs:rs + 16:4]):
                _decode_b64(view, rs, re_, out, depth, find_text)
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
        if view[rs:re_] in FIXED_HEADS:
            continue
        if not _R_ID_PREFIX.match(view, rs) and _random_run(view, rs, re_):
            if view.startswith("//", rs) and view[rs - 1] == ":":
                rs += 2  # (the piece is the user of a URL: ``https://TOKEN@host``)
            out.append((rs, re_, RANDOM_KIND))
    # 2. SendGrid keys (``SG.`` + two dot-separated parts), whole or cut short; the
    #    provider tokens of the coverage table (:mod:`.vendors`)
    # ("G" in view: a one-character scan, ~20x faster than one for a short literal, rules
    # out the literal in most summaries, which hold no G, no Y, no "<")
    if "G" in view and "SG." in view:
        _sendgrid(view, out)
    if any_run:
        vendor_inside(view, out)
    # 3. literal triggers
    if "Y" in view and "PRIVATE KEY" in view:
        _pem(view, out)
    if "G" in view and "-----BEGIN " in view or "-----END " in view:
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
    _headers(view, out, low if low is not None else ascii_lower(view))
    _command_lines(view, out)
    if "..." in view:
        _fragments(view, out)
    if "<" in view and "<REDACTED:" in view or "Y" in view and "[BYOK:" in view:
        _markers(view, out, depth, _find)
    # 4. %XX and \uXXXX clusters
    if depth < MAX_DEPTH:
        _decode_runs(view, out, depth, find_text)
    # 5. secrets split across lines
    if junctions:
        _junctions(view, out, depth)
    return out


def find_text(text: str, depth: int, junctions: bool = True, pieces: bool = True
               ) -> list[Finding]:
    view, vmap = normalize(text)
    found = _find(view, depth, junctions, pieces)
    if vmap is None or not found:
        return found
    return [(*vmap.span(a, b), k) for a, b, k in found]


#: Kinds named by where a value sits, not by what it is (ranked after named formats).
_SLOT_KINDS = {"http_authorization": 1, "api_key_header": 1, "cli_password": 1, "secret": 2}


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
    # a named format wins ties, then a slot kind (header, flag), then a bare "secret"
    items.sort(key=lambda t: (t[0], -t[1], _SLOT_KINDS.get(t[2], 0)))
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
    return merge(find_text(text, 0), text)

