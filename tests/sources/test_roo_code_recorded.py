"""Real Roo Code task directories bundled in ``datasets/bundled/roo-code`` (provenance:
``datasets/bundled/SOURCES.md``), against numbers read off the files by hand.

How the figures were counted: every ``say: api_req_started`` of ``ui_messages.json`` was
listed with its ts and the JSON of its ``text`` (``jq '.[] | select(.say ==
"api_req_started") | .text | fromjson | del(.request)'``), every history message with its
role and ts; the sums below add those listed numbers. Every request of these tasks says
``apiProtocol: openai`` (or nothing: Roo Code before it recorded the protocol), never
``anthropic``, so ``tokensIn`` is read as the total (input = tokensIn - cacheReads) in the
two recent tasks, and as Cline's uncached part in the two early ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from format_checks import check_structure, event_rows, parse

from workbench.continuity.enums import CompactTrigger, EventKind
from workbench.sources import cline
from workbench.sources.importer import import_paths

ROO = Path(__file__).resolve().parents[2] / "datasets" / "bundled" / "roo-code"
CONDENSED = ROO / "natural-already-condensed"
MINI = ROO / "natural-mini-uncondensed"
EARLY_ONE_REQUEST = ROO / "6a716972-c33f-444f-a8f2-613f03410ace"
EARLY_INTERRUPTED = ROO / "eaece8cc-d874-4e46-9330-52d772f31492"


def usage_rows(c) -> list[tuple[int, int, int, int, int]]:
    cols = c.rows.cols
    return [(cols["request"][i], cols["usage_input"][i], cols["usage_cache_read"][i],
             cols["usage_cache_write"][i], cols["usage_output"][i])
            for i in range(len(c.rows)) if cols["kind"][i] == EventKind.USAGE]


def test_condensed_task_pins_usage_by_time():
    """Roo Code ~3.28 (September 2025), one condensation that deleted the condensed messages
    from the history (30 messages left: the task, the summary, 14 assistant replies after it)
    while the panel kept all 32 requests. Before the fix the first 14 requests' usage went on
    the 14 replies that answer the last requests."""
    [c], ctx = parse(CONDENSED / cline.HISTORY, "roo_code")
    check_structure(c)
    assert c.continuity_id == "natural-already-condensed" and c.meta["harness"] == "roo_code"
    assert c.meta["usage_convention"] == "total"
    # 15 assistant messages in the history, one of them the summary (isSummary): 14 requests
    rows = event_rows(c)
    assert len({r[2] for r in rows if r[2] >= 0}) == 14
    # each reply answers the last api_req_started at or before its ts:
    # history[3] ts ...177748 <- ui[71] ts ...162248 (117,888 in, 107,134 read, 1,483 out),
    # [5] <- ui[79], [7] <- ui[89], [9] <- ui[96], [11] <- ui[100],
    # [13] <- ui[104] (text {"apiProtocol":"openai"} only: no counts, no usage row),
    # [15] <- ui[113], [17] <- ui[119], [19] <- ui[125], [21] <- ui[131], [23] <- ui[137],
    # [25] <- ui[141], [27] <- ui[144], [29] <- ui[150]; input = tokensIn - cacheReads
    assert usage_rows(c) == [
        (0, 117_888 - 107_134, 107_134, 0, 1_483),
        (1, 45_726, 0, 0, 1_153),
        (2, 50_994, 0, 0, 300),
        (3, 53_617 - 51_968, 51_968, 0, 260),
        (4, 54_177 - 53_607, 53_607, 0, 5_431),
        (6, 62_435 - 60_725, 60_725, 0, 264),
        (7, 63_092 - 62_425, 62_425, 0, 274),
        (8, 64_154 - 63_082, 63_082, 0, 337),
        (9, 80_511 - 64_144, 64_144, 0, 1_018),
        (10, 96_868 - 80_501, 80_501, 0, 2_745),
        (11, 99_479, 0, 0, 693),
        (12, 100_593 - 99_469, 99_469, 0, 636),
        (13, 101_692 - 100_583, 100_583, 0, 3_994),
    ]
    # 31 api_req_started with counts, 13 of them answered in the history: the 18 before
    # ui[71] (ui[1] ... ui[68]) were condensed away
    assert c.meta["requests_without_history"] == 18
    # the condensation: one summary, contextCondense.prevContextTokens 124,669
    comp = [i for i, r in enumerate(rows) if r[0] == "COMPACTION"]
    assert len(comp) == 1 and rows[comp[0] + 1][0] == "SUMMARY"
    cols = c.rows.cols
    assert cols["compact_pre_tokens"][comp[0]] == 124_669
    assert cols["compact_trigger"][comp[0]] == CompactTrigger.OTHER
    # run level: the 31 requests with counts (sum of tokensIn 2,293,053 = sent, none has
    # cacheReads above tokensIn; tokensOut 32,273), their costs (2.2944091485) plus the
    # condensation's contextCondense.cost (0.0298257645)
    run = c.meta["run_usage"]
    assert (run["tokens_sent"], run["tokens_received"], run["api_calls"]) == (2_293_053, 32_273, 31)
    assert run["cost_usd"] == pytest.approx(2.2944091485 + 0.0298257645)
    assert c.model is None  # no modelInfo in the panel, task_metadata.json has no model_usage
    assert [Path(x["path"]).name for x in ctx.companions] == [cline.UI, cline.METADATA]
    assert cline.roundtrip(cols["raw"]).keys() == {cline.HISTORY, cline.UI, cline.METADATA}


def test_mini_task_every_request_has_its_reply():
    """Roo Code, October 2025: 20 history messages (10 user, 10 assistant), 10 requests."""
    [c], _ = parse(MINI / cline.HISTORY, "roo_code")
    check_structure(c)
    assert c.meta["usage_convention"] == "total" and "requests_without_history" not in c.meta
    # ui[1], [4], [8], [12], [16], [20], [24], [29], [33], [36]: (tokensIn, cacheReads, tokensOut)
    recorded = [(37_895, 0, 298), (38_400, 37_885, 274), (41_296, 38_390, 278), (43_609, 41_286, 579),
                (46_423, 43_599, 123), (48_193, 46_413, 156), (51_293, 48_183, 361), (53_381, 51_283, 105),
                (86_680, 53_371, 1_409), (88_236, 86_670, 964)]
    assert usage_rows(c) == [(k, tin - read, read, 0, out) for k, (tin, read, out) in enumerate(recorded)]
    run = c.meta["run_usage"]
    assert (run["tokens_sent"], run["tokens_received"], run["api_calls"]) == (535_406, 4_547, 10)
    assert run["cost_usd"] == pytest.approx(0.5334765)  # the ten costs added up


def test_early_roo_code_tasks_read_as_cline():
    """Roo Code of February-March 2025 wrote Cline's format unchanged (no apiProtocol, no
    field of its own): nothing in the files tells it from Cline, whose convention (tokensIn
    is the uncached part: 3 in, 16,041 written to the cache) is the right one for both."""
    [c], _ = parse(EARLY_ONE_REQUEST / cline.HISTORY, "cline")
    check_structure(c)
    assert c.meta["usage_convention"] == "uncached"
    assert usage_rows(c) == [(0, 3, 0, 16_041, 384)]  # ui[1]: the one api_req_started
    assert c.meta["run_usage"] == {"source": "ui_messages.json api_req_started", "tokens_sent": 3 + 16_041,
                                   "tokens_received": 384, "api_calls": 1, "cost_usd": 0.06592275}
    # an interrupted task: the history holds the one user message (with two resumptions
    # appended), the reply to its one request (ui[1]) was never saved
    [c], _ = parse(EARLY_INTERRUPTED / cline.HISTORY, "cline")
    check_structure(c)
    assert usage_rows(c) == [] and c.meta["requests_without_history"] == 1
    assert c.meta["run_usage"]["tokens_sent"] == 3 + 15_791 and c.meta["run_usage"]["cost_usd"] == 0.06162525


def test_bundled_roo_code_folder_imports_four_tasks(tmp_path):
    ds = import_paths([ROO], tmp_path / "ds", tokenizers=())
    conts = ds.continuities()
    got = dict(zip(conts["continuity_id"].to_list(), conts["source_format"].to_list(), strict=True))
    assert got == {"natural-already-condensed": "roo_code", "natural-mini-uncondensed": "roo_code",
                   EARLY_ONE_REQUEST.name: "cline", EARLY_INTERRUPTED.name: "cline"}
    assert len(ds.manifest["source"]["files"]) == 4  # one per task: the other files are companions
    runs = ds.manifest["import"]["continuities"]
    assert {k: v["run_usage"]["api_calls"] for k, v in runs.items()} == {
        "natural-already-condensed": 31, "natural-mini-uncondensed": 10,
        EARLY_ONE_REQUEST.name: 1, EARLY_INTERRUPTED.name: 1}
