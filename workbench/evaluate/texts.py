"""Text-level work at the points the engine chose: summaries, flushed memory entries.

The engines model summaries by size. Here each checkpoint that produced a readable
artifact gets real text from a summarizer backend (modelled, extractive, recorded or
HTTP), built from the span's event text and the previous summary; every flush gets its
memory entries. With SR-1 carry-forward on (the policy's ``redaction.sr1_carry_forward``)
the derived text goes through the redaction harness before it is stored; with it off
the raw summarizer output is stored, which is what the leakage evaluation measures.
Summaries and redactions are memoised by what produced them (:class:`_Derive`,
:func:`redact_memo`) in the dataset's index, so work repeated across the policies of a run
is done once.

Every modelled summary of a folding policy (``compaction.accumulate`` off) is written and,
with SR-1 on, redacted here even when no evaluation reads it: the next summary's
``previous_summary`` is this one's *stored* text, and the modelled summarizer carries that
text forward line by line (one draw per line, the lines' lengths against half its budget,
:meth:`workbench.summarize.modelled.ModelledSummarizer.decide`), so its decisions read
the text. Deciding a chain without writing it needs the carry decided from the previous
summary's decision record instead (its kept lines, not its rendered lines): a different
model, whose figures differ from the goldens'. The seeded summarizers' ``filler=False``
profile (``--no-filler``) goes part of the way with the same model: a summary is its decided
lines alone, a small fraction of the text to write, redact and scan, and every table reads
it as it is (:mod:`workbench.summarize.modelled`).

Each policy's summarizer is the run's, with the policy's ``summarizer.model`` and
``summarizer.prompt`` on top (:mod:`workbench.summarize.settings`). A seeded summarizer draws
a compaction's summary from its position in the continuity and the policy's digest, or, with
the option ``draws: shared``, from its position alone (common random numbers: policies that
compact alike share the summary, and it is derived once). :func:`derive_texts`
also returns, per checkpoint, what the compaction inspector and the drift table need: the
raw rows it dropped, the rows kept raw across the cut, and the summary segments in the
context right after it (:class:`Checkpoint`).

>>> import tempfile
>>> from workbench.engine.presets import get_policy
>>> from workbench.engine.run import simulate
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = tempfile.TemporaryDirectory()
>>> dataset = generate_dataset(GeneratorConfig(profile="coding", events=1500, seed=1), f"{tmp.name}/d")
>>> small = get_policy("llm-summary", {"provider.context_window": 32_000})
>>> result = simulate(dataset, [small], engine="reference")
>>> texts = materialize_texts(result, dataset)
>>> texts.height == int(result.summary["compactions"].sum()) > 0
True
>>> texts.select("policy", "kind", "artifact_id", "sr1", "redactions").columns
['policy', 'kind', 'artifact_id', 'sr1', 'redactions']
>>> tmp.cleanup()
"""

from __future__ import annotations

import dataclasses
import hashlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.engine.policy import Policy
from workbench.evaluate.context import ContextTracker
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.matching import text_digest
from workbench.rundir import wire as W
from workbench.rundir.wire import LOCAL_EVENT, REBUILD_EVENT
from workbench.summarize.progress import counted, expect_summaries

TEXT_KINDS = {W.SUMMARY_KIND: "summary", W.RECORDED_KIND: "recorded",
              W.OPAQUE_KIND: "opaque"}


def policies_of(result) -> dict[str, Policy]:
    return {name: Policy.from_dict(v["policy"]) for name, v in result.config["policies"].items()}


def redact_memo(dt: DatasetText) -> Callable[[str], Any]:
    """The redaction harness, each distinct text redacted once per dataset index."""
    from workbench.redaction.harness import redact

    memo = dt.redactions

    def redact_once(text: str):
        hit = memo.get(text)
        return hit if hit is not None else memo.put(text, redact(text))

    return redact_once


class _Derive:
    """Summaries by what produced them: the summarizer and its settings, the span (rows of
    one continuity), the previous summary, the size and purpose, and the artifact id when
    the backend's output depends on it (``keyed_by_artifact``, default true: the modelled
    summarizer draws its randomness per artifact). Kept in the dataset index, so the policies
    of a run share them."""

    def __init__(self, dt: DatasetText, backend, name: str, options: dict, seed):
        self.memo = dt.summaries
        self.backend = backend
        self.by_artifact = getattr(backend, "keyed_by_artifact", True)
        self.fingerprint = (name, seed, tuple(sorted((k, repr(v)) for k, v in options.items())))

    @counted  # progress on stderr while a live model writes them
    def summarize(self, req, cont: int, rows) -> Any:
        span = hashlib.blake2b(np.asarray(rows, dtype=np.int64).tobytes(), digest_size=16).digest()
        ids = (req.continuity_id, req.draw) if self.by_artifact else ()
        key = (self.fingerprint, cont, span, ids, req.purpose, req.from_seq, req.to_seq,
               req.target_tokens, text_digest(req.previous_summary))
        hit = self.memo.get(key)
        return hit if hit is not None else self.memo.put(key, self.backend.summarize(req))


@dataclass(frozen=True)
class Checkpoint:
    """One compaction as the text-level work saw it (rows are indexes into the
    continuity's prepared input, ``inp.seq[row]`` their seq; int64 arrays, 8 bytes a row
    where a tuple of ints holds 40: a million-event run's checkpoints hold every dropped row)."""

    policy: str
    continuity_id: str
    index: int                 # the policy's compactions of this continuity, from 0
    request: int
    artifact_id: str | None    # the summary / opaque item it produced (None: truncation, edit)
    summary_kind: str
    dropped: array   # raw rows the compaction took out of the tail
    retained: array  # rows kept raw across the cut (after it)
    segments: tuple[str, ...]  # summary items in the context after it (and its merges)
    emergency: bool            # it followed an overflow in the same request


def materialize_texts(result, dataset, **options):
    """One row per readable artifact (summary, merge, recorded summary) and per flush (the
    frame of :func:`derive_texts`)."""
    return derive_texts(result, dataset, **options)[0]


def derive_texts(result, dataset, *, summarizer: str = "modelled",
                 summarizer_options: dict | None = None, seed: int | None = None,
                 sr1: bool | None = None, redact: Callable[[str], Any] | None = None,
                 dataset_text: DatasetText | None = None, root: str | Path | None = None,
                 sample: int = 0):
    """``(texts, checkpoints)``: one row per readable artifact and per flush, and one
    :class:`Checkpoint` per compaction. ``root``: where ``summarizer.prompt`` paths are
    taken from; ``sample`` > 0 asks the HTTP summarizer for another sample of each text
    (:func:`workbench.summarize.settings.sample_options`)."""
    import polars as pl

    from workbench.rundir.summary_docs import position_key
    from workbench.summarize.base import SummaryRequest
    from workbench.summarize.settings import SHARED_DRAWS

    dt = dataset_text or DatasetText.of(dataset)
    if redact is None:
        redact = redact_memo(dt)
    seed = result.config.get("seed", 0) if seed is None else seed
    rows: list[dict[str, Any]] = []
    checkpoints: list[Checkpoint] = []
    derivers = _Derivers(dt, summarizer, summarizer_options or {}, seed, root, sample)
    expect_summaries(result)
    for name, policy in policies_of(result).items():
        on = policy.redaction.sr1_carry_forward if sr1 is None else sr1
        derive = derivers.of(policy)
        for cid, inp in result.inputs.items():
            tracker = ContextTracker(inp, policy, result.events, record=result.prompt_record(name, cid))
            cont = inp.continuity
            flushes = _flush_requests(result.events, name, cid)
            segments: dict[str, str] = {}  # artifact id -> stored text, in context order
            local: dict[str, str] = {}  # a two-layer policy's local checkpoints: artifact id -> text
            done: list[Checkpoint] = []
            # what a compaction's draws are keyed by besides its position (the engine numbers
            # the artifacts it produces): the policy, unless every policy shares them
            shared = derivers.draws == SHARED_DRAWS
            scope, produced = ("shared" if shared else policy.digest()), 0
            session = f"{name}/{cid}"  # one provider session: this continuity under this policy
            # nothing happens at the other requests
            for r in sorted(set(flushes) | set(tracker.action_requests)):
                if r >= inp.n_requests:
                    break
                for fl in flushes.get(r, ()):
                    ctx_rows = tracker.raw_rows(r)
                    lo, hi = (int(inp.seq[ctx_rows[0]]), int(inp.seq[ctx_rows[-1]])) if ctx_rows else (0, 0)
                    req = SummaryRequest(
                        continuity_id=cid, artifact_id=f"flush_{name}_{cid}_{r}", from_seq=lo, to_seq=hi,
                        events=dt.span_events(cont, ctx_rows), previous_summary=None,
                        target_tokens=int(fl["item_tokens"]), labels=dt.labels(cont, ctx_rows), purpose="flush",
                        session=session,  # (drawn by its artifact id, which names the policy, unless shared)
                        draw_key=position_key(cid, "shared-flush", r, lo, hi) if shared else None)
                    rows.append(_row(result, name, cid, r, "memory", req, derive.summarize(req, cont, ctx_rows),
                                     on, redact))
                for a in tracker.pending(r):
                    draw = None
                    if a.get("summary_artifact_id") is not None and a["event_type"] != REBUILD_EVENT:
                        draw = position_key(cid, scope, produced, a["from_seq"], a["to_seq"])
                        produced += 1
                    kind = a.get("summary_kind")
                    checkpoint = a["event_type"] == W.CHECKPOINT_EVENT
                    span = tracker.span_of(a) if checkpoint else None
                    if checkpoint and kind in TEXT_KINDS:
                        if kind == W.OPAQUE_KIND:
                            rows.append({**_base(result, name, cid, r, "opaque", a["summary_artifact_id"]),
                                         "from_seq": a["from_seq"], "to_seq": a["to_seq"], "sr1": on,
                                         "target_tokens": int(a["item_tokens"]), "text_raw": None, "text": None,
                                         "redactions": 0, "retained_labels": [], "copied_secrets": [],
                                         "hallucinated": 0})
                            segments = {} if not policy.compaction.accumulate else segments
                            segments[a["summary_artifact_id"]] = ""
                        else:
                            previous = None if policy.compaction.accumulate else ("\n\n".join(segments.values()) or None)
                            req = SummaryRequest(
                                continuity_id=cid, artifact_id=a["summary_artifact_id"], from_seq=int(a["from_seq"]),
                                to_seq=int(a["to_seq"]), events=dt.span_events(cont, span),
                                previous_summary=previous, target_tokens=max(1, int(a["item_tokens"])),
                                labels=dt.labels(cont, span), purpose="compaction", session=session,
                                draw_key=draw)
                            if kind == W.RECORDED_KIND:
                                result_ = _recorded(dt, inp, a)
                            else:
                                result_ = derive.summarize(req, cont, span)
                            row = _row(result, name, cid, r, TEXT_KINDS[kind], req, result_, on, redact)
                            rows.append(row)
                            if kind != W.RECORDED_KIND:
                                if not policy.compaction.accumulate:
                                    segments = {}
                                segments[a["summary_artifact_id"]] = row["text"]
                    elif a["event_type"] == LOCAL_EVENT:  # readable, folded into the previous one
                        span = _local_span(inp, a)
                        req = SummaryRequest(
                            continuity_id=cid, artifact_id=a["summary_artifact_id"], from_seq=int(a["from_seq"]),
                            to_seq=int(a["to_seq"]), events=dt.span_events(cont, span),
                            previous_summary=next(reversed(local.values()), None),
                            target_tokens=max(1, int(a["item_tokens"])), labels=dt.labels(cont, span),
                            purpose="compaction", session=session, draw_key=draw)
                        row = _row(result, name, cid, r, TEXT_KINDS[a["summary_kind"]], req,
                                   derive.summarize(req, cont, span), on, redact)
                        rows.append(row)
                        local[a["summary_artifact_id"]] = row["text"]
                    elif a["event_type"] == REBUILD_EVENT:  # the window holds the local checkpoint now
                        segments = {a["summary_artifact_id"]: local.get(a["summary_artifact_id"]) or ""}
                    elif a["event_type"] == W.MERGE_EVENT:
                        req = SummaryRequest(
                            continuity_id=cid, artifact_id=a["summary_artifact_id"], from_seq=0, to_seq=0,
                            events=(), previous_summary="\n\n".join(segments.values()) or None,
                            target_tokens=max(1, int(a["item_tokens"])), purpose="merge", session=session,
                            draw_key=draw)
                        row = _row(result, name, cid, r, "merge", req, derive.summarize(req, cont, ()), on, redact)
                        rows.append(row)
                        segments = {a["summary_artifact_id"]: row["text"]}
                    emergency = checkpoint and tracker.overflowed(int(a["request"]))
                    tracker.apply(a, span)
                    after = tuple(aid for aid, _ in tracker.shown_segments)
                    if checkpoint:
                        done.append(Checkpoint(
                            policy=name, continuity_id=cid, index=len(done), request=int(a["request"]),
                            artifact_id=a["summary_artifact_id"], summary_kind=kind, dropped=array("q", span),
                            retained=array("q", tracker.state.retained), segments=after, emergency=emergency))
                    elif a["event_type"] == W.MERGE_EVENT and done:
                        done[-1] = dataclasses.replace(done[-1], segments=after)
            checkpoints.extend(done)
    dt.release_span_events()  # (no table after this one reads them)
    schema = {"run_id": pl.String, "policy": pl.String, "continuity_id": pl.String, "request": pl.Int64,
              "kind": pl.String, "artifact_id": pl.String, "from_seq": pl.Int64, "to_seq": pl.Int64,
              "sr1": pl.Boolean, "target_tokens": pl.Int64, "text_raw": pl.String, "text": pl.String,
              "redactions": pl.Int64, "retained_labels": pl.List(pl.String),
              "copied_secrets": pl.List(pl.String), "hallucinated": pl.Int64}
    return pl.DataFrame(rows, schema=schema), checkpoints


class _Derivers:
    """A :class:`_Derive` per distinct summarizer setting (a policy's model and prompt on
    top of the run's options), each backend built once."""

    def __init__(self, dt: DatasetText, summarizer: str, options: dict, seed, root, sample: int):
        from workbench.summarize.settings import split_draws

        self.draws, options = split_draws(summarizer, options)
        self.dt, self.summarizer, self.options, self.seed = dt, summarizer, options, seed
        self.root, self.sample = root, sample
        self._by_options: dict[str, _Derive] = {}

    def of(self, policy: Policy) -> _Derive:
        from workbench.summarize import get_summarizer
        from workbench.summarize.settings import policy_options, sample_options

        options = sample_options(self.summarizer, policy_options(self.summarizer, self.options, policy,
                                                                 root=self.root), self.sample)
        key = repr(sorted((k, repr(v)) for k, v in options.items()))
        hit = self._by_options.get(key)
        if hit is None:
            # "recorded" replays the log's own summaries (recorded_summary_v1); asked for any
            # other compaction it says there is none, rather than inventing one
            backend = get_summarizer(self.summarizer, seed=self.seed, **options)
            hit = self._by_options[key] = _Derive(self.dt, backend, self.summarizer, options, self.seed)
        return hit


def _flush_requests(events, policy: str, cid: str) -> dict[int, list[dict]]:
    import polars as pl

    fl = events.filter((pl.col("policy") == policy) & (pl.col("continuity_id") == cid)
                       & (pl.col("event_type") == W.FLUSH_EVENT))
    out: dict[int, list[dict]] = {}
    for r in fl.iter_rows(named=True):
        out.setdefault(int(r["request"]), []).append(r)
    return out


def _local_span(inp, a) -> list[int]:
    """The visible rows a local checkpoint covers (``from_seq``..``to_seq``: every event since
    the previous local cut, whatever the provider window held)."""
    lo, hi = np.searchsorted(inp.seq, [a["from_seq"], a["to_seq"]])
    rows = np.flatnonzero(inp.visible[lo:hi + 1]) + lo
    return rows.tolist()


def _recorded(dt: DatasetText, inp, a):
    """The log's own summary: the SUMMARY events after the recorded boundary."""
    from workbench.summarize.base import SummaryResult

    to_row = int(np.searchsorted(inp.seq, a["to_seq"]))
    j = to_row + 1
    texts = []
    while j < inp.n and not inp.visible[j]:
        if inp.is_summary[j]:
            texts.append(dt.text(inp.continuity, j))
        j += 1
    return SummaryResult(text="\n\n".join(texts), backend="recorded")


def _base(result, policy, cid, r, kind, artifact_id):
    return {"run_id": result.run_id, "policy": policy, "continuity_id": cid, "request": r,
            "kind": kind, "artifact_id": artifact_id}


def _row(result, policy, cid, r, kind, req, res, sr1: bool, redact) -> dict[str, Any]:
    raw = res.text
    stored, n = raw, 0
    if sr1 and raw:
        red = redact(raw)
        stored, n = red.text, len(red.spans)
    diag = res.diagnostics or {}
    return {**_base(result, policy, cid, r, kind, req.artifact_id), "from_seq": req.from_seq,
            "to_seq": req.to_seq, "sr1": sr1, "target_tokens": req.target_tokens, "text_raw": raw,
            "text": stored, "redactions": n, "retained_labels": list(res.retained),
            "copied_secrets": [str(x) for x in diag.get("copied_secrets", [])],
            "hallucinated": int(len(diag.get("hallucinated", [])) if isinstance(diag.get("hallucinated"), list)
                                else diag.get("hallucinated", 0) or 0)}
