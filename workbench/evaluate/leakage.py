"""Trace every planted secret into the text a run derived or sent.

Channels, per policy and continuity:

* ``summary``: the stored summaries (after SR-1 redaction when the policy has it on);
* ``memory``: the stored memory entries written by pre-compaction flushes;
* ``context``: the provider-visible compiled context right after the first compaction
  that covers every part of the secret (summary items + the raw events still shown):
  does the secret outlive its own events' removal?

A leak is a surviving fragment of >= 12 characters or >= 50% of the secret in any
view of the text (raw, normalised, decoded), the criterion in
:func:`workbench.redaction.harness.leaked`. Each row also says whether the same
derived text would leak if SR-1 had used detect-secrets instead of our harness
(``leaked_baseline``), measured on the raw summarizer output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.evaluate.context import ContextTracker
from workbench.evaluate.texts import DatasetText, policies_of


class LeakIndex:
    """The leak criterion of :func:`workbench.redaction.harness.surviving_fragment`, with
    the texts' views computed once so many secrets can be checked against them."""

    def __init__(self, texts: list[str]):
        from workbench.redaction.harness import leak_views

        self.views: list[str] = []
        for t in texts:
            self.views += leak_views(t)
        for a, b in zip(texts, texts[1:], strict=False):
            self.views += leak_views(a + b)
        self.blob = "\x00".join(self.views)

    def leaked(self, secret: str) -> bool:
        from workbench.redaction.harness import fragment_length

        m = fragment_length(secret)
        for i in range(len(secret) - m + 1):
            frag = secret[i:i + m]
            if frag.strip() and frag in self.blob:
                return True
        return False


def _baseline_redactor() -> Callable[[str], str]:
    from workbench.redaction.baseline import detect_secrets_redact

    return lambda text: detect_secrets_redact([text])[0]


def leakage_table(result, dataset, texts, *, dataset_text: DatasetText | None = None,
                  baseline: Callable[[str], str] | None = None):
    """One row per (policy, continuity, secret, channel)."""
    import polars as pl

    dt = dataset_text or DatasetText(dataset)
    baseline = baseline or _baseline_redactor()
    secrets = dt.secrets.filter(~pl.col("negative"))
    rows: list[dict[str, Any]] = []
    base_cache: dict[str, str] = {}

    def base_redacted(raw: str) -> str:
        if raw not in base_cache:
            base_cache[raw] = baseline(raw)
        return base_cache[raw]

    for name, policy in policies_of(result).items():
        for cid, inp in result.inputs.items():
            tx = texts.filter((pl.col("policy") == name) & (pl.col("continuity_id") == cid))
            channel_texts = {
                "summary": tx.filter(pl.col("kind").is_in(["summary", "merge", "recorded"])),
                "memory": tx.filter(pl.col("kind") == "memory"),
            }
            cont_secrets = secrets.filter(pl.col("continuity") == inp.continuity)
            context_views = _context_after_compaction(result, inp, policy, dt, tx, cont_secrets)
            indexes = {}
            for channel, frame in channel_texts.items():
                stored = [t for t in frame["text"].to_list() if t]
                raw = [t for t in frame["text_raw"].to_list() if t]
                indexes[channel] = (len(stored), LeakIndex(stored), LeakIndex(raw),
                                    LeakIndex([base_redacted(t) for t in raw]))
            for sid, group in cont_secrets.group_by("secret_id", maintain_order=True):
                first = group.row(0, named=True)
                value = first["value"]
                common = {"run_id": result.run_id, "policy": name, "continuity_id": cid,
                          "secret_id": sid[0], "format": first["kind"], "context": first["context"],
                          "transform": first["transform"], "sr1": bool(policy.redaction.sr1_carry_forward)}
                for channel, (n, stored, raw, base) in indexes.items():
                    rows.append({**common, "channel": channel, "texts": n, "leaked": stored.leaked(value),
                                 "leaked_unredacted": raw.leaked(value),
                                 "leaked_baseline": base.leaked(value)})
                ctx = context_views.get(sid[0])
                rows.append({**common, "channel": "context", "texts": len(ctx) if ctx else 0,
                             "leaked": bool(ctx) and LeakIndex(ctx).leaked(value),
                             "leaked_unredacted": None, "leaked_baseline": None})
    schema = {"run_id": pl.String, "policy": pl.String, "continuity_id": pl.String, "secret_id": pl.String,
              "format": pl.String, "context": pl.String, "transform": pl.String, "sr1": pl.Boolean,
              "channel": pl.String, "texts": pl.Int64, "leaked": pl.Boolean,
              "leaked_unredacted": pl.Boolean, "leaked_baseline": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


def _context_after_compaction(result, inp, policy, dt: DatasetText, tx, secrets) -> dict[str, list[str]]:
    """Per secret: the compiled context texts right after its events were compacted away."""
    import numpy as np
    import polars as pl

    seq_to_row = {int(s): i for i, s in enumerate(inp.seq)}
    last_row: dict[str, int] = {}
    for r in secrets.iter_rows(named=True):
        row = seq_to_row.get(int(r["seq"]))
        if row is not None:
            last_row[r["secret_id"]] = max(last_row.get(r["secret_id"], -1), row)
    if not last_row:
        return {}
    tracker = ContextTracker(inp, policy, result.events, window=0)
    stored = {a: t for a, t in zip(tx["artifact_id"].to_list(), tx["text"].to_list(), strict=True) if t}
    pending = dict(sorted(last_row.items(), key=lambda kv: kv[1]))
    out: dict[str, list[str]] = {}
    for r in range(inp.n_requests):
        tracker.advance(r)
        cut = tracker.state.cut
        done = [sid for sid, row in pending.items() if row <= cut]
        if not done:
            continue
        views = [stored.get(a, "") for a, _ in tracker.state.segments]
        views += [dt.text(inp.continuity, i) for i in tracker.raw_rows(r)]
        for sid in done:
            out[sid] = [v for v in views if v]
            del pending[sid]
        if not pending:
            break
    del np, pl
    return out


def leakage_summary(table):
    """Leak rates by policy x channel: harness, no redaction, detect-secrets."""
    import polars as pl

    return (table.group_by("policy", "sr1", "channel", maintain_order=True)
            .agg(pl.len().alias("secrets"), pl.col("leaked").sum().alias("leaks"),
                 pl.col("leaked_unredacted").sum().alias("leaks_unredacted"),
                 pl.col("leaked_baseline").sum().alias("leaks_detect_secrets")))


def over_redaction(result, dataset, texts, *, dataset_text: DatasetText | None = None,
                   baseline: Callable[[str], str] | None = None):
    """Hard negatives that reached derived text: how many did each redactor destroy?"""
    import polars as pl

    from workbench.redaction.harness import redact

    dt = dataset_text or DatasetText(dataset)
    baseline = baseline or _baseline_redactor()
    negatives = dt.secrets.filter(pl.col("negative"))
    raws = [t for t in texts["text_raw"].to_list() if t]
    rows = []
    for r in negatives.iter_rows(named=True):
        value = r["value"]
        carriers = [t for t in raws if value in t]
        if not carriers:
            continue
        harness_hit = any(value not in redact(t).text for t in carriers)
        base_hit = any(value not in baseline(t) for t in carriers)
        rows.append({"secret_id": r["secret_id"], "kind": r["kind"], "texts": len(carriers),
                     "redacted_by_harness": harness_hit, "redacted_by_detect_secrets": base_hit})
    return pl.DataFrame(rows, schema={"secret_id": pl.String, "kind": pl.String, "texts": pl.Int64,
                                      "redacted_by_harness": pl.Boolean, "redacted_by_detect_secrets": pl.Boolean})
