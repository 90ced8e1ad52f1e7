"""The other ways a summary may write a planted fact's answer, and how to recognise them:
the one definition of a **paraphrased** fact.

A summary **keeps** a fact when it holds the answer exactly (the substring a retention
probe looks for). It **paraphrases** it when the exact answer is absent but the answer is
there in another form:

* the same letters and digits in the same order with other case or separators
  (``OPS 1234``, ``copper-finch``, ``2026/03/05``, ``src\\billing\\retry_policy.py``), a
  number with a thousands separator (``6,432``) — matched at word boundaries;
* a rewriting of its kind (:func:`alternate_forms`): a date as ``March 5, 2026`` or
  ``5 March 2026``, a person as ``Moreau, Alice`` or ``A. Moreau``, a number in words
  (``six thousand four hundred thirty-two``), a file as its name and directory
  (``retry_policy.py in src/billing``), a version as ``1.2 patch 3``, a host without its
  domain (``db-staging-12``).

Otherwise the fact is **lost**. A probe asking for the exact answer fails on a paraphrased
fact (retention counts it lost); a reader who accepts the alternate form would not. The
modelled summarizer writes these forms when it paraphrases
(:class:`~workbench.summarize.modelled.ModelledSummarizer` ``p_paraphrase_fact``); the
evaluation recognises them with :func:`form_pattern`.

>>> alternate_forms("date", "2026-03-05")
('March 5, 2026', '5 March 2026', '2026/03/05')
>>> bool(form_pattern("ticket", "OPS-1234").search("tracked as ops 1234 now"))
True
>>> bool(form_pattern("numeric_constant", "800").search("raised to 1800 ms"))
False
>>> normal_form("Copper-Finch, OPS 1234")
'copperfinchops1234'
"""

from __future__ import annotations

import functools
import re

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_RUN = re.compile(r"[^\W_]+")
# between two runs of letters/digits: up to two separator characters
_SEP = r"[\s._/\\:#,-]{0,2}"
# between two runs of digits: exactly one (so "1.2.3" is not "steps 1, 2 3")
_DIGIT_SEP = r"[._/:-]"
# inside a run of digits: an optional thousands separator every three digits
_THOUSANDS = "[,.'\u00a0\u202f ]?"


def number_words(n: int) -> str:
    """English words for ``0 <= n < 1,000,000`` (``6432`` -> ``six thousand four hundred
    thirty-two``)."""
    if not 0 <= n < 1_000_000:
        raise ValueError(f"number_words takes 0 <= n < 1,000,000, got {n}")
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        return _ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + number_words(n % 100))
    return number_words(n // 1000) + " thousand" + ("" if n % 1000 == 0 else " " + number_words(n % 1000))


def alternate_forms(kind: str, answer: str) -> tuple[str, ...]:
    """What a summary may write instead of ``answer`` (a fact of ``kind``), none of them
    containing the exact answer; ``()`` when the kind has none or the answer is not of the
    shape the generator plants (:mod:`workbench.synth.facts`)."""
    try:
        forms = _forms(kind, answer)
    except (ValueError, IndexError):
        return ()
    return tuple(f for f in dict.fromkeys(forms) if f and answer not in f)


def _forms(kind: str, answer: str) -> list[str]:
    if kind == "date":
        y, m, d = answer.split("-")
        month = MONTHS[int(m) - 1]
        return [f"{month} {int(d)}, {y}", f"{int(d)} {month} {y}", f"{y}/{m}/{d}"]
    if kind in ("port", "numeric_constant"):
        n = int(answer)
        return ([f"{n:,}"] if n >= 1000 else []) + [number_words(n)]
    if kind == "owner":
        first, last = answer.split(" ", 1)
        return [f"{last}, {first}", f"{first[0]}. {last}"]
    if kind == "codename":
        a, b = answer.split(" ", 1)
        return [f"{a}-{b}".lower(), f"{a}{b}", answer.upper()]
    if kind == "file_path":
        directory, name = answer.rsplit("/", 1)
        return [f"{name} in {directory}", answer.replace("/", "\\")]
    if kind == "version":
        major, minor, patch = answer.split(".")
        return [f"{major}.{minor} patch {patch}"]
    if kind == "ticket":
        prefix, number = answer.split("-", 1)
        return [f"{prefix} {number}", f"{prefix.lower()}-{number}", f"{prefix}{number}"]
    if kind == "hostname":
        return [answer.split(".", 1)[0], answer.upper()]
    return []


def _digits(run: str) -> str:
    """A run of digits with an optional thousands separator between groups of three."""
    head = len(run) % 3 or 3
    groups = [run[:head]] + [run[i:i + 3] for i in range(head, len(run), 3)]
    return _THOUSANDS.join(groups) if len(run) >= 4 else run


def _flexible(text: str) -> str:
    """A regex for ``text``'s runs of letters and digits in order, any case, separated by
    what :data:`_SEP` allows, at word boundaries."""
    runs = _RUN.findall(text)
    if not runs:
        return ""
    parts = [_digits(runs[0]) if runs[0].isdigit() else re.escape(runs[0])]
    for prev, run in zip(runs, runs[1:], strict=False):
        parts.append(_DIGIT_SEP if prev.isdigit() and run.isdigit() else _SEP)
        parts.append(_digits(run) if run.isdigit() else re.escape(run))
    return r"(?<![^\W_])" + "".join(parts) + r"(?![^\W_])"


def _literal(text: str) -> str:
    """A regex for ``text`` as written, any case and any run of white space, at word
    boundaries."""
    body = r"\s+".join(re.escape(w) for w in text.split())
    return (r"(?<![^\W_])" if _RUN.match(text) else "") + body + (r"(?![^\W_])" if text[-1:].isalnum() else "")


@functools.lru_cache(maxsize=20_000)
def form_pattern(kind: str, answer: str) -> re.Pattern:
    """Matches ``answer`` in any case and with other separators, or any of its
    :func:`alternate_forms` as written (any case); the exact answer is checked separately
    (it is *kept*)."""
    alts = [p for p in (_flexible(answer), *map(_literal, alternate_forms(kind, answer))) if p]
    return re.compile("|".join(alts) if alts else r"(?!)", re.IGNORECASE)


def normal_form(text: str) -> str:
    """Letters and digits only, lower case: every match of :func:`form_pattern` is a
    substring of the normal form of the text it is in (a fast pre-filter)."""
    return "".join(_RUN.findall(text.lower()))


def normal_form_positions(text: str):
    """``(normal_form(text), positions)``: where each character of the normal form sits in
    ``text.lower()`` (a match of the normal form there starts where the pattern's does), an
    int64 array (a summary has tens of thousands of them and a caller reads a few).

    :data:`_RUN` is one character class repeated, so whether a character is kept depends on
    that character alone: the lower-cased text is read as an array of code points, an ASCII
    one looked up in a table and each distinct other one asked of :data:`_RUN` once (a
    summary with one ``…`` is still an array job, not a regex walk)."""
    return lower_normal_form_positions(text.lower())


def lower_normal_form_positions(low: str):
    """:func:`normal_form_positions` of a lower-cased text ``low`` (``text.lower()``)."""
    import numpy as np

    table = _ascii_run_table()
    if low.isascii():  # (the common case, one table look-up per byte: letters and digits)
        codes = np.frombuffer(low.encode("ascii"), dtype=np.uint8)
        keep = table[codes]
        return codes[keep].tobytes().decode("ascii"), np.flatnonzero(keep)
    # (a lone surrogate, a decoded "\\ud83d" escape, is one code point and never kept)
    points = np.frombuffer(low.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    ascii_point = points < 128
    keep = np.zeros(points.size, dtype=bool)
    keep[ascii_point] = table[points[ascii_point]]
    wide = points[~ascii_point]
    distinct = np.unique(wide)
    word = np.fromiter((_RUN.fullmatch(chr(c)) is not None for c in distinct.tolist()), dtype=bool,
                       count=distinct.size)
    keep[~ascii_point] = word[np.searchsorted(distinct, wide)]
    return points[keep].tobytes().decode("utf-32-le"), np.flatnonzero(keep)


@functools.cache
def _ascii_run_table():
    """Which bytes :data:`_RUN` takes (an ASCII letter or digit)."""
    import numpy as np

    table = np.zeros(256, dtype=bool)
    for c in range(128):
        table[c] = _RUN.fullmatch(chr(c)) is not None
    return table


def normal_forms(kind: str, answer: str) -> tuple[str, ...]:
    """The normal forms of ``answer`` and of its alternate forms."""
    return tuple(dict.fromkeys(f for f in map(normal_form, (answer, *alternate_forms(kind, answer))) if f))
