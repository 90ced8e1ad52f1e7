"""The two compaction layers' rules (workbench.conformance.two_layer): each passes on a real
holon-openai run (local checkpoints, accumulating provider items, rebuilds) and fails on a
copy of that run with one planted violation; the conformance audit as a whole does too."""

from __future__ import annotations

import atexit
import dataclasses
import functools
import os
import shutil
import tempfile

import polars as pl
import pytest

from workbench.conformance.two_layer import CHECKS, check_two_layers

MC, PC, LC, RB = "memory.compacted", "provider.compacted", "local.checkpoint", "provider_window.rebuilt"


@functools.cache
def holon_run():
    """(run directory, SimulationResult) of holon-openai on a small generated dataset, with a
    window small enough for provider items, local checkpoints and rebuilds to happen."""
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    # beside pytest's tmp_path directories (tests/conftest.py): the atexit removal comes
    # after the session's check for files left behind
    root = tempfile.mkdtemp(prefix="wb-two-layer-", dir=os.environ.get("WORKBENCH_TEST_SCRATCH"))
    atexit.register(shutil.rmtree, root, True)
    ds = generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=3, tokenizers=("cl100k",)),
                          f"{root}/ds")
    pol = get_policy("holon-openai", {"provider.context_window": 30_000, "compaction.local_tokens": 6_000,
                                      "compaction.max_segments": 2})
    result = simulate(ds, [pol, get_policy("codex-remote", {"provider.context_window": 30_000})])
    return result.write(f"{root}/run"), result


def _check(events=None, ledger=None, summary=None):
    _, res = holon_run()
    return check_two_layers(res.events if events is None else events, res.ledger if ledger is None else ledger,
                            res.summary if summary is None else summary, res.config)


def _failed(report) -> set[str]:
    return set(report.findings["check"].to_list())


def _nth(frame, event_type: str, n: int = 0) -> int:
    """The row index of the n-th ``event_type`` row of holon-openai."""
    rows = frame.with_row_index("i").filter((pl.col("event_type") == event_type) & (pl.col("policy") == "holon-openai"))
    return int(rows["i"][n])


def _set(frame, row: int, **values):
    return frame.with_row_index("i").with_columns(**{
        c: pl.when(pl.col("i") == row).then(pl.lit(v, dtype=frame.schema[c])).otherwise(pl.col(c))
        for c, v in values.items()}).drop("i")


def test_a_real_run_passes_every_check_and_each_examined_something():
    report = _check()
    assert report.passed, report.findings
    assert set(report.examined) == set(CHECKS)
    assert all(n > 0 for n in report.examined.values()), report.examined


def test_holon_events_show_memory_compacted_only_for_local_checkpoints():
    _, res = holon_run()
    ev = res.events.filter(pl.col("policy") == "holon-openai")
    local = set(ev.filter(pl.col("event_type") == LC)["summary_artifact_id"].to_list())
    memory = ev.filter(pl.col("event_type") == MC)["outputId"].to_list()
    assert memory and set(memory) == local and len(memory) == len(local)
    codex = res.events.filter(pl.col("policy") == "codex-remote")
    assert codex.filter(pl.col("event_type") == PC).height > 0 and codex.filter(pl.col("event_type") == MC).height == 0


def test_memory_compacted_for_a_provider_item_fails():
    _, res = holon_run()
    k = _nth(res.events, PC)
    planted = res.events.slice(k, 1).with_columns(event_type=pl.lit(MC), outputId=pl.col("compaction_id"))
    assert _failed(_check(events=pl.concat([res.events, planted]))) == {"memory_compacted_readable"}


def test_memory_compacted_of_a_two_layer_policy_naming_no_local_checkpoint_fails():
    _, res = holon_run()
    k = _nth(res.events, MC)
    assert _failed(_check(events=_set(res.events, k, outputId="art_from_elsewhere"))) == {"memory_compacted_readable"}


def test_a_provider_item_without_its_metadata_row_fails():
    _, res = holon_run()
    events = res.events.with_row_index("i").filter(pl.col("i") != _nth(res.events, PC)).drop("i")
    assert "provider_metadata" in _failed(_check(events=events))


@pytest.mark.parametrize("column,value", [("request_shape_hash", None), ("payload_sha256", None),
                                          ("usage_input_tokens", None), ("to_seq", -1)])
def test_a_metadata_row_missing_a_field_or_its_range_fails(column, value):
    _, res = holon_run()
    assert _failed(_check(events=_set(res.events, _nth(res.events, PC), **{column: value}))) == {"provider_metadata"}


def test_a_window_that_does_not_accumulate_items_fails():
    _, res = holon_run()
    events = res.events.with_columns(item_count=pl.when(pl.col("event_type") == PC).then(1).otherwise(pl.col("item_count")))
    assert _failed(_check(events=events)) == {"items_accumulate"}


def test_a_local_checkpoint_that_rewrites_the_window_fails():
    _, res = holon_run()
    k = _nth(res.events, LC)
    planted = _set(res.events, k, tokens_after=int(res.events["tokens_before"][k]) - 100)
    assert _failed(_check(events=planted)) == {"local_keeps_window"}


def test_a_local_checkpoint_in_a_provider_compaction_round_fails():
    _, res = holon_run()
    request = int(res.events["request"][_nth(res.events, PC)])
    planted = _set(res.events, _nth(res.events, LC), request=request)
    assert "local_keeps_window" in _failed(_check(events=planted))


def test_a_rebuild_from_no_earlier_local_checkpoint_fails():
    _, res = holon_run()
    k = _nth(res.events, RB)
    opaque = res.events["summary_artifact_id"][_nth(res.events, "continuity_compaction_checkpoint_created")]
    assert _failed(_check(events=_set(res.events, k, summary_artifact_id=opaque))) == {"rebuild_from_local"}


def test_a_rebuild_that_does_not_reset_the_cache_fails():
    _, res = holon_run()
    request = int(res.events["request"][_nth(res.events, RB)])
    led = res.ledger.with_columns(cache_loss=pl.when(
        (pl.col("policy") == "holon-openai") & (pl.col("request") == request) & (pl.col("call_kind") == "main"))
        .then(pl.lit("compaction")).otherwise(pl.col("cache_loss")))
    assert _failed(_check(ledger=led)) == {"rebuild_from_local"}


def test_a_compaction_blamed_on_drift_fails():
    _, res = holon_run()
    led = res.ledger.with_row_index("i")
    k = int(led.filter((pl.col("call_kind") == "main") & pl.col("compacted") & (pl.col("cache_loss") == "compaction")
                       & (pl.col("policy") == "holon-openai"))["i"][0])
    assert "cache_loss_split" in _failed(_check(ledger=_set(res.ledger, k, cache_loss="drift")))


def test_a_summary_whose_cache_loss_columns_differ_from_the_ledger_fails():
    _, res = holon_run()
    summary = res.summary.with_columns(cache_loss_drift=pl.col("cache_loss_drift") + 1)
    assert _failed(_check(summary=summary)) == {"cache_loss_split"}


def test_the_conformance_audit_passes_on_holon_and_fails_on_a_planted_violation(tmp_path):
    from workbench.audits import conformance_audit
    from workbench.rundir import names as N

    run_dir, res = holon_run()
    audit = conformance_audit(run_dir)
    assert audit.passed, audit.tables[N.CONFORMANCE].filter(pl.col("severity") == "fail")
    assert audit.details["checked"]["two_layer"] == _check().examined
    k = _nth(res.events, PC)
    planted = res.events.slice(k, 1).with_columns(event_type=pl.lit(MC), outputId=pl.col("compaction_id"))
    failed = conformance_audit(dataclasses.replace(res, events=pl.concat([res.events, planted])).write(tmp_path / "r"))
    assert not failed.passed
    assert "memory_compacted_readable" in failed.tables[N.CONFORMANCE]["check"].to_list()
