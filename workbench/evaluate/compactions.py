"""Inside each compaction: what it dropped, what its summary kept, and how that fares when
summaries are summarized again.

:func:`compaction_table` (``compactions.parquet``) has one row per compaction of a run
(every ``continuity_compaction_checkpoint_created`` frame; an overflow's truncation,
``context.truncated``, is not a compaction and has no row): policy, continuity, request,
trigger, context tokens before/after, summary size, the raw events it dropped (``dropped_seqs``)
and those kept raw across the cut (``retained_seqs``), the planted labels in the dropped
span and their fate, the summarizer calls and their cost, and the cache loss of the request
that sends the rebuilt prefix.

:func:`generation_table` (``generations.parquet``) follows every label a compaction dropped
through the compactions after it: generation ``n`` is the summary the context holds right
after the ``n``-th later compaction (``n = 0``: the compaction that dropped it). A policy
that folds its summary into the next one (``summarizes_summaries``) re-writes the label at
every generation; one that keeps each summary as an anchored segment does not.

A fact in a dropped span is

* ``kept``: its exact answer is in the compaction's stored summary, or its event is kept
  raw across the cut (``facts_kept_raw`` counts those);
* ``paraphrased``: only in another form (:mod:`workbench.synth.fact_forms`);
* ``lost``: neither (an opaque provider item or a truncation keeps nothing readable).

so ``facts_kept + facts_paraphrased + facts_lost == facts_in_span``. A planted secret in
it is ``carried`` when the summarizer's raw output holds a leak of it (a fragment of >= 12
characters or half the secret, in any decoded view: the leakage criterion) or its event is
kept raw, ``leaked`` when the stored text (after SR-1, when the policy has it on) still does
or its event is kept raw, and ``redacted`` when carried but not leaked. On a dataset without
planted secrets (imported logs) the secret columns are null — not measured, never 0.

``degenerate`` lists what is wrong with a readable summary's stored text whichever
summarizer wrote it (:mod:`workbench.evaluate.degenerate`: empty, truncated, repetitive,
longer than the span it replaced, wrong language); empty when nothing is, null for an
opaque item or a truncation (no text to judge).

The cache loss of a compaction is that of the main request that sends its rebuilt prefix
(the last compaction of a request carries it): ``cache_loss_tokens`` its prompt tokens not
read from the cache, ``cache_loss_usd`` what they cost beyond the price of reading them
from the cache. What the summarizer call itself read from the cache and wrote to it
(``summarizer_cache_read_tokens``, ``summarizer_cache_write_tokens``) says whether it rode
the session's prefix (the policy's ``compaction.shares_cache``). ``compaction_cost_usd`` is
what the compaction cost: its calls plus the re-write of the new prefix (null when the
re-write could not be priced).

Both tables read the same texts and labels: a :class:`TextScans` scans each distinct text
once (the answers and fact forms it holds) and finds each compaction's dropped labels once,
for both (:func:`workbench.evaluate.pipeline.evaluate_run` passes one to each).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.errors import WorkbenchError
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.degenerate import SummaryJudge
from workbench.evaluate.matching import Memo
from workbench.evaluate.retention import answers_in
from workbench.evaluate.texts import Checkpoint, policies_of
from workbench.rundir import wire as W

READABLE = ("summary", "recorded", "merge")
SUMMARIZER_CALLS = ("compaction", "merge")
FACT_STATUSES = ("kept", "paraphrased", "lost")
SECRET_STATUSES = ("leaked", "redacted", "absent")


class TextScans:
    """Stored and raw text by artifact id, what each text holds, and the labels each
    compaction dropped: scanned once for both tables (:func:`compaction_table`,
    :func:`generation_table`)."""

    def __init__(self, texts, dt: DatasetText):
        import polars as pl

        tx = texts.filter(pl.col("kind").is_in([*READABLE, "opaque"]))
        self.row = {r["artifact_id"]: r for r in tx.iter_rows(named=True)}
        self.dt = dt
        self._facts = Memo(20_000)  # text -> (answer keys, form keys)
        self._labels: dict[tuple[str, str, int], tuple[list, dict]] = {}

    def stored(self, artifact: str | None) -> str:
        return (self.row.get(artifact) or {}).get("text") or ""

    def raw(self, artifact: str | None) -> str:
        return (self.row.get(artifact) or {}).get("text_raw") or ""

    def release(self) -> None:
        """Forget the texts and what was found in them (a one-shot evaluation, once both
        tables have read them)."""
        self.row = {}
        self._facts.clear()
        self._labels.clear()

    def text_facts(self, text: str) -> tuple[frozenset[int], frozenset[int]]:
        """(answer keys present exactly, form keys present in any form) in ``text``."""
        hit = self._facts.get(text)
        if hit is None:
            hit = self._facts.put(text, (answers_in(self.dt, text), self.dt.fact_forms.keys_in(text)))
        return hit

    def facts(self, texts: Sequence[str]) -> tuple[frozenset[int], frozenset[int]]:
        """(answer keys present exactly, form keys present in any form) over ``texts``."""
        scans = [self.text_facts(t) for t in texts if t]
        if len(scans) == 1:
            return scans[0]
        return (frozenset().union(*(e for e, _ in scans)), frozenset().union(*(f for _, f in scans)))

    def leaks(self, texts: Sequence[str]) -> frozenset[int]:
        return self.dt.leak_scanner.leaks_in([t for t in texts if t])

    def labels(self, c: Checkpoint, inp) -> tuple[list, dict]:
        """:func:`_labels` of the rows ``c`` dropped (the same for both tables)."""
        key = (c.policy, c.continuity_id, c.index)
        hit = self._labels.get(key)
        if hit is None:
            hit = self._labels[key] = _labels(self.dt, inp, c.dropped)
        return hit


def _labels(dt: DatasetText, inp, rows):
    """``(facts, secrets)`` in ``rows``: facts as (fact id, kind, answer, row), secrets as
    {secret id: (value, rows, format)} (a secret split across two events has a label in each)."""
    import numpy as np

    facts, secrets = [], {}
    labels = dt.labels(inp.continuity, rows)
    at = np.searchsorted(inp.seq, [lb.seq for lb in labels]).tolist() if labels else []
    for lb, row in zip(labels, at, strict=True):
        if lb.is_fact:
            facts.append((lb.label_id, lb.kind, lb.value, row))
        else:
            sid = lb.label_id.split("#", 1)[0]
            value, where, kind = secrets.get(sid, (lb.value, (), lb.kind))
            secrets[sid] = (value, (*where, row), kind)
    return facts, secrets


def fact_status(dt: DatasetText, kind: str, answer: str, row: int, retained: set[int],
                exact: frozenset[int], forms: frozenset[int]) -> str:
    if row in retained or dt.answers.key_of.get(answer, -1) in exact:
        return "kept"
    return "paraphrased" if dt.fact_forms.key_of.get((kind, answer), -1) in forms else "lost"


def secret_status(dt: DatasetText, value: str, rows: Sequence[int], retained: set[int],
                  stored: frozenset[int], raw: frozenset[int]) -> str:
    key = dt.leak_scanner.key_of.get(value, -1)
    if key in stored or any(r in retained for r in rows):
        return "leaked"
    return "redacted" if key in raw else "absent"


def _calls(ledger, requests: Sequence[tuple[str, str, int]] | None = None) -> dict[tuple[str, str, int],
                                                                                  dict[str, Any]]:
    """Per (policy, continuity, request): the summarizer calls and the main request; only of
    ``requests`` when given (the compactions' own: a row dict per request of a million-event
    run is what the table does not need)."""
    import polars as pl

    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    rows = ledger.filter(pl.col("call_kind").is_in(["main", *SUMMARIZER_CALLS]) & pl.col("request").is_not_null())
    if requests is not None:
        wanted = pl.DataFrame(list(dict.fromkeys(requests)), schema={"policy": rows.schema["policy"],
                              "continuity_id": rows.schema["continuity_id"], "request": rows.schema["request"]},
                              orient="row")
        rows = rows.join(wanted, on=["policy", "continuity_id", "request"], how="semi")
    for r in rows.sort("policy", "continuity_id", "call").iter_rows(named=True):
        slot = out.setdefault((r["policy"], r["continuity_id"], int(r["request"])), {"summarizer": [], "main": None})
        if r["call_kind"] == "main":
            slot["main"] = r
        else:
            slot["summarizer"].append(r)
    return out


def _cache_loss(main: dict | None, provider: dict | None) -> tuple[int | None, float | None]:
    if main is None:
        return None, None
    tokens = int(main["prompt_tokens"]) - int(main["cached_input_tokens"])
    try:
        from workbench.engine.pricing import price_table

        prices = price_table((provider or {})["prices_model_id"])
    except (KeyError, WorkbenchError):  # no price table recorded: the loss in tokens only
        return tokens, None
    as_read = float(prices.cost([main["prompt_tokens"]], [main["prompt_tokens"]], [0], [0],
                                [main["output_tokens"]])[0])
    return tokens, max(0.0, float(main["cost_usd"]) - as_read)


def compaction_table(result, texts, checkpoints: Sequence[Checkpoint], dt: DatasetText,
                     scans: TextScans | None = None):
    """One row per compaction (see the module docstring); ``scans``: the texts' scans shared
    with :func:`generation_table`."""
    import polars as pl

    policies = policies_of(result)
    tx = scans or TextScans(texts, dt)
    frames = result.events.filter(pl.col("event_type") == W.CHECKPOINT_EVENT)
    frames = frames.with_columns(pl.int_range(pl.len()).over("policy", "continuity_id").alias("_index"))
    frame_of = {(r["policy"], r["continuity_id"], r["_index"]): r for r in frames.iter_rows(named=True)}
    labelled = dt.secrets.filter(~pl.col("negative")).height > 0
    calls = _calls(result.ledger, [(c.policy, c.continuity_id, c.request) for c in checkpoints])
    last_at: dict[tuple[str, str, int], int] = {}  # the compaction whose prefix the request sends
    summarized_at: dict[tuple[str, str, int], int] = {}  # ... and the one its summarizer calls made
    for c in checkpoints:
        last_at[(c.policy, c.continuity_id, c.request)] = c.index
        if c.artifact_id is not None:
            summarized_at[(c.policy, c.continuity_id, c.request)] = c.index
    judge = SummaryJudge()  # (a summary's lines carried from the previous one are split once)
    rows = []
    for c in checkpoints:
        inp, policy = result.inputs[c.continuity_id], policies[c.policy]
        f = frame_of[(c.policy, c.continuity_id, c.index)]
        stored, raw = tx.stored(c.artifact_id), tx.raw(c.artifact_id)
        retained = set(c.retained)
        exact, forms = tx.facts([stored])
        facts, secrets = tx.labels(c, inp)
        fate: dict[str, list[str]] = {s: [] for s in (*FACT_STATUSES, *SECRET_STATUSES)}
        for fid, kind, answer, row in facts:
            fate[fact_status(dt, kind, answer, row, retained, exact, forms)].append(fid)
        leak_stored, leak_raw = tx.leaks([stored]), tx.leaks([raw])
        for sid, (value, where, _) in secrets.items():
            fate[secret_status(dt, value, where, retained, leak_stored, leak_raw)].append(sid)
        at = (c.policy, c.continuity_id, c.request)
        slot = calls.get(at, {"summarizer": [], "main": None})
        own = slot["summarizer"] if summarized_at.get(at) == c.index else []
        sends_prefix = last_at[at] == c.index
        loss_tokens, loss_usd = _cache_loss(slot["main"] if sends_prefix else None,
                                            result.config["policies"][c.policy]["providers"].get(c.continuity_id))
        text_row = tx.row.get(c.artifact_id) or {}
        judged = text_row.get("kind") in READABLE  # an opaque item or a truncation: no text to judge
        rows.append({
            "run_id": result.run_id, "policy": c.policy, "continuity_id": c.continuity_id, "compaction": c.index,
            "request": c.request, "source_request": f["source_request"], "frame_seq": f["frame_seq"],
            "trigger": "emergency" if c.emergency else policy.trigger.kind, "cut_rule_id": f["cut_rule_id"],
            "summary_kind": c.summary_kind, "artifact_id": c.artifact_id,
            "tokens_before": f["tokens_before"], "tokens_after": f["tokens_after"],
            "summary_tokens": f["item_tokens"] if c.artifact_id else 0,
            "summary_chars": len(stored), "summary_text_tokens": math.ceil(len(stored) / 4),
            "readable": bool(stored),
            "from_seq": f["from_seq"], "to_seq": f["to_seq"],
            "dropped_events": len(c.dropped), "dropped_tokens": f["span_tokens"],
            "dropped_from_seq": int(inp.seq[c.dropped[0]]) if c.dropped else None,
            "dropped_to_seq": int(inp.seq[c.dropped[-1]]) if c.dropped else None,
            "dropped_seqs": inp.seq[list(c.dropped)].tolist() if c.dropped else [],
            "retained_seqs": inp.seq[list(c.retained)].tolist() if c.retained else [],
            "facts_in_span": len(facts), "facts_kept": len(fate["kept"]),
            "facts_kept_raw": sum(1 for _, _, _, row in facts if row in retained),
            "facts_paraphrased": len(fate["paraphrased"]), "facts_lost": len(fate["lost"]),
            **_secret_counts(len(secrets), len(fate["leaked"]), len(fate["redacted"]), labelled),
            "redactions": text_row.get("redactions") or 0, "hallucinated": text_row.get("hallucinated") or 0,
            "summarizer_calls": len(own), "summarizer_cost_usd": float(sum(r["cost_usd"] for r in own)),
            "summarizer_prompt_tokens": int(sum(r["prompt_tokens"] for r in own)),
            "summarizer_output_tokens": int(sum(r["output_tokens"] for r in own)),
            "summarizer_cache_read_tokens": int(sum(r["cached_input_tokens"] for r in own)),
            "summarizer_cache_write_tokens": int(sum(r["cache_write_tokens"] for r in own)),
            "compaction_cost_usd": (None if loss_usd is None and sends_prefix and slot["main"] else
                                    float(sum(r["cost_usd"] for r in own)) + (loss_usd or 0.0)),
            "cache_loss": slot["main"]["cache_loss"] if sends_prefix and slot["main"] else None,
            "cache_loss_tokens": loss_tokens, "cache_loss_usd": loss_usd,
            "kept_fact_ids": fate["kept"], "paraphrased_fact_ids": fate["paraphrased"],
            "lost_fact_ids": fate["lost"], "leaked_secret_ids": fate["leaked"],
            "redacted_secret_ids": fate["redacted"],
            "degenerate": judge.flags(stored, budget_tokens=f["item_tokens"], span_tokens=f["span_tokens"])
            if judged else None,
        })
    return pl.DataFrame(rows, schema=_compaction_schema())


def _secret_counts(in_span: int, leaked: int, redacted: int, labelled: bool) -> dict[str, int | None]:
    counts = {"secrets_in_span": in_span, "secrets_carried": leaked + redacted, "secrets_redacted": redacted,
              "secrets_leaked": leaked}
    return counts if labelled else dict.fromkeys(counts)


def _compaction_schema():
    import polars as pl

    ints = ("compaction", "request", "source_request", "frame_seq", "tokens_before", "tokens_after",
            "summary_tokens", "summary_chars", "summary_text_tokens", "from_seq", "to_seq", "dropped_events",
            "dropped_tokens", "dropped_from_seq", "dropped_to_seq", "facts_in_span", "facts_kept",
            "facts_kept_raw", "facts_paraphrased", "facts_lost", "secrets_in_span", "secrets_carried",
            "secrets_redacted", "secrets_leaked", "redactions", "hallucinated", "summarizer_calls",
            "summarizer_prompt_tokens", "summarizer_output_tokens", "summarizer_cache_read_tokens",
            "summarizer_cache_write_tokens", "cache_loss_tokens")
    strings = ("run_id", "policy", "continuity_id", "trigger", "cut_rule_id", "summary_kind", "artifact_id",
               "cache_loss")
    lists = {"dropped_seqs": pl.List(pl.Int64), "retained_seqs": pl.List(pl.Int64)}
    lists |= {c: pl.List(pl.String) for c in ("kept_fact_ids", "paraphrased_fact_ids", "lost_fact_ids",
                                                 "leaked_secret_ids", "redacted_secret_ids", "degenerate")}
    order = ("run_id", "policy", "continuity_id", "compaction", "request", "source_request", "frame_seq",
             "trigger", "cut_rule_id", "summary_kind", "artifact_id", "tokens_before", "tokens_after",
             "summary_tokens", "summary_chars", "summary_text_tokens", "readable", "from_seq", "to_seq",
             "dropped_events", "dropped_tokens", "dropped_from_seq", "dropped_to_seq", "dropped_seqs",
             "retained_seqs", "facts_in_span", "facts_kept", "facts_kept_raw", "facts_paraphrased", "facts_lost",
             "secrets_in_span", "secrets_carried", "secrets_redacted", "secrets_leaked", "redactions",
             "hallucinated", "summarizer_calls", "summarizer_cost_usd", "summarizer_prompt_tokens",
             "summarizer_output_tokens", "summarizer_cache_read_tokens", "summarizer_cache_write_tokens",
             "cache_loss", "cache_loss_tokens", "cache_loss_usd", "compaction_cost_usd", "kept_fact_ids",
             "paraphrased_fact_ids", "lost_fact_ids", "leaked_secret_ids", "redacted_secret_ids", "degenerate")
    types = {c: pl.Int64 for c in ints} | {c: pl.String for c in strings} | lists
    types |= {"readable": pl.Boolean, "summarizer_cost_usd": pl.Float64, "cache_loss_usd": pl.Float64,
              "compaction_cost_usd": pl.Float64}
    return {c: types[c] for c in order}


_GENERATION_SCHEMA = (("policy", "String"), ("continuity_id", "String"), ("label_id", "String"),
                      ("label", "String"), ("label_kind", "String"), ("first_compaction", "Int64"),
                      ("first_request", "Int64"), ("generation", "Int64"), ("request", "Int64"),
                      ("summarizes_summaries", "Boolean"), ("status", "String"))
#: statuses by code: FACT_STATUSES then SECRET_STATUSES
_STATUS_CODES = (*FACT_STATUSES, *SECRET_STATUSES)


class _Members:
    """Which (state, key) pairs hold: each state's key set as int64 codes ``state * width +
    key``, asked for many pairs at once (a sorted array, one search per pair)."""

    def __init__(self, sets: Sequence[Sequence[int]], width: int):
        import numpy as np

        self.width = width
        sizes = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
        keys = np.concatenate([np.fromiter(s, dtype=np.int64, count=len(s)) for s in sets] or [sizes[:0]])
        codes = np.repeat(np.arange(len(sets), dtype=np.int64) * width, sizes) + keys
        self.codes = np.unique(codes)

    def holds(self, states, keys):
        """Per pair: is ``keys[i]`` in the set of ``states[i]`` (a negative key never is)."""
        import numpy as np

        codes = states * self.width + keys
        at = np.minimum(np.searchsorted(self.codes, codes), max(0, self.codes.size - 1))
        return (keys >= 0) & (self.codes[at] == codes) if self.codes.size else np.zeros(codes.size, dtype=bool)


def generation_table(result, texts, checkpoints: Sequence[Checkpoint], dt: DatasetText,
                     scans: TextScans | None = None):
    """One row per (label a compaction dropped, later compaction): see the module docstring.

    Built by columns: one entry per label and one per later summary (its key sets), then
    every (label, later compaction) pair's status from array look-ups, never a Python call
    per row (the table grows with labels x later compactions: millions of rows at a
    million events). ``scans``: the texts' scans shared with :func:`compaction_table`."""
    return Generations.read(result, checkpoints, dt, scans or TextScans(texts, dt)).table()


@dataclass
class Generations:
    """What :func:`generation_table` reads of the texts, apart from the table it builds from
    it: one entry per label a compaction dropped (facts, then secrets, per compaction) and
    one per state (what the context's summary holds after each compaction). A one-shot
    evaluation frees the texts' scans between :meth:`read` and :meth:`table` (the table is
    the largest frame a million-event evaluation builds: its peak)."""

    run_id: str
    labels: dict[str, list]       # the label columns of the table, an entry per label
    exact_of: list[int]           # per label: its exact key (a secret's: its leak key)
    form_of: list[int]            # ... its form key (-1 for a secret: no form)
    rows_of: list[Sequence[int]]  # ... the rows that hold it
    fact_of: list[bool]
    blocks: list[tuple[int, int, int, int]]  # (first label, end label, state of the compaction, generations)
    requests: list[int]             # per state: the compaction's request
    retained: list[Sequence[int]]   # ... the rows kept raw across its cut
    exact: list[frozenset[int]]     # ... the answers, forms and leaks its summary segments hold
    forms: list[frozenset[int]]
    stored: list[frozenset[int]]
    raw: list[frozenset[int]]
    width: int                      # more than any key

    @classmethod
    def read(cls, result, checkpoints: Sequence[Checkpoint], dt: DatasetText, tx: TextScans) -> Generations:
        policies = policies_of(result)
        by_run: dict[tuple[str, str], list[Checkpoint]] = {}
        for c in checkpoints:
            by_run.setdefault((c.policy, c.continuity_id), []).append(c)
        answer_key, form_key, secret_key = dt.answers.key_of, dt.fact_forms.key_of, dt.leak_scanner.key_of
        lab: dict[str, list] = {c: [] for c in ("policy", "continuity_id", "label_id", "label", "label_kind",
                                                "first_compaction", "first_request", "summarizes_summaries")}
        g = cls(result.run_id, lab, [], [], [], [], [], [], [], [], [], [], [],
                max([len(dt.answers.values), len(dt.fact_forms.facts), len(dt.leak_scanner.secrets), 0]) + 1)
        for (name, cid), seq in by_run.items():
            inp, policy = result.inputs[cid], policies[name]
            folds = not policy.compaction.accumulate or policy.compaction.max_segments > 0
            first_state = len(g.requests)
            for c in seq:
                segments = [tx.stored(a) for a in c.segments]
                e, f = tx.facts(segments)
                g.requests.append(c.request)
                g.retained.append(c.retained)
                g.exact.append(e)
                g.forms.append(f)
                g.stored.append(tx.leaks(segments))
                g.raw.append(tx.leaks([tx.raw(a) for a in c.segments]))
            for c in seq:
                facts, secrets = tx.labels(c, inp)
                if not facts and not secrets:
                    continue
                start = len(g.exact_of)
                for fid, kind, answer, row in facts:
                    _label_entry(lab, name, cid, fid, "fact", kind, c, folds)
                    g.exact_of.append(answer_key.get(answer, -1))
                    g.form_of.append(form_key.get((kind, answer), -1))
                    g.rows_of.append((row,))
                    g.fact_of.append(True)
                for sid, (value, where, fmt) in secrets.items():
                    _label_entry(lab, name, cid, sid, "secret", fmt, c, folds)
                    g.exact_of.append(secret_key.get(value, -1))
                    g.form_of.append(-1)
                    g.rows_of.append(where)
                    g.fact_of.append(False)
                g.blocks.append((start, len(g.exact_of), first_state + c.index, len(seq) - c.index))
        return g

    def table(self):
        """The generation table: each pair's status code from the first rule that holds (a
        fact kept, raw or exact; paraphrased; lost; a secret leaked, raw or stored; redacted;
        absent), one small array at a time (a million-event run has ~750k pairs)."""
        import numpy as np
        import polars as pl

        blocks, width = self.blocks, self.width
        schema = {c: getattr(pl, t) for c, t in _GENERATION_SCHEMA}
        # every (label, later compaction) pair: per compaction, its labels once per generation
        label_at = np.concatenate([np.tile(np.arange(a, b), g) for a, b, _, g in blocks]
                                  or [np.zeros(0, np.int64)]).astype(np.int64)
        generation = np.concatenate([np.repeat(np.arange(g), b - a) for a, b, _, g in blocks]
                                    or [np.zeros(0, np.int64)]).astype(np.int64)
        state = generation + np.concatenate([np.full((b - a) * g, s) for a, b, s, g in blocks]
                                            or [np.zeros(0, np.int64)]).astype(np.int64)
        key = np.asarray(self.exact_of, dtype=np.int64)[label_at]
        is_fact = np.asarray(self.fact_of, dtype=bool)[label_at]
        # the last rules first, each earlier one over them: status codes index _STATUS_CODES
        status = np.where(is_fact, 2, 5).astype(np.int8)
        form = np.asarray(self.form_of, dtype=np.int64)[label_at]
        status[is_fact & _Members(self.forms, width).holds(state, form)] = 1
        del form
        status[~is_fact & _Members(self.raw, width).holds(state, key)] = 4
        held = _any_row_retained(self.retained, self.rows_of, label_at, state)
        held |= np.where(is_fact, _Members(self.exact, width).holds(state, key),
                         _Members(self.stored, width).holds(state, key))
        status[held] = np.where(is_fact[held], 0, 3)
        del key, is_fact, held
        request = np.asarray(self.requests, dtype=np.int64)[state] if state.size else np.zeros(0, np.int64)
        del state
        labels = pl.DataFrame(self.labels, schema={c: schema[c] for c in self.labels})
        frame = labels.select(pl.all().gather(label_at)).with_columns(
            pl.Series("generation", generation, pl.Int64), pl.Series("request", request, pl.Int64),
            pl.Series("status", _STATUS_CODES, pl.String).gather(status).alias("status"))
        return frame.with_columns(pl.lit(self.run_id, pl.String).alias("run_id")).select("run_id", *schema)


def _label_entry(lab: dict[str, list], name: str, cid: str, label_id: str, label: str, kind: str,
                 c: Checkpoint, folds: bool) -> None:
    for column, value in (("policy", name), ("continuity_id", cid), ("label_id", label_id), ("label", label),
                          ("label_kind", kind), ("first_compaction", c.index), ("first_request", c.request),
                          ("summarizes_summaries", folds)):
        lab[column].append(value)


def _any_row_retained(retained: Sequence[Sequence[int]], rows_of: Sequence[Sequence[int]], label_at, state):
    """Per (label, state) pair: is any of the label's rows kept raw across that state's cut."""
    import numpy as np

    width = 1 + max([max(r, default=-1) for r in retained] + [max(r, default=-1) for r in rows_of] + [0])
    held = _Members(retained, width)
    counts = np.fromiter(map(len, rows_of), dtype=np.int64, count=len(rows_of))
    flat = np.fromiter((r for rows in rows_of for r in rows), dtype=np.int64, count=int(counts.sum()))
    starts = np.cumsum(counts) - counts
    per_pair = counts[label_at] if label_at.size else np.zeros(0, dtype=np.int64)
    pair = np.repeat(np.arange(label_at.size), per_pair)
    offset = np.arange(pair.size) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    hit = held.holds(state[pair], flat[starts[label_at][pair] + offset] if pair.size else np.zeros(0, np.int64))
    return np.bincount(pair, weights=hit, minlength=label_at.size) > 0
