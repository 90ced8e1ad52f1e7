"""aider's ``> Tokens: …`` usage lines, in every release format.

What aider printed after each reply changed over its releases
(``calculate_and_show_tokens_and_cost`` in ``aider/coders/base_coder.py``; the dates are
those of the aider commits that changed it, the examples are lines of the aider
repository's own ``tests/fixtures/chat-history.md``):

* 2024-07-29 (effa5236c): ``Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session.``
* 2024-08-13 (8cb59902a): ``... Cost: $0.0026 message, $0.0026 session.`` (tokens and cost
  of all calls made for one message);
* 2024-08-17 (0f2211c32): ``Tokens: 492 sent, 1,278 cached, 72 received.`` (``cached`` =
  cache hits), with ``, cache costs not included`` / ``not available`` notes in some builds;
* 2024-08-19 (4c2c0ac87): ``Tokens: 2,930 sent, 9,474 cache write, 2,728 cache hit, 18 received.``;
* 2024-08-20 (93fe9007f): counts as ``4.2k`` (one decimal below 10k) and ``12k``.

Canonical usage of a line (input, cache read, cache write, output), Anthropic convention:

* no cache field: ``(sent, -1, -1, received)`` (cache not reported);
* ``cache hit`` / ``cached`` / ``cache write``: aider's ``sent`` is the whole prompt
  (LiteLLM's ``prompt_tokens``, plus the cache tokens where the provider reports them
  apart), so ``input = sent − hit − write``. Development builds of 0.50/0.51 printed the
  Anthropic prompt *without* the cache tokens (``194 sent, 9,474 cache hit``): a line whose
  cache counts exceed ``sent`` is read that way, ``input = sent`` (such a line whose cache
  counts stay below ``sent`` cannot be told apart; it is read the released way). A ``cached`` line does
  not report cache writes (``-1``); a ``cache hit`` line omits a zero ``cache write`` (0).
* ``k`` / ``M`` counts are expanded (``4.2k`` → 4200): aider rounded them, so they are
  approximate (:attr:`TokensLine.approximate`).

The cost clause gives the request's (``request``) or message's (``message``) cost and the
running session cost; they make the run-level usage of a session
(:func:`run_usage`), since the canonical columns hold tokens only.

>>> read_tokens_line("> Tokens: 5,244 sent, 604 received. Cost: $0.02 request, $0.02 session.").usage()
(5244, -1, -1, 604)
>>> read_tokens_line("> Tokens: 12k sent, 1.5k cache write, 3.2k cache hit, 245 received.").usage()
(7300, 3200, 1500, 245)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.sources.checks import Malformed
from workbench.sources.run_usage import run_usage as run_usage_record

TOKENS_LINE = re.compile(r"^> Tokens: (?P<body>.*?)(?:\.?\s+Cost: (?P<cost>.*?))?\s*$")
_COUNT = r"(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_ITEM = re.compile(rf"(?P<num>{_COUNT})\s*(?P<suf>[kKmM]?)\s+(?P<what>sent|received|cache write|cache hit|cached)")
_NOTE = re.compile(r"cache costs not (?:included|available)")
_COST = re.compile(
    r"^\$(?P<cost>\d[\d,]*(?:\.\d+)?)\s+(?P<unit>request|message)"
    r"(?:,\s*\$(?P<session>\d[\d,]*(?:\.\d+)?)\s+session)?"
    r"(?:,\s*(?P<note>cache costs not (?:included|available)))?\.?$")
_MULTIPLIER = {"": 1, "k": 1_000, "m": 1_000_000}
EXPECTED_COUNTS = "'N sent', 'N received', 'N cached', 'N cache write' or 'N cache hit' (N like 5,244, 593, 4.2k or 12k)"
EXPECTED_COST = "'Cost: $X request|message, $Y session.'"


@dataclass(frozen=True)
class TokensLine:
    """One ``> Tokens:`` line as recorded (counts expanded, costs in USD)."""

    sent: int
    received: int
    cache_hit: int | None  # "cache hit" or "cached"; None on a line without cache fields
    cache_write: int | None  # None where the line cannot report it (no cache fields, "cached")
    approximate: bool  # a k/M count (aider rounded it)
    cost: float | None = None  # this request's / message's cost
    cost_unit: str | None = None  # "request" (0.47-0.49) or "message" (0.50 on)
    session_cost: float | None = None  # the running session total after it

    def usage(self) -> tuple[int, int, int, int]:
        """(input, cache read, cache write, output), see the module docstring."""
        if self.cache_hit is None:
            return (self.sent, -1, -1, self.received)
        write = self.cache_write or 0
        cached = self.cache_hit + write
        uncached = self.sent if cached > self.sent else self.sent - cached
        return (uncached, self.cache_hit, -1 if self.cache_write is None else write, self.received)


def _count(num: str, suf: str) -> int:
    return int(round(float(num.replace(",", "")) * _MULTIPLIER[suf.lower()]))


def _money(text: str | None) -> float | None:
    return None if text is None else float(text.replace(",", ""))


def read_tokens_line(line: str) -> TokensLine:
    """The counts and costs of one ``> Tokens:`` line; :class:`Malformed` naming the part
    that is not in any release's format."""
    m = TOKENS_LINE.match(line.rstrip("\r\n"))
    if m is None:
        raise Malformed("", "not a tokens line", "'> Tokens: N sent, N received.'")
    found: dict[str, int] = {}
    approximate = False
    body = m.group("body").strip()
    for part in _split_items(body.rstrip(".")):
        if _NOTE.fullmatch(part):
            continue
        im = _ITEM.fullmatch(part)
        if im is None:
            raise Malformed("", f"cannot read token count {part!r} in {body!r}", EXPECTED_COUNTS)
        what = im.group("what")
        if what in found:
            raise Malformed("", f"'{what}' given twice", EXPECTED_COUNTS)
        found[what] = _count(im.group("num"), im.group("suf"))
        approximate |= bool(im.group("suf"))
    if "sent" not in found or "received" not in found:
        raise Malformed("", "tokens line without 'sent' and 'received' counts", "'> Tokens: N sent, N received.'")
    cost = unit = session = None
    if m.group("cost") is not None:
        cm = _COST.match(m.group("cost").strip())
        if cm is None:
            raise Malformed("", f"cannot read cost {m.group('cost').strip()!r}", EXPECTED_COST)
        cost, unit, session = _money(cm.group("cost")), cm.group("unit"), _money(cm.group("session"))
    hit = found.get("cache hit")
    write = found.get("cache write")
    if "cached" in found:  # the 0.50-dev form: hits only, writes not reported
        hit, write = found["cached"], None
    elif hit is not None or write is not None:  # aider omits a zero hit / write count
        hit, write = hit or 0, write or 0
    return TokensLine(sent=found["sent"], received=found["received"], cache_hit=hit, cache_write=write,
                      approximate=approximate, cost=cost, cost_unit=unit, session_cost=session)


def _split_items(body: str) -> list[str]:
    """The comma-separated parts of a counts body; a thousands separator ("5,244") is not a
    separator (it is followed by exactly three digits and no letter)."""
    return [p.strip() for p in re.split(r",(?!\d{3}(?:\D|$))", body) if p.strip()]


def parse_tokens_line(line: str) -> tuple[int, int, int, int]:
    """Canonical usage of a ``> Tokens: ...`` line (see the module docstring)."""
    return read_tokens_line(line).usage()


def run_usage(lines: list[TokensLine]) -> dict[str, Any] | None:
    """Run-level totals of one session's usage lines (None without any): tokens sent and
    received, calls (one per line), the summed request/message costs and the last
    running session cost aider printed."""
    if not lines:
        return None
    costs = [t.cost for t in lines if t.cost is not None]
    sessions = [t.session_cost for t in lines if t.session_cost is not None]
    return run_usage_record("aider '> Tokens:' lines", tokens_sent=sum(t.sent for t in lines),
                     tokens_received=sum(t.received for t in lines), api_calls=len(lines),
                     cost_usd=sum(costs) if costs else None,
                     session_cost_usd=sessions[-1] if sessions else None,
                     approximate=any(t.approximate for t in lines))
