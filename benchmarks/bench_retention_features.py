"""Which features explain what real summaries keep? Leave-one-log-out error of the calibrated
keep model (:mod:`workbench.summarize.retention_profile`) with candidate features added, per
kind and per log, on the bundled logs with a recorded, readable summary.

Run::

    .venv/bin/python benchmarks/bench_retention_features.py              # imports datasets/bundled itself
    .venv/bin/python benchmarks/bench_retention_features.py --dataset /tmp/rec

Variants (each the shipped model plus or instead of one feature; the same ridge and the same
leave-one-log-out rule: a log is predicted by the model fitted on its harness's other logs,
else on every other log):

* ``shipped``: kind, ln(1 + mentions), ln(1 + requests since the last mention);
* ``+changed``: a path the agent edited or wrote (an edit/write tool call names it);
* ``tokens``: recency in thousands of tokens from the last mention to the cut, not requests;
* ``+position``: the last mention's distance from the cut as a share of the span's tokens.

These are measurements, not targets: docs/fidelity-findings.md says what they show.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: tool calls that change a file (Claude Code, Roo Code / Cline, Codex, OpenHands)
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit", "write_to_file", "apply_diff", "insert_content",
              "search_and_replace", "replace_in_file", "apply_patch", "edit_file", "str_replace_editor")
VARIANTS = ("shipped", "+changed", "tokens", "+position")


def facts_with_features(dataset):
    """The readable facts of ``dataset`` (``log_retention`` rows) with ``changed`` and ``position``."""
    import polars as pl

    from workbench.continuity.enums import EventKind
    from workbench.evaluate.log_retention import dataset_retention

    facts, comps = dataset_retention(dataset)
    facts = facts.filter(pl.col("kept").is_not_null())
    events = dataset.events()
    number = dict(zip(*dataset.continuities().select("continuity_id", "continuity"), strict=True))
    span = {(c, k): t for c, k, t in comps.select("continuity_id", "compaction", "span_tokens").iter_rows()}
    edits = events.filter((pl.col("kind") == int(EventKind.TOOL_CALL)) & pl.col("name").is_in(EDIT_TOOLS))
    changed, position = [], []
    for r in facts.iter_rows(named=True):
        mine = edits.filter((pl.col("continuity") == number[r["continuity_id"]]) & (pl.col("seq") < r["boundary_seq"]))
        changed.append(float(r["kind"] == "path" and mine["text"].str.contains(r["value"], literal=True).any()))
        position.append((r["tokens_since"] or 0) / max(1, span[(r["continuity_id"], r["compaction"])]))
    return facts.with_columns(pl.Series("changed", changed), pl.Series("position", position)), comps


def design(facts, variant: str):
    import numpy as np

    from workbench.evaluate.log_facts import KINDS

    kind = facts["kind"].to_list()
    literal = np.array([k != "task" for k in kind], np.float64)
    cols = [np.ones(facts.height), *[np.array([k == n for k in kind], np.float64) for n in KINDS],
            literal * np.log1p(facts["mentions"].fill_null(0).clip(lower_bound=0).to_numpy())]
    if variant == "tokens":
        cols.append(literal * np.log1p(facts["tokens_since"].fill_null(0).to_numpy() / 1000.0))
    else:
        cols.append(literal * np.log1p(facts["requests_since"].fill_null(0).clip(lower_bound=0).to_numpy()))
    if variant == "+changed":
        cols.append(facts["changed"].to_numpy())
    if variant == "+position":
        cols.append(literal * facts["position"].to_numpy())
    return np.column_stack(cols)


def fit(x, y):
    """The shipped fit (retention_profile.fit_keep): ridge-penalized Newton, b0 unpenalized."""
    import numpy as np

    from workbench.summarize.retention_profile import ITERATIONS, RIDGE

    penalty = np.full(x.shape[1], RIDGE)
    penalty[0] = 0.0
    beta = np.zeros(x.shape[1])
    for _ in range(ITERATIONS):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        step = np.linalg.solve((x.T * (p * (1 - p))) @ x + np.diag(penalty) + 1e-9 * np.eye(x.shape[1]),
                               x.T @ (p - y) + penalty * beta)
        beta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta


def loo(facts, comps, variant: str):
    """``(error_pp by kind and overall, {log: (modelled %, recorded %) of its paths})``."""
    import numpy as np

    from workbench.summarize.retention_profile import MIN_KIND_FACTS

    x, y = design(facts, variant), facts["kept"].is_in(["exact", "normalized"]).to_numpy().astype(np.float64)
    harness = dict(zip(*comps.select("continuity_id", "harness"), strict=True))
    log = np.array(facts["continuity_id"].to_list())
    kind = np.array(facts["kind"].to_list())
    pred = np.zeros(facts.height)
    for one in sorted(set(log)):
        train = [o for o in harness if o != one and harness[o] == harness[one]] or [o for o in harness if o != one]
        at = np.isin(log, train)
        pred[log == one] = 1.0 / (1.0 + np.exp(-(x[log == one] @ fit(x[at], y[at]))))
    errors = {"overall": round(100 * (pred.sum() - y.sum()) / len(y), 1)}
    for k in sorted(set(kind)):
        m = kind == k
        errors[k] = round(100 * (pred[m].sum() - y[m].sum()) / m.sum(), 1) if m.sum() >= MIN_KIND_FACTS else None
    paths = {o[:8]: (round(100 * pred[(log == o) & (kind == "path")].mean(), 1),
                     round(100 * y[(log == o) & (kind == "path")].mean(), 1))
             for o in sorted(set(log)) if ((log == o) & (kind == "path")).any()}
    return errors, paths


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", help="an imported dataset (default: import datasets/bundled)")
    args = parser.parse_args(argv)
    from workbench.continuity.dataset import load_dataset

    if args.dataset:
        ds = load_dataset(args.dataset)
    else:
        from workbench.sources.importer import import_paths

        ds = import_paths([ROOT / "datasets" / "bundled"], Path(tempfile.mkdtemp()) / "rec", on_error="fail")
    facts, comps = facts_with_features(ds)
    print(f"{facts.height} facts before {comps.filter(comps['kept'].is_not_null()).height} readable compactions "
          f"of {facts['continuity_id'].n_unique()} logs; error = modelled - recorded, pp of the facts "
          "(kinds with >= 20 facts)")
    for variant in VARIANTS:
        errors, paths = loo(facts, comps, variant)
        judged = ", ".join(f"{k} {v:+.1f}" for k, v in errors.items() if v is not None)
        by_log = ", ".join(f"{o} {m:.0f} % vs {r:.0f} %" for o, (m, r) in paths.items())
        print(f"{variant:10s} {judged}; paths modelled vs recorded: {by_log}")


if __name__ == "__main__":
    main()
