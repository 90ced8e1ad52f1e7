"""Retention profiles: what a harness's real summaries keep, fitted on the summaries its logs
recorded, for the calibrated modelled summarizer.

A profile says, for a fact before a compaction's cut (:mod:`workbench.evaluate.log_retention`),
the probability that the summary keeps it, from its ``kind``, its mention count and its
recency (requests from its last mention to the cut), and how large the summary is for the
span it replaces:

* keep: a logistic model ``p = σ(b0 + b_kind + b_m·ln(1+mentions) + b_r·ln(1+requests_since))``,
  fitted by Newton's method with a ridge penalty (``RIDGE``) on every coefficient but ``b0``:
  a kind with few facts stays near the harness's overall rate instead of at 0 or 1. Task-state
  facts (the latest request, next step and todo list) enter by kind only, unpenalized (their
  coefficient is their own rate): a request is typed once, so its mention count and recency say
  nothing about it;
* size: ``summary_tokens = clip(ratio·span_tokens, floor, cap)``: ``ratio`` the median of the
  fitted compactions' summary/span ratios, ``floor`` / ``cap`` their smallest and largest
  summaries (real harnesses write summaries of a bounded size whatever the span).

One profile per harness (``source_format``) and one pooled over every harness (``*``),
used for a harness with no recorded summary. Out of sample, each log is predicted by the
profile fitted **without** it (its harness without it, else the pooled one without it):
``loo`` in the document, with the error of the expected number kept per compaction and kind
(percentage points of the facts before the cut), as ``workbench calibrate --retention-out``
prints.

The package ships the profiles fitted on ``datasets/bundled`` (:data:`PACKAGED`);
``workbench calibrate DATASET --out P --retention-out R`` refits them on a team's logs.

>>> import numpy as np
>>> p = RetentionProfile({"b0": 0.0, "kind": {"path": 2.0}, "b_mentions": 0.0, "b_recency": 0.0},
...                      {"ratio": 0.05, "floor": 100, "cap": 4000})
>>> round(p.keep_probability("path", 3, 2), 3), round(p.keep_probability("url", 1, 0), 3)
(0.881, 0.5)
>>> p.summary_tokens(1_000), p.summary_tokens(50_000), p.summary_tokens(10_000_000)
(100, 2500, 4000)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

SCHEMA = "workbench.retention-profiles.v1"
PACKAGED = Path(__file__).with_name("retention_profiles.json")
POOLED = "*"
RIDGE = 1.0
ITERATIONS = 50
LOO_TARGET_PP = 10.0  # docs/targets.md: within 10 percentage points of unseen logs
MIN_KIND_FACTS = 20   # a kind's error is judged when it has at least this many facts


@dataclass(frozen=True)
class RetentionProfile:
    """Fitted coefficients (``keep``) and the size rule (``size``) of one harness."""

    keep: dict[str, Any]
    size: dict[str, float]

    def keep_probability(self, kind: str, mentions: int, requests_since: int | None) -> float:
        k = self.keep
        z = k["b0"] + k["kind"].get(kind, 0.0)
        if kind != "task":
            z += (k["b_mentions"] * math.log1p(max(0, mentions))
                  + k["b_recency"] * math.log1p(max(0, requests_since or 0)))
        return 1.0 / (1.0 + math.exp(-z))

    def summary_tokens(self, span_tokens: int) -> int:
        s = self.size
        return int(round(min(s["cap"], max(s["floor"], s["ratio"] * span_tokens))))

    def to_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "size": self.size}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> RetentionProfile:
        return cls(doc["keep"], doc["size"])


def _features(kinds: list[str], facts) -> Any:
    import numpy as np

    kind = facts["kind"].to_list()
    # the task state is the latest request, step and list by construction: its mention count
    # and recency say nothing about it (a request is typed once), so they do not enter
    literal = np.array([k != "task" for k in kind], np.float64)
    cols = [np.ones(facts.height)]
    cols += [np.array([k == name for k in kind], np.float64) for name in kinds]
    for col in ("mentions", "requests_since"):
        cols.append(literal * np.log1p(facts[col].fill_null(0).clip(lower_bound=0).to_numpy().astype(np.float64)))
    return np.column_stack(cols)


def fit_keep(facts) -> dict[str, Any]:
    """The logistic keep model of a table of facts (rows of ``log_retention``'s facts with
    ``kept`` not null)."""
    import numpy as np

    from workbench.evaluate.log_facts import KINDS

    x = _features(list(KINDS), facts)
    y = facts["kept"].is_in(["exact", "normalized"]).to_numpy().astype(np.float64)
    penalty = np.full(x.shape[1], RIDGE)
    penalty[0] = 0.0
    # the task state has no mention or recency term, so ``b0`` (a literal fact's logit at no
    # mentions) is no rate to shrink it toward: shrunk, it fell 10 pp short of the recorded
    # summaries leave-one-log-out (docs/fidelity-findings.md)
    penalty[1 + KINDS.index("task")] = 0.0
    beta = np.zeros(x.shape[1])
    for _ in range(ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (p - y) + penalty * beta
        hess = (x.T * (p * (1 - p))) @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    kinds = {k: round(float(b), 6) for k, b in zip(KINDS, beta[1:1 + len(KINDS)], strict=True)}
    return {"b0": round(float(beta[0]), 6), "kind": kinds, "b_mentions": round(float(beta[-2]), 6),
            "b_recency": round(float(beta[-1]), 6), "facts": int(facts.height), "kept": int(y.sum())}


def fit_size(comps) -> dict[str, float]:
    import numpy as np

    c = comps.filter(comps["summary_tokens"].is_not_null() & (comps["span_tokens"] > 0))
    ratio = (c["summary_tokens"] / c["span_tokens"]).to_numpy()
    return {"ratio": round(float(np.median(ratio)), 6), "floor": int(c["summary_tokens"].min()),
            "cap": int(c["summary_tokens"].max())}


def fit_profile(facts, comps) -> RetentionProfile | None:
    """A profile from readable compactions (``None`` when there is none)."""
    import polars as pl

    readable = comps.filter(pl.col("kept").is_not_null())
    f = facts.filter(pl.col("kept").is_not_null())
    if readable.height == 0 or f.height == 0:
        return None
    return RetentionProfile(fit_keep(f), fit_size(readable))


def expected_kept(profile: RetentionProfile, facts) -> list[float]:
    """Each fact's keep probability under ``profile``."""
    return [profile.keep_probability(k, m, r) for k, m, r in
            zip(facts["kind"].to_list(), facts["mentions"].to_list(), facts["requests_since"].to_list(),
                strict=True)]


def _subset(facts, comps, keep_logs):
    import polars as pl

    return (facts.filter(pl.col("continuity_id").is_in(keep_logs)),
            comps.filter(pl.col("continuity_id").is_in(keep_logs)))


def loo_profile(facts, comps, log: str) -> tuple[str, RetentionProfile] | None:
    """The profile fitted without ``log``: its harness's other logs, else every other log."""
    import polars as pl

    readable = comps.filter(pl.col("kept").is_not_null())
    harness_of = dict(zip(readable["continuity_id"].to_list(), readable["harness"].to_list(), strict=True))
    harness = harness_of.get(log)
    same = sorted({c for c, h in harness_of.items() if h == harness and c != log})
    if same:
        p = fit_profile(*_subset(facts, comps, same))
        if p is not None:
            return harness, p
    others = sorted(c for c in harness_of if c != log)
    p = fit_profile(*_subset(facts, comps, others)) if others else None
    return (POOLED, p) if p is not None else None


def fit_profiles(facts, comps, *, fitted_from: str = "") -> dict[str, Any]:
    """The profiles document: one profile per harness, the pooled one, and each log's
    leave-one-log-out errors (see the module docstring)."""
    import polars as pl

    readable = comps.filter(pl.col("kept").is_not_null())
    logs = sorted(set(readable["continuity_id"].to_list()))
    profiles: dict[str, Any] = {}
    for harness in sorted(set(readable["harness"].to_list())):
        mine = sorted(set(readable.filter(pl.col("harness") == harness)["continuity_id"].to_list()))
        p = fit_profile(*_subset(facts, comps, mine))
        if p is not None:
            profiles[harness] = {**p.to_json(), "logs": mine}
    pooled = fit_profile(*_subset(facts, comps, logs))
    if pooled is not None:
        profiles[POOLED] = {**pooled.to_json(), "logs": logs}
    loo = loo_table(facts, comps)
    return {"schema": SCHEMA, "fitted_from": fitted_from, "features": ["kind", "ln(1+mentions)",
                                                                        "ln(1+requests_since)"],
            "ridge": RIDGE, "profiles": profiles, "loo": loo.to_dicts(), "loo_summary": loo_summary(loo)}


def loo_table(facts, comps):
    """Per readable compaction and kind: facts before the cut, kept by the recorded summary,
    expected kept by the profile fitted without the log (``kept_modelled``), and which
    profile that was."""
    import polars as pl

    rows = []
    readable = comps.filter(pl.col("kept").is_not_null())
    for log in sorted(set(readable["continuity_id"].to_list())):
        fitted = loo_profile(facts, comps, log)
        f = facts.filter((pl.col("continuity_id") == log) & pl.col("kept").is_not_null())
        p = expected_kept(fitted[1], f) if fitted else [None] * f.height
        f = f.with_columns(pl.Series("p", p, dtype=pl.Float64))
        for (comp, request, kind), g in f.group_by("compaction", "request", "kind", maintain_order=True):
            rows.append({"continuity_id": log, "harness": g["harness"][0], "compaction": comp, "request": request,
                         "kind": kind, "facts_before": g.height,
                         "kept_recorded": int(g["kept"].is_in(["exact", "normalized"]).sum()),
                         "kept_modelled": None if fitted is None else round(float(g["p"].sum()), 6),
                         "loo_profile": None if fitted is None else fitted[0]})
    schema = {"continuity_id": pl.String, "harness": pl.String, "compaction": pl.Int64, "request": pl.Int64,
              "kind": pl.String, "facts_before": pl.Int64, "kept_recorded": pl.Int64, "kept_modelled": pl.Float64,
              "loo_profile": pl.String}
    return pl.DataFrame(rows, schema=schema)


def loo_summary(loo) -> dict[str, Any]:
    """Overall and per-kind leave-one-log-out error (percentage points of the facts), and
    whether it meets the target (within ``LOO_TARGET_PP`` overall and for every kind with at
    least ``MIN_KIND_FACTS`` facts)."""
    import polars as pl

    t = loo.filter(pl.col("kept_modelled").is_not_null())
    if t.height == 0:
        return {"facts": 0, "overall_pp": None, "kinds": {}, "meets_target": None}

    def err(g) -> float:
        return round(100.0 * (float(g["kept_modelled"].sum()) - float(g["kept_recorded"].sum()))
                     / max(1, int(g["facts_before"].sum())), 3)

    kinds = {}
    for (kind,), g in t.group_by("kind", maintain_order=True):
        kinds[kind] = {"facts": int(g["facts_before"].sum()), "recorded_pct":
                       round(100.0 * int(g["kept_recorded"].sum()) / int(g["facts_before"].sum()), 3),
                       "error_pp": err(g)}
    overall = err(t)
    judged = [v["error_pp"] for v in kinds.values() if v["facts"] >= MIN_KIND_FACTS]
    return {"facts": int(t["facts_before"].sum()), "overall_pp": overall, "kinds": kinds,
            "meets_target": abs(overall) <= LOO_TARGET_PP and all(abs(e) <= LOO_TARGET_PP for e in judged)}


def load_profiles(path: str | Path | None = None) -> dict[str, Any]:
    """A profiles document (the packaged one by default)."""
    from workbench.util.atomic import read_owned_json

    return read_owned_json(path if path is not None else PACKAGED, schema=SCHEMA, what="retention profile")


def profile_for(doc: dict[str, Any], harness: str | None) -> RetentionProfile:
    """The harness's profile, else the pooled one."""
    profiles = doc["profiles"]
    entry = profiles.get(harness or "") or profiles.get(POOLED)
    if entry is None:
        raise WorkbenchError("the retention profile file holds no profile (fit it on logs with a recorded summary)")
    return RetentionProfile.from_json(entry)


def write_profiles(doc: dict[str, Any], path: str | Path) -> Path:
    """Write atomically; only a new path or a retention profile file may be replaced."""
    from workbench.util.atomic import write_owned_json

    return write_owned_json(path, doc, schema=SCHEMA, what="retention profile", example="retention.json",
                            option="--retention-out")
