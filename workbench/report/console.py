"""What the command line and the demo print about a run: per-policy totals and the
evaluation headline, as tables (``fmt``: table | csv | json | markdown)."""

from __future__ import annotations

from workbench.util.tables import emit


def print_summary(summary, fmt: str = "table") -> None:
    """Per-policy totals of a run's summary frame."""
    from workbench.engine.metrics import policy_totals

    rows = policy_totals(summary).to_dicts()
    emit(rows, ["policy", "requests", "cost_usd", "compactions", "flushes", "overflows",
                "peak_context_tokens", "cache_hit_rate"], fmt=fmt,
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
             "retention": h["retention"], "redactor_findings": h.get("redactions")}
            for name, h in report["policies"].items()]
    emit(rows, ["policy", "sr1", "secrets", "leaks", "leaks_context", "retention", "redactor_findings"],
         fmt=fmt, title=f"Redaction and retention ({report.get('summarizer')} summarizer)",
         headers={"sr1": "SR-1", "leaks": "leaks (summaries+memory)",
                  "leaks_context": "in context after compaction", "redactor_findings": "redactor findings"},
         display={"retention": lambda v: "-" if v is None else f"{v:.1%}"})
    if fmt == "table":
        o = report["over_redaction"]
        ds = "not measured (--baseline)" if o["detect_secrets"] is None else o["detect_secrets"]
        print(f"hard negatives that reached derived text: {o['negatives_in_derived_text']}; "
              f"destroyed by the harness: {o['harness']}, by detect-secrets: {ds}")
