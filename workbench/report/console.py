"""What the command line and the demo print about a run: per-policy totals and the
evaluation headline, as tables (``fmt``: table | csv | json | markdown)."""

from __future__ import annotations

from workbench.util.tables import emit


def print_summary(summary, fmt: str = "table") -> None:
    """Per-policy totals of a run's summary frame."""
    from workbench.engine.metrics import policy_totals

    rows = policy_totals(summary).to_dicts()
    emit(rows, ["policy", "requests", "cost_usd", "compactions", "flushes", "overflows", "truncations",
                "failed_requests", "peak_context_tokens", "cache_hit_rate"], fmt=fmt, name="summary",
         headers={"cost_usd": "cost $", "peak_context_tokens": "peak context", "cache_hit_rate": "cache hit"},
         display={"cost_usd": lambda v: f"{v:,.2f}", "cache_hit_rate": lambda v: f"{v:.1%}"})


def leak_cell(h: dict, key: str = "leaks") -> str:
    """A leak count, or why there is none (an unlabelled dataset measures nothing)."""
    if h.get(key) is not None:
        return str(h[key])
    return f"not measured (no labels): {h.get('redactions', 0)} redactor findings carried into derived text"


def print_evaluation(report: dict, fmt: str = "table") -> None:
    """The redaction audit's headline per policy."""
    rows = [{"policy": name, "sr1": "on" if h["sr1"] else "off", "secrets": h["secrets"],
             "leaks": leak_cell(h), "leaks_context": h["leaks_context"] if h.get("leaks_context") is not None else "–",
             "retention": h["retention"], "task_retention": h.get("task_retention"),
             "redactor_findings": h.get("redactions")}
            for name, h in report["policies"].items()]
    emit(rows, ["policy", "sr1", "secrets", "leaks", "leaks_context", "retention", "task_retention",
                "redactor_findings"],
         fmt=fmt, title=f"Redaction and retention ({report.get('summarizer')} summarizer)", name="evaluation",
         headers={"sr1": "SR-1", "leaks": "leaks (summaries+memory)",
                  "leaks_context": "in context after compaction", "redactor_findings": "redactor findings",
                  "task_retention": "task state"},
         display={"retention": lambda v: "-" if v is None else f"{v:.1%}",
                  "task_retention": lambda v: "-" if v is None else f"{v:.1%}"})
    samples = report.get("summary_samples") or {}
    if samples.get("samples", 1) > 1:
        print_spread(samples, fmt)
    if report.get("judged_probes"):
        pct = lambda v: "–" if v is None else f"{v:.1%}"  # noqa: E731
        emit([{"policy": p, **j} for p, j in report["judged_probes"].items()],
             ["policy", "probes", "answerable", "answerable_kept", "answerable_paraphrased", "answerable_lost"],
             fmt=fmt, title="LLM-judged probes: dropped facts the summary answers", name="judged_probes",
             display={c: pct for c in ("answerable", "answerable_kept", "answerable_paraphrased", "answerable_lost")})
    if fmt == "table":
        o = report["over_redaction"]
        ds = "not measured (--baseline)" if o["detect_secrets"] is None else o["detect_secrets"]
        print(f"hard negatives that reached derived text: {o['negatives_in_derived_text']}; "
              f"destroyed by the harness: {o['harness']}, by detect-secrets: {ds}")
        judged = {p: d for p, d in (report.get("degenerate") or {}).items() if d["summaries_judged"]}
        if judged:  # workbench.evaluate.degenerate; compactions.parquet's `degenerate` says which
            print("degenerate summaries: " + "; ".join(
                f"{p} {d['degenerate_summaries']}/{d['summaries_judged']}" + "".join(
                    f", {flag} {n}" for flag, n in d["degenerate_by_flag"].items() if n) for p, d in judged.items()))


def print_spread(samples: dict, fmt: str = "table") -> None:
    """Mean and spread (min–max, standard deviation) per policy over the summary samples."""
    def cell(m: dict, pct: bool = False) -> str:
        if m.get("mean") is None:
            return "–"
        show = (lambda v: f"{v:.1%}") if pct else (lambda v: f"{v:,.1f}")
        return f"{show(m['mean'])} ({show(m['min'])}–{show(m['max'])}, sd {show(m['std'])})"

    rows = [{"policy": name, "retention": cell(by["retention"], pct=True), "leaks": cell(by["leaks"]),
             "summary_tokens": cell(by["summary_tokens"])} for name, by in samples["by_policy"].items()]
    emit(rows, ["policy", "retention", "leaks", "summary_tokens"], fmt=fmt, name="summary_samples",
         title=f"Over {samples['samples']} summary samples: mean (min–max, sd)",
         headers={"summary_tokens": "summary tokens"})


COMPACTION_COLUMNS = ("policy", "continuity_id", "compaction", "request", "trigger", "tokens_before",
                      "tokens_after", "summary_tokens", "dropped_events", "facts_in_span", "facts_kept",
                      "facts_paraphrased", "facts_lost", "secrets_in_span", "secrets_carried",
                      "secrets_redacted", "secrets_leaked", "summarizer_calls", "summarizer_cost_usd",
                      "summarizer_cache_read_tokens", "summarizer_cache_write_tokens",
                      "cache_loss_tokens", "cache_loss_usd", "compaction_cost_usd")


def print_compactions(frame, fmt: str = "table") -> None:
    """The compaction inspector's table (``compactions.parquet``), one row per compaction: a
    compaction's cost is its summarizer calls plus the re-write of the new prefix (a table
    written before those columns existed is shown without them)."""
    columns = [c for c in COMPACTION_COLUMNS if c in frame.columns]
    emit(frame.select(columns).to_dicts(), columns, fmt=fmt, title="Compactions",
         headers={"continuity_id": "continuity", "compaction": "compaction", "tokens_before": "before",
                  "tokens_after": "after", "summary_tokens": "summary", "dropped_events": "dropped",
                  "facts_in_span": "facts", "facts_kept": "kept", "facts_paraphrased": "paraphrased",
                  "facts_lost": "lost", "secrets_in_span": "secrets", "secrets_carried": "carried",
                  "secrets_redacted": "redacted", "secrets_leaked": "leaked", "summarizer_calls": "calls",
                  "summarizer_cost_usd": "calls $", "summarizer_cache_read_tokens": "call read",
                  "summarizer_cache_write_tokens": "call wrote", "cache_loss_tokens": "re-write",
                  "cache_loss_usd": "re-write $", "compaction_cost_usd": "compaction $"},
         display={"summarizer_cost_usd": lambda v: f"{v:,.4f}",
                  "cache_loss_usd": lambda v: "–" if v is None else f"{v:,.4f}",
                  "compaction_cost_usd": lambda v: "–" if v is None else f"{v:,.4f}"})
