"""One compaction, side by side: the span it dropped and the summary that replaced it, with
its planted facts and secrets marked — what stayed, what went.

:func:`compaction_view` reads a run's ``compactions.parquet`` row (the redaction audit
writes it), the stored summary (``texts.parquet``) and the dropped events' text (the run's
dataset) and returns a :class:`CompactionView`: its ``row``, the events shown, the summary,
and ``to_html()`` (a notebook displays it as it is). Every text passes through
:class:`~workbench.report.textguard.TextGuard`; a planted secret in the dropped span is
shown as a badge naming its id and fate, never its value. A long span shows its events
that carry a label, its first and last events, and says how many it leaves out.

>>> import workbench as wb
>>> view = wb.inspect_compaction("runs/demo-audit", "claude-code", n="worst")   # doctest: +SKIP
>>> view.row["facts_lost"], view                                              # doctest: +SKIP
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.report.textguard import MARKER_RE, PLANTED_MARKER, TextGuard
from workbench.rundir import wire as W

_CSS = """<style>
.wb-i{font-size:12px;margin:6px 0 18px 0}
.wb-i table.wb-i-head td,.wb-i table.wb-i-head th{padding:2px 10px 2px 0!important;text-align:left!important}
.wb-i-cols{display:flex;gap:14px;align-items:flex-start}
.wb-i-col{flex:1 1 50%;min-width:0}
.wb-i-ev{border-left:3px solid #ccc;padding:2px 6px;margin:4px 0;background:#fafafa}
.wb-i-ev pre,.wb-i-sum pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:11px}
.wb-i-gap{color:#777;font-style:italic;margin:4px 0}
.wb-i-sum{border-left:3px solid #1f77b4;padding:2px 6px;background:#f4f8fc}
mark.wb-kept{background:#c8e6c9}mark.wb-paraphrased{background:#fff3b0}mark.wb-lost{background:#ffcdd2}
span.wb-sec{font-family:monospace;padding:0 3px;border-radius:3px;border:1px solid #999}
span.wb-leaked{background:#ef5350;color:#fff}span.wb-redacted{background:#ffe082}span.wb-absent{background:#e0e0e0}
span.wb-marker{background:#ffe082;font-family:monospace}span.wb-leak{background:#ef5350;color:#fff;font-family:monospace}
span.wb-raw{background:#c8e6c9;font-size:10px;padding:0 3px}
</style>"""
_FATE = {"kept": "kept in the summary", "paraphrased": "only paraphrased in the summary",
         "lost": "lost", "leaked": "leaked into the stored summary", "redacted": "carried, then redacted by SR-1",
         "absent": "not carried"}


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


@dataclass
class ShownEvent:
    seq: int
    role: str
    kind: str
    html: str            # guarded, escaped and marked up
    retained: bool       # kept raw across the cut


@dataclass
class CompactionView:
    """A compaction, side by side (see the module docstring)."""

    run_dir: str
    row: dict[str, Any]
    events: list[ShownEvent]
    hidden: int                  # dropped events not shown
    summary_html: str            # the stored summary, guarded and marked up ("" when unreadable)
    notes: list[str] = field(default_factory=list)

    def to_html(self) -> str:
        r = self.row
        head = [("compaction", f"{r['policy']} · {r['continuity_id']} · #{r['compaction']} at request "
                               f"{r['request']} ({r['trigger']}, {r['summary_kind']})"),
                ("context", f"{r['tokens_before']:,} → {r['tokens_after']:,} tokens; summary "
                            f"{r['summary_tokens']:,} tokens"),
                ("dropped", f"{r['dropped_events']:,} events ({r['dropped_tokens']:,} tokens), seq "
                            f"{r['dropped_from_seq']}–{r['dropped_to_seq']}; {len(r['retained_seqs'])} kept raw "
                            "across the cut"),
                ("facts", f"{r['facts_in_span']} in the span: {r['facts_kept']} kept "
                          f"({r['facts_kept_raw']} raw), {r['facts_paraphrased']} paraphrased, {r['facts_lost']} lost"),
                ("secrets", "not measured (the dataset has no planted secrets)" if r["secrets_in_span"] is None else
                            f"{r['secrets_in_span']} in the span: {r['secrets_carried']} carried by the summarizer, "
                            f"{r['secrets_redacted']} redacted, {r['secrets_leaked']} leaked"),
                ("cost", ("—" if r.get("compaction_cost_usd") is None else f"${r['compaction_cost_usd']:,.4f}: ")
                         + f"{r['summarizer_calls']} summarizer call(s), ${r['summarizer_cost_usd']:,.4f}"
                         + ("" if r.get("summarizer_cache_read_tokens") is None else
                            f" (read {r['summarizer_cache_read_tokens']:,} cached tokens, wrote "
                            f"{r['summarizer_cache_write_tokens']:,})")
                         + "; re-write of the new prefix "
                         + ("—" if r["cache_loss_tokens"] is None else
                            f"{r['cache_loss_tokens']:,} tokens" + ("" if r["cache_loss_usd"] is None else
                                                                   f", ${r['cache_loss_usd']:,.4f}")))]
        out = [_CSS, '<div class="wb-i"><table class="wb-i-head">']
        out += [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in head]
        out.append("</table>")
        out += [f'<p class="wb-note">{_e(n)}</p>' for n in self.notes]
        out.append('<div class="wb-i-cols"><div class="wb-i-col"><h4>What it dropped</h4>')
        for ev in self.events:
            badge = ' <span class="wb-raw">kept raw</span>' if ev.retained else ""
            out.append(f'<div class="wb-i-ev"><b>[{ev.seq}] {_e(ev.role)} {_e(ev.kind.replace("_", " "))}</b>'
                       f"{badge}<pre>{ev.html}</pre></div>")
        if self.hidden:
            out.append(f'<p class="wb-i-gap">… and {self.hidden:,} more dropped events without a planted '
                       "fact or secret, not shown</p>")
        out.append('</div><div class="wb-i-col"><h4>What replaced it</h4>')
        if self.summary_html:
            out.append(f'<div class="wb-i-sum"><pre>{self.summary_html}</pre></div>')
        else:
            out.append(f'<p class="wb-i-gap">{_e(_no_summary(r["summary_kind"]))}</p>')
        out.append("</div></div>")
        out.append('<p class="wb-i-gap">Marked: facts <mark class="wb-kept">kept</mark> '
                   '<mark class="wb-paraphrased">paraphrased</mark> <mark class="wb-lost">lost</mark>; secrets '
                   '<span class="wb-sec wb-leaked">leaked</span> <span class="wb-sec wb-redacted">redacted</span> '
                   '<span class="wb-sec wb-absent">not carried</span> (by id, never by value); '
                   '<span class="wb-marker">&lt;REDACTED:kind&gt;</span> a redaction in the stored text, '
                   f'<span class="wb-leak">{_e(PLANTED_MARKER)}</span> a planted secret masked in this view.</p>')
        out.append("</div>")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        return self.to_html()


def _no_summary(kind: str) -> str:
    if kind == W.OPAQUE_KIND:
        return "An opaque provider compaction item: its size is known, its content is not readable."
    if kind == W.TRUNCATION_KIND:
        return "A truncation policy's compaction: the span was dropped without a summary."
    return f"No readable summary ({kind})."


# ---- choosing a compaction ------------------------------------------------------------------
#: the columns a report shows of compactions.parquet: (column, header, format)
TABLE_COLUMNS = (
    ("policy", "policy", "s"), ("continuity_id", "continuity", "s"), ("compaction", "compaction", "int"),
    ("request", "request", "int"), ("trigger", "trigger", "s"), ("tokens_before", "before", "int"),
    ("tokens_after", "after", "int"), ("dropped_events", "dropped events", "int"),
    ("facts_in_span", "facts", "int"), ("facts_kept", "kept", "int"), ("facts_paraphrased", "paraphrased", "int"),
    ("facts_lost", "lost", "int"), ("secrets_in_span", "secrets", "int"), ("secrets_redacted", "redacted", "int"),
    ("secrets_leaked", "leaked", "int"), ("summarizer_cost_usd", "summarizer $", "usd"),
    ("cache_loss_usd", "cache loss $", "usd"), ("compaction_cost_usd", "compaction $", "usd"))



def worst_compactions(table):
    """Per policy, its compaction that lost the most facts (ties: more facts in the span,
    then the earliest), in the order the policies appear."""
    import polars as pl

    if table is None or table.height == 0:
        return table
    order = table["policy"].unique(maintain_order=True).to_list()
    worst = (table.sort(["facts_lost", "facts_in_span", "compaction"], descending=[True, True, False])
             .group_by("policy", maintain_order=True).head(1))
    return worst.with_columns(pl.col("policy").replace_strict({p: i for i, p in enumerate(order)},
                                                              return_dtype=pl.Int64).alias("_o")
                              ).sort("_o").drop("_o")


def pick(table, policy: str, continuity: str | None = None, n: int | str = 0) -> dict[str, Any]:
    """The compactions.parquet row of ``policy``'s compaction ``n`` (0-based, per
    continuity) or ``"worst"``; errors name what there is."""
    import polars as pl

    from workbench.errors import WorkbenchError

    policies = table["policy"].unique(maintain_order=True).to_list()
    if policy not in policies:
        raise WorkbenchError(f"no compaction of policy {policy!r} in this run; policies with compactions: "
                             f"{', '.join(policies) or 'none'}")
    rows = table.filter(pl.col("policy") == policy)
    conts = rows["continuity_id"].unique(maintain_order=True).to_list()
    if continuity is not None and continuity not in conts:
        raise WorkbenchError(f"policy {policy!r} has no compaction in continuity {continuity!r}; it compacts "
                             f"in: {', '.join(conts)}")
    if n == "worst":
        part = rows if continuity is None else rows.filter(pl.col("continuity_id") == continuity)
        return worst_compactions(part).row(0, named=True)
    rows = rows.filter(pl.col("continuity_id") == (continuity or conts[0]))
    if not isinstance(n, int) or not 0 <= n < rows.height:
        raise WorkbenchError(f"compaction {n!r} is not one of {policy!r} in {continuity or conts[0]!r}: "
                             f"give 0..{rows.height - 1} or 'worst'")
    return rows.filter(pl.col("compaction") == n).row(0, named=True)


# ---- building the view ----------------------------------------------------------------------
def compaction_view(run_dir: str | Path, policy: str, continuity: str | None = None, n: int | str = 0, *,
                    guard: TextGuard | None = None, max_events: int = 24, event_chars: int = 600,
                    summary_chars: int = 6000, table=None) -> CompactionView:
    """The view of one compaction of a run (see the module docstring); ``table``: the run's
    compactions frame when the caller has it."""
    from workbench.rundir.read import load_table

    run_dir = Path(run_dir)
    table = table if table is not None else load_table(run_dir, "compactions", required=True)
    row = pick(table, policy, continuity, n)
    guard = guard or TextGuard.for_run(run_dir)
    labels = _Labels(run_dir, row)
    events, hidden, notes = _dropped_events(labels, row, guard, max_events, event_chars)
    summary = _summary_html(run_dir, row, labels, guard, summary_chars, notes)
    return CompactionView(run_dir=str(run_dir), row=row, events=events, hidden=hidden, summary_html=summary,
                          notes=notes)


class _Labels:
    """The dropped events of one compaction and their planted labels (from the run's dataset)."""

    def __init__(self, run_dir: Path, row: dict[str, Any]):
        import polars as pl

        from workbench.continuity.dataset import load_dataset
        from workbench.rundir.read import load_config

        ds = load_dataset(load_config(run_dir)["dataset"]["path"])
        cont = ds.continuities().filter(pl.col("continuity_id") == row["continuity_id"])["continuity"][0]
        seqs = row["dropped_seqs"]
        self.events = (ds.events(columns=["continuity", "seq", "kind", "role", "text"])
                       .filter((pl.col("continuity") == cont) & pl.col("seq").is_in(seqs)).sort("seq"))
        self.facts = ds.facts().filter((pl.col("continuity") == cont) & pl.col("seq").is_in(seqs))
        self.secrets = ds.secrets().filter((pl.col("continuity") == cont) & pl.col("seq").is_in(seqs)
                                           & ~pl.col("negative"))
        self.fate = {**{f: "kept" for f in row["kept_fact_ids"]},
                     **{f: "paraphrased" for f in row["paraphrased_fact_ids"]},
                     **{f: "lost" for f in row["lost_fact_ids"]},
                     **{s: "redacted" for s in row["redacted_secret_ids"]},
                     **{s: "leaked" for s in row["leaked_secret_ids"]}}

    def spans(self, seq: int) -> list[tuple[int, int, str, dict]]:
        """(start, end, "fact" | "secret", label row) in the event's text, by start."""
        import polars as pl

        out = [(r["start"], r["end"], "fact", r) for r in self.facts.filter(pl.col("seq") == seq).iter_rows(named=True)]
        out += [(r["start"], r["end"], "secret", r)
                for r in self.secrets.filter(pl.col("seq") == seq).iter_rows(named=True)]
        return sorted(out, key=lambda s: (s[0], s[1]))


def _windows(text: str, spans, limit: int) -> list[tuple[int, int]]:
    """Pieces of ``text`` to show: all of it when short, else a window around each label."""
    if len(text) <= limit:
        return [(0, len(text))]
    if not spans:
        return [(0, limit)]
    room = max(60, limit // (2 * len(spans)))
    out: list[tuple[int, int]] = []
    for a, b, _, _ in spans:
        lo, hi = max(0, a - room), min(len(text), b + room)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _event_html(text: str, spans, fate: dict[str, str], guard: TextGuard, limit: int) -> str:
    parts: list[str] = []
    windows = _windows(text, spans, limit)
    for w, (lo, hi) in enumerate(windows):
        if lo > 0 or w:
            parts.append('<span class="wb-i-gap">… </span>')
        pos = lo
        for a, b, what, r in spans:
            if a < pos or b > hi:
                continue
            parts.append(_e(guard(text[pos:a], limit=None)))
            if what == "fact":
                status = fate.get(r["fact_id"], "lost")
                shown = guard(text[a:b], limit=None)
                parts.append(f'<mark class="wb-{status}" title="{_e(r["fact_id"])} ({_e(r["kind"])}): '
                             f'{_e(_FATE[status])}">{_e(shown)}</mark>')
            else:
                status = fate.get(r["secret_id"], "absent")
                parts.append(f'<span class="wb-sec wb-{status}" title="{_e(_FATE[status])}">'
                             f'[{_e(r["secret_id"])} · {_e(r["kind"])} · {_e(status)}]</span>')
            pos = b
        parts.append(_e(guard(text[pos:hi], limit=None)))
        if hi < len(text) and w == len(windows) - 1:
            parts.append('<span class="wb-i-gap"> …</span>')
    return "".join(parts)


def _dropped_events(labels: _Labels, row, guard: TextGuard, max_events: int, event_chars: int):
    """The dropped events shown: those carrying a label (up to ``max_events``), then the
    first and last two of the span as room allows."""
    retained = set(row["retained_seqs"])
    seqs = labels.events["seq"].to_list()
    marked = [s for s in seqs if s in set(labels.facts["seq"].to_list()) | set(labels.secrets["seq"].to_list())]
    chosen = set(marked[:max_events])
    for s in (*seqs[:2], *seqs[-2:]):
        if len(chosen) < max_events:
            chosen.add(s)
    notes = []
    if len(marked) > max_events:
        notes.append(f"{len(marked)} dropped events carry a planted label; the first {max_events} are shown.")
    by_seq = {r["seq"]: r for r in labels.events.iter_rows(named=True)}
    shown = [ShownEvent(seq=s, role=_role(by_seq[s]["role"]), kind=_kind(by_seq[s]["kind"]),
                        html=_event_html(by_seq[s]["text"] or "", labels.spans(s), labels.fate, guard, event_chars),
                        retained=s in retained) for s in sorted(chosen)]
    return shown, len(seqs) - len(shown), notes


def _role(code: int) -> str:
    from workbench.continuity.enums import ROLE_NAMES

    return ROLE_NAMES[int(code)]


def _kind(code: int) -> str:
    from workbench.continuity.enums import KIND_NAMES

    return KIND_NAMES[int(code)]


def _summary_html(run_dir: Path, row, labels: _Labels, guard: TextGuard, limit: int, notes: list[str]) -> str:
    import polars as pl

    from workbench.rundir.read import load_table
    from workbench.synth.fact_forms import form_pattern

    if not row["readable"] or row["artifact_id"] is None:
        return ""
    texts = load_table(run_dir, "texts")
    hit = None if texts is None else texts.filter(pl.col("artifact_id") == row["artifact_id"])
    if hit is None or hit.height == 0 or not hit["text"][0]:
        notes.append("texts.parquet holds no text for this summary: re-run `workbench audit redaction --run RUN_DIR`.")
        return ""
    shown = guard(hit["text"][0], limit=limit)
    marks: list[tuple[int, int, str, str]] = []
    for f in labels.facts.iter_rows(named=True):
        status = labels.fate.get(f["fact_id"], "lost")
        if status == "kept":
            found = [(m.start(), m.end()) for m in re.finditer(re.escape(f["answer"]), shown)]
        elif status == "paraphrased":
            found = [(m.start(), m.end()) for m in form_pattern(f["kind"], f["answer"]).finditer(shown)]
        else:
            found = []
        marks += [(a, b, f"wb-{status}", f"{f['fact_id']} ({f['kind']}): {_FATE[status]}") for a, b in found]
    for m in MARKER_RE.finditer(shown):
        leak = m.group(0) == PLANTED_MARKER
        marks.append((m.start(), m.end(), "wb-leak" if leak else "wb-marker",
                      "a planted secret, masked in this view" if leak else "redacted when stored (SR-1)"))
    out, pos = [], 0
    for a, b, cls, title in sorted(marks):
        if a < pos:
            continue
        tag = "mark" if cls in ("wb-kept", "wb-paraphrased", "wb-lost") else "span"
        out.append(_e(shown[pos:a]))
        out.append(f'<{tag} class="{cls}" title="{_e(title)}">{_e(shown[a:b])}</{tag}>')
        pos = b
    out.append(_e(shown[pos:]))
    if row["summary_chars"] > limit:
        notes.append(f"The summary is shown up to {limit:,} of its {row['summary_chars']:,} characters.")
    return "".join(out)
