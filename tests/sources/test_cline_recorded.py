"""Real Cline task directories bundled in ``datasets/bundled/cline`` (provenance:
``datasets/bundled/SOURCES.md``), against numbers read off the files by hand.

How the figures were counted: every ``say: api_req_started`` of ``ui_messages.json`` was
listed with its ``conversationHistoryIndex`` and the JSON of its ``text`` (``jq '.[] |
select(.say == "api_req_started") | [.conversationHistoryIndex, (.text | fromjson |
del(.request))]'``), and the history's roles; the sums add those listed numbers. Cline
(May 2025, Anthropic, claude-3-7-sonnet) writes the uncached input in ``tokensIn`` (10 on
every request here), the cache reads and writes beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from format_checks import check_structure, event_rows, parse

from workbench.continuity.enums import EventKind
from workbench.sources import cline
from workbench.sources.importer import import_paths

CLINE = Path(__file__).resolve().parents[2] / "datasets" / "bundled" / "cline"
PLAN_TASK = CLINE / "1746904758018"
CANCELLED_TASK = CLINE / "1746808893817"


def usage_rows(c) -> list[tuple[int, int, int, int, int]]:
    cols = c.rows.cols
    return [(cols["request"][i], cols["usage_input"][i], cols["usage_cache_read"][i],
             cols["usage_cache_write"][i], cols["usage_output"][i])
            for i in range(len(c.rows)) if cols["kind"][i] == EventKind.USAGE]


def test_plan_mode_task():
    [c], ctx = parse(PLAN_TASK / cline.HISTORY, "cline")
    check_structure(c)
    assert c.continuity_id == "1746904758018" and c.meta["harness"] == "cline"
    assert c.meta["usage_convention"] == "uncached" and "requests_without_history" not in c.meta
    # no modelInfo in the panel: the model is task_metadata.json's one model_usage entry
    assert c.model == "claude-3-7-sonnet-20250219"
    # 12 history messages, 6 of them assistant (indices 1, 3, ..., 11): 6 requests
    assert len({r[2] for r in event_rows(c) if r[2] >= 0}) == 6
    # api_req_started ui[1], [7], [12], [17], [22], [27], conversationHistoryIndex -1, 1, 3,
    # 5, 7, 9: the assistant messages 1, 3, ..., 11; (tokensIn, cacheReads, cacheWrites, tokensOut)
    assert usage_rows(c) == [(0, 10, 0, 13_277, 312), (1, 10, 13_277, 3_142, 157), (2, 10, 16_419, 831, 231),
                             (3, 10, 17_250, 2_182, 63), (4, 10, 19_432, 2_617, 97), (5, 10, 22_049, 2_491, 699)]
    # sent = tokensIn 60 + cacheReads 88,427 + cacheWrites 24,540; the six costs added up
    run = c.meta["run_usage"]
    assert (run["tokens_sent"], run["tokens_received"], run["api_calls"]) == (113_027, 1_559, 6)
    assert run["cost_usd"] == pytest.approx(0.05449875 + 0.0181506 + 0.01153695 + 0.0143325 + 0.01712835
                                            + 0.02647095)
    assert [Path(x["path"]).name for x in ctx.companions] == [cline.UI, cline.METADATA]
    assert cline.roundtrip(c.rows.cols["raw"]).keys() == {cline.HISTORY, cline.UI, cline.METADATA}


def test_task_ending_in_a_cancelled_request():
    [c], _ = parse(CANCELLED_TASK / cline.HISTORY, "cline")
    check_structure(c)
    # 20 history messages, 10 assistant; 10 api_req_started (indices -1, 1, ..., 17), the
    # last one with cancelReason user_cancelled after 3 output tokens
    assert usage_rows(c) == [(0, 10, 0, 13_536, 163), (1, 10, 0, 14_302, 164), (2, 10, 14_302, 518, 144),
                             (3, 10, 14_820, 1_399, 87), (4, 10, 16_219, 483, 107), (5, 10, 16_702, 493, 62),
                             (6, 10, 17_195, 702, 58), (7, 10, 17_897, 1_004, 64), (8, 10, 18_901, 2_304, 115),
                             (9, 10, 21_205, 1_037, 3)]
    run = c.meta["run_usage"]
    # sent = 100 + cacheReads 137,241 + cacheWrites 35,778
    assert (run["tokens_sent"], run["tokens_received"], run["api_calls"]) == (173_119, 967, 10)
    assert run["cost_usd"] == pytest.approx(0.1901448)


def test_bundled_cline_folder_imports_two_tasks(tmp_path):
    ds = import_paths([CLINE], tmp_path / "ds", tokenizers=())
    conts = ds.continuities()
    assert sorted(conts["continuity_id"].to_list()) == ["1746808893817", "1746904758018"]
    assert set(conts["source_format"].to_list()) == {"cline"}
    assert len(ds.manifest["source"]["files"]) == 2  # the panel and the metadata are companions
