"""Trace every planted secret into the text a run derived or sent.

Channels, per policy and continuity:

* ``summary``: the stored summaries (after SR-1 redaction when the policy has it on);
* ``memory``: the stored memory entries written by pre-compaction flushes;
* ``context``: the provider-visible compiled context right after the first compaction
  that covers every part of the secret (summary items + the raw events still shown):
  does the secret outlive its own events' removal?

A leak is a surviving fragment of >= 12 characters or >= 50% of the secret in any
view of the text (raw, normalised, decoded), the criterion in
:func:`workbench.redaction.harness.leaked`. All secrets are searched at once
(:class:`~workbench.evaluate.matching.LeakScanner`, built once per dataset), each text's
views scanned once. With ``baseline=True`` each row also says whether the same derived text
would leak if SR-1 had used detect-secrets instead of our harness (``leaked_baseline``,
measured on the raw summarizer output); without it that column is null (not measured).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.evaluate.context import ContextTracker
from workbench.evaluate.dataset_text import DatasetText
from workbench.evaluate.texts import policies_of

Baseline = Callable[[str], str]


def baseline_redactor(dt: DatasetText) -> Baseline:
    """detect-secrets as the SR-1 redactor, each distinct text scanned once per dataset."""
    from workbench.redaction.baseline import detect_secrets_redact_one

    memo = dt.baselines

    def redact(text: str) -> str:
        hit = memo.get(text)
        return hit if hit is not None else memo.put(text, detect_secrets_redact_one(text))

    return redact


def leakage_table(result, dataset, texts, *, dataset_text: DatasetText | None = None,
                  baseline: Baseline | None = None):
    """One row per (policy, continuity, secret, channel)."""
    import polars as pl

    dt = dataset_text or DatasetText.of(dataset)
    scanner = dt.leak_scanner
    secrets = dt.secrets.filter(~pl.col("negative"))
    rows: list[dict[str, Any]] = []
    for name, policy in policies_of(result).items():
        for cid, inp in result.inputs.items():
            tx = texts.filter((pl.col("policy") == name) & (pl.col("continuity_id") == cid))
            channel_texts = {
                "summary": tx.filter(pl.col("kind").is_in(["summary", "merge", "recorded"])),
                "memory": tx.filter(pl.col("kind") == "memory"),
            }
            cont_secrets = secrets.filter(pl.col("continuity") == inp.continuity)
            if cont_secrets.height == 0:
                continue
            context = _context_after_compaction(result, inp, policy, dt, tx, cont_secrets)
            found = {}
            for channel, frame in channel_texts.items():
                stored = [t for t in frame["text"].to_list() if t]
                raw = [t for t in frame["text_raw"].to_list() if t]
                found[channel] = (len(stored), scanner.leaks_in(stored), scanner.leaks_in(raw),
                                  None if baseline is None else scanner.leaks_in([baseline(t) for t in raw]))
            # each secret's first row (a secret planted in several events has one row each)
            for first in cont_secrets.unique("secret_id", keep="first", maintain_order=True).iter_rows(named=True):
                sid = first["secret_id"]
                key = scanner.key_of[first["value"]]
                common = {"run_id": result.run_id, "policy": name, "continuity_id": cid,
                          "secret_id": sid, "format": first["kind"], "context": first["context"],
                          "transform": first["transform"], "sr1": bool(policy.redaction.sr1_carry_forward)}
                for channel, (n, stored, raw, base) in found.items():
                    rows.append({**common, "channel": channel, "texts": n, "leaked": key in stored,
                                 "leaked_unredacted": key in raw,
                                 "leaked_baseline": None if base is None else key in base})
                n, leaked = context.get(sid, (0, frozenset()))
                rows.append({**common, "channel": "context", "texts": n, "leaked": n > 0 and key in leaked,
                             "leaked_unredacted": None, "leaked_baseline": None})
    schema = {"run_id": pl.String, "policy": pl.String, "continuity_id": pl.String, "secret_id": pl.String,
              "format": pl.String, "context": pl.String, "transform": pl.String, "sr1": pl.Boolean,
              "channel": pl.String, "texts": pl.Int64, "leaked": pl.Boolean,
              "leaked_unredacted": pl.Boolean, "leaked_baseline": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


def _context_after_compaction(result, inp, policy, dt: DatasetText, tx,
                              secrets) -> dict[str, tuple[int, frozenset[int]]]:
    """Per secret: how many texts the compiled context held right after its events were
    compacted away, and which secrets those texts leak (computed once per such request)."""
    import numpy as np

    seqs = inp.seq
    rows = np.searchsorted(seqs, secrets["seq"].to_numpy())
    ok = (rows < len(seqs)) & (seqs[np.minimum(rows, len(seqs) - 1)] == secrets["seq"].to_numpy())
    last_row: dict[str, int] = {}
    for sid, row, good in zip(secrets["secret_id"].to_list(), rows.tolist(), ok.tolist(), strict=True):
        if good:
            last_row[sid] = max(last_row.get(sid, -1), row)
    if not last_row:
        return {}
    tracker = ContextTracker(inp, policy, result.events, record=result.prompt_record(policy.name, inp.continuity_id))
    stored = {a: t for a, t in zip(tx["artifact_id"].to_list(), tx["text"].to_list(), strict=True) if t}
    pending = sorted(last_row.items(), key=lambda kv: kv[1])
    out: dict[str, tuple[int, frozenset[int]]] = {}
    # the cut moves only when an action is applied, so only those requests can resolve one
    for r in tracker.action_requests:
        if r >= inp.n_requests:
            break
        tracker.advance(r)
        cut = tracker.state.cut
        done = 0
        while done < len(pending) and pending[done][1] <= cut:
            done += 1
        if not done:
            continue
        views = [stored.get(a, "") for a, _ in tracker.shown_segments]
        views += dt.row_texts(inp.continuity, tracker.raw_rows(r))
        views = [v for v in views if v]
        hit = (len(views), dt.leak_scanner.leaks_in(views))
        for sid, _ in pending[:done]:
            out[sid] = hit
        pending = pending[done:]
        if not pending:
            break
    return out


def leakage_summary(table):
    """Leak rates by policy x channel: harness, no redaction, detect-secrets (null when the
    baseline was not measured)."""
    import polars as pl

    base = pl.col("leaked_baseline")
    return (table.group_by("policy", "sr1", "channel", maintain_order=True)
            .agg(pl.len().alias("secrets"), pl.col("leaked").sum().alias("leaks"),
                 pl.col("leaked_unredacted").sum().alias("leaks_unredacted"),
                 pl.when(base.is_not_null().any()).then(base.sum()).otherwise(None)
                 .cast(pl.UInt32).alias("leaks_detect_secrets")))


def over_redaction(result, dataset, texts, *, dataset_text: DatasetText | None = None,
                   baseline: Baseline | None = None):
    """Hard negatives that reached derived text: how many did each redactor destroy?
    (``redacted_by_detect_secrets`` is null when the baseline was not measured.)"""
    import polars as pl

    from workbench.evaluate.texts import redact_memo

    dt = dataset_text or DatasetText.of(dataset)
    negatives = dt.secrets.filter(pl.col("negative"))
    index = dt.negatives
    raws = [t for t in texts["text_raw"].to_list() if t]
    carriers: dict[int, list[str]] = {}
    for t in raws:  # one pass per text for every negative value
        for k in index.keys_in(t):
            carriers.setdefault(k, []).append(t)
    redact = redact_memo(dt)
    rows = []
    for r in negatives.iter_rows(named=True):
        value = r["value"]
        found = carriers.get(index.key_of.get(value, -1))
        if not found:
            continue
        harness_hit = any(value not in redact(t).text for t in found)
        base_hit = None if baseline is None else any(value not in baseline(t) for t in found)
        rows.append({"secret_id": r["secret_id"], "kind": r["kind"], "texts": len(found),
                     "redacted_by_harness": harness_hit, "redacted_by_detect_secrets": base_hit})
    return pl.DataFrame(rows, schema={"secret_id": pl.String, "kind": pl.String, "texts": pl.Int64,
                                      "redacted_by_harness": pl.Boolean, "redacted_by_detect_secrets": pl.Boolean})
