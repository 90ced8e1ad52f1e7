"""Plain-text tables the command line prints: columns apart whatever the width of a name, and
no figure printed as ``nan``; one meaning for a column header across commands."""

from __future__ import annotations

import io
import re

import polars as pl

from workbench.evaluate.fidelity_predictive import render_predictive


def _preset() -> pl.DataFrame:
    return pl.DataFrame({"continuity_id": ["a"], "release_line": ["1.0"], "line": ["in_sample"],
                         "line_source": ["own"], "recorded_compactions": [[]], "recorded_triggers": [[]],
                         "simulated_compactions": [[]], "within": [None], "compacted_early": [None]},
                        schema_overrides={"recorded_compactions": pl.List(pl.Int64),
                                          "recorded_triggers": pl.List(pl.String),
                                          "simulated_compactions": pl.List(pl.Int64),
                                          "within": pl.Boolean, "compacted_early": pl.Boolean})


def test_fidelity_totals_keep_columns_apart_and_print_no_nan():
    totals = pl.DataFrame({"harness": ["openhands_sdk", "claude_code"], "line": ["in_sample", "leave_one_out"],
                           "requests": [12, 40],
                           "recorded_prompt_tokens": [1000, 5000], "simulated_prompt_tokens": [1100, 4900],
                           "recorded_cache_read_tokens": [0, 3000], "simulated_cache_read_tokens": [0, 2900],
                           "recorded_input_cost_usd": [0.1, 0.5], "simulated_input_cost_usd": [0.11, 0.49],
                           "recorded_cost_usd": [0.2, 0.9], "simulated_cost_usd": [0.21, 0.88]})
    text = render_predictive(_preset(), totals)
    assert not re.search(r"\bnan\b", text.lower())  # (not the "nan" of "unanchored")
    assert "openhands_sdkin_sample" not in text
    row = next(line for line in text.splitlines() if "openhands_sdk" in line)
    assert re.search(r"openhands_sdk\s*\S?\s+in_sample", row), row
    assert "+10.00" in row and "–" in row  # the prompt error, and no cache-read error without a recorded figure


def test_sweep_and_tune_use_config_for_the_index_and_rank_for_the_order():
    from workbench.sweep.tune import render_configs, render_table, tune

    agg = pl.DataFrame({"config_index": [0, 1, 2], "trigger.reserve_tokens": [10, 20, 30],
                        "cost_usd": [3.0, 1.0, 2.0], "overflows": [0, 0, 1]})
    out = io.StringIO()
    render_configs(agg, file=out)
    configs_header = next(line for line in out.getvalue().splitlines() if "┃" in line and "cost_usd" in line)
    out = io.StringIO()
    render_table(tune(agg, "cost_usd", ["overflows==0"]), file=out)
    tune_header = next(line for line in out.getvalue().splitlines() if "┃" in line and "cost_usd" in line)
    assert "#" not in configs_header and "#" not in tune_header
    assert "config" in configs_header and re.search(r"rank\W+config", tune_header), tune_header
    out = io.StringIO()
    render_table(tune(agg, "cost_usd", ["overflows==0"]), fmt="csv", file=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("rank,config_index,") and lines[1].startswith("1,1,")  # config 1 is the cheapest


def test_html_table_headers_sit_over_their_cells():
    from workbench.report.html import table_html

    t = table_html(pl.DataFrame({"policy": ["a"], "cost_usd": [1.5], "retention": [0.9]}),
                   [("policy", "policy", "s"), ("cost_usd", "cost $", "usd"), ("retention", "retention", "pct")])
    assert '<th class="s">policy</th>' in t and '<th class="">cost $</th>' in t and '<th class="">retention</th>' in t
    css = t.split("</style>", 1)[0]
    # numbers (and their headers) right, text headers left: the left rule names th.s, not every th
    left = next(rule for rule in css.splitlines() if "text-align:left" in rule and "wb-table" in rule)
    assert "table.wb-table th.s" in left and "table.wb-table th{" not in left and "table.wb-table th," not in left


def test_fidelity_run_lines_say_what_is_missing_without_none():
    from workbench.evaluate.fidelity import render_summary

    run_level = pl.DataFrame([{"continuity_id": "eaece8cc", "source": "ui_messages.json api_req_started",
                               "recorded_tokens_sent": 15794, "simulated_prompt_tokens": None,
                               "tokens_sent_error_pct": None, "recorded_tokens_received": 160,
                               "simulated_output_tokens": None, "recorded_api_calls": 1, "simulated_calls": None,
                               "recorded_cost_usd": 0.0616, "simulated_cost_usd": None, "note": "not replayed"}])
    text = render_summary({"summary": pl.DataFrame(), "run_level": run_level, "compactions": pl.DataFrame()})
    line = next(ln for ln in text.splitlines() if "eaece8cc" in ln)
    assert "None" not in line and "$-" not in line and "(- %)" not in line
    assert "tokens sent 15794 vs simulated prompt -, received 160 vs -" in line and "cost $0.0616 vs -" in line
