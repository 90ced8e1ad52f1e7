"""What the summaries a real harness recorded kept of the facts before their cut: retention
on a team's own logs, with the log's own summaries as the ground truth.

A **recorded compaction** is a COMPACTION boundary event of an imported continuity (Claude
Code ``compact_boundary``, Codex ``compacted``, Cline/Roo condensation, OpenHands
condensation, opencode compaction) and the first SUMMARY event after it, before the next
conversational event; a boundary without a readable summary is listed with no retention (not
measured). Its **span** is the events after the previous boundary (or the log's start) and
before this one: the history the summary replaced. The facts before the cut are those of
:func:`workbench.evaluate.log_facts.log_facts` over the span, except for ``task`` facts,
where only the **task state at the cut** counts: every todo/plan item with its status at
the cut, the last user request and the last stated next step (earlier requests and steps
are history, not state).

A fact is **kept** by a summary

* ``exact``: its value is in the summary text as is (not glued into a longer word: ``args``
  is not kept by ``parse_args``);
* ``normalized``: in another spelling of the same thing — case, quoting (backticks, quotes)
  and whitespace ignored; a path by its file name (``bar.ts`` for ``/repo/src/bar.ts``; a
  dotfile's name too) or, without an extension, by its last two components; a command without a leading ``cd DIR &&``;
  an identifier without ``()`` or by its last dotted part; a version with or without ``v``; a URL
  without its scheme; a ``task`` phrase when at least 60 % of its distinctive words (4+
  letters, not stop words) are in the summary (summaries restate the task, they do not quote
  it);
* else ``lost``.

Recency is the distance from the cut to the fact's last mention before it: in requests
(``requests_since``: the cut's request minus the request of that mention) and in tokens
(``tokens_since``: the tokens of the span's events after that mention). The summary's size
is compared with the span's tokens (``summary_ratio``).

>>> import polars as pl
>>> from workbench.continuity.enums import EventKind as K
>>> ev = pl.DataFrame({"seq": [0, 1, 2, 3, 4], "request": [0, 0, 1, 1, 1],
...     "kind": [1, 2, 1, int(K.COMPACTION), int(K.SUMMARY)], "role": [2, 3, 3, 1, 2], "flags": [0] * 5,
...     "name": [None, "Read", None, None, None], "chars": [20, 30, 20, 0, 40], "tokens_approx": [5, 8, 5, 0, 10],
...     "text": ["Fix `parse_args`", '{"file_path": "/r/src/cli.py"}', "Let me run the tests.", None,
...              "We fixed parse_args in cli.py; next: run the tests."]})
>>> facts, comps = log_retention(ev, "demo")
>>> sorted(zip(facts["kind"], facts["kept"]))
[('identifier', 'exact'), ('path', 'normalized'), ('task', 'normalized'), ('task', 'normalized')]
>>> comps["facts_before"].to_list(), comps["kept"].to_list()
([4], [4])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

from workbench.continuity.enums import TRIGGER_NAMES, EventKind
from workbench.evaluate.log_facts import KINDS, SOURCE_KINDS, log_facts

KEEP_STATUSES = ("exact", "normalized", "lost")
TASK_WORD_SHARE = 0.6
REQUEST_BUCKETS = ((0, 1), (2, 5), (6, 20), (21, 50), (51, None))
MENTION_BUCKETS = ((1, 1), (2, 3), (4, 9), (10, None))
_STOP = frozenset(("that", "this", "with", "from", "have", "will", "into", "your", "what", "when", "then",
                   "than", "them", "they", "their", "there", "were", "been", "also", "just", "only", "some",
                   "more", "such", "each", "which", "while", "would", "could", "should", "about", "after",
                   "before", "other", "these", "those", "make", "need", "like", "very", "user", "asked",
                   "continue", "working", "next", "step", "steps", "task", "pour", "dans", "avec", "sont",
                   "cette"))
_QUOTES = str.maketrans({c: " " for c in "`'\"“”‘’*"})
_WORD = re.compile(r"\w+", re.U)
_CD = re.compile(r"^cd\s+\S+\s*&&\s*")


@dataclass(frozen=True)
class RecordedCompaction:
    """A compaction boundary of a log and the summary it recorded (None: not readable)."""

    index: int
    boundary_seq: int
    request: int
    trigger: str
    pre_tokens: int
    span_from_seq: int  # exclusive: the previous boundary, or -1
    summary_seq: int | None
    summary: str | None


def recorded_compactions(events) -> list[RecordedCompaction]:
    """The recorded compactions of one continuity's ``events`` (see the module docstring)."""
    import polars as pl

    ev = events.sort("seq")
    kinds, seqs = ev["kind"].to_list(), ev["seq"].to_list()
    texts, requests = ev["text"].to_list(), ev["request"].to_list()
    triggers = ev["compact_trigger"].to_list() if "compact_trigger" in ev.columns else [0] * ev.height
    pre = ev["compact_pre_tokens"].to_list() if "compact_pre_tokens" in ev.columns else [-1] * ev.height
    out: list[RecordedCompaction] = []
    previous = -1
    for i, k in enumerate(kinds):
        if k != EventKind.COMPACTION:
            continue
        summary_seq = summary = None
        for j in range(i + 1, len(kinds)):
            if kinds[j] == EventKind.SUMMARY:
                if texts[j]:
                    summary_seq, summary = int(seqs[j]), texts[j]
                break
            if kinds[j] in SOURCE_KINDS or kinds[j] == EventKind.COMPACTION:
                break
        out.append(RecordedCompaction(len(out), int(seqs[i]), int(requests[i]),
                                      TRIGGER_NAMES.get(int(triggers[i]), "other"), int(pre[i]), previous,
                                      summary_seq, summary))
        previous = int(seqs[i])
    del pl
    return out


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOP}


def _bounded(needle: str, hay: str) -> bool:
    """``needle`` in ``hay`` not glued to a longer word on either side."""
    if not needle:
        return False
    start = hay.find(needle)
    while start >= 0:
        before = hay[start - 1] if start else " "
        end = start + len(needle)
        after = hay[end] if end < len(hay) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = hay.find(needle, start + 1)
    return False


def _spellings(kind: str, value: str) -> list[str]:
    """``value`` and its shorter spellings, in the value's own case (see the docstring)."""
    v = " ".join(value.translate(_QUOTES).split())
    forms = [v]
    if kind == "path":
        p = value.strip().replace("\\", "/")
        parts = [x for x in (PureWindowsPath(p).parts if "\\" in value else PurePosixPath(p).parts) if x not in "/"]
        name = parts[-1] if parts else ""
        if ("." in name.strip(".") or name.startswith(".")) and len(name) >= 4:
            forms.append(name)
        elif len(parts) >= 2:
            forms.append("/".join(parts[-2:]))
    elif kind == "command":
        forms.append(_CD.sub("", v))
    elif kind == "identifier":
        bare = v[:-2] if v.endswith("()") else v
        forms += [bare, re.split(r"\.|::|#", bare)[-1]]
    elif kind == "number":
        bare = v.lstrip("v#")
        forms += [bare, f"v{bare}"] if "." in bare else [bare]
    elif kind == "url":
        forms.append(re.sub(r"^https?://", "", v).rstrip("/"))
    return [f for f in dict.fromkeys(forms) if len(f) >= 3]


def normal_forms(kind: str, value: str) -> list[str]:
    """The lower-case spellings under which a summary keeps ``value`` (not task phrases)."""
    return list(dict.fromkeys(f.lower() for f in _spellings(kind, value)))


def short_forms(kind: str, value: str) -> list[str]:
    """Every spelling that keeps ``value``, in its own case (what a summary that must not keep
    it may not write)."""
    return [] if kind == "task" else _spellings(kind, value)


class SummaryText:
    """A summary prepared once for every fact's test."""

    def __init__(self, text: str):
        self.raw = text
        self.norm = " ".join(text.translate(_QUOTES).split()).lower()
        self.words = _words(text)

    def keeps(self, kind: str, value: str) -> str:
        """``exact``, ``normalized`` or ``lost`` (see the module docstring)."""
        if kind == "task":
            if value in self.raw:
                return "exact"
            words = _words(value)
            return "normalized" if words and len(words & self.words) >= TASK_WORD_SHARE * len(words) else "lost"
        if _bounded(value, self.raw):
            return "exact"
        return "normalized" if any(_bounded(f, self.norm) for f in normal_forms(kind, value)) else "lost"


def token_column(events) -> str | None:
    cols = [c for c in events.columns if c.startswith("tokens_")]
    return "tokens_cl100k" if "tokens_cl100k" in cols else (cols[0] if cols else None)


def task_state(facts):
    """The task-state facts of a span's facts: every todo item (status at the cut), the last
    user request and the last stated next step."""
    import polars as pl

    todos = facts.filter(pl.col("task_role") == "todo")
    last = [facts.filter(pl.col("task_role") == r).sort("last_seq").tail(1) for r in ("request", "next_step")]
    return pl.concat([todos, *last])


def log_retention(events, continuity_id: str, harness: str | None = None):
    """``(facts, compactions)`` of one continuity: one row per fact before each recorded
    compaction's cut with what the recorded summary did with it, and one row per
    compaction (see the module docstring)."""
    import numpy as np
    import polars as pl

    ev = events.sort("seq")
    comps = recorded_compactions(ev)
    tcol = token_column(ev)
    seqs = ev["seq"].to_numpy()
    toks = (ev[tcol] if tcol else (ev["chars"] + 3) // 4).to_numpy().astype(np.int64)
    reqs = ev["request"].to_numpy()
    fact_rows, comp_rows = [], []
    for c in comps:
        lo = int(np.searchsorted(seqs, c.span_from_seq, side="right"))
        hi = int(np.searchsorted(seqs, c.boundary_seq))
        cum = np.concatenate([[0], np.cumsum(toks[lo:hi])])
        span_tokens = int(cum[-1])
        facts = log_facts(ev.slice(lo, hi - lo))
        facts = pl.concat([facts.filter(pl.col("kind") != "task"), task_state(facts.filter(pl.col("kind") == "task"))])
        text = SummaryText(c.summary) if c.summary is not None else None
        for f in facts.iter_rows(named=True):
            at = int(np.searchsorted(seqs, f["last_seq"]))
            kept = text.keeps(f["kind"], f["value"]) if text else None
            fact_rows.append({
                "continuity_id": continuity_id, "harness": harness, "compaction": c.index, "request": c.request,
                "boundary_seq": c.boundary_seq, "kind": f["kind"], "value": f["value"],
                "task_role": f["task_role"], "status": f["status"], "mentions": f["mentions"],
                "first_seq": f["first_seq"], "last_seq": f["last_seq"],
                "requests_since": max(0, c.request - int(reqs[at])) if reqs[at] >= 0 else None,
                "tokens_since": span_tokens - int(cum[at - lo + 1]), "kept": kept})
        n = facts.height
        kept_n = sum(1 for r in fact_rows[len(fact_rows) - n:] if r["kept"] in ("exact", "normalized")) if text else None
        comp_rows.append({
            "continuity_id": continuity_id, "harness": harness, "compaction": c.index, "request": c.request,
            "boundary_seq": c.boundary_seq, "trigger": c.trigger, "pre_tokens": c.pre_tokens if c.pre_tokens >= 0 else None,
            "span_events": hi - lo, "span_tokens": span_tokens,
            "summary_chars": len(c.summary) if c.summary is not None else None,
            "summary_tokens": _tokens_of(ev, tcol, c.summary_seq),
            "facts_before": n, "kept": kept_n, "summary_text": c.summary})
    facts_frame = pl.DataFrame(fact_rows, schema=FACT_ROW_SCHEMA())
    comps_frame = pl.DataFrame(comp_rows, schema=COMPACTION_ROW_SCHEMA())
    return facts_frame, _with_task_columns(comps_frame, facts_frame)


def _tokens_of(ev, tcol: str | None, seq: int | None) -> int | None:
    import polars as pl

    if seq is None:
        return None
    row = ev.filter(pl.col("seq") == seq)
    return int(row[tcol][0]) if tcol else (int(row["chars"][0]) + 3) // 4


def _with_task_columns(comps, facts):
    import polars as pl

    kept = pl.col("kept").is_in(["exact", "normalized"])
    todo = pl.col("task_role") == "todo"
    open_ = todo & (pl.col("status") != "completed")
    task = facts.group_by("continuity_id", "compaction").agg(
        open_.sum().alias("open_items"), (open_ & kept).sum().alias("open_items_kept"),
        (todo & ~open_).sum().alias("done_items"), (todo & ~open_ & kept).sum().alias("done_items_kept"),
        (pl.col("task_role") == "request").any().alias("_has_request"),
        ((pl.col("task_role") == "request") & kept).any().alias("last_request_kept"),
        (pl.col("task_role") == "next_step").any().alias("_has_step"),
        ((pl.col("task_role") == "next_step") & kept).any().alias("next_step_kept"))
    out = comps.join(task, on=["continuity_id", "compaction"], how="left")
    readable = pl.col("kept").is_not_null()
    return out.with_columns(
        pl.when(readable).then(pl.col("kept") / pl.col("facts_before")).alias("retention"),
        pl.when(readable & (pl.col("span_tokens") > 0))
        .then(pl.col("summary_tokens") / pl.col("span_tokens")).alias("summary_ratio"),
        pl.when(readable & pl.col("_has_request")).then(pl.col("last_request_kept")).alias("last_request_kept"),
        pl.when(readable & pl.col("_has_step")).then(pl.col("next_step_kept")).alias("next_step_kept"),
        pl.col("open_items").fill_null(0), pl.col("done_items").fill_null(0),
        pl.when(readable).then(pl.col("open_items_kept").fill_null(0)).alias("open_items_kept"),
        pl.when(readable).then(pl.col("done_items_kept").fill_null(0)).alias("done_items_kept"),
    ).drop("_has_request", "_has_step")


def FACT_ROW_SCHEMA():  # noqa: N802 - a schema constant built lazily (polars is imported on use)
    import polars as pl

    return {"continuity_id": pl.String, "harness": pl.String, "compaction": pl.Int64, "request": pl.Int64,
            "boundary_seq": pl.Int64, "kind": pl.String, "value": pl.String, "task_role": pl.String,
            "status": pl.String, "mentions": pl.Int64, "first_seq": pl.Int64, "last_seq": pl.Int64,
            "requests_since": pl.Int64, "tokens_since": pl.Int64, "kept": pl.String}


def COMPACTION_ROW_SCHEMA():  # noqa: N802
    import polars as pl

    return {"continuity_id": pl.String, "harness": pl.String, "compaction": pl.Int64, "request": pl.Int64,
            "boundary_seq": pl.Int64, "trigger": pl.String, "pre_tokens": pl.Int64, "span_events": pl.Int64,
            "span_tokens": pl.Int64, "summary_chars": pl.Int64, "summary_tokens": pl.Int64,
            "facts_before": pl.Int64, "kept": pl.Int64, "summary_text": pl.String}


def dataset_retention(dataset):
    """``(facts, compactions)`` over every continuity of an imported dataset that recorded a
    compaction (see :func:`log_retention`)."""
    import polars as pl

    conts = dataset.continuities()
    events = dataset.events()
    with_boundary = set(events.filter(pl.col("kind") == int(EventKind.COMPACTION))["continuity"].unique().to_list())
    facts, comps = [], []
    for c in conts.sort("continuity").iter_rows(named=True):
        if c["continuity"] not in with_boundary:
            continue
        f, k = log_retention(events.filter(pl.col("continuity") == c["continuity"]), c["continuity_id"],
                             c["source_format"])
        facts.append(f)
        comps.append(k)
    if not comps:
        return pl.DataFrame(schema=FACT_ROW_SCHEMA()), _with_task_columns(
            pl.DataFrame(schema=COMPACTION_ROW_SCHEMA()), pl.DataFrame(schema=FACT_ROW_SCHEMA()))
    return pl.concat(facts), pl.concat(comps)


def bucket(value: int | None, buckets) -> str | None:
    if value is None:
        return None
    for lo, hi in buckets:
        if value >= lo and (hi is None or value <= hi):
            return f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")
    return None


def retention_by(facts, by: str):
    """Share kept per compaction and ``by`` (``kind``, ``recency`` in requests, ``mentions``)."""
    import polars as pl

    f = facts.filter(pl.col("kept").is_not_null())
    if by == "recency":
        f = f.with_columns(pl.col("requests_since").map_elements(lambda v: bucket(v, REQUEST_BUCKETS),
                                                                  return_dtype=pl.String).alias("recency"))
    elif by == "mentions":
        f = f.with_columns(pl.col("mentions").map_elements(lambda v: bucket(v, MENTION_BUCKETS),
                                                            return_dtype=pl.String).alias("mentions"))
    kept = pl.col("kept").is_in(["exact", "normalized"])
    out = f.group_by("continuity_id", "compaction", by, maintain_order=True).agg(
        pl.len().alias("facts_before"), kept.sum().alias("kept"), (pl.col("kept") == "exact").sum().alias("exact"))
    out = out.with_columns((pl.col("kept") / pl.col("facts_before")).alias("retention"))
    labels = {"kind": KINDS, "recency": [bucket(lo, REQUEST_BUCKETS) for lo, _ in REQUEST_BUCKETS],
              "mentions": [bucket(lo, MENTION_BUCKETS) for lo, _ in MENTION_BUCKETS]}[by]
    order = {k: i for i, k in enumerate(labels)}
    return out.with_columns(pl.col(by).replace_strict(order, default=99, return_dtype=pl.Int64).alias("_o")).sort(
        "continuity_id", "compaction", "_o").drop("_o")


def compaction_report(facts, comps, *, lost_shown: int = 10) -> list[dict]:
    """Per recorded compaction, what ``workbench inspect --compactions`` prints: the
    compaction's row, its retention by kind, by recency and by mention count, its task state
    and the facts it lost that were mentioned most."""
    import polars as pl

    tables = {by: retention_by(facts, by) for by in ("kind", "recency", "mentions")}
    out = []
    for c in comps.iter_rows(named=True):
        mine = (pl.col("continuity_id") == c["continuity_id"]) & (pl.col("compaction") == c["compaction"])
        lost = (facts.filter(mine & (pl.col("kept") == "lost")).sort("mentions", "last_seq", descending=True)
                .head(lost_shown).select("kind", "value", "mentions", "requests_since", "tokens_since"))
        out.append({"compaction": c,
                    **{f"by_{by}": t.filter(mine).drop("continuity_id", "compaction").to_dicts()
                       for by, t in tables.items()},
                    "task": facts.filter(mine & (pl.col("kind") == "task"))
                    .select("task_role", "status", "value", "kept").to_dicts(),
                    "lost": lost.to_dicts()})
    return out
