"""The two compaction layers' rules (Holon's RFC "OpenAI Remote Compaction
Boundary For Holon", 2026-04-30 draft, §4–§8, as the engines model
them: :mod:`workbench.engine.provider_window`), checked on a run's events, ledger and summary.

Each check reports the items it examined (a check that examined nothing proved nothing):

* ``memory_compacted_readable`` (§4.2) — no ``memory.compacted`` names a provider item (an
  opaque frame's artifact); in a policy with a local layer, each names a local checkpoint.
  Examined: ``memory.compacted`` rows.
* ``provider_metadata`` (§4.2) — each opaque frame has exactly one ``provider.compacted``
  row with its compaction id and covered range and every metadata field (trigger,
  request-shape hash, item count, usage, payload hash and length); none without a frame.
  Examined: opaque frames.
* ``items_accumulate`` (§6) — the item count of an accumulating policy's window grows by one
  per provider compaction and restarts at a rebuild (several items may sit in the window);
  a folding policy's window holds one. Examined: ``provider.compacted`` rows.
* ``local_keeps_window`` (§5.1, §5.3) — a local checkpoint leaves the provider window as it
  was (``tokens_after == tokens_before``) and shares no request with a provider compaction
  or a rebuild. Examined: local checkpoints.
* ``rebuild_from_local`` (§5.4) — a rebuild names a local checkpoint made at an earlier
  request (same ``to_seq``), and the session's main call of that request reports the cache
  loss ``reset``. Examined: rebuilds.
* ``cache_loss_split`` (§5.5) — no call the policy compacted, edited or rebuilt before is
  blamed on drift, no ``reset`` without a rebuild, and the summary's ``cache_loss_intentional``
  / ``cache_loss_drift`` equal the ledger's causes. Examined: ledger calls that lost cache.

>>> import polars as pl
>>> report = check_two_layers(pl.DataFrame({"event_type": ["memory.compacted"], "policy": ["p"],
...     "continuity_id": ["c"], "outputId": ["a1"], "request": [3]}), None, None)
>>> report.passed, report.examined["memory_compacted_readable"]
(True, 1)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any, NamedTuple

from workbench.conformance.invariants import FAIL, MERGE_EVENT
from workbench.engine.enums import INTENTIONAL_LOSSES, CacheLoss, names
from workbench.rundir.wire import (
    CHECKPOINT_EVENT,
    COMPACTED_EVENT,
    LOCAL_EVENT,
    OPAQUE_KIND,
    PROVIDER_EVENT,
    REBUILD_EVENT,
)

CHECKS: dict[str, str] = {
    "memory_compacted_readable": "memory.compacted never names a provider item; with a local layer, a local checkpoint",
    "provider_metadata": "each provider item has one provider.compacted row with every metadata field",
    "items_accumulate": "an accumulating window's item count grows by one per provider compaction, "
                        "restarting at a rebuild",
    "local_keeps_window": "a local checkpoint leaves the provider window as it is, in a round of its own",
    "rebuild_from_local": "a rebuild names an earlier local checkpoint and resets the session's cache",
    "cache_loss_split": "cache loss after the policy's own rewrite is never drift; the summary columns match",
}
METADATA = ("compaction_id", "provider_trigger", "request_shape_hash", "item_count", "usage_input_tokens",
            "usage_output_tokens", "payload_sha256", "payload_bytes")
_LOSS_NAMES = names(CacheLoss)
_INTENTIONAL = {_LOSS_NAMES[c] for c in INTENTIONAL_LOSSES}


class TwoLayerReport(NamedTuple):
    findings: Any  # polars.DataFrame: check, continuity_id, policy, severity, detail
    examined: dict[str, int]  # check -> items it examined
    passed: bool


def _rows(events, *types: str) -> list[dict[str, Any]]:
    import polars as pl

    if events is None or events.height == 0:
        return []
    return list(events.filter(pl.col("event_type").is_in(list(types))).iter_rows(named=True))


def _scope(r: Mapping[str, Any]) -> tuple:
    return r.get("continuity_id"), r.get("policy")


def check_two_layers(events, ledger, summary, config: Mapping[str, Any] | None = None) -> TwoLayerReport:
    """The checks above on one run (``ledger``/``summary`` None: their checks see nothing);
    ``config``: the run's (``SimulationResult.config``), for whether a policy accumulates."""
    import polars as pl

    found: list[dict[str, Any]] = []
    examined = dict.fromkeys(CHECKS, 0)

    def fail(check: str, detail: str, r: Mapping[str, Any] | tuple) -> None:
        cid, pol = r if isinstance(r, tuple) else _scope(r)
        found.append({"check": check, "continuity_id": cid, "policy": pol, "severity": FAIL, "detail": detail})

    opaque = [r for r in _rows(events, CHECKPOINT_EVENT) if r.get("summary_kind") == OPAQUE_KIND]
    locals_ = _rows(events, LOCAL_EVENT)
    provider = _rows(events, PROVIDER_EVENT)
    rebuilds = _rows(events, REBUILD_EVENT)
    opaque_ids = {(*_scope(r), r.get("summary_artifact_id")) for r in opaque}
    local_by_id = {(*_scope(r), r.get("summary_artifact_id")): r for r in locals_}
    layered = {_scope(r)[1] for r in locals_} | {p for p, d in _policies(config).items() if _local(d)}

    for r in _rows(events, COMPACTED_EVENT):
        examined["memory_compacted_readable"] += 1
        key = (*_scope(r), r.get("outputId"))
        if key in opaque_ids:
            fail("memory_compacted_readable", f"memory.compacted names the provider item {key[2]}", r)
        elif r.get("policy") in layered and key not in local_by_id:
            fail("memory_compacted_readable", f"memory.compacted {key[2]} of a two-layer policy names no local "
                 "checkpoint", r)

    meta: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in provider:
        meta[(*_scope(r), r.get("compaction_id"))].append(r)
    for r in opaque:
        examined["provider_metadata"] += 1
        key = (*_scope(r), r.get("summary_artifact_id"))
        rows = meta.get(key, [])
        if len(rows) != 1:
            fail("provider_metadata", f"provider item {key[2]}: {len(rows)} provider.compacted rows (expected 1)", r)
            continue
        m = rows[0]
        missing = [c for c in METADATA if m.get(c) is None]
        if missing or (m.get("from_seq"), m.get("to_seq")) != (r.get("from_seq"), r.get("to_seq")):
            fail("provider_metadata", f"provider item {key[2]}: missing {missing} or covered range "
                 f"{m.get('from_seq')}..{m.get('to_seq')} is not the frame's {r.get('from_seq')}..{r.get('to_seq')}", r)
    for key, rows in meta.items():
        if key not in opaque_ids:
            fail("provider_metadata", f"provider.compacted {key[2]} ({len(rows)} row(s)) has no provider item", key[:2])

    # (a policy the config does not describe is not examined: folding or accumulating is unknown)
    accumulates = {p: bool((d.get("compaction") or {}).get("accumulate")) for p, d in _policies(config).items()}
    by_scope: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in _rows(events, PROVIDER_EVENT, REBUILD_EVENT, MERGE_EVENT):  # in stream order
        if r.get("policy") in accumulates:
            by_scope[_scope(r)].append(r)
    for scope, rows in by_scope.items():
        count = 0
        for r in rows:
            if r["event_type"] != PROVIDER_EVENT:  # the items were replaced by one readable summary
                count = 0
                continue
            examined["items_accumulate"] += 1
            count = count + 1 if accumulates[scope[1]] else 1
            if r.get("item_count") != count:
                fail("items_accumulate", f"provider item {r.get('compaction_id')} at request {r['request']}: "
                     f"item count {r.get('item_count')}, the window holds {count}", r)
                count = r.get("item_count") or 0

    window_moves = {(*_scope(r), r["request"]) for r in [*opaque, *rebuilds]}
    for r in locals_:
        examined["local_keeps_window"] += 1
        if r.get("tokens_after") != r.get("tokens_before"):
            fail("local_keeps_window", f"local checkpoint {r.get('summary_artifact_id')} changed the provider window "
                 f"({r.get('tokens_before')} -> {r.get('tokens_after')} tokens)", r)
        if (*_scope(r), r["request"]) in window_moves:
            fail("local_keeps_window", f"local checkpoint {r.get('summary_artifact_id')} shares request "
                 f"{r['request']} with a provider compaction or a rebuild", r)

    main = _main_losses(ledger)
    for r in rebuilds:
        examined["rebuild_from_local"] += 1
        src = local_by_id.get((*_scope(r), r.get("summary_artifact_id")))
        if src is None or src["request"] >= r["request"] or src.get("to_seq") != r.get("to_seq"):
            fail("rebuild_from_local", f"rebuild at request {r['request']} names {r.get('summary_artifact_id')}, "
                 "not a local checkpoint of an earlier request with its cut", r)
        if main is not None and main.get((*_scope(r), r["request"])) != "reset":
            fail("rebuild_from_local", f"rebuild at request {r['request']}: the session's next call reports cache "
                 f"loss {main.get((*_scope(r), r['request']))!r}, not 'reset'", r)

    if ledger is not None and ledger.height:
        rebuilt = {(*_scope(r), r["request"]) for r in rebuilds}
        lost = ledger.filter(~pl.col("cache_loss").is_in(["none", "cold"]))
        for r in lost.iter_rows(named=True):
            examined["cache_loss_split"] += 1
            rewrote = r.get("compacted") or r.get("edited") or (*_scope(r), r["request"]) in rebuilt
            if r["call_kind"] == "main" and r["cache_key"] == 0 and rewrote and r["cache_loss"] == "drift":
                fail("cache_loss_split", f"request {r['request']}: the policy rewrote the window, the loss is "
                     "reported as drift", r)
            if r["cache_loss"] == "reset" and (*_scope(r), r["request"]) not in rebuilt:
                fail("cache_loss_split", f"request {r['request']}: cache loss 'reset' without a rebuild", r)
        _check_summary_split(ledger, summary, fail)

    findings = pl.DataFrame(found, schema={"check": pl.String, "continuity_id": pl.String, "policy": pl.String,
                                           "severity": pl.String, "detail": pl.String})
    return TwoLayerReport(findings, examined, not found)


def _check_summary_split(ledger, summary, fail) -> None:
    import polars as pl

    if summary is None or summary.height == 0 or "cache_loss_drift" not in summary.columns:
        return
    counted = ledger.group_by("continuity_id", "policy").agg(
        intentional=pl.col("cache_loss").is_in(sorted(_INTENTIONAL)).sum(),
        drift=(pl.col("cache_loss") == "drift").sum())
    want = {(r["continuity_id"], r["policy"]): (r["intentional"], r["drift"]) for r in counted.iter_rows(named=True)}
    for r in summary.iter_rows(named=True):
        got = (r["cache_loss_intentional"], r["cache_loss_drift"])
        exp = want.get(_scope(r), (0, 0))
        if got != exp:
            fail("cache_loss_split", f"summary cache loss (intentional, drift) {got}, the ledger's {exp}", r)


def _main_losses(ledger) -> dict[tuple, str] | None:
    """(continuity, policy, request) -> the cache loss of the session's main call."""
    import polars as pl

    if ledger is None or ledger.height == 0:
        return None
    main = ledger.filter((pl.col("call_kind") == "main") & (pl.col("cache_key") == 0))
    return {(r["continuity_id"], r["policy"], r["request"]): r["cache_loss"]
            for r in main.select("continuity_id", "policy", "request", "cache_loss").iter_rows(named=True)}


def _policies(config: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {name: (entry or {}).get("policy") or {} for name, entry in ((config or {}).get("policies") or {}).items()}


def _local(policy: Mapping[str, Any]) -> bool:
    return bool((policy.get("compaction") or {}).get("local_tokens"))
