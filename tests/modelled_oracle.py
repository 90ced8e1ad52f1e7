"""The modelled summarizer's writer as it was before its text was written from columns
(items one object each, the summary rendered twice, the carried lines split one line at a
time): the oracle the faster writer is held to, text and diagnostics alike
(tests/summarize/test_modelled_write_oracle.py); and the filler's reading of one event text
as it was (tests/summarize/test_filler_reading.py)."""

from __future__ import annotations

import re

import numpy as np

from workbench.summarize import filler as F
from workbench.summarize import modelled as M
from workbench.summarize.base import clip, one_line
from workbench.summarize.filler import Item, reference_fill


def oracle_write(self: M.ModelledSummarizer, req, dec):
    texts = {ev.seq: ev.text for ev in req.events}
    kinds = {ev.seq: ev.kind for ev in req.events}
    spans_by_seq, needles = F.label_guards(dec.labels.labels)
    diag = self._new_diagnostics(req)
    # (the lines the decisions make and the diagnostics the text completes are the writer's own:
    # unchanged, and not this oracle's subject)
    items = self._decided_items(req, dec, kinds, texts, spans_by_seq, diag)
    carried = [Item(section, (-1, i), unit) for section, i, unit in dec.carried]
    items.extend(carried)

    budget = int(req.target_tokens * self.chars_per_token)
    used = len(oracle_render(req, items))
    present = {it.section for it in items}
    rng = np.random.Generator(np.random.PCG64(0))
    rng.bit_generator.state = dec.filler_state
    filler = reference_fill(rng, req.events, spans_by_seq, needles, budget - used, present,
                            M._TITLES[req.purpose], self.max_item_chars)
    items.extend(filler)

    return self._finished(oracle_render(req, items), dec, diag, budget, filler_items=len(filler))


def oracle_render(req, items: list[Item]) -> str:
    titles = M._TITLES[req.purpose]
    parts = [M._HEADERS[req.purpose].format(a=req.from_seq, b=req.to_seq)]
    by_section: dict[str, list[Item]] = {}
    for it in items:
        by_section.setdefault(it.section, []).append(it)
    for sec_name in M.SECTIONS:
        sec_items = sorted(by_section.get(sec_name, ()), key=lambda it: it.key)
        if not sec_items:
            continue
        lines = [f"### {titles[sec_name]}"]
        if sec_name in ("intent", "current"):
            lines.append(" ".join(it.text for it in sec_items))
        else:
            lines.extend(it.text if it.text.startswith("```") else "- " + it.text
                         for it in sec_items)
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def oracle_carry(self: M.ModelledSummarizer, rng, previous: str | None, limit: int) -> list[tuple[str, int, str]]:
    if not previous:
        return []
    out: list[tuple[str, int, str]] = []
    used = 0
    in_fence = False
    block: list[str] = []
    units: list[str] = []
    task_units: set[int] = set()
    task_headings = {f"### {t['task']}" for t in M._TITLES.values()}
    in_task = False
    for line in previous.split("\n"):
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
    for i, (unit, u) in enumerate(zip(units, rng.random(len(units)).tolist(), strict=True)):
        if i in task_units:
            out.append(("task", i, unit))
            continue
        keep = u < self.p_retain_fact
        if keep and used + len(unit) + 3 <= limit:
            out.append(("earlier", i, unit))
            used += len(unit) + 3
    return out


# ---- the filler's per-text reading as it was (one regex search per pattern and sentence, a
# generator per sentence): the oracle of base.sentence_bounds and filler.TextCandidates

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[*-])")


def oracle_iter_sentences(text: str, *, min_chars: int = 1):
    pos = 0
    for line in text.split("\n"):
        lstart = pos
        pos += len(line) + 1
        if not line.strip():
            continue
        cut = 0
        for m in _SENT_END.finditer(line):
            yield from _oracle_piece(line, lstart, cut, m.start(), min_chars)
            cut = m.end()
        yield from _oracle_piece(line, lstart, cut, len(line), min_chars)


def _oracle_piece(line: str, base: int, a: int, b: int, min_chars: int):
    seg = line[a:b]
    stripped = seg.strip()
    if len(stripped) < min_chars:
        return
    lead = len(seg) - len(seg.lstrip())
    yield base + a + lead, base + a + lead + len(stripped)


def oracle_text_candidates(text: str, kind: str, role: str, max_chars: int) -> dict:
    """What one event text offers, read plainly: paths (start, end, text in backticks) and
    sentences (start, end, section code, line)."""
    paths = [(m.start(), m.end(), f"`{m.group(0)}`") for m in F.PATH_RE.finditer(text)]
    sentences = []
    for a, b in oracle_iter_sentences(text, min_chars=20):
        piece = text[a:b]
        if len(F.WORDS_RE.findall(piece)) < 3:
            continue
        sentences.append((a, b, F._CODE[F.sentence_section(piece, kind, role)],
                          clip(one_line(piece), max_chars)))
    return {"paths": paths, "sentences": sentences}
