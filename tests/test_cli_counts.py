"""One count everywhere (issue 26, finding 5): a skipped determinism check is not a check,
pass / fail / skip are said apart; a note about some continuities says how many."""

from __future__ import annotations

import polars as pl

from workbench.evaluate.determinism import check_counts, describe_checks
from workbench.report.verdict import scoped_note


def test_skips_are_not_counted_as_checks():
    table = pl.DataFrame({"check": ["repeat"] * 129 + ["shuffled_background_jobs"] * 6,
                          "policy": [f"p{i % 27}" for i in range(135)],
                          "status": ["pass"] * 129 + ["skip"] * 6})
    counts = check_counts(table)
    assert counts == {"checks": 129, "passed": 129, "failed": 0, "skipped": 6}
    assert describe_checks(counts, 27) == ("129 checks over 27 policies: 129 passed, 0 failed; "
                                           "6 skipped (nothing to check)")
    failing = check_counts(table.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(pl.lit("fail"))
                                              .otherwise(pl.col("status")).alias("status")))
    assert failing == {"checks": 129, "passed": 128, "failed": 1, "skipped": 6}


def test_a_note_says_how_many_continuities_it_is_true_of():
    ids = [f"log{i}" for i in range(117)]
    config = {"policies": {"as-recorded": {"providers": dict.fromkeys(ids, {})},
                           "claude-code": {"providers": dict.fromkeys(ids, {})}},
              "notes": [{"note": "as-recorded: no compaction recorded in the log; replayed as no-compaction",
                         "where": ids[:114]},
                        {"note": "m is not in genai-prices; priced as gpt-5", "where": ["claude-code/log0"]}]}
    assert scoped_note(config["notes"][0], config) == ("as-recorded: no compaction recorded in the log; "
                                                       "replayed as no-compaction (in 114 of 117 continuities)")
    assert scoped_note(config["notes"][1], config).endswith("(in 1 of 234 replays (policy × continuity))")
