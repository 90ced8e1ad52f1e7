"""The context bundle of one request of a written run, as a provider adapter compiles it
(ADR-0011): the ``rip.context_bundle.v1`` document (:func:`~workbench.evaluate.bundles.bundle_document`)
with each ``summary_ref`` expanded from the run's artifact store (``artifacts``).

The run's checkpoint frames (``events.parquet``) and its artifact store are caches; the
continuity (the dataset the run names) is the truth. When a cache is missing or invalid —
no events table, no store, or a ``summary_ref`` whose blob is missing, rewritten or
unreadable — the bundle is compiled from a replay of the policy over the continuity
instead: its frames and artifact documents are rebuilt in memory (the run directory is not
touched; artifact ids are content hashes, so the replay's ids are the run's) and
``source`` says ``truth replay`` with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

RUN, REPLAY = "run", "truth replay"


def run_bundle(run_dir: str | Path, policy: str, request: int, continuity: str | None = None) -> dict[str, Any]:
    """The bundle of ``request`` (from 0) of ``policy`` on ``continuity`` (default: the
    run's first continuity) in the run at ``run_dir``, its summaries expanded; ``source``:
    ``run``, or ``truth replay`` (``fallback_reason`` says why)."""
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.policy import Policy
    from workbench.engine.run import prepare_dataset
    from workbench.rundir.read import load_config, load_table

    config = load_config(run_dir)
    if policy not in config["policies"]:
        raise WorkbenchError(f"{run_dir}: no policy {policy!r} in the run; it has {', '.join(config['policies'])}")
    pol = Policy.from_dict(config["policies"][policy]["policy"])
    ds = load_dataset(config["dataset"]["path"])
    inputs = {inp.continuity_id: inp for inp in prepare_dataset(ds, config["tokenizer"])}
    cid = continuity if continuity is not None else next(iter(inputs), None)
    if cid not in inputs:
        raise WorkbenchError(f"{run_dir}: no continuity {continuity!r}; the dataset has {', '.join(inputs)}")
    inp = inputs[cid]
    if not 0 <= request < inp.n_requests:
        raise WorkbenchError(f"request {request} is not one of {cid}'s {inp.n_requests} requests")
    events = load_table(run_dir, "events")
    replayed = _replayed(ds, inp, pol, config)  # what each prompt held: the engines' record
    record = replayed.prompt_record(policy, cid)
    reason = None
    if events is None:
        reason = "the run has no events table (its checkpoint frames)"
    else:
        bundle, reason = _compiled(run_dir, events, record, inp, pol, policy, request, config["run_id"])
        if reason is None:
            return {**bundle, "source": RUN, "fallback_reason": None}
    events = replayed.events
    from workbench.conformance.scenarios import modelled_artifact_store

    bundle, _ = _compiled(None, events, record, inp, pol, policy, request, config["run_id"],
                          read=modelled_artifact_store(events).get)
    return {**bundle, "source": REPLAY, "fallback_reason": reason}


def _compiled(run_dir, events, record, inp, pol, name: str, request: int, run_id: str, read=None):
    """``(bundle with its artifacts, None)`` compiled from ``events``, the prompt ``record``
    and the store (the run's, or ``read``); ``(None, reason)`` when a summary_ref does not resolve."""
    from workbench.evaluate.bundles import bundle_document, bundle_row
    from workbench.evaluate.context import ContextTracker
    from workbench.rundir.artifacts import ArtifactError, has_store, read_store

    if read is None:
        if not has_store(run_dir):
            return None, "the run has no artifact store"
        read = read_store(run_dir)
    try:
        tracker = ContextTracker(inp, pol, events.filter(events["policy"] == name), record=record)
    except ValueError as e:  # the events are not the replay's
        return None, str(e)
    row = bundle_row(tracker, request, run_id, name)
    artifacts = {}
    for art in row["summary_refs"]:
        try:
            doc = read(art)
        except ArtifactError as e:
            return None, str(e)
        if doc is None:
            return None, f"artifact {art} is not in the artifact store"
        artifacts[art] = doc
    return {**bundle_document(row, inp, pol), "artifacts": artifacts}, None


def _replayed(ds, inp, pol, config: dict[str, Any]):
    """``pol`` on ``inp`` replayed from the continuity with the run's own settings (engine,
    tokenizer, pricing, accounting): its events and prompt record."""
    from workbench.engine.run import ENGINES, simulate

    acct = config.get("accounting") or {}
    profiles = acct.get("profiles")
    res = simulate(ds, [pol], engine=config["engine"] if config.get("engine") in ENGINES else "kernel",
                   tokenizer=config["tokenizer"], seed=config.get("seed", 0), model=config.get("model_override"),
                   price_as=config.get("model_price_as"), run_id=config["run_id"], inputs=[inp],
                   accounting=acct.get("mode", "auto"), line_source=acct.get("line_source", "own"),
                   calibration=profiles if profiles and Path(profiles).is_file() else None)
    return res
