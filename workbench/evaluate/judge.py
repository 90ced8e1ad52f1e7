"""LLM-judged probes (optional; the HTTP summarizer only): Factory-style questions asked of
each compaction's summary.

For every planted fact a compaction dropped, the endpoint that wrote the summaries is asked
the fact's probe question ("Which file holds the retry logic?") with the stored summary as
its only context (:data:`JUDGE_PROMPT`); the reply is **answerable** when it holds the
fact's answer exactly or in another form (:mod:`workbench.synth.fact_forms`). The requests
go through the summarizer's transport and cassette, so a judged audit replays offline.
Every policy is judged by the same endpoint and model (the run's, not a policy's own
``summarizer.model``): the judge is the instrument, not the thing compared.

The table (``probes.parquet``) has one row per (compaction, dropped fact): its status in
the compaction (kept, paraphrased, lost), the question, the reply (through the redaction
harness, as derived text is stored) and ``answerable``; it is empty when the audit was not
asked to judge (``--judge-probes``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

JUDGE_PROMPT = ("You answer questions about an agent's coding session from a summary of it, and from "
                "nothing else. Reply with the answer alone (a name, date, number, path, version, ticket "
                "or host), or UNKNOWN when the summary does not say.")


def empty_probes():
    """The table of an audit that did not judge."""
    return probes_frame([])


def probes_frame(rows: list[dict[str, Any]]):
    import polars as pl

    schema = {"run_id": pl.String, "policy": pl.String, "continuity_id": pl.String, "compaction": pl.Int64,
              "fact_id": pl.String, "fact_kind": pl.String, "status": pl.String, "probe": pl.String,
              "reply": pl.String, "answerable": pl.Boolean}
    return pl.DataFrame(rows, schema=schema)


def judge_probes(result, compactions, texts, dataset_text, *, summarizer: str, summarizer_options: dict | None,
                 root: str | Path | None = None, max_tokens: int = 64):
    """Ask every dropped fact's probe of its compaction's stored summary (see the module
    docstring)."""
    import polars as pl

    from workbench.summarize import get_summarizer
    from workbench.summarize.base import SummarizerConfigError
    from workbench.synth.fact_forms import form_pattern

    if summarizer != "http":
        raise SummarizerConfigError(f"judged probes ask the summarizer's endpoint: they need --summarizer http "
                                    f"(the summarizer is {summarizer!r})")
    from workbench.evaluate.texts import redact_memo

    judge = get_summarizer("http", **(summarizer_options or {}))
    redact = redact_memo(dataset_text)  # a reply is stored as derived text is: redacted
    facts = {r["fact_id"]: r for r in dataset_text.facts.iter_rows(named=True)}
    stored = dict(zip(texts["artifact_id"].to_list(), texts["text"].to_list(), strict=True))
    rows = []
    readable = compactions.filter(pl.col("readable") & (pl.col("facts_in_span") > 0))
    for c in readable.iter_rows(named=True):
        summary = stored.get(c["artifact_id"]) or ""
        for status in ("kept", "paraphrased", "lost"):
            for fid in c[f"{status}_fact_ids"]:
                f = facts[fid]
                reply = judge.ask(JUDGE_PROMPT, f"Summary:\n{summary}\n\nQuestion: {f['probe']}", max_tokens=max_tokens)
                found = f["answer"] in reply or bool(form_pattern(f["kind"], f["answer"]).search(reply))
                rows.append({"run_id": result.run_id, "policy": c["policy"], "continuity_id": c["continuity_id"],
                             "compaction": c["compaction"], "fact_id": fid, "fact_kind": f["kind"],
                             "status": status, "probe": f["probe"], "reply": redact(reply).text,
                             "answerable": found})
    return probes_frame(rows)


def judged_share(probes) -> dict[str, dict[str, Any]]:
    """Per policy: probes asked and the share the judge could answer (by status too)."""
    import polars as pl

    out: dict[str, dict[str, Any]] = {}
    for name in probes["policy"].unique(maintain_order=True).to_list():
        part = probes.filter(pl.col("policy") == name)
        out[name] = {"probes": part.height, "answerable": float(part["answerable"].mean()),
                     **{f"answerable_{s}": (float(p["answerable"].mean()) if (p := part.filter(pl.col("status") == s)).height
                                            else None) for s in ("kept", "paraphrased", "lost")}}
    return out
