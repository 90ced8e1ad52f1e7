"""Each rule of workbench.conformance.two_layer on hand-built frames (no simulation: quick
enough for ``make mutate``): one run that passes every check, then one planted violation per
test with the exact finding it must produce, and the edges of every comparison."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.conformance.two_layer import CHECKS, METADATA, check_two_layers
from workbench.rundir.wire import (
    CHECKPOINT_EVENT,
    COMPACTED_EVENT,
    LOCAL_EVENT,
    MERGE_EVENT,
    OPAQUE_KIND,
    PROVIDER_EVENT,
    REBUILD_EVENT,
)

CONFIG = {"policies": {"p": {"policy": {"compaction": {"accumulate": True, "local_tokens": 500}}},
                       "f": {"policy": {"compaction": {"accumulate": False}}}}}


def _ev(event_type: str, request: int, policy: str = "p", **values) -> dict:
    return {"event_type": event_type, "policy": policy, "continuity_id": "c", "request": request, **values}


def _opaque(request: int, art: str, frm: int, to: int, policy: str = "p") -> dict:
    return _ev(CHECKPOINT_EVENT, request, policy, summary_kind=OPAQUE_KIND, summary_artifact_id=art,
               from_seq=frm, to_seq=to)


def _provider(request: int, art: str, frm: int, to: int, items: int, policy: str = "p", **values) -> dict:
    meta = dict.fromkeys(METADATA, 1) | {"compaction_id": art, "item_count": items}
    return _ev(PROVIDER_EVENT, request, policy, from_seq=frm, to_seq=to, **(meta | values))


def _local(request: int, art: str, to: int, before: int = 100, after: int = 100) -> dict:
    return _ev(LOCAL_EVENT, request, summary_artifact_id=art, to_seq=to, tokens_before=before, tokens_after=after)


def _replaced(art: str, *rows: dict) -> list[dict]:
    """The good events with provider item ``art``'s metadata row replaced by ``rows``, in place."""
    out: list[dict] = []
    for e in _good_events():
        out.extend(rows if e.get("compaction_id") == art else (e,))
    return out


def _events(*rows: dict) -> pl.DataFrame:
    return pl.from_dicts(list(rows), infer_schema_length=None)


def _good_events() -> list[dict]:
    """Policy p (accumulating, two layers): a provider item, a local checkpoint and its
    memory.compacted, a second item (2 in the window), a rebuild from the local checkpoint,
    then a third item (the window restarts at 1); a summary.merged restarts it too.
    Policy f (folding, one layer): two provider items, one each."""
    return [
        _opaque(2, "o1", 0, 10), _provider(2, "o1", 0, 10, 1),
        _local(3, "l1", 20), _ev(COMPACTED_EVENT, 3, outputId="l1"),
        _opaque(4, "o2", 11, 30), _provider(4, "o2", 11, 30, 2),
        _ev(REBUILD_EVENT, 5, summary_artifact_id="l1", to_seq=20),
        _opaque(6, "o3", 31, 40), _provider(6, "o3", 31, 40, 1),
        _ev(MERGE_EVENT, 7),
        _opaque(8, "o4", 41, 50), _provider(8, "o4", 41, 50, 1),
        _opaque(2, "g1", 0, 9, "f"), _provider(2, "g1", 0, 9, 1, "f"),
        _opaque(5, "g2", 10, 19, "f"), _provider(5, "g2", 10, 19, 1, "f"),
    ]


def _row(request: int, loss: str, policy: str = "p", call: str = "main", key: int = 0,
         compacted: bool = False, edited: bool = False) -> dict:
    return {"continuity_id": "c", "policy": policy, "request": request, "call_kind": call, "cache_key": key,
            "cache_loss": loss, "compacted": compacted, "edited": edited}


def _good_ledger() -> list[dict]:
    return [_row(1, "cold"), _row(2, "none"), _row(3, "compaction", compacted=True), _row(5, "reset"),
            _row(6, "drift"), _row(6, "drift", call="compaction", compacted=True),
            _row(7, "drift", key=1, compacted=True), _row(8, "edit", edited=True), _row(2, "ttl", "f")]


def _summary(intentional: int = 3, drift: int = 3, **extra) -> pl.DataFrame:
    rows = [{"continuity_id": "c", "policy": "p", "cache_loss_intentional": intentional, "cache_loss_drift": drift},
            {"continuity_id": "c", "policy": "f", "cache_loss_intentional": 0, "cache_loss_drift": 0}]
    return pl.from_dicts(rows + [extra] if extra else rows)


def _check(events=None, ledger=None, summary=None, config=CONFIG):
    ev = _events(*(_good_events() if events is None else events))
    led = pl.from_dicts(_good_ledger() if ledger is None else ledger)
    return check_two_layers(ev, led, _summary() if summary is None else summary, config)


def _findings(report) -> list[tuple]:
    return [tuple(r.values()) for r in report.findings.iter_rows(named=True)]


def test_the_good_run_passes_and_every_check_examined_what_it_should():
    report = _check()
    assert report.passed and report.findings.height == 0
    assert report.findings.columns == ["check", "continuity_id", "policy", "severity", "detail"]
    assert report.examined == {"memory_compacted_readable": 1, "provider_metadata": 6, "items_accumulate": 6,
                               "local_keeps_window": 1, "rebuild_from_local": 1, "cache_loss_split": 7}
    assert list(report.examined) == list(CHECKS)


def test_nothing_to_examine():
    report = check_two_layers(None, None, None)
    assert report.passed and report.examined == dict.fromkeys(CHECKS, 0)
    empty = check_two_layers(pl.DataFrame({"event_type": []}, schema={"event_type": pl.String}),
                             pl.from_dicts([_row(1, "cold")]).clear(), pl.DataFrame())
    assert empty.passed and empty.examined == dict.fromkeys(CHECKS, 0)


def test_memory_compacted_naming_a_provider_item_fails():
    report = _check(events=[*_good_events(), _ev(COMPACTED_EVENT, 4, outputId="o2")])
    assert _findings(report) == [("memory_compacted_readable", "c", "p", "fail",
                                  "memory.compacted names the provider item o2")]
    assert not report.passed


def test_memory_compacted_of_a_two_layer_policy_naming_no_local_checkpoint_fails():
    report = _check(events=[*_good_events(), _ev(COMPACTED_EVENT, 4, outputId="s9")])
    assert _findings(report) == [("memory_compacted_readable", "c", "p", "fail",
                                  "memory.compacted s9 of a two-layer policy names no local checkpoint")]
    # a one-layer policy's summaries are fine (f's config has no local layer), and so is a
    # policy the config does not list that made no local checkpoint
    report = _check(events=[*_good_events(), _ev(COMPACTED_EVENT, 4, "f", outputId="s9"),
                            _ev(COMPACTED_EVENT, 4, "q", outputId="s8")])
    assert report.passed and report.examined["memory_compacted_readable"] == 3


def test_a_local_checkpoint_makes_its_policy_two_layered_without_the_config():
    report = _check(events=[*_good_events(), _ev(COMPACTED_EVENT, 4, outputId="s9")], config=None)
    assert _findings(report) == [("memory_compacted_readable", "c", "p", "fail",
                                  "memory.compacted s9 of a two-layer policy names no local checkpoint")]


def test_the_same_artifact_in_another_scope_is_another_item():
    # o2 is p's provider item in continuity c; a memory.compacted o2 of continuity d is not it
    assert _check(events=[*_good_events(), {**_ev(COMPACTED_EVENT, 4, "f", outputId="o2"), "continuity_id": "d"}
                          ]).passed


@pytest.mark.parametrize("n", [0, 2])
def test_a_provider_item_without_exactly_one_metadata_row_fails(n):
    events = _replaced("o2", *[_provider(4, "o2", 11, 30, 2)] * n)
    report = _check(events=events)
    assert _findings(report)[0] == (
        "provider_metadata", "c", "p", "fail", f"provider item o2: {n} provider.compacted rows (expected 1)")
    assert report.examined["provider_metadata"] == 6  # the items after it are still examined


@pytest.mark.parametrize("column", METADATA[1:])
def test_a_metadata_row_missing_a_field_fails(column):
    events = _replaced("o1", _provider(2, "o1", 0, 10, 1, **{column: None}))
    found = _findings(_check(events=events))
    assert found[0] == ("provider_metadata", "c", "p", "fail",
                        f"provider item o1: missing [{column!r}] or covered range 0..10 is not the frame's 0..10")
    # a missing item count is also a wrong one: the window restarts from 0 after it
    assert [f[4] for f in found[1:]] == ([] if column != "item_count" else [
        "provider item o1 at request 2: item count None, the window holds 1",
        "provider item o2 at request 4: item count 2, the window holds 1"])


@pytest.mark.parametrize("frm,to", [(1, 10), (0, 11)])
def test_a_metadata_row_covering_another_range_fails(frm, to):
    events = _replaced("o1", _provider(2, "o1", frm, to, 1))
    assert _findings(_check(events=events)) == [(
        "provider_metadata", "c", "p", "fail",
        f"provider item o1: missing [] or covered range {frm}..{to} is not the frame's 0..10")]


def test_metadata_without_a_provider_item_fails():
    report = _check(events=[*_good_events(), _provider(9, "x1", 0, 1, 1, "f")])
    assert _findings(report) == [("provider_metadata", "c", "f", "fail",
                                  "provider.compacted x1 (1 row(s)) has no provider item")]


def test_an_accumulating_window_that_does_not_grow_fails_and_the_count_follows_the_row():
    events = _replaced("o2", _provider(4, "o2", 11, 30, 1))
    assert _findings(_check(events=events)) == [("items_accumulate", "c", "p", "fail",
                                                 "provider item o2 at request 4: item count 1, the window holds 2")]


def test_after_a_wrong_count_the_window_continues_from_the_reported_one():
    events = _good_events()
    events[1] = _provider(2, "o1", 0, 10, 5)
    events[5] = _provider(4, "o2", 11, 30, 6)  # 5 + 1: consistent with the reported count
    assert _findings(_check(events=events)) == [("items_accumulate", "c", "p", "fail",
                                                 "provider item o1 at request 2: item count 5, the window holds 1")]
    events[5] = _provider(4, "o2", 11, 30, None)  # a missing count restarts from 0
    events[8] = _provider(6, "o3", 31, 40, 1)
    found = _findings(_check(events=events))
    assert found[-1] == ("items_accumulate", "c", "p", "fail",
                         "provider item o2 at request 4: item count None, the window holds 6")


def test_a_folding_window_holds_one_item():
    events = _replaced("g2", _provider(5, "g2", 10, 19, 2, "f"))
    assert _findings(_check(events=events)) == [("items_accumulate", "c", "f", "fail",
                                                 "provider item g2 at request 5: item count 2, the window holds 1")]


def test_a_policy_the_config_does_not_describe_is_not_examined_for_items():
    report = _check(config={"policies": {"f": None}})
    assert report.examined["items_accumulate"] == 2


def test_a_local_checkpoint_that_rewrites_the_window_fails():
    events = [_local(3, "l1", 20, 100, 90) if e.get("event_type") == LOCAL_EVENT else e for e in _good_events()]
    assert _findings(_check(events=events)) == [("local_keeps_window", "c", "p", "fail",
                                                 "local checkpoint l1 changed the provider window (100 -> 90 tokens)")]


@pytest.mark.parametrize("request_", [4, 5])
def test_a_local_checkpoint_in_a_provider_compaction_or_rebuild_round_fails(request_):
    events = [*_good_events(), _local(request_, "l2", 25)]
    assert _findings(_check(events=events)) == [(
        "local_keeps_window", "c", "p", "fail",
        f"local checkpoint l2 shares request {request_} with a provider compaction or a rebuild")]


@pytest.mark.parametrize("source", [("l1", 5, 20), ("l1", 6, 20), ("l1", 3, 21), ("zz", 3, 20)])
def test_a_rebuild_not_from_an_earlier_local_checkpoint_with_its_cut_fails(source):
    art, local_request, to = source
    events = [_local(local_request, art, to) if e.get("event_type") == LOCAL_EVENT else e for e in _good_events()
              if e.get("event_type") != COMPACTED_EVENT]
    found = [f for f in _findings(_check(events=events)) if f[0] == "rebuild_from_local"]
    assert found == [("rebuild_from_local", "c", "p", "fail",
                      "rebuild at request 5 names l1, not a local checkpoint of an earlier request with its cut")]


@pytest.mark.parametrize("loss", ["none", "compaction"])
def test_a_rebuild_whose_main_call_does_not_reset_the_cache_fails(loss):
    ledger = [_row(5, loss) if r["request"] == 5 else r for r in _good_ledger()]
    found = [f for f in _findings(_check(ledger=ledger)) if f[0] == "rebuild_from_local"]
    assert found == [("rebuild_from_local", "c", "p", "fail",
                      f"rebuild at request 5: the session's next call reports cache loss {loss!r}, not 'reset'")]


def test_a_rebuild_is_matched_to_the_session_main_call_only():
    # the reset reported by a compaction call or on another key does not stand for the session's
    ledger = [r for r in _good_ledger() if r["request"] != 5] + [_row(5, "reset", call="compaction"),
                                                                 _row(5, "reset", key=1)]
    found = [f[4] for f in _findings(_check(ledger=ledger)) if f[0] == "rebuild_from_local"]
    assert found == ["rebuild at request 5: the session's next call reports cache loss None, not 'reset'"]


def test_without_a_ledger_the_rebuild_needs_only_its_local_checkpoint():
    report = check_two_layers(_events(*_good_events()), None, None, CONFIG)
    assert report.passed and report.examined["rebuild_from_local"] == 1 and report.examined["cache_loss_split"] == 0


@pytest.mark.parametrize("rewrite", [{"compacted": True}, {"edited": True}])
def test_a_rewrite_blamed_on_drift_fails(rewrite):
    ledger = [*_good_ledger(), _row(9, "drift", **rewrite)]
    assert _findings(_check(ledger=ledger, summary=_summary(drift=4))) == [(
        "cache_loss_split", "c", "p", "fail",
        "request 9: the policy rewrote the window, the loss is reported as drift")]


def test_a_rebuild_round_blamed_on_drift_fails():
    ledger = [r for r in _good_ledger() if r["request"] != 5] + [_row(5, "drift")]
    found = [f for f in _findings(_check(ledger=ledger, summary=_summary(2, 4))) if f[0] == "cache_loss_split"]
    assert found == [("cache_loss_split", "c", "p", "fail",
                      "request 5: the policy rewrote the window, the loss is reported as drift")]


def test_a_reset_without_a_rebuild_fails():
    ledger = [*_good_ledger(), _row(9, "reset", "f")]
    report = _check(ledger=ledger, summary=_summary(3, 3))
    assert _findings(report) == [
        ("cache_loss_split", "c", "f", "fail", "request 9: cache loss 'reset' without a rebuild"),
        ("cache_loss_split", "c", "f", "fail", "summary cache loss (intentional, drift) (0, 0), the ledger's (1, 0)")]


@pytest.mark.parametrize("got", [(2, 3), (3, 2)])
def test_summary_cache_loss_columns_that_differ_from_the_ledger_fail(got):
    assert _findings(_check(summary=_summary(*got))) == [
        ("cache_loss_split", "c", "p", "fail", f"summary cache loss (intentional, drift) {got}, the ledger's (3, 3)")]


def test_a_summary_row_of_a_scope_without_ledger_rows_expects_no_loss():
    extra = {"continuity_id": "d", "policy": "p", "cache_loss_intentional": 0, "cache_loss_drift": 1}
    assert _findings(_check(summary=_summary(**extra))) == [
        ("cache_loss_split", "d", "p", "fail", "summary cache loss (intentional, drift) (0, 1), the ledger's (0, 0)")]


def test_a_summary_without_the_cache_loss_columns_is_not_compared():
    assert _check(summary=pl.DataFrame({"continuity_id": ["c"], "policy": ["p"], "cache_loss_intentional": [9]})).passed


def test_a_single_event_row_is_examined():
    report = check_two_layers(_events(_ev(COMPACTED_EVENT, 4, outputId="s9")), None, None, CONFIG)
    assert _findings(report) == [("memory_compacted_readable", "c", "p", "fail",
                                  "memory.compacted s9 of a two-layer policy names no local checkpoint")]


def test_the_config_alone_makes_a_policy_two_layered():
    config = {"policies": {"q": {"policy": {"compaction": {"local_tokens": 300}}}, "r": {"policy": {}},
                           "z": {"policy": {"compaction": {"local_tokens": 0}}}}}
    events = [_ev(COMPACTED_EVENT, 4, "q", outputId="s9"), _ev(COMPACTED_EVENT, 4, "r", outputId="s8"),
              _ev(COMPACTED_EVENT, 4, "z", outputId="s7")]
    assert _findings(check_two_layers(_events(*events), None, None, config)) == [
        ("memory_compacted_readable", "c", "q", "fail",
         "memory.compacted s9 of a two-layer policy names no local checkpoint")]


def test_a_ledger_without_a_summary_checks_the_ledger_only():
    report = check_two_layers(_events(*_good_events()), pl.from_dicts(_good_ledger()), None, CONFIG)
    assert report.passed and report.examined["cache_loss_split"] == 7


def test_a_one_row_summary_is_compared():
    ledger = [r for r in _good_ledger() if r["policy"] == "f"]
    summary = pl.from_dicts([{"continuity_id": "c", "policy": "f", "cache_loss_intentional": 1,
                              "cache_loss_drift": 0}])
    events = [e for e in _good_events() if e["policy"] == "f"]
    report = check_two_layers(_events(*events), pl.from_dicts(ledger), summary, CONFIG)
    assert _findings(report) == [("cache_loss_split", "c", "f", "fail",
                                  "summary cache loss (intentional, drift) (1, 0), the ledger's (0, 0)")]


def test_every_local_checkpoint_and_rebuild_is_examined():
    events = [*_good_events(), _local(9, "l2", 45), _ev(REBUILD_EVENT, 10, summary_artifact_id="l2", to_seq=45)]
    report = _check(events=events, ledger=[*_good_ledger(), _row(10, "reset")], summary=_summary(4, 3))
    assert report.passed, report.findings
    assert report.examined["local_keeps_window"] == 2 and report.examined["rebuild_from_local"] == 2


def test_a_one_row_ledger_is_read_for_the_rebuild():
    report = check_two_layers(_events(*_good_events()), pl.from_dicts([_row(5, "none")]), None, CONFIG)
    assert _findings(report) == [
        ("rebuild_from_local", "c", "p", "fail",
         "rebuild at request 5: the session's next call reports cache loss 'none', not 'reset'")]
