"""The extractive summarizer: deterministic line selection, no labels, no randomness.

It keeps lines of the span by priority until the target size (about 4 characters a token)
is reached: the first user request, the last assistant message, error lines, decision
lines, then lines carrying numbers, paths or identifiers. The previous summary (folded
summaries) is prepended and may take at most half of the budget. Lines are quoted as they
are, so a secret sitting in a selected line is copied: that is the point, the redaction
harness must catch it.

>>> from workbench.summarize.base import SpanEvent, SummaryRequest
>>> ev = (SpanEvent(1, "message", "user", "Please bump the timeout in src/app/config.py to 30s."),
...       SpanEvent(2, "tool_result", "tool", "Traceback: ValueError: bad timeout"),
...       SpanEvent(3, "message", "assistant", "Done, the tests pass now."))
>>> r = ExtractiveSummarizer().summarize(SummaryRequest("c", "a", 1, 3, ev, None, 100))
>>> "src/app/config.py" in r.text and "ValueError" in r.text and "tests pass" in r.text
True
"""

from __future__ import annotations

import re

from workbench.summarize.base import (
    CHARS_PER_TOKEN,
    STATUS_OK,
    SummarizerConfigError,
    SummaryRequest,
    SummaryResult,
    approx_tokens,
    check_request,
    clip,
)

ERROR_RE = re.compile(r"(?:error|exception)s?\b|\b(?:traceback|failed|failure|fatal|panic|"
                      r"denied|refused|timed out|unauthorized)\b", re.I)
DECISION_RE = re.compile(r"\b(?:decid\w*|decision|agreed|we will|we'll|let's|going to|plan|"
                         r"chose|switch\w*|must|should|instead|use|set|pin|note)\b", re.I)
DETAIL_RE = re.compile(r"\d|/|\\|`|\b[A-Z][A-Z0-9_]{2,}\b|\b\w+_\w+\b|\b[a-z]+[A-Z]\w*\b|"
                       r"\b\w+\.\w{1,5}\b")

# priority classes, best first, and the section each is written under
_REQUEST, _CURRENT, _ERROR, _DECISION, _DETAIL = range(5)
_SECTION_TITLES = (
    (_REQUEST, "Request"), (_DECISION, "Decisions"), (_ERROR, "Errors"),
    (_DETAIL, "Details"), (_CURRENT, "Latest state"),
)
_HEADERS = {
    "compaction": "## Summary (extractive, events {a}-{b})",
    "merge": "## Merged summary (extractive, events {a}-{b})",
    "flush": "## Memory notes (extractive, events {a}-{b})",
}


class ExtractiveSummarizer:
    """Deterministic extractive summary. See the module docstring."""

    name = "extractive"
    keyed_by_artifact = False  # the same span, previous summary and size: the same text

    def __init__(self, *, chars_per_token: float = CHARS_PER_TOKEN, max_line_chars: int = 400,
                 previous_share: float = 0.5, tokenizer: str | None = None,
                 seed: int | None = None):
        # ``seed`` is accepted (and ignored: nothing here is random) so a caller can pass
        # one seed to whichever backend the registry builds
        if chars_per_token <= 0:
            raise SummarizerConfigError(f"chars_per_token must be > 0, got {chars_per_token}")
        if not 0.0 <= previous_share <= 1.0:
            raise SummarizerConfigError(f"previous_share must be in [0, 1], got {previous_share}")
        self.chars_per_token = float(chars_per_token)
        self.max_line_chars = int(max_line_chars)
        self.previous_share = float(previous_share)
        self.tokenizer = tokenizer

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        check_request(request)
        req = request
        budget = int(req.target_tokens * self.chars_per_token)
        header = _HEADERS[req.purpose].format(a=req.from_seq, b=req.to_seq)
        room = budget - len(header) - 2

        prev_lines: list[str] = []
        if req.previous_summary:
            prev_room = int(budget * self.previous_share)
            for line in req.previous_summary.strip().split("\n"):
                if len(line) + 1 > prev_room:
                    break
                prev_lines.append(line)
                prev_room -= len(line) + 1
            room -= sum(len(x) + 1 for x in prev_lines) + (len("### Previous summary") + 2
                                                           if prev_lines else 0)

        cands = self._candidates(req)
        # best class first, then source order; a line that does not fit is skipped
        cands.sort(key=lambda c: (c[0], c[1]))
        chosen: list[tuple[int, tuple[int, int], str]] = []
        seen: set[str] = set()
        section_cost = {}
        for cls, pos, line in cands:
            if line in seen:
                continue
            cost = len(line) + 3 + (0 if cls in section_cost else len("### Decisions") + 2)
            if cost <= room:
                chosen.append((cls, pos, line))
                seen.add(line)
                section_cost[cls] = True
                room -= cost
        if not chosen and not prev_lines and cands:
            # never return an empty summary for a non-empty span: the request, clipped
            cls, pos, line = cands[0]
            chosen.append((cls, pos, clip(line, max(8, budget - len(header) - 20))))

        parts = [header]
        if prev_lines:
            parts.append("### Previous summary\n" + "\n".join(prev_lines))
        for cls, title in _SECTION_TITLES:
            lines = sorted((c for c in chosen if c[0] == cls), key=lambda c: c[1])
            if lines:
                parts.append(f"### {title}\n" + "\n".join("- " + c[2] for c in lines))
        text = "\n\n".join(parts) + "\n"
        if self.tokenizer:
            from workbench.tokens.tokenizers import count_text

            tokens = count_text(text, self.tokenizer)
        else:
            tokens = approx_tokens(text, self.chars_per_token)
        diag = {"status": STATUS_OK, "target_tokens": req.target_tokens, "tokens": tokens,
                "target_chars": budget, "lines": len(chosen), "candidates": len(cands),
                "previous_lines": len(prev_lines),
                "selected_seqs": sorted({c[1][0] for c in chosen})}
        return SummaryResult(text=text, backend=self.name, diagnostics=diag)

    def _candidates(self, req: SummaryRequest) -> list[tuple[int, tuple[int, int], str]]:
        events = req.events
        first_user = next((ev.seq for ev in events if ev.role == "user" and ev.kind == "message"
                           and ev.text.strip()), None)
        last_assistant = next((ev.seq for ev in reversed(events) if ev.role == "assistant"
                               and ev.kind == "message" and ev.text.strip()), None)
        out = []
        for ev in events:
            for i, raw in enumerate(ev.text.split("\n")):
                line = raw.strip()
                if not line or not any(ch.isalnum() for ch in line):
                    continue
                line = clip(line, self.max_line_chars)
                if ev.seq == first_user:
                    cls = _REQUEST
                elif ev.seq == last_assistant:
                    cls = _CURRENT
                elif ERROR_RE.search(line):
                    cls = _ERROR
                elif DECISION_RE.search(line) and ev.kind in ("message", "reasoning", "summary"):
                    cls = _DECISION
                elif DETAIL_RE.search(line):
                    cls = _DETAIL
                else:
                    continue
                out.append((cls, (ev.seq, i), line))
        return out
