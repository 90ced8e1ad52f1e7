"""The verdict's pieces on hand-made frames: constraint checks, the cheapest choice, the
Pareto front (the selection rule `workbench tune` uses too), and the text guard every shown
text passes through."""

from __future__ import annotations

import base64
import re

import polars as pl
import pytest

from workbench.report.textguard import PLANTED_MARKER, TextGuard
from workbench.selection import (
    Constraints,
    SelectionError,
    best_row,
    judge,
    load_constraints,
    pareto_front,
)
from workbench.sweep.tune import tune


def _judge(table, constraints: Constraints):
    return judge(table, constraints.as_list())


def cheapest(table):
    row, verified = best_row(table, "cost_usd", unverified=True)
    return (row["policy"] if row else None), verified


def _table(**cols):
    return pl.DataFrame(cols)


def test_constraints_judge_and_choose():
    t = _judge(_table(policy=["a", "b", "c", "d"], cost_usd=[1.0, 2.0, 3.0, 0.5],
                      overflows=[0, 0, 0, 3], leaks=[1, 0, 0, 0], retention=[1.0, 0.96, 0.99, 1.0]),
               Constraints())
    assert t["meets"].to_list() == [False, True, True, False]
    assert t["reasons"][0] == "leaks 1 (wants leaks<=0)" and t["reasons"][3] == "overflows 3 (wants overflows<=0)"
    assert cheapest(t) == ("b", True)


def test_unmeasured_constraints_are_unverified_not_assumed():
    t = _judge(_table(policy=["a", "b"], cost_usd=[1.0, 2.0], overflows=[0, 1],
                      leaks=pl.Series([None, None], dtype=pl.Int64),
                      retention=pl.Series([None, None], dtype=pl.Float64)), Constraints())
    assert t["meets"].to_list() == [None, False]
    assert "not measured: leaks, retention" in t["reasons"][0]
    assert cheapest(t) == ("a", False)
    assert cheapest(_judge(_table(policy=["x"], cost_usd=[1.0], overflows=[2], leaks=[0], retention=[1.0]),
                           Constraints())) == (None, False)


def test_load_constraints(tmp_path):
    assert load_constraints(None) == Constraints(0, 0, 0.95)
    p = tmp_path / "c.json"
    p.write_text('{"max_overflows": 1, "min_retention": 0.5}')
    assert load_constraints(p) == Constraints(1, 0, 0.5)
    p.write_text('{"max_overflow": 1}')
    with pytest.raises(SelectionError, match="unknown constraint"):
        load_constraints(p)


def test_pareto_front():
    t = _table(policy=list("abcd"), cost_usd=[1.0, 2.0, 3.0, 2.5], retention=[0.5, 0.9, 0.95, 0.8],
               leaks=[0, 0, 0, 0])
    assert pareto_front(t).to_list() == [True, True, True, False]


def test_tune_and_the_report_agree_with_missing_figures():
    """The same rows through `workbench tune` and through the report's policy table: the same
    feasible set, unverified rows, choice and Pareto front (issue 12)."""
    rows = _table(policy=list("abcdef"), config_index=list(range(6)),
                  cost_usd=[1.0, 2.0, 3.0, 0.5, 2.5, 4.0], overflows=[0, 0, 0, 0, 1, 0],
                  leaks=pl.Series([0, None, 0, 0, 0, 0], dtype=pl.Int64),
                  retention=pl.Series([0.90, 0.99, 0.97, None, 0.99, 0.99], dtype=pl.Float64),
                  complete=[True] * 6)
    cons = Constraints(min_retention=0.95)
    report = _judge(rows, cons).with_columns(pareto_front(_judge(rows, cons)))
    tuned = tune(rows, "cost_usd", cons.as_strings()).configs.sort("config_index")
    assert report["meets"].to_list() == [False, None, True, None, False, True]
    assert tuned["feasible"].to_list() == report["meets"].fill_null(False).to_list()
    assert tuned["pareto"].to_list() == report["pareto"].to_list() == [False, False, True, False, False, True]
    assert cheapest(report) == ("c", True)
    assert tune(rows, "cost_usd", cons.as_strings()).best["policy"] == "c"
    # with nothing verified, the report names the cheapest unverified row; tune chooses none
    only = rows.filter(pl.col("policy").is_in(["b", "d"]))
    assert cheapest(_judge(only, cons)) == ("d", False)
    assert tune(only, "cost_usd", cons.as_strings()).best is None


def test_text_guard_masks_planted_values_in_every_encoding():
    secret = "zq8Xw2Lm9Pk4Rt7Yv1Bn3Cd6"  # nothing a detector would recognise
    g = TextGuard([secret])
    for shown in (f"see {secret} there", f"b64 {base64.b64encode(secret.encode()).decode()}",
                  f"hex {secret.encode().hex()}", f"fragment {secret[5:19]} only"):
        masked = g.mask_known(shown)  # the mask alone, whatever the harness would find
        assert PLANTED_MARKER in masked and secret[5:17] not in masked
        out = g(shown)  # harness, then mask
        assert "<REDACTED:" in out and secret[5:17] not in out and secret not in out
    assert g("nothing here") == "nothing here"


def test_text_guard_runs_the_redaction_harness_first_and_never_cuts_a_marker():
    g = TextGuard()
    token = "ghp_" + "Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7cV9b"
    out = g(f"token {token} done")
    assert token not in out and "<REDACTED:" in out
    cut = g(f"token {token} done and more text", limit=9)
    assert cut.startswith("token <REDACTED:") and cut.endswith("> …")


# ---- the recommendation within the spread of summary samples ---------------------------------
def _spread(samples_rows, constraints: Constraints | None = None):
    from workbench.report.verdict import policy_table, within_spread

    constraints = constraints or Constraints()
    summary = pl.DataFrame({"policy": ["cheap", "mid", "dear"], "continuity_id": ["c"] * 3,
                            "requests": [10] * 3, "cost_usd": [1.0, 2.0, 3.0], "compactions": [1] * 3,
                            "overflows": [0] * 3, "prompt_tokens": [100] * 3, "cached_input_tokens": [50] * 3,
                            "peak_context_tokens": [10] * 3, "context_window": [100] * 3})
    first = {r[1]: r for r in samples_rows if r[0] == 0}
    evaluation = {"policies": {p: {"sr1": True, "secrets": 2, "leaks": r[3], "leaks_context": 0,
                                   "retention": r[2], "fact_probes": 10} for p, r in first.items()}}
    table = policy_table(summary, evaluation, constraints)
    row, _ = best_row(table, "cost_usd", unverified=True)
    samples = pl.DataFrame(samples_rows, schema=["sample", "policy", "retention", "leaks"], orient="row")
    return row["policy"] if row else None, within_spread(table, samples, constraints, row["policy"] if row else None)


def test_the_recommendation_holds_in_every_sample():
    rows = [(s, "cheap", 0.97 + 0.01 * s, 0) for s in range(3)]
    rows += [(s, p, 0.99, 0) for s in range(3) for p in ("mid", "dear")]
    chosen, spread = _spread(rows)
    assert chosen == "cheap" and spread["wins"] == 3 and spread["text"].startswith("yes: across 3")
    assert "97.0%–99.0%" in spread["text"]


def test_the_recommendation_fails_in_one_sample():
    rows = [(0, "cheap", 0.97, 0), (1, "cheap", 0.93, 0), (2, "cheap", 0.98, 1)]
    rows += [(s, p, 0.99, 0) for s in range(3) for p in ("mid", "dear")]
    chosen, spread = _spread(rows)
    assert chosen == "cheap" and spread["wins"] == 1
    assert spread["winners"] == ["cheap", "mid", "mid"]
    assert spread["text"].startswith("NO: across 3 summary samples cheap is picked in 1 of 3; otherwise mid (2)")


def test_one_sample_has_no_spread():
    from workbench.report.verdict import within_spread

    assert within_spread(None, None, Constraints(), "x") is None
    one = pl.DataFrame({"sample": [0], "policy": ["x"], "retention": [1.0], "leaks": [0]})
    assert within_spread(None, one, Constraints(), "x") is None


def test_provenance_names_only_what_the_dataset_has():
    from workbench.report.verdict import Verdict
    from workbench.selection import Constraints

    def line(dataset: dict) -> str:
        v = Verdict(subject="sweep", compared=(), table=None, constraints=Constraints(), chosen=None,
                    chosen_verified=False, statement="", leaks={}, determinism=None, conformance=None,
                    provenance={"run_dir": "s", "dataset": dataset})
        return re.search(r"<th>dataset</th><td>([^<]*)</td>", v.provenance_html()).group(1)

    assert line({"name": "sweep-coding-20k", "path": "datasets/x"}) == "sweep-coding-20k at datasets/x"
    assert line({"name": "logs", "source_format": "claude_code", "path": "d"}) == "logs (claude_code) at d"
