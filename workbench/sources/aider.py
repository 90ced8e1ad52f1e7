"""aider markdown chat history (``.aider.chat.history.md`` and the website transcripts).

The file is cut into consecutive chunks of source text; each chunk is one event and its
exact text (line endings included) is that event's ``raw``, so concatenating the raws of
all continuities in order reproduces the file byte for byte (:func:`roundtrip`). Blank
lines belong to the chunk before them.

Line classes (outside code fences):

* ``# aider chat started at <timestamp>`` → META ``session``; each such header starts a
  new continuity whose id comes from the timestamp (``aider-2024-05-01T10:00:00``). A file
  without headers is one continuity named after the file. Text before the first
  recognised line (front matter, a page title…) is OPAQUE ``preamble``.
* ``#### `` lines → one user MESSAGE per run of consecutive lines (aider writes a
  multi-line input as consecutive ``#### `` lines); the prefix and the trailing markdown
  line break (two spaces) are removed from ``text``. A ``/command`` input is a MESSAGE
  only when an assistant reply follows it (``/ask`` …); otherwise (``/add``, ``/drop``…)
  it is a SIDE_EFFECT named ``command`` (never sent to the model).
* ``> `` lines → SIDE_EFFECT ``output`` (aider's tool output: added files, applied edits,
  commits…); ``> ^C KeyboardInterrupt`` → SIDE_EFFECT ``interrupt`` flagged ERROR.
* ``> Tokens: 5,244 sent, 604 received. Cost: …`` → USAGE: the recorded usage of the
  preceding assistant reply (its request; a line with no reply since the last one, a call
  interrupted before it answered, is a request of its own), read in every release's format by
  :mod:`workbench.sources.aider_usage` (thousands separators, ``request`` / ``message``
  costs, ``cached`` / ``cache write`` / ``cache hit``, ``4.2k``). The session's totals
  (tokens sent and received, calls, costs) are its run-level usage
  (``ParsedContinuity.meta["run_usage"]``); the ``> Aider vX.Y`` line gives
  ``meta["harness_version"]``.
* ``<div …>`` / ``</div>`` lines (website transcripts) → OPAQUE ``markup``.
* anything else → assistant text: one MESSAGE per reply = one request. Inside a fenced
  code block (```` ``` ````) every line is reply text, except a session header, a
  ``> Tokens:`` line or ``> ^C KeyboardInterrupt``, which end an unclosed fence.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from workbench.continuity.enums import EventFlag, EventKind, Origin, Role
from workbench.errors import SourceError
from workbench.sources.aider_usage import TOKENS_LINE, TokensLine, read_tokens_line, run_usage
from workbench.sources.aider_usage import parse_tokens_line as parse_tokens_line  # re-exported
from workbench.sources.base import Detection, ParseContext, ParsedContinuity
from workbench.sources.builder import Builder
from workbench.sources.checks import Malformed
from workbench.sources.lossless import roundtrip as _roundtrip
from workbench.sources.registration import register_format

NAME = "aider"
EXPECTED = "an aider markdown chat history ('#### ' user lines, '> ' tool output, replies)"
_HEADER = re.compile(r"^# aider chat started at (.+?)\s*$")
_DIV = re.compile(r"^\s*</?div\b[^>]*>\s*$", re.IGNORECASE)
_VERSION = re.compile(r"^> Aider (v\d[\w.+-]*)")
_INTERRUPT = re.compile(r"^> \^C KeyboardInterrupt\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def _line_class(line: str) -> str:
    s = _strip_eol(line)
    if _HEADER.match(s):
        return "header"
    if s.startswith("#### ") or s == "####":
        return "user"
    if s.startswith("> ") or s == ">":
        if TOKENS_LINE.match(s):
            return "tokens"
        return "tool"
    if _DIV.match(s):
        return "markup"
    if not s.strip():
        return "blank"
    return "text"


def _chunks(lines: list[str]) -> list[tuple[str, int, list[str]]]:
    """(class, first line number, lines) with blank lines attached to the chunk before."""
    chunks: list[tuple[str, int, list[str]]] = []
    cur: list[str] = []
    cls: str | None = None
    start = 1
    in_fence = False
    seen_structure = False
    prev_blank = False

    def flush() -> None:
        nonlocal cur, cls
        if cur:
            chunks.append((cls or "preamble", start, cur))
        cur, cls = [], None

    for no, line in enumerate(lines, start=1):
        c = _line_class(line)
        if in_fence:
            if c == "header" or c == "tokens" or _INTERRUPT.match(_strip_eol(line)):
                in_fence = False  # an unclosed fence (interrupted reply) ends here
            else:
                cur.append(line)
                if _FENCE.match(line):
                    in_fence = False
                continue
        if c == "blank":
            if cls is None and not cur:
                cls, start = "preamble", no
            cur.append(line)
            prev_blank = True
            continue
        if not seen_structure and c in ("text", "markup"):
            if cls is None:
                cls, start = "preamble", no
            cur.append(line)
            prev_blank = False
            continue
        if c in ("header", "user", "tool", "tokens"):
            seen_structure = True
        if c == "text":
            if cls == "assistant":
                cur.append(line)
            else:
                flush()
                cls, start, cur = "assistant", no, [line]
            if _FENCE.match(line):
                in_fence = True
        elif c in ("user", "tool") and cls == c and not prev_blank:
            cur.append(line)
        else:
            flush()
            cls, start, cur = c, no, [line]
        prev_blank = False
    flush()
    return chunks


def _body(lines: list[str], prefix: str) -> str:
    out = []
    for ln in lines:
        s = _strip_eol(ln)
        if not s.strip():
            continue
        if s.startswith(prefix):
            s = s[len(prefix):]
        elif s == prefix.rstrip():
            s = ""
        if s.endswith("  "):
            s = s[:-2]
        out.append("" if s == "<blank>" else s)
    return "\n".join(out)


def _session_id(ts: str, used: set[str]) -> str:
    base = "aider-" + re.sub(r"\s+", "T", ts.strip())
    cid, k = base, 1
    while cid in used:
        k += 1
        cid = f"{base}#{k}"
    used.add(cid)
    return cid


def _parse(ctx: ParseContext) -> list[ParsedContinuity]:
    data = ctx.read_bytes()
    if not data.strip():
        raise SourceError("file is empty", path=str(ctx.path), expected=EXPECTED)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        ctx.bad_record(line, f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                       "a UTF-8 markdown file", None, None)
        text = data.decode("utf-8", "replace")  # on_error=skip: reported, then read lossily
    lines = text.splitlines(keepends=True)
    chunks = _chunks(lines)
    if not any(c in ("header", "user", "assistant", "tool", "tokens") for c, _, _ in chunks):
        raise SourceError("no aider chat structure ('#### ' user lines, '> ' output, session headers)",
                          path=str(ctx.path), expected=EXPECTED)

    # split into sessions: a header starts a new one; anything before the first header
    # belongs to the first session
    sessions: list[list[tuple[str, int, list[str]]]] = [[]]
    headers = [c for c, _, _ in chunks].count("header")
    for ch in chunks:
        if ch[0] == "header" and any(c == "header" for c, _, _ in sessions[-1]):
            sessions.append([])
        sessions[-1].append(ch)
    if headers == 0:
        sessions = [chunks]

    out: list[ParsedContinuity] = []
    used: set[str] = set()
    for sess in sessions:
        b = Builder(ctx)
        cid = None
        awaiting_usage: int | None = None  # the reply whose '> Tokens:' line has not come yet
        usage_lines: list[TokensLine] = []
        version = None
        for k, (cls, start, chunk_lines) in enumerate(sess):
            raw = "".join(chunk_lines)
            common: dict[str, Any] = dict(raw=raw, source_line=start)
            if cls == "header":
                ts = _HEADER.match(_strip_eol(chunk_lines[0])).group(1)  # type: ignore[union-attr]
                if cid is None:
                    cid = _session_id(ts, used)
                b.add(EventKind.META, name="session", text=ts, **common)
            elif cls == "preamble":
                b.add(EventKind.OPAQUE, name="preamble", **common)
            elif cls == "markup":
                b.add(EventKind.OPAQUE, name="markup", **common)
            elif cls == "user":
                body = _body(chunk_lines, "#### ")
                if body.startswith("/"):
                    # a command reaches the model only if a reply follows before the next input
                    nxt = next((c for c, _, _ in sess[k + 1:] if c in ("user", "assistant", "header")), None)
                    if nxt != "assistant":
                        b.add(EventKind.SIDE_EFFECT, role=Role.USER, origin=Origin.USER,
                              name="command", text=body, **common)
                        continue
                    b.add(EventKind.MESSAGE, role=Role.USER, origin=Origin.USER, name="command",
                          text=body, **common)
                else:
                    b.add(EventKind.MESSAGE, role=Role.USER, origin=Origin.USER, text=body, **common)
            elif cls == "assistant":
                awaiting_usage = b.new_request()
                b.add(EventKind.MESSAGE, role=Role.ASSISTANT, origin=Origin.AGENT,
                      text=raw.rstrip(), request=awaiting_usage, output=True, **common)
            elif cls == "tokens":
                try:
                    line = read_tokens_line(chunk_lines[0])
                except Malformed as exc:
                    ctx.bad_record(start, exc.message, exc.expected, raw, b.rows)
                    continue
                usage_lines.append(line)
                # a call interrupted before any reply ("17,681 sent, 0 received" after ^C) is
                # a request of its own
                req = b.new_request() if awaiting_usage is None else awaiting_usage
                awaiting_usage = None
                b.add(EventKind.USAGE, origin=Origin.HARNESS, name="tokens", usage=line.usage(),
                      text=None, request=req, **common)
            else:  # tool output
                body = _body(chunk_lines, "> ")
                if version is None:
                    version = next((m.group(1) for m in map(_VERSION.match, chunk_lines) if m), None)
                interrupt = _INTERRUPT.match(_strip_eol(chunk_lines[0])) is not None
                b.add(EventKind.SIDE_EFFECT, origin=Origin.HARNESS,
                      name="interrupt" if interrupt else "output", text=body,
                      flags=EventFlag.ERROR if interrupt else 0, **common)
        rows = b.finish()
        name = ctx.path.name
        base = name[: -len(".md")] if name.endswith(".md") else ctx.path.stem
        meta: dict[str, Any] = {}
        if version is not None:
            meta["harness_version"] = version
        totals = run_usage(usage_lines)
        if totals is not None:
            meta["run_usage"] = totals
        out.append(ParsedContinuity(continuity_id=cid or base, source_format=NAME,
                                    source_file=str(ctx.path), rows=rows, meta=meta))
    return out


def roundtrip(events_raw: list[str | None]) -> str:
    """The file's text: the raws of all continuities (in order) concatenated (with the
    file's BOM, if any, in front)."""
    return _roundtrip(events_raw, joiner="", documents=False)


def _sniff(path: Path, head_bytes: bytes) -> Detection:
    text = head_bytes.decode("utf-8", "replace")
    first = text.lstrip("\ufeff \t\r\n")[:1]
    if first in ("{", "["):
        return Detection(0.0, "JSON, not markdown")
    md = path.name.lower().endswith(".md")
    lines = text.splitlines()
    if any(_HEADER.match(ln) for ln in lines):
        return Detection(0.95 if md else 0.85, "markdown with '# aider chat started at' headers")
    users = sum(1 for ln in lines if ln.startswith("#### "))
    tools = sum(1 for ln in lines if ln.startswith("> "))
    tokens = sum(1 for ln in lines if TOKENS_LINE.match(ln))
    if users and (tools or tokens):
        score = (0.75 if md else 0.45) + (0.15 if tokens else 0.0)
        return Detection(score, f"markdown with {users} '#### ' user lines and {tools} '> ' output lines")
    return Detection(0.05 if md and users else 0.0, "no aider chat structure")


FORMAT = register_format(
    NAME, "aider markdown chat history (#### user lines, > tool output, Tokens lines)",
    sniff=_sniff, parse=_parse,
    profile="as-recorded",  # no preset mirrors aider's chat-history summarisation
    raw_joiner="",  # raws are exact text chunks: "".join reproduces the file
)
parse, sniff = FORMAT.parse, FORMAT.sniff
