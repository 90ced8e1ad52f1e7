"""The modelled summarizer: a seeded stand-in for an LLM summary, with known failure rates.

Given the span and its planted labels it writes a compaction summary shaped like a real
one (intent, earlier context, key facts and decisions, files and code, errors, problem
solving, pending tasks, current work) whose content is drawn from the span's own text, and
it decides per label, with fixed probabilities:

* a planted fact is kept (its sentence appears in *Key facts*) with ``p_retain_fact`` (or
  ``keep_fact(label, request)``, a calibrated per-fact probability:
  :mod:`workbench.summarize.retention_profile`; with ``task_state``, a task-state checkpoint,
  a fact of kind ``task`` always, in a *Task state* section of its own),
  else paraphrased with ``p_paraphrase_fact`` (the sentence with the answer in one of its
  alternate forms, :mod:`workbench.synth.fact_forms`; a kind without one is dropped),
  else dropped;
* a planted secret is copied verbatim with ``p_copy_secret``, copied in part (a fragment
  of >= 12 characters or >= 50% of it, the leak criterion of the evaluations) with
  ``p_partial_secret``, else left out;
* once per summary, with ``p_hallucinate``, a secret-shaped string that was never in the
  source is written (drawn with the real format generators of
  :mod:`workbench.synth.secrets`): RFC 0012 §D SR-1 says summarizers may do exactly that;
* once per summary, with ``p_marker_leak``, secret-shaped content is wrapped in a leaked
  marker format (``[BYOK:...]``, or ``<REDACTED:kind>`` glued to a raw tail).

Everything the summary says outside those decisions is filler taken from span sentences
that touch no label (nor any occurrence of a label's text), so a dropped fact or omitted
secret cannot sneak back in; a span with far more text than the summary can hold is read
through a random subset of its events. A ``previous_summary`` is carried forward line by
line, each line kept with ``p_retain_fact`` (folding loses detail), within half the
budget (with ``task_state``, the lines of its *Task state* section always). The size
follows ``target_tokens`` (about 4 characters a token); kept labels are always written,
even past the target (``diagnostics["over_budget"]``).

``result.retained`` lists the fact labels kept and the secret labels copied verbatim;
``diagnostics`` has ``retained_facts``, ``paraphrased_facts``, ``dropped_facts``, ``incidental_facts`` (dropped
but present anyway, e.g. via the previous summary), ``copied_secrets``, ``partial_secrets``
(label id and fragment), ``omitted_secrets``, ``kept_negatives`` (hard-negative labels),
``hallucinated`` (count) and ``hallucinated_secrets`` (format, text, value),
``marker_leaks`` (style, source, text), ``tokens``, ``over_budget``.

With ``filler=False`` a summary is its decided lines alone (the labels' lines, the
hallucinated and marker lines, the carried lines of the previous summary): no filler is
drawn, so a summary is a small fraction of its target size, the carry's room goes to decided
lines only, and every evaluation reads what the summarizer decided and nothing else (no
SR-1 finding and no incidental mention in a filler sentence). It is the profile for sweeps
and million-event runs (an evaluated run of 1 M events in half the CPU:
``benchmarks/bench_evaluate.py``); its figures are its own, not the default's.

Randomness comes from a hash of ``(seed, continuity_id, request.draw)`` (the compaction's
position, else the artifact id) (and the label id
for per-label draws), so a result never depends on call order, concurrency or on which
other labels share the span.

A summary is decided, then written: :meth:`ModelledSummarizer.decide` makes every choice
above as numbers (:class:`~workbench.summarize.decisions.SummaryDecisions`: the per-label
actions, drawn for any number of summaries at once by
:func:`~workbench.summarize.decisions.draw_label_decisions`; the hallucinated string, the
marker leak, the carried lines, the generator state the filler continues from) and
:meth:`ModelledSummarizer.write` writes the text from that record alone; ``summarize`` is
the two in turn. What a summary keeps can so be known without its text, and the text,
when it is written, holds exactly that.

>>> from workbench.summarize.base import SpanEvent, SpanLabel, SummaryRequest
>>> text = "Please fix the retry loop. The staging database port is 6432, not the default."
>>> i = text.index("6432")
>>> lab = SpanLabel("fact-1", "port", 3, i, i + 4, "6432", "6432", True)
>>> req = SummaryRequest("c", "art-1", 3, 3, (SpanEvent(3, "message", "user", text),), None,
...                      200, labels=(lab,))
>>> s = ModelledSummarizer(seed=1, p_retain_fact=1.0)
>>> r = s.summarize(req)
>>> "6432" in r.text and r.retained == ("fact-1",)
True
>>> s.summarize(req) == r
True
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from operator import methodcaller

import numpy as np

from workbench.summarize.base import (
    CHARS_PER_TOKEN,
    STATUS_OK,
    SpanLabel,
    SummarizerConfigError,
    SummaryRequest,
    SummaryResult,
    approx_tokens,
    check_probability,
    check_request,
    events_at,
    iter_sentences,
    one_line,
    span_columns,
    stable_seed,
)
from workbench.summarize.decisions import (
    FACT_DROP,
    FACT_KEEP,
    FACT_PARAPHRASE,
    NEGATIVE_KEEP,
    SECRET_COPY,
    SECRET_OMIT,
    SECRET_PARTIAL,
    SummaryDecisions,
    draw_label_decisions,
)
from workbench.summarize.filler import Item as _Item
from workbench.summarize.filler import fill_columns, label_guards
from workbench.summarize.filler_text import ERROR_RE

HALLUCINATED = "\x00hallucinated"  # the marker leak's target when it wraps the hallucinated string
TASK_KIND = "task"  # task-state facts (synthetic: workbench.synth.task_state; real: log_facts)

# section keys in output order, and their titles per purpose
SECTIONS = ("intent", "earlier", "task", "facts", "files", "errors", "solving", "pending", "current")
_TITLES = {
    "compaction": {
        "intent": "Primary request and intent", "earlier": "Earlier context",
        "task": "Task state (done, remaining, next step)", "facts": "Key facts and decisions",
        "files": "Files and code", "errors": "Errors and fixes", "solving": "Problem solving",
        "pending": "Pending tasks", "current": "Current work",
    },
    "flush": {
        "intent": "Context", "earlier": "Existing notes", "task": "Task state", "facts": "Durable facts",
        "files": "Files", "errors": "Known problems", "solving": "Notes",
        "pending": "Open items", "current": "Latest state",
    },
}
_TITLES["merge"] = _TITLES["compaction"]
_HEADERS = {
    "compaction": "## Summary of the conversation so far (events {a}-{b})",
    "merge": "## Merged summary (events {a}-{b})",
    "flush": "## Memory notes (events {a}-{b})",
}

_WS_RE = re.compile(r"\s+")
_SECTION_PLACE = {name: i for i, name in enumerate(SECTIONS)}
_JOINED = ("intent", "current")  # sections written as one paragraph
_FENCED = methodcaller("startswith", "```")


def _needle_pattern(needle: str) -> str:
    return ((r"(?<![\w.])" if needle[0].isalnum() else "") + re.escape(needle)
            + (r"(?!\w)" if needle[-1].isalnum() else ""))


def _mentions(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` (as a whole token when it is short)."""
    if not needle:
        return False
    if len(needle) >= 8:
        return needle in haystack
    return re.search(_needle_pattern(needle), haystack) is not None


def _snippet(text: str, start: int, end: int, limit: int) -> tuple[str, int, int]:
    """A readable piece of ``text`` containing ``[start:end]`` whole: the sentence when it
    is short enough, else a window on the span's line(s). Returns ``(piece, s, e)`` with
    ``piece[s:e] == text[start:end]``."""
    # (only the sentences of start's own line can hold it: an earlier line's end before it)
    left = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    for a, b in iter_sentences(text[left:len(text) if line_end < 0 else line_end]):
        a, b = a + left, b + left
        if a <= start and end <= b and b - a <= limit:
            return text[a:b], start - a, end - a
        if a > start:
            break
    right = text.find("\n", end)
    right = len(text) if right < 0 else right
    room = max(0, limit - (end - start)) // 2
    left = max(left, start - room)
    right = min(right, end + room)
    piece = text[left:right]
    return piece, start - left, end - left


def _fact_template(label: SpanLabel) -> str:
    return f"Noted {label.kind.replace('_', ' ')}: {label.value}"


class ModelledSummarizer:
    """Seeded, label-aware summary model. See the module docstring."""

    name = "modelled"
    keyed_by_artifact = True  # its draws are seeded by (seed, continuity id, artifact id)

    def __init__(self, seed: int | None = 0, *, p_retain_fact: float = 0.8, p_paraphrase_fact: float = 0.0,
                 p_copy_secret: float = 0.3,
                 p_partial_secret: float = 0.15, p_hallucinate: float = 0.05,
                 p_marker_leak: float = 0.05, p_keep_negative: float = 0.3,
                 copy_form: str = "surface", chars_per_token: float = CHARS_PER_TOKEN,
                 tokenizer: str | None = None, max_item_chars: int = 240,
                 keep_fact: Callable[[SpanLabel, SummaryRequest], float] | None = None,
                 task_state: bool = False, filler: bool = True):
        self.seed = 0 if seed is None else int(seed)
        if not isinstance(filler, bool):  # (a spec's "no" must not read as true)
            raise SummarizerConfigError(f"filler must be true or false, got {filler!r}")
        self.filler = filler
        # a fact's own keep probability (a calibrated profile) in place of p_retain_fact
        self.keep_fact = keep_fact
        # a task-state checkpoint (the policy's compaction.task_state_tokens): every task-state
        # fact is kept, in a section of its own; the other facts as without it
        self.task_state = bool(task_state)
        self.p_retain_fact = check_probability("p_retain_fact", p_retain_fact)
        self.p_paraphrase_fact = check_probability("p_paraphrase_fact", p_paraphrase_fact)
        if self.p_retain_fact + self.p_paraphrase_fact > 1.0 + 1e-12:
            raise SummarizerConfigError("p_retain_fact + p_paraphrase_fact must be <= 1, got "
                                        f"{self.p_retain_fact} + {self.p_paraphrase_fact}")
        self.p_copy_secret = check_probability("p_copy_secret", p_copy_secret)
        self.p_partial_secret = check_probability("p_partial_secret", p_partial_secret)
        if self.p_copy_secret + self.p_partial_secret > 1.0 + 1e-12:
            raise SummarizerConfigError("p_copy_secret + p_partial_secret must be <= 1, got "
                                        f"{self.p_copy_secret} + {self.p_partial_secret}")
        self.p_hallucinate = check_probability("p_hallucinate", p_hallucinate)
        self.p_marker_leak = check_probability("p_marker_leak", p_marker_leak)
        self.p_keep_negative = check_probability("p_keep_negative", p_keep_negative)
        if copy_form not in ("surface", "value"):
            raise SummarizerConfigError(
                f"copy_form must be 'surface' (as it appears) or 'value' (plaintext), got {copy_form!r}")
        self.copy_form = copy_form
        if chars_per_token <= 0:
            raise SummarizerConfigError(f"chars_per_token must be > 0, got {chars_per_token}")
        self.chars_per_token = float(chars_per_token)
        self.tokenizer = tokenizer
        self.max_item_chars = int(max_item_chars)

    def __repr__(self) -> str:
        return (f"ModelledSummarizer(seed={self.seed}, p_retain_fact={self.p_retain_fact}, "
                f"p_paraphrase_fact={self.p_paraphrase_fact}, "
                f"p_copy_secret={self.p_copy_secret}, p_partial_secret={self.p_partial_secret}, "
                f"p_hallucinate={self.p_hallucinate}, p_marker_leak={self.p_marker_leak}"
                f"{'' if self.filler else ', filler=False'})")

    # ------------------------------------------------------------------ api

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        check_request(request)
        return self.write(request, self.decide(request))  # (one owner each: the numbers, the text)

    def copied_form(self, lb: SpanLabel) -> str:
        """The string a copy of secret ``lb`` writes: as it appears, or its plaintext."""
        return (lb.value if self.copy_form == "value" else lb.surface) or lb.value

    def decide(self, request: SummaryRequest) -> SummaryDecisions:
        """Every decision of the summary of ``request``, before its text
        (:mod:`workbench.summarize.decisions`)."""
        from workbench.synth import secrets as sec

        req = request
        rng = np.random.default_rng(stable_seed("modelled", self.seed, req.continuity_id, req.draw))
        labels = draw_label_decisions(self, [req])[0]

        def fresh_secret(fmt: str) -> str:
            # (the source is read only here: a summary draws a fresh secret once in ~20)
            source_texts = [*span_columns(req.events)[3], req.previous_summary or ""]
            for _ in range(16):
                s = sec.FORMATS[fmt](rng)
                if not any(s in t for t in source_texts):
                    return s
            raise SummarizerConfigError("could not draw a secret-shaped string absent from the source")  # pragma: no cover

        # ---- hallucination: a secret-shaped string never seen in the source
        hallucinated = None
        if rng.random() < self.p_hallucinate:
            fmt = sec.SECRET_FORMATS[int(rng.integers(len(sec.SECRET_FORMATS)))]
            raw = fresh_secret(fmt)
            sentence, _, _ = sec.CONTEXT_FUNCS["prose"](raw, rng, kind=fmt)
            a, b = sec.secret_span(fmt, raw)
            hallucinated = {"format": fmt, "text": raw, "value": raw[a:b], "sentence": sentence}

        # ---- marker leak: secret-shaped content inside a leaked marker format
        marker = None
        if rng.random() < self.p_marker_leak:
            copies = [(lb.label_id, w) for lb, a, w in zip(labels.labels, labels.action.tolist(), labels.written,
                                                            strict=True) if a == SECRET_COPY]
            marker = self._marker_leak(rng, copies, hallucinated, fresh_secret)

        # ---- carried lines of the previous summary (folding loses lines like facts)
        budget = int(req.target_tokens * self.chars_per_token)
        carried = self._carry(rng, req.previous_summary, budget // 2)
        return SummaryDecisions(labels, hallucinated, marker, carried, rng.bit_generator.state)

    def write(self, request: SummaryRequest, decisions: SummaryDecisions) -> SummaryResult:
        """The summary's text, written from ``decisions`` alone (and the span's own text)."""
        req, dec = request, decisions
        # the text and kind of the events labels point at (no other event read)
        kinds, texts = events_at(req.events, {lb.seq for lb in dec.labels.labels})
        spans_by_seq, needles = label_guards(dec.labels.labels)
        diag = self._new_diagnostics(req)
        items = self._decided_items(req, dec, kinds, texts, spans_by_seq, diag)
        # the summary's lines as columns (section, source position, text), in the order written:
        # the labels' lines, the carried lines, then the filler
        sections = [it.section for it in items]
        seqs = [it.key[0] for it in items]
        starts = [it.key[1] for it in items]
        lines = [it.text for it in items]
        if dec.carried:
            carried_sections, carried_at, carried_lines = zip(*dec.carried, strict=True)
            sections.extend(carried_sections)
            seqs.extend([-1] * len(carried_at))
            starts.extend(carried_at)
            lines.extend(carried_lines)

        # ---- filler from the span's own sentences, up to the target size
        budget = int(req.target_tokens * self.chars_per_token)
        filler_items = 0
        if self.filler:
            used = self._rendered_size(req, sections, lines)
            rng = np.random.Generator(np.random.PCG64(0))  # (its state is replaced: no entropy drawn)
            rng.bit_generator.state = dec.filler_state
            filler = fill_columns(rng, req.events, spans_by_seq, needles, budget - used, set(sections),
                                  _TITLES[req.purpose], self.max_item_chars)
            sections.extend(filler.section)
            seqs.extend(filler.seq)
            starts.extend(filler.start)
            lines.extend(filler.text)
            filler_items = len(filler.text)

        text = self._render(req, sections, seqs, starts, lines)
        return self._finished(text, dec, diag, budget, filler_items=filler_items)

    def _new_diagnostics(self, req: SummaryRequest) -> dict:
        """The diagnostics of a summary before its lines are decided (see the module docstring)."""
        return {
            "status": STATUS_OK, "seed": self.seed, "target_tokens": req.target_tokens,
            "retained_facts": [], "paraphrased_facts": [], "dropped_facts": [], "copied_secrets": [],
            "partial_secrets": [], "omitted_secrets": [], "kept_negatives": [],
            "hallucinated": 0, "hallucinated_secrets": [], "marker_leaks": [],
        }

    def _finished(self, text: str, dec: SummaryDecisions, diag: dict, budget: int, *,
                  filler_items: int) -> SummaryResult:
        """The result of a written summary: ``diag`` completed with what only the text says
        (its tokens, its size against ``budget`` characters, the dropped facts it mentions)."""
        if self.tokenizer:
            from workbench.tokens.tokenizers import count_text

            tokens = count_text(text, self.tokenizer)
        else:
            tokens = approx_tokens(text, self.chars_per_token)
        dropped = set(diag["dropped_facts"])
        diag["incidental_facts"] = [lb.label_id for lb in dec.labels.labels
                                    if lb.label_id in dropped and _mentions(text, lb.value)]
        diag.update(tokens=tokens, target_chars=budget, over_budget=len(text) > budget,
                    filler_items=filler_items, carried_lines=len(dec.carried))
        return SummaryResult(text=text, backend=self.name, retained=dec.retained(), diagnostics=diag)

    def _decided_items(self, req: SummaryRequest, dec: SummaryDecisions, kinds: dict, texts: dict,
                       spans_by_seq: dict, diag: dict) -> list[_Item]:
        """The lines ``dec`` decides (the labels kept, paraphrased or copied, the hallucinated
        secret, the marker leak), each with its section and source position; what each label
        became is recorded in ``diag``."""
        items: list[_Item] = []
        by_label: dict[str, _Item] = {}
        for lb, action, written in zip(dec.labels.labels, dec.labels.action.tolist(), dec.labels.written,
                                       strict=True):
            key = (lb.seq, lb.start)
            if action == FACT_KEEP:
                section = "task" if self.task_state and lb.kind == TASK_KIND else "facts"
                items.append(_Item(section, key, self._fact_line(lb, texts, spans_by_seq)))
                diag["retained_facts"].append(lb.label_id)
            elif action == FACT_PARAPHRASE:
                items.append(_Item("facts", key, self._fact_line(lb, texts, spans_by_seq, written=written)))
                diag["paraphrased_facts"].append(lb.label_id)
            elif action == FACT_DROP:
                diag["dropped_facts"].append(lb.label_id)
            elif action in (NEGATIVE_KEEP, SECRET_COPY, SECRET_PARTIAL):
                shown = written + "\u2026" if action == SECRET_PARTIAL else written
                line, _ = self._secret_line(lb, texts, spans_by_seq, shown)
                item = by_label[lb.label_id] = _Item(self._section_of(lb, kinds, line), key, line)
                items.append(item)
                diag[{NEGATIVE_KEEP: "kept_negatives", SECRET_COPY: "copied_secrets"}.get(action, "partial_secrets")
                     ].append({"label_id": lb.label_id, "fragment": written} if action == SECRET_PARTIAL
                              else lb.label_id)
            elif action == SECRET_OMIT:
                diag["omitted_secrets"].append(lb.label_id)
        if dec.hallucinated is not None:
            h = dec.hallucinated
            item = by_label[HALLUCINATED] = _Item("facts", (req.to_seq + 1, 0), h["sentence"])
            items.append(item)
            diag["hallucinated"] = 1
            diag["hallucinated_secrets"].append({k: h[k] for k in ("format", "text", "value")})
        if dec.marker is not None:
            m = dec.marker
            target = by_label.get(m["target"])
            if target is not None:
                target.text = target.text.replace(m["replaces"], m["text"], 1)
            else:
                template = ("Left the placeholder {w} in the config for the next run."
                            if "\n" not in m["text"] else "Left this placeholder in the config:\n{w}")
                items.append(_Item("files", (req.to_seq + 1, 1), template.format(w=m["text"])))
            diag["marker_leaks"].append({k: v for k, v in m.items() if k not in ("replaces", "target")})
        return items

    def keep_probability_of(self, lb: SpanLabel, req: SummaryRequest) -> float:
        """The probability that fact ``lb`` is kept: 1 for a task-state fact under a task-state
        checkpoint, else ``keep_fact`` (a calibrated profile) or ``p_retain_fact``."""
        if self.task_state and lb.kind == TASK_KIND:
            return 1.0
        if self.keep_fact is None:
            return self.p_retain_fact
        return check_probability("keep_fact", self.keep_fact(lb, req))

    # ------------------------------------------------------------------ pieces

    def _fact_line(self, lb: SpanLabel, texts: dict, spans_by_seq: dict, written: str | None = None) -> str:
        """The fact's sentence, or a template; with ``written`` the answer is written that way
        instead (a paraphrase: the exact answer must not remain anywhere in the line)."""
        template = _fact_template(lb) if written is None else f"Noted {lb.kind.replace('_', ' ')}: {written}"
        text = texts.get(lb.seq)
        if text is None or text[lb.start:lb.end] != lb.surface:
            return template
        piece, s, e = _snippet(text, lb.start, lb.end, self.max_item_chars)
        a = lb.start - s
        b = a + len(piece)
        if any(x < b and a < y for x, y, lid in spans_by_seq.get(lb.seq, ()) if lid != lb.label_id):
            return template
        if written is None:
            line = one_line(piece)
            return line if _mentions(line, lb.value) else template
        line = one_line(piece[:s] + written + piece[e:])
        return template if lb.value in line else line

    def _secret_line(self, lb: SpanLabel, texts: dict, spans_by_seq: dict,
                     written: str) -> tuple[str, bool]:
        """A summary line quoting the secret's context with ``written`` in its place.

        Returns ``(line, from_context)``; falls back to a template when the label does not
        point into the span or its context holds another label.
        """
        text = texts.get(lb.seq)
        ok = text is not None and 0 <= lb.start <= lb.end <= len(text) and (
            text[lb.start:lb.end] == lb.surface)
        if ok:
            piece, s, e = _snippet(text, lb.start, lb.end, self.max_item_chars)
            a = lb.start - s
            b = a + len(piece)
            ok = not any(x < b and a < y for x, y, lid in spans_by_seq.get(lb.seq, ())
                         if lid != lb.label_id)
        if not ok:
            kind = lb.kind.replace("_", " ")
            return f"Credential seen in event {lb.seq} ({kind}): {written}", False
        before = _WS_RE.sub(" ", piece[:s]).lstrip()
        after = _WS_RE.sub(" ", piece[e:]).rstrip()
        if "\n" in written:
            return f"{before.rstrip()}\n```\n{written}\n```\n{after.lstrip()}".strip(), True
        return f"{before}{written}{after}".strip(), True

    @staticmethod
    def _section_of(lb: SpanLabel, kinds: dict, line: str) -> str:
        if ERROR_RE.search(line):
            return "errors"
        if kinds.get(lb.seq) in ("tool_call", "tool_result"):
            return "files"
        return "facts"

    @staticmethod
    def _marker_leak(rng, copies: list[tuple[str, str]], hallucinated: dict | None, fresh_secret) -> dict:
        """The marker leak's record: what it writes (``text``) and, for a copied or hallucinated
        secret, the string it wraps there (``replaces``; None: a line of its own)."""
        from workbench.synth import secrets as sec

        byok = rng.random() < 0.7
        if copies:
            label_id, s = copies[int(rng.integers(len(copies)))]
            return {"style": "byok", "source": "copied", "label_id": label_id, "text": f"[BYOK:{s}]",
                    "replaces": s, "target": label_id}
        if hallucinated is not None:
            s, fmt, source, target = hallucinated["text"], hallucinated["format"], "hallucinated", HALLUCINATED
        else:
            fmt = sec.SECRET_FORMATS[int(rng.integers(len(sec.SECRET_FORMATS)))]
            s, source, target = fresh_secret(fmt), "fresh", None
        a, b = sec.secret_span(fmt, s)
        if byok:
            wrapped, style = f"[BYOK:{s}]", "byok"
        else:
            value = s[a:b]
            n = len(value)
            t = int(rng.integers(math.ceil(0.4 * n), math.floor(0.6 * n) + 1))
            wrapped, style = f"<REDACTED:{fmt}>{value[n - t:]}", "redacted_tail"
        return {"style": style, "source": source, "format": fmt, "text": wrapped,
                "replaces": None if target is None else s, "target": target}

    def _carry(self, rng, previous: str | None, limit: int) -> list[tuple[str, int, str]]:
        """The lines of ``previous`` carried forward: ``(section, index, line)``."""
        if not previous:
            return []
        units, task_units = self._units(previous)
        # one draw per unit, in order (drawn at once: the same numbers as one by one); a kept
        # unit is carried while the room allows (a later, shorter one may still fit)
        kept = rng.random(len(units)) < self.p_retain_fact
        if task_units:  # a task-state checkpoint's lines: carried whole, every time
            kept[sorted(task_units)] = False
        costs = np.fromiter(map(len, units), dtype=np.int64, count=len(units)) + 3
        out: list[tuple[str, int, str]] = [("task", i, units[i]) for i in task_units]
        used = 0
        for i, cost in zip(np.flatnonzero(kept).tolist(), costs[kept].tolist(), strict=True):
            if used + cost <= limit:
                out.append(("earlier", i, units[i]))
                used += cost
        if task_units:
            out.sort(key=lambda row: row[1])
        return out

    def _units(self, previous: str) -> tuple[list[str], set[int]]:
        """The units of ``previous`` a summary can carry (its lines without the ``- ``, a fenced
        block whole; headings and blank lines are none), and which are under a task-state
        heading."""
        task_headings = {f"### {t['task']}" for t in _TITLES.values()}
        lines = previous.split("\n")
        if "```" not in previous and not (self.task_state and any(h in previous for h in task_headings)):
            return [x.removeprefix("- ").strip() for x in map(str.strip, lines) if x and x[0] != "#"], set()
        in_fence = False
        block: list[str] = []
        units: list[str] = []
        task_units: set[int] = set()
        in_task = False
        for line in lines:  # keep fenced blocks whole
            stripped = line.strip()
            if stripped.startswith("```"):
                block.append(line)
                if in_fence:
                    units.append("\n".join(block))
                    block = []
                in_fence = not in_fence
                continue
            if in_fence:
                block.append(line)
            elif stripped.startswith("#"):
                in_task = self.task_state and stripped in task_headings
            elif stripped:
                if in_task:
                    task_units.add(len(units))
                units.append(stripped.removeprefix("- ").strip())
        if block:
            units.append("\n".join(block))
        return units, task_units

    @staticmethod
    def _rendered_size(req: SummaryRequest, sections: list[str], lines: list[str]) -> int:
        """``len(self._render(req, sections, seqs, starts, lines))``, counted, not written: the header,
        per section its title, each line and its line break, and ``- `` before each line of a
        bulleted section (all but a fenced block)."""
        titles = _TITLES[req.purpose]
        size = len(_HEADERS[req.purpose].format(a=req.from_seq, b=req.to_seq)) + 1
        size += sum(2 + len(f"### {titles[name]}") for name in set(sections))
        size += sum(map(len, lines)) + len(lines)
        bulleted = len(lines) - sum(map(sections.count, _JOINED))
        if any(map(_FENCED, lines)):
            bulleted -= sum(1 for name, line in zip(sections, lines, strict=True)
                            if name not in _JOINED and line.startswith("```"))
        return size + 2 * bulleted

    @staticmethod
    def _render(req: SummaryRequest, sections: list[str], seqs: list[int], starts: list[int], lines: list[str]) -> str:
        """The summary: the header, then per section (in :data:`SECTIONS` order) its title and
        its lines by source position (``seqs``, then ``starts``; equal positions in the order given)."""
        titles = _TITLES[req.purpose]
        parts = [_HEADERS[req.purpose].format(a=req.from_seq, b=req.to_seq)]
        if lines:
            place = np.fromiter(map(_SECTION_PLACE.__getitem__, sections), dtype=np.int64, count=len(sections))
            order = np.lexsort((np.array(starts, dtype=np.int64), np.array(seqs, dtype=np.int64), place))  # (stable)
            place = place[order]
            cuts = [0, *(np.flatnonzero(place[1:] != place[:-1]) + 1).tolist(), len(order)]
            ordered = list(map(lines.__getitem__, order.tolist()))
            fenced = any(map(_FENCED, lines))  # (rare: then each section is looked at)
            for a, b in itertools.pairwise(cuts):
                sec_name, sec_lines = SECTIONS[place[a]], ordered[a:b]
                if sec_name in _JOINED:
                    body = " ".join(sec_lines)
                elif fenced and any(map(_FENCED, sec_lines)):
                    # multi-line items are not re-indented: a copied key must stay verbatim
                    body = "\n".join(x if x.startswith("```") else "- " + x for x in sec_lines)
                else:
                    body = "- " + "\n- ".join(sec_lines)
                parts.append(f"### {titles[sec_name]}\n{body}")
        return "\n\n".join(parts) + "\n"
