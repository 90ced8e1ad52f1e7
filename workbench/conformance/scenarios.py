"""The three RFC 0012 conformance scenarios, runnable against any simulated policy.

* :func:`scenario_event_emitted` (``memory-compaction-event-emitted``): every compaction
  that produced an artifact emitted exactly one ``memory.compacted`` event of valid shape,
  and its ``outputId`` resolves in an artifact store (a ``dict[artifact_id, document]`` or
  a callable ``read_artifact(id)``: the audit reads the run's own store,
  :mod:`workbench.rundir.artifacts`, where a missing or rewritten blob fails; without a
  store, :func:`modelled_artifact_store` — the ``rip.compaction_summary.v1`` documents of
  the modelled summaries, which have a size but no text, rebuilt from the events). A
  resolved checkpoint artifact must validate and cover what its frame says.
* :func:`scenario_sr1_carry_forward` (``memory-compaction-sr1-carry-forward``): planted
  source entries (post-redaction ``<REDACTED:…>`` markers, adversarial near-secret
  strings, an in-context ``[BYOK:…]`` example) go through the compaction path
  ``summarize → (redact if SR-1)`` twice, SR-1 on and off. With SR-1 on the output must
  contain no plaintext secret (nothing the redactor would still change, no known planted
  or injected secret surviving by the leak criterion) and no ``[BYOK:…]`` form-leak; the
  SR-1-off leak is reported as the measurement. The status follows the path the policy
  actually runs (``policy.redaction.sr1_carry_forward``): a policy with SR-1 off fails
  as soon as the off path leaks.
* :func:`scenario_provenance_tag` (``memory-compaction-provenance-tag``): each compacted
  output carries ``compacted-from:<runId>``; absent is a warning (§C SHOULD), malformed
  (empty / whitespace id, or not this run's id) fails.

Every scenario returns a :class:`ScenarioResult` (``name``, ``status`` pass|fail|skip,
``details``, ``warnings``) and skips cleanly when the policy's host capability block
(:func:`workbench.conformance.capability.host_caps_for_policy` unless given) does not
advertise ``memory.compaction.supported: true``. A run in which the policy never
compacted skips too (``details["reason"] == "vacuous"``): nothing was exercised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.conformance.invariants import MERGE_EVENT, provenance_tag_problems
from workbench.conformance.scenario_base import (  # noqa: F401  (re-exported names)
    EVENT_EMITTED,
    FAIL,
    MAX_LISTED,
    PASS,
    PROVENANCE_TAG,
    SCENARIOS,
    SKIP,
    SR1_CARRY_FORWARD,
    ScenarioResult,
    _gate,
    _policy_name,
    _policy_obj,
)
from workbench.conformance.schemas import to_wire, validate
from workbench.conformance.sr1 import scenario_sr1_carry_forward
from workbench.rundir import wire as W
from workbench.rundir.summary_docs import SummaryDocs
from workbench.rundir.wire import CHECKPOINT_EVENT, COMPACTED_EVENT, LOCAL_EVENT, OPAQUE_KIND, SUMMARY_SCHEMA

ArtifactStore = Mapping[str, Mapping[str, Any]] | Callable[[str], Mapping[str, Any] | None]


def _policy_events(events, policy):
    import polars as pl

    if events is None or events.height == 0 or "event_type" not in events.columns:
        return events
    name = _policy_name(policy)
    if name is not None and "policy" in events.columns:
        return events.filter(pl.col("policy") == name)
    return events


class Unreadable(str):
    """What a store said when an artifact it indexes cannot be trusted (a missing or
    rewritten blob: :class:`workbench.rundir.artifacts.ArtifactError`)."""


def _resolver(artifacts: ArtifactStore) -> Callable[[str], Mapping[str, Any] | Unreadable | None]:
    from workbench.errors import WorkbenchError

    if callable(artifacts) and not isinstance(artifacts, Mapping):
        def read(aid: str):
            try:
                return artifacts(aid)
            except (KeyError, LookupError, FileNotFoundError):
                return None
            except WorkbenchError as e:
                return Unreadable(str(e))
        return read
    return lambda aid: artifacts.get(aid)  # type: ignore[union-attr]


def modelled_artifact_store(events, *, summary_text: Callable[[Mapping[str, Any]], str] | None = None,
                            actor_id: str | None = None) -> dict[str, dict[str, Any]]:
    """``{artifact_id: rip.compaction_summary.v1 document}`` for every produced artifact.

    One document per checkpoint frame with a readable artifact (a provider item's frame has
    none: its item is metadata), per local checkpoint and per ``summary.merged`` row (coverage:
    every checkpoint of the scope up to the merge), built by
    :class:`~workbench.rundir.summary_docs.SummaryDocs`, the documents the engine named the
    artifacts by. ``summary.text`` comes from ``summary_text(row)`` when given, else a modelled
    placeholder. The run's ``compacted-from:<runId>`` tag is on the ``memory.compacted`` rows,
    not in the document (which names nothing of the run).
    """
    import polars as pl

    store: dict[str, dict[str, Any]] = {}
    if events is None or events.height == 0 or "event_type" not in events.columns:
        return store
    docs = SummaryDocs(summary_text, actor_id)
    producers = [CHECKPOINT_EVENT, MERGE_EVENT, LOCAL_EVENT]
    for r in events.filter(pl.col("event_type").is_in(producers)).iter_rows(named=True):
        art = r.get("summary_artifact_id")
        doc = docs.add(r) if art is not None else None
        if doc is not None and r.get("summary_kind") != OPAQUE_KIND:  # a provider item is no memory document
            store[art] = doc
    return store


def _produced(events) -> list[dict[str, Any]]:
    """Rows (checkpoint frames, merges, local checkpoints) that produced a readable artifact
    (a provider item's frame did not: its item is metadata), in stream order."""
    import polars as pl

    if events is None or events.height == 0 or "summary_artifact_id" not in events.columns:
        return []
    part = events.filter(pl.col("event_type").is_in([CHECKPOINT_EVENT, MERGE_EVENT, LOCAL_EVENT])
                         & pl.col("summary_artifact_id").is_not_null()
                         & pl.col("summary_kind").ne_missing(OPAQUE_KIND))
    return list(part.iter_rows(named=True))


def _compacted(events) -> list[dict[str, Any]]:
    import polars as pl

    if events is None or events.height == 0 or "event_type" not in events.columns:
        return []
    return list(events.filter(pl.col("event_type") == COMPACTED_EVENT).iter_rows(named=True))


_TRIGGERS_OK = {W.TRIGGER_HOST: {W.TRIGGER_HOST}, W.TRIGGER_CLIENT: {W.TRIGGER_CLIENT},
                "both": {W.TRIGGER_HOST, W.TRIGGER_CLIENT}}


# --------------------------------------------------------------------------- (a) event emitted


def scenario_event_emitted(events, policy=None, *, host_caps: Mapping[str, Any] | None = None,
                           artifacts: ArtifactStore | None = None,
                           config: Mapping[str, Any] | None = None) -> ScenarioResult:
    """RFC 0012 ``memory-compaction-event-emitted`` over one policy's events."""
    host_caps, skip = _gate(EVENT_EMITTED, policy, host_caps, config)
    if skip:
        return skip
    pname = _policy_name(policy)
    ev = _policy_events(events, policy)
    produced = _produced(ev)
    compacted = _compacted(ev)
    if not produced and not compacted:
        return ScenarioResult(EVENT_EMITTED, SKIP, {"reason": "vacuous",
                                                    "message": "no compaction produced an artifact in this run"},
                              pname)
    read = _resolver(artifacts if artifacts is not None else modelled_artifact_store(ev))
    cap_trigger = (((host_caps or {}).get("memory") or {}).get("compaction") or {}).get("trigger")
    by_output: dict[tuple, list[dict[str, Any]]] = {}
    for r in compacted:
        by_output.setdefault((r.get("continuity_id"), r.get("outputId")), []).append(r)
    problems: list[str] = []
    warnings: list[str] = []
    readable = 0
    seen: set[tuple] = set()
    for p in produced:
        art = p["summary_artifact_id"]
        key = (p.get("continuity_id"), art)
        seen.add(key)
        evs = by_output.get(key, [])
        where = f"{p.get('continuity_id')}/{art}"
        if len(evs) != 1:
            problems.append(f"{where}: {len(evs)} memory.compacted events (expected exactly 1)")
        for e in evs:
            wire = to_wire(e)
            problems += [f"{where}: event {m}" for m in validate(COMPACTED_EVENT, wire)]
            trig = wire.get("trigger")
            if cap_trigger in _TRIGGERS_OK and trig not in _TRIGGERS_OK[cap_trigger]:
                problems.append(f"{where}: event trigger {trig!r} does not match the advertised "
                                f"compaction.trigger {cap_trigger!r}")
            if trig == "both":
                warnings.append(f"{where}: trigger 'both' names a capability, not a run's path")
        doc = read(art)
        if doc is None or isinstance(doc, Unreadable):
            problems.append(f"{where}: outputId is not readable from the artifact store"
                            + (f" ({doc})" if doc else ""))
            continue
        readable += 1
        if p["event_type"] in (CHECKPOINT_EVENT, LOCAL_EVENT):
            errs = validate(SUMMARY_SCHEMA, doc)
            problems += [f"{where}: artifact {m}" for m in errs]
            cov = doc.get("coverage") if isinstance(doc, Mapping) else None
            if not errs and isinstance(cov, Mapping):
                want = {"thread_id": p.get("continuity_id"), "from_seq": p.get("from_seq"),
                        "from_message_id": p.get("from_message_id"), "to_seq": p.get("to_seq"),
                        "to_message_id": p.get("to_message_id")}
                diff = {k: (cov.get(k), v) for k, v in want.items() if cov.get(k) != v}
                if diff:
                    problems.append(f"{where}: artifact coverage differs from its frame: {diff}")
    for key, evs in by_output.items():
        if key not in seen:
            problems.append(f"{key[0]}/{key[1]}: {len(evs)} memory.compacted event(s) for an output no "
                            "compaction produced")
    details = {"artifacts": len(produced), "events": len(compacted), "readable": readable,
               "n_problems": len(problems), "problems": problems[:MAX_LISTED]}
    return ScenarioResult(EVENT_EMITTED, FAIL if problems else PASS, details, pname, warnings)


# --------------------------------------------------------------------------- (c) provenance tag


def scenario_provenance_tag(events, policy=None, *, host_caps: Mapping[str, Any] | None = None,
                            artifacts: ArtifactStore | None = None, run_id: str | None = None,
                            config: Mapping[str, Any] | None = None) -> ScenarioResult:
    """RFC 0012 ``memory-compaction-provenance-tag``: soft on absence, hard on malformation.

    The tags are read from the stored output when the store returns a document with a
    ``tags`` list, else from the ``memory.compacted`` row's ``tags`` (where the engine
    records the output's tags). ``run_id`` defaults to each row's ``run_id``.
    """
    host_caps, skip = _gate(PROVENANCE_TAG, policy, host_caps, config)
    if skip:
        return skip
    pname = _policy_name(policy)
    ev = _policy_events(events, policy)
    compacted = _compacted(ev)
    if not compacted:
        return ScenarioResult(PROVENANCE_TAG, SKIP, {"reason": "vacuous",
                                                     "message": "no memory.compacted event in this run"}, pname)
    read = _resolver(artifacts) if artifacts is not None else None
    problems, warnings = [], []
    counts = {"ok": 0, "absent": 0, "duplicate": 0, "malformed": 0}
    for r in compacted:
        oid = r.get("outputId")
        tags = r.get("tags")
        if read is not None and oid is not None:
            doc = read(oid)
            if isinstance(doc, Unreadable):
                problems.append(f"{oid}: {doc}")
                continue
            if isinstance(doc, Mapping) and isinstance(doc.get("tags"), list):
                tags = doc["tags"]
        status, msgs = provenance_tag_problems(tags, run_id if run_id is not None else r.get("run_id"))
        counts[status] += 1
        if status == "malformed":
            problems += [f"{oid}: {m}" for m in msgs]
        elif status != "ok":
            warnings += [f"{oid}: {m}" for m in msgs]
    details = {"outputs": len(compacted), **counts, "n_problems": len(problems),
               "problems": problems[:MAX_LISTED]}
    return ScenarioResult(PROVENANCE_TAG, FAIL if problems else PASS, details, pname, warnings[:MAX_LISTED])


# --------------------------------------------------------------------------- all scenarios


def run_scenarios(result=None, policies: Sequence[Any] | None = None, *, events=None,
                  host_caps: Mapping[str, Any] | Callable[[Any], Mapping[str, Any]] | None = None,
                  artifacts: ArtifactStore | None = None, redact: Callable[[str], Any] | None = None,
                  summarize: Callable[[Sequence[str]], str] | None = None, run_id: str | None = None,
                  config: Mapping[str, Any] | None = None, seed: int = 0,
                  texts=None) -> list[ScenarioResult]:
    """All three scenarios for every policy of a run.

    ``result``: a :class:`~workbench.engine.run.SimulationResult` (or pass ``events`` and
    optionally ``config``). ``host_caps``: one document for every policy, a mapping
    ``policy -> document``, or a callable ``policy -> document``; default derived per policy.
    ``texts``: the run's derived texts (``texts.parquet``: policy, sr1, text), whose SR-1
    ones the SR-1 scenario checks besides its planted sources.
    """
    import polars as pl

    if result is not None:
        events = result.events if events is None else events
        config = result.config if config is None else config
        run_id = result.run_id if run_id is None else run_id
    if policies is None:
        if config and "policies" in config:
            policies = list(config["policies"])
        elif events is not None and events.height and "policy" in events.columns:
            policies = events["policy"].unique(maintain_order=True).to_list()
        else:
            policies = []
    out: list[ScenarioResult] = []
    for pol in policies:
        name = _policy_name(pol)
        caps = host_caps
        if callable(caps) and not isinstance(caps, Mapping):
            caps = caps(pol)
        elif isinstance(caps, Mapping) and name in caps and "memory" not in caps:
            caps = caps[name]
        pev = events.filter(pl.col("policy") == name) if events is not None and events.height else events
        store = artifacts if artifacts is not None else modelled_artifact_store(pev)
        out.append(scenario_event_emitted(pev, pol, host_caps=caps, artifacts=store, config=config))
        run_texts = (None if texts is None else
                     texts.filter((pl.col("policy") == name) & pl.col("sr1"))["text"].drop_nulls().to_list())
        out.append(scenario_sr1_carry_forward(pol, host_caps=caps, redact=redact, summarize=summarize,
                                              config=config, seed=seed, run_texts=run_texts))
        out.append(scenario_provenance_tag(pev, pol, host_caps=caps, artifacts=store, run_id=run_id,
                                           config=config))
    return out


def scenarios_frame(results: Sequence[ScenarioResult]):
    """A report table: policy, scenario, status, n_warnings, detail (one-line summary)."""
    import polars as pl

    rows = []
    for r in results:
        d = r.details
        if r.status == SKIP:
            detail = d.get("message", "")
        elif r.name == SR1_CARRY_FORWARD:
            detail = (f"SR-1 on leaks={d['sr1_on']['leaks']}; SR-1 off: {d['sr1_off']['leaked_secrets']} secrets, "
                      f"{d['sr1_off']['redactor_findings']} findings, {d['sr1_off']['byok_form_leaks']} BYOK forms")
        else:
            detail = "; ".join(d.get("problems", [])[:3]) or f"{d.get('artifacts', d.get('outputs'))} outputs ok"
        rows.append({"policy": r.policy, "scenario": r.name, "status": r.status, "n_warnings": len(r.warnings),
                     "detail": detail})
    return pl.DataFrame(rows, schema={"policy": pl.String, "scenario": pl.String, "status": pl.String,
                                      "n_warnings": pl.Int64, "detail": pl.String})
