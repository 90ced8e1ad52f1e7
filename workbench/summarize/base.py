"""Types shared by every summarizer backend, their errors, and small text helpers.

A backend turns a :class:`SummaryRequest` (the span being compacted, the previous summary
for folded summaries, and the size the engine's size model chose) into a
:class:`SummaryResult`. Backends are stateless apart from the HTTP backend's per-session
negative cache; every result carries ``diagnostics["status"]`` (``"ok"`` when a summary was
produced).

>>> req = SummaryRequest("c0", "a1", 0, 1, (SpanEvent(0, "message", "user", "Fix the bug."),
...                      SpanEvent(1, "message", "assistant", "Done.")), None, 50)
>>> print(render_span(req.events))
[0] user message:
Fix the bug.
<BLANKLINE>
[1] assistant message:
Done.
>>> approx_tokens("abcdefgh")
2
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from workbench.errors import WorkbenchError

PURPOSES = ("compaction", "flush", "merge")
CHARS_PER_TOKEN = 4.0
STATUS_OK = "ok"
STATUS_UNSUPPORTED = "unsupported_endpoint"
STATUS_SKIPPED_UNSUPPORTED = "skipped_unsupported_endpoint"


# --------------------------------------------------------------------------- errors


class SummarizerError(WorkbenchError):
    """A summarizer could not produce a summary (bad options, missing data, endpoint)."""


class SummarizerConfigError(SummarizerError):
    """Unknown backend name or invalid backend options."""


class RecordedSummaryMissingError(SummarizerError):
    """The recorded backend knows no summary for the requested artifact."""


class EndpointError(SummarizerError):
    """An HTTP endpoint answered with an error (or not at all).

    ``status`` is the HTTP status (``None`` for transport failures), ``endpoint`` the URL
    path that failed and ``body`` the first characters of the response body.
    """

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = "",
                 body: str = ""):
        self.status = status
        self.endpoint = endpoint
        self.body = body
        super().__init__(message)


class InvalidProviderInputError(EndpointError):
    """The provider rejected the request items (e.g. "items are not persisted").

    Holon §5: such a 404 is not an endpoint capability failure, so it never negative-caches
    the endpoint; the request has to be rebuilt (strip provider item ids, ``store=false``).
    """


class TransientEndpointError(EndpointError):
    """A transient failure (timeout, connection reset/refused, 408/409/429/5xx) persisted
    through every retry. ``attempts`` says how many requests were made."""

    def __init__(self, message: str, *, attempts: int, **kw):
        self.attempts = attempts
        super().__init__(message, **kw)


class CassetteError(SummarizerError):
    """A cassette file is malformed or cannot be written."""


class CassetteMissError(CassetteError):
    """Replay mode asked for a request the cassette never recorded."""

    def __init__(self, message: str, *, key: str):
        self.key = key
        super().__init__(message)


# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """One event of the span being summarized (slots: an index of a million-event dataset
    holds one per event)."""

    seq: int
    kind: str   # "message", "tool_call", "tool_result", "reasoning", "summary", ...
    role: str   # "user", "assistant", "system", "tool", ...
    text: str


class SpanEvents(Sequence):
    """The events of a span as columns, standing for the tuple of :class:`SpanEvent` it
    equals (and hashes, pickles and iterates as). A dataset's index hands these out: a span
    of thousands of events costs four array gathers, and the event objects are made only
    when something iterates or indexes it (``objects``: where they come from, e.g. a cache
    shared by every span of the dataset; default: made here). A backend reading only some
    fields reads the columns instead: ``seqs`` (an int array), ``kinds``, ``roles`` and
    ``texts`` (lists of str, each distinct text one shared string)."""

    __slots__ = ("seqs", "_kind_codes", "_role_codes", "_text_codes", "_kind_names", "_role_names",
                 "_table", "_objects", "_events")

    def __init__(self, seqs, kind_codes, role_codes, text_codes, kind_names, role_names, table,
                 objects=None):
        """Integer arrays of one length (seq, kind, role and text code per event) and what the
        codes name: object arrays indexed by code (``kind_names``, ``role_names``, ``table``)."""
        self.seqs = seqs
        self._kind_codes, self._role_codes, self._text_codes = kind_codes, role_codes, text_codes
        self._kind_names, self._role_names, self._table = kind_names, role_names, table
        self._objects = objects
        self._events: tuple[SpanEvent, ...] | None = None

    @property
    def texts(self) -> list[str]:
        return self._table[self._text_codes].tolist()

    @property
    def kinds(self) -> list[str]:
        return self._kind_names[self._kind_codes].tolist()

    @property
    def roles(self) -> list[str]:
        return self._role_names[self._role_codes].tolist()

    def events(self) -> tuple[SpanEvent, ...]:
        """The events as objects (made once per span)."""
        if self._events is None:
            self._events = (self._objects() if self._objects is not None else
                            tuple(map(SpanEvent, self.seqs.tolist(), self.kinds, self.roles, self.texts)))
        return self._events

    def __len__(self) -> int:
        return len(self.seqs)

    def __getitem__(self, i):
        return self.events()[i]

    def __iter__(self):
        return iter(self.events())

    def __reversed__(self):
        return reversed(self.events())

    def __eq__(self, other) -> bool:
        if isinstance(other, SpanEvents | tuple):
            return self.events() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.events())

    def __reduce__(self):
        return tuple, (self.events(),)

    def __repr__(self) -> str:
        return f"SpanEvents({self.events()!r})"


def span_columns(events: Sequence[SpanEvent]) -> tuple[list[int], list[str], list[str], list[str]]:
    """``(seqs, kinds, roles, texts)`` of ``events``: read from a :class:`SpanEvents`' columns
    (no event object made), else event by event."""
    if isinstance(events, SpanEvents):
        return events.seqs.tolist(), events.kinds, events.roles, events.texts
    return [e.seq for e in events], [e.kind for e in events], [e.role for e in events], [e.text for e in events]


@dataclass(frozen=True, slots=True)
class SpanCodes:
    """A span's events as integer columns: ``seqs`` (int64), and per event the code of its
    kind, role and text (int64) into ``kind_names``, ``role_names`` and ``table`` (sequences
    indexed by code; a text table holds each text once). ``shared``: the names and the table
    are a dataset's own, the same objects for every span of it (what is worked out per text
    code can be kept); else they were made for this span alone."""

    seqs: object
    kind: object
    role: object
    text: object
    kind_names: Sequence
    role_names: Sequence
    table: Sequence
    shared: bool


def span_codes(events: Sequence[SpanEvent]) -> SpanCodes:
    """:class:`SpanCodes` of ``events``: a :class:`SpanEvents`' own columns (no string read),
    else the events' fields numbered here (equal strings, equal codes)."""
    import numpy as np

    if isinstance(events, SpanEvents):
        return SpanCodes(np.asarray(events.seqs, dtype=np.int64), events._kind_codes.astype(np.int64),
                         events._role_codes.astype(np.int64), events._text_codes.astype(np.int64),
                         events._kind_names, events._role_names, events._table, True)
    seqs, kinds, roles, texts = span_columns(events)
    coded = []
    for values in (kinds, roles, texts):
        ids: dict[str, int] = {}
        codes = [ids.setdefault(v, len(ids)) for v in values]
        coded += [np.array(codes, dtype=np.int64), list(ids)]
    return SpanCodes(np.array(seqs, dtype=np.int64), coded[0], coded[2], coded[4], coded[1], coded[3], coded[5],
                     False)


def events_at(events: Sequence[SpanEvent], seqs: set[int]) -> tuple[dict[int, str], dict[int, str]]:
    """``(kinds, texts)``: the kind and text of the events of ``events`` whose seq is in
    ``seqs``, by seq (of events sharing a seq, the last)."""
    if not seqs:
        return {}, {}
    if isinstance(events, SpanEvents):
        import numpy as np

        if len(seqs) > 16:
            wanted = np.isin(events.seqs, list(seqs))
        else:
            wanted = np.zeros(len(events.seqs), dtype=bool)
            for seq in seqs:  # (a few seqs: compared one by one, cheaper than np.isin)
                wanted |= events.seqs == seq
        at = np.flatnonzero(wanted).tolist()
        kinds = events._kind_names[events._kind_codes[at]].tolist()
        texts = events._table[events._text_codes[at]].tolist()
        found = events.seqs[at].tolist()
        return dict(zip(found, kinds, strict=True)), dict(zip(found, texts, strict=True))
    kinds, texts = {}, {}
    for ev in events:
        if ev.seq in seqs:
            kinds[ev.seq], texts[ev.seq] = ev.kind, ev.text
    return kinds, texts


@dataclass(frozen=True)
class SpanLabel:
    """A planted fact or secret inside the span.

    For a fact ``surface == value == answer``; for a secret ``surface`` is the text as it
    appears in event ``seq`` at ``[start:end]`` (possibly transformed) and ``value`` the
    plaintext secret. Only the modelled backend looks at labels.
    """

    label_id: str
    kind: str
    seq: int
    start: int
    end: int
    surface: str
    value: str
    is_fact: bool


@dataclass(frozen=True)
class SummaryRequest:
    continuity_id: str
    artifact_id: str
    from_seq: int
    to_seq: int
    events: tuple[SpanEvent, ...] | SpanEvents
    previous_summary: str | None
    target_tokens: int
    labels: tuple[SpanLabel, ...] = ()
    purpose: str = "compaction"  # "compaction" | "flush" | "merge"
    # the provider session the call belongs to (one continuity replayed under one policy;
    # "": the continuity's own): the scope of an endpoint's negative cache (Holon §5)
    session: str = ""
    # what a seeded summarizer draws its randomness from (None: the artifact id): the
    # compaction's position in its run, since an artifact id is the hash of the artifact's
    # document and a summary cannot be drawn from the name of what it produces
    draw_key: str | None = None

    @property
    def draw(self) -> str:
        return self.artifact_id if self.draw_key is None else self.draw_key

    @property
    def provider_session(self) -> str:
        return self.session or self.continuity_id


@dataclass(frozen=True)
class SummaryResult:
    text: str
    backend: str
    retained: tuple[str, ...] = ()
    diagnostics: dict = field(default_factory=dict)
    opaque: bool = False

    @property
    def ok(self) -> bool:
        """True unless the backend reports a non-"ok" status (e.g. a skipped endpoint)."""
        return self.diagnostics.get("status", STATUS_OK) == STATUS_OK


@runtime_checkable
class Summarizer(Protocol):
    """A backend. It may also set ``keyed_by_artifact = False`` when its output depends
    on the span, previous summary, size and purpose only (not on the continuity and
    artifact ids): callers that memoise summaries then share one text between policies
    that compact the same span."""

    name: str

    def summarize(self, request: SummaryRequest) -> SummaryResult: ...


# --------------------------------------------------------------------------- helpers


def check_request(request: SummaryRequest) -> None:
    """Reject requests no backend can honour (clear message, workbench error)."""
    if request.purpose not in PURPOSES:
        raise SummarizerConfigError(
            f"unknown summary purpose {request.purpose!r}; known: {', '.join(PURPOSES)}")
    if request.target_tokens < 0:
        raise SummarizerConfigError(f"target_tokens must be >= 0, got {request.target_tokens}")
    if request.from_seq > request.to_seq:
        raise SummarizerConfigError(
            f"from_seq {request.from_seq} > to_seq {request.to_seq} for {request.artifact_id}")


def check_probability(name: str, p: float) -> float:
    p = float(p)
    if not (0.0 <= p <= 1.0) or math.isnan(p):
        raise SummarizerConfigError(f"{name} must be a probability in [0, 1], got {p}")
    return p


def approx_tokens(text: str, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """``ceil(chars / chars_per_token)``: the budget heuristic most harnesses use."""
    return math.ceil(len(text) / chars_per_token)


def stable_seed(*parts) -> int:
    """A 63-bit seed from a hash of ``parts`` (JSON-encodable): independent of call order,
    process and ``PYTHONHASHSEED``."""
    blob = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), default=str)
    return int.from_bytes(hashlib.blake2b(blob.encode(), digest_size=8).digest(), "big") >> 1


def render_span(events: Sequence[SpanEvent]) -> str:
    """The span as plain text, one block per event (used as the summarizer's user input)."""
    blocks = []
    for ev in events:
        head = f"[{ev.seq}] {ev.role} {ev.kind.replace('_', ' ')}:"
        blocks.append(f"{head}\n{ev.text}")
    return "\n\n".join(blocks)


# sentence splitting for the text backends

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[*-])")


def iter_sentences(text: str, *, min_chars: int = 1):
    """``(start, end)`` of each sentence-ish piece of ``text``: lines, split at sentence
    ends; blank pieces and pieces shorter than ``min_chars`` are skipped."""
    return iter(sentence_bounds(text, min_chars))


def sentence_bounds(text: str, min_chars: int = 1) -> list[tuple[int, int]]:
    """:func:`iter_sentences` as a list (one call per text: the filler reads thousands)."""
    out = []
    pos = 0
    for line in text.split("\n"):
        lstart = pos
        pos += len(line) + 1
        # (a line without . ! or ? has no sentence end: it is one piece)
        cuts = ([(m.start(), m.end()) for m in _SENT_END.finditer(line)]
                if "." in line or "!" in line or "?" in line else ())
        a = 0
        for b, nxt in (*cuts, (len(line), 0)):
            seg = line[a:b]
            stripped = seg.strip()
            if len(stripped) >= min_chars and stripped:
                lead = lstart + a + len(seg) - len(seg.lstrip())
                out.append((lead, lead + len(stripped)))
            a = nxt
    return out


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    if cut < limit // 2:
        cut = limit - 1
    return text[:cut].rstrip() + "\u2026"


def one_line(text: str) -> str:
    return " ".join(text.split())
