"""The modelled summarizer's decisions as numbers: what each summary keeps, before any text.

A modelled summary is two steps with one owner each: the *decisions* (this module: which
fact is kept, paraphrased or dropped; which secret is copied whole, copied in part or left
out; which hard negative is kept; whether a secret-shaped string is hallucinated or a
marker leaks; which lines of the previous summary are carried forward) and the *text*
written from them (:meth:`workbench.summarize.modelled.ModelledSummarizer.write`). The
writer reads nothing but the :class:`SummaryDecisions` record, so what the numbers say a
summary holds and what its text holds cannot disagree.

Per-label decisions are drawn for any number of summaries at once
(:func:`draw_label_decisions`): each label's uniform is the first draw of its own generator,
``random.Random(stable_seed("modelled-label", seed, continuity_id, draw, label_id))`` (the
compaction's position and the label's id, nothing else), computed for every label in one
compiled call (:func:`workbench.summarize.draws_nb.first_uniforms_nb`), and the actions are
array comparisons. Drawing the labels of many summaries together or one summary at a time,
in any order, gives the same decisions. Only a paraphrase (which form) or a partial copy
(which fragment) continues its label's generator, in Python.

>>> from workbench.summarize.base import SpanEvent, SpanLabel, SummaryRequest
>>> from workbench.summarize.modelled import ModelledSummarizer
>>> text = "The staging database port is 6432, not the default."
>>> lab = SpanLabel("fact-1", "port", 3, 29, 33, "6432", "6432", True)
>>> req = SummaryRequest("c", "art-1", 3, 3, (SpanEvent(3, "message", "user", text),), None,
...                      200, labels=(lab,))
>>> [d.ids(FACT_KEEP) for d in draw_label_decisions(ModelledSummarizer(seed=1, p_retain_fact=1.0), [req])]
[['fact-1']]
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.summarize.base import SpanLabel, SummaryRequest, stable_seed

# what a summary does with one label (int8 codes, in this order)
FACT_KEEP, FACT_PARAPHRASE, FACT_DROP, SECRET_COPY, SECRET_PARTIAL, SECRET_OMIT, NEGATIVE_KEEP, NEGATIVE_OMIT = range(8)
ACTIONS = ("keep", "paraphrase", "drop", "copy", "partial", "omit", "keep_negative", "omit_negative")

_BASE_STATE: list = []


def label_uniforms(seeds: np.ndarray) -> np.ndarray:
    """``random.Random(int(s)).random()`` for every seed (uint64), in one compiled call."""
    from workbench.summarize.draws_nb import base_state_nb, first_uniforms_nb

    if not _BASE_STATE:
        _BASE_STATE.append(base_state_nb())
    return first_uniforms_nb(np.asarray(seeds, dtype=np.uint64), _BASE_STATE[0])


def negative_kinds() -> frozenset[str]:
    """The kinds of hard-negative labels (kept or left out, never copied as secrets)."""
    from workbench.synth.secrets import NEGATIVE_KINDS

    return frozenset(NEGATIVE_KINDS)


def label_generator(seed: int, continuity_id: str, draw: str, label_id: str) -> random.Random:
    """The label's own generator (its first draw is the label's uniform)."""
    return random.Random(label_seed(seed, continuity_id, draw, label_id))


def label_seed(seed: int, continuity_id: str, draw: str, label_id: str) -> int:
    return stable_seed("modelled-label", seed, continuity_id, draw, label_id)


def fragment(rng: random.Random, s: str) -> str:
    """A strict part of ``s`` that is still a leak: >= 12 characters or >= 50% of it."""
    n = len(s)
    lo = min(12, math.ceil(n / 2))
    hi = max(lo, n - 1)
    length = rng.randint(lo, hi)
    off = 0 if rng.random() < 0.6 else rng.randint(0, n - length)
    return s[off:off + length]


def sorted_labels(labels: Sequence[SpanLabel]) -> tuple[SpanLabel, ...]:
    """A summary's labels in the order it considers them: source position, then id."""
    return tuple(sorted(labels, key=lambda lb: (lb.seq, lb.start, lb.label_id)))


@dataclass(frozen=True)
class LabelDecisions:
    """The decisions of one summary's labels, in :func:`sorted_labels` order: ``action`` (int8
    codes of :data:`ACTIONS`) and ``written``, what the summary writes in the label's place
    (a paraphrase's form, the copied string, a partial copy's fragment, a kept negative; None
    for a kept fact, which is quoted as it stands, and for what is left out)."""

    labels: tuple[SpanLabel, ...]
    action: np.ndarray
    written: tuple[str | None, ...]

    def ids(self, action: int) -> list[str]:
        return [lb.label_id for lb, a in zip(self.labels, self.action.tolist(), strict=True) if a == action]

    def counts(self) -> dict[str, int]:
        """How many labels got each action (every action named, 0 included)."""
        n = np.bincount(self.action, minlength=len(ACTIONS)) if len(self.action) else np.zeros(len(ACTIONS), int)
        return dict(zip(ACTIONS, (int(x) for x in n), strict=True))


def draw_label_decisions(model, requests: Sequence[SummaryRequest]) -> list[LabelDecisions]:
    """The label decisions of every request (``model``: a modelled summarizer, whose
    probabilities and copy form decide), all labels drawn in one call."""
    from workbench.synth.fact_forms import alternate_forms

    ordered = [sorted_labels(req.labels) for req in requests]
    flat = [(req, lb) for req, labels in zip(requests, ordered, strict=True) for lb in labels]
    seeds = np.fromiter((label_seed(model.seed, req.continuity_id, req.draw, lb.label_id) for req, lb in flat),
                        dtype=np.uint64, count=len(flat))
    u = label_uniforms(seeds)
    negatives = negative_kinds()
    is_fact = np.fromiter((lb.is_fact for _, lb in flat), dtype=bool, count=len(flat))
    is_negative = np.fromiter((not lb.is_fact and lb.kind in negatives for _, lb in flat), dtype=bool,
                              count=len(flat))
    p_keep = np.fromiter((model.keep_probability_of(lb, req) if lb.is_fact else 0.0 for req, lb in flat),
                         dtype=np.float64, count=len(flat))
    # a fact that may be paraphrased is paraphrased only if its kind has another form
    maybe = np.flatnonzero(is_fact & (u >= p_keep) & (u < p_keep + model.p_paraphrase_fact))
    forms = {int(i): alternate_forms(flat[i][1].kind, flat[i][1].value) for i in maybe}
    has_form = np.zeros(len(flat), dtype=bool)
    has_form[[i for i, f in forms.items() if f]] = True
    fact = np.where(u < p_keep, FACT_KEEP, np.where(has_form, FACT_PARAPHRASE, FACT_DROP))
    negative = np.where(u < model.p_keep_negative, NEGATIVE_KEEP, NEGATIVE_OMIT)
    secret = np.where(u < model.p_copy_secret, SECRET_COPY,
                      np.where(u < model.p_copy_secret + model.p_partial_secret, SECRET_PARTIAL, SECRET_OMIT))
    action = np.where(is_fact, fact, np.where(is_negative, negative, secret)).astype(np.int8)
    written: list[str | None] = [None] * len(flat)
    for i in np.flatnonzero(action != FACT_KEEP).tolist():
        req, lb = flat[i]
        a = int(action[i])
        if a == FACT_PARAPHRASE:
            rng = _continued(model.seed, req, lb)
            written[i] = forms[i][rng.randrange(len(forms[i]))]
        elif a == NEGATIVE_KEEP:
            written[i] = lb.surface or lb.value
        elif a == SECRET_COPY:
            written[i] = model.copied_form(lb)
        elif a == SECRET_PARTIAL:
            written[i] = fragment(_continued(model.seed, req, lb), model.copied_form(lb))
    out, at = [], 0
    for labels in ordered:
        out.append(LabelDecisions(labels, action[at:at + len(labels)], tuple(written[at:at + len(labels)])))
        at += len(labels)
    return out


def _continued(seed: int, req: SummaryRequest, lb: SpanLabel) -> random.Random:
    """The label's generator after its first draw (the uniform the action came from)."""
    rng = label_generator(seed, req.continuity_id, req.draw, lb.label_id)
    rng.random()
    return rng


@dataclass
class SummaryDecisions:
    """Everything a modelled summary decides, before its text: the label decisions, the
    hallucinated secret-shaped string (``{"format", "text", "sentence"}``, or None), the
    marker leak (``{"style", "source", "label_id" | "format", "text", "replaces"}``, or None),
    the carried lines of the previous summary (``(section, index, line)``), and the state
    of the summary's generator the filler continues from."""

    labels: LabelDecisions
    hallucinated: dict | None
    marker: dict | None
    carried: list[tuple[str, int, str]]
    filler_state: dict

    def retained(self) -> tuple[str, ...]:
        """Fact labels kept and secret labels copied whole, in label order."""
        keep = (FACT_KEEP, SECRET_COPY)
        return tuple(lb.label_id for lb, a in zip(self.labels.labels, self.labels.action.tolist(), strict=True)
                     if a in keep)
