"""Fidelity of retention: for every recorded compaction of an imported dataset, what the
log's own summary kept against what the calibrated modelled summarizer keeps on the same
span, fitted without that log.

:func:`retention_fidelity` writes one row per recorded compaction × fact kind
(``fidelity_retention.parquet``): ``continuity_id``, ``request`` (the compaction's request),
``kind``, ``facts_before`` (facts of that kind before the cut:
:mod:`workbench.evaluate.log_retention`), ``kept_recorded`` (kept by the summary the log
recorded) and ``kept_modelled`` (kept by the modelled summarizer's summary of the same span).

The modelled summary is written by :class:`~workbench.summarize.modelled.ModelledSummarizer`
with each fact's keep probability from the retention profile fitted **without** the log
(:func:`workbench.summarize.retention_profile.loo_profile`: its harness's other logs, else
every other log), its size from that profile's size rule, and no secret behaviour (the
log has no planted secrets). A kept fact is noted on a line of its own; the rest of the
summary is the span's own sentences that name no fact. It is scored exactly as the recorded
summary is (:class:`~workbench.evaluate.log_retention.SummaryText`). A log alone in the
dataset has no profile fitted without it: ``kept_modelled`` is null.
"""

from __future__ import annotations

from typing import Any

from workbench.continuity.enums import KIND_NAMES, ROLE_NAMES
from workbench.evaluate.log_retention import (
    SummaryText,
    dataset_retention,
    recorded_compactions,
    short_forms,
)

COLUMNS = ("continuity_id", "request", "kind", "facts_before", "kept_recorded", "kept_modelled")


def _request(ev, comp, facts, continuity_id: str, target_tokens: int):
    """The summary request of a recorded compaction's span, with its facts as labels."""
    import polars as pl

    from workbench.summarize.base import SpanEvent, SpanLabel, SummaryRequest

    span = ev.filter((pl.col("seq") > comp.span_from_seq) & (pl.col("seq") < comp.boundary_seq))
    events = tuple(SpanEvent(int(s), KIND_NAMES.get(int(k), "opaque"), ROLE_NAMES.get(int(r), "none"), t or "")
                   for s, k, r, t in zip(span["seq"].to_list(), span["kind"].to_list(), span["role"].to_list(),
                                         span["text"].to_list(), strict=True))
    # a label without a position in its event: the summarizer notes a kept fact on its own
    # line rather than quoting the sentence around it (that sentence may name facts the
    # draw dropped, which would then count as kept). Its shorter spellings (a path's file
    # name) are labels too, with no chance of being kept: the filler never quotes them.
    labels = []
    for i, f in enumerate(facts.iter_rows(named=True)):
        labels.append(SpanLabel(f"{f['kind']}-{i}", f["kind"], int(f["last_seq"]), 0, 0, f["value"], f["value"],
                                True))
        labels += [SpanLabel(f"{f['kind']}-{i}~{j}", f["kind"], int(f["last_seq"]), 0, 0, form, form, True)
                   for j, form in enumerate(short_forms(f["kind"], f["value"])) if form != f["value"]]
    return SummaryRequest(continuity_id, f"recorded-{comp.index}", comp.span_from_seq + 1, comp.boundary_seq - 1,
                          events, None, max(1, target_tokens), labels=tuple(labels),
                          draw_key=f"compaction-{comp.index}")


def retention_fidelity(dataset, *, seed: int = 0) -> tuple[Any, str]:
    """``(table, text)``: the ``fidelity_retention`` rows and a per-compaction comparison."""
    import polars as pl

    from workbench.summarize.modelled import ModelledSummarizer
    from workbench.summarize.retention_profile import loo_profile

    facts, comps = dataset_retention(dataset)
    readable = comps.filter(pl.col("kept").is_not_null())
    events = dataset.events()
    conts = dataset.continuities()
    number = dict(zip(conts["continuity_id"].to_list(), conts["continuity"].to_list(), strict=True))
    rows: list[dict[str, Any]] = []
    lines = []
    for log in sorted(set(readable["continuity_id"].to_list())):
        fitted = loo_profile(facts, comps, log)
        ev = events.filter(pl.col("continuity") == number[log]).sort("seq")
        by_index = {c.index: c for c in recorded_compactions(ev)}
        for c in readable.filter(pl.col("continuity_id") == log).iter_rows(named=True):
            mine = facts.filter((pl.col("continuity_id") == log) & (pl.col("compaction") == c["compaction"]))
            modelled_kept: dict[str, int] | None = None
            if fitted is not None:
                _, profile = fitted
                p_of = {f"{k}-{i}": profile.keep_probability(k, m, r) for i, (k, m, r) in enumerate(
                    zip(mine["kind"].to_list(), mine["mentions"].to_list(), mine["requests_since"].to_list(),
                        strict=True))}
                summarizer = ModelledSummarizer(seed, keep_fact=lambda lb, _req, p_of=p_of: p_of.get(lb.label_id, 0.0),
                                                p_copy_secret=0.0, p_partial_secret=0.0, p_hallucinate=0.0,
                                                p_marker_leak=0.0, p_keep_negative=0.0)
                req = _request(ev, by_index[c["compaction"]], mine, log, profile.summary_tokens(c["span_tokens"]))
                text = SummaryText(summarizer.summarize(req).text)
                modelled_kept = {}
                for k, v in zip(mine["kind"].to_list(), mine["value"].to_list(), strict=True):
                    modelled_kept[k] = modelled_kept.get(k, 0) + (text.keeps(k, v) != "lost")
            for (kind,), g in mine.group_by("kind", maintain_order=True):
                rows.append({"continuity_id": log, "request": c["request"], "kind": kind, "facts_before": g.height,
                             "kept_recorded": int(g["kept"].is_in(["exact", "normalized"]).sum()),
                             "kept_modelled": None if modelled_kept is None else modelled_kept.get(kind, 0)})
            lines.append(_line(log, c, fitted[0] if fitted else None,
                               None if modelled_kept is None else sum(modelled_kept.values())))
    schema = {"continuity_id": pl.String, "request": pl.Int64, "kind": pl.String, "facts_before": pl.Int64,
              "kept_recorded": pl.Int64, "kept_modelled": pl.Int64}
    table = pl.DataFrame(rows, schema=schema)
    head = "retention: recorded summary vs calibrated modelled summarizer (fitted without the log), per compaction"
    if not lines:
        return table, head + "\n  no recorded compaction with a readable summary"
    return table, "\n".join([head, *lines, _overall(table)])


def _pct(kept: int | None, n: int) -> str:
    return "-" if kept is None else f"{kept}/{n} ({100.0 * kept / max(1, n):.0f} %)"


def _line(log: str, c: dict, profile: str | None, modelled: int | None) -> str:
    n = int(c["facts_before"])
    fitted = f"profile {profile}" if profile else "no profile without this log"
    return (f"  {log} request {c['request']} ({c['harness']}): {n} facts before the cut; recorded kept "
            f"{_pct(int(c['kept']), n)}, modelled kept {_pct(modelled, n)} [{fitted}]")


def _overall(table) -> str:
    import polars as pl

    t = table.filter(pl.col("kept_modelled").is_not_null())
    if t.height == 0:
        return "  overall: no compaction has a profile fitted without its log"
    n = int(t["facts_before"].sum())
    rec, mod = int(t["kept_recorded"].sum()), int(t["kept_modelled"].sum())
    return (f"  overall: recorded {100.0 * rec / n:.1f} %, modelled {100.0 * mod / n:.1f} % "
            f"({100.0 * (mod - rec) / n:+.1f} pp) over {n} facts")
