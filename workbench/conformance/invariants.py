"""ADR-0011 / RFC 0012 invariants over a run's ``events.parquet``, per continuity × policy.

>>> import tempfile
>>> from workbench.engine.run import simulate
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = tempfile.TemporaryDirectory()
>>> dataset = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), f"{tmp.name}/d")
>>> result = simulate(dataset, ["claude-code"], engine="reference")
>>> report = check_result(result, dataset)
>>> report.passed, report.findings.height
(True, 0)
>>> tmp.cleanup()

A *finding* is a row ``(check, continuity_id, policy, severity, detail)``; severity is
``fail`` (the invariant is broken) or ``warn`` (allowed by the spec but worth knowing).
``passed`` is true iff there is no ``fail``. The checks (``CHECKS``):

ADR-0011 checkpoint frames (``continuity_compaction_checkpoint_created``)

* ``wire_shape`` (fail) — every frame and every ``memory.compacted`` event, rendered with
  :func:`~workbench.conformance.schemas.to_wire`, validates against its JSON Schema.
* ``coverage_order`` (fail) — ``from_seq <= to_seq`` (both inclusive).
* ``cut_exists`` (fail, needs the dataset) — ``from_seq``/``to_seq`` are events of the
  continuity, and ``from_message_id``/``to_message_id`` name those events (the event's
  ``message_id``, or ``evt_<seq>`` when it has none, as the engine writes them).
* ``cut_is_message`` (fail) — when the policy requires message boundaries, ``to_seq`` is a
  model-visible message event (``continuity_message_appended``); checked on the dataset
  when given, else on the engine's own ``to_is_message`` column.
  ``cut_not_message_allowed`` (warn) — the same for policies with
  ``message_boundary=False`` (as-recorded / truncation replays): reported, not failed.
* ``tool_pair_split`` (fail, needs the dataset) — no cut falls between a model-visible
  tool call and its result (the call ``<= to_seq <`` the result).
* ``frame_append_only`` (fail) — frame seqs strictly increase in stream order, each frame
  comes after its cut (``seq > to_seq``) and never reuses a seq of a continuity event.
* ``cut_monotonic`` — compaction never resurrects compacted history: a frame whose
  ``to_seq`` is below the greatest earlier ``to_seq`` is a *fail* for ordinary frames and
  a *warn* for emergency frames (a checkpoint appended at a request that overflowed).
  Equal ``to_seq`` is allowed: ADR-0011 lets several checkpoints share a cut point, the
  later one superseding by stream order. (ADR-0011 itself would merely never select a
  backwards checkpoint — the selection takes the greatest ``to_seq`` — but for a replay
  whose context is compiled from the latest cut it means the compiled context and the
  ADR selection disagree.)
* ``artifact_immutable`` (fail) — one artifact id, one coverage: frames that reference the
  same ``summary_artifact_id`` agree on ``(thread, from/to seq, from/to message id)``.
  ``artifact_scope`` (fail) — an artifact id belongs to one continuity × policy.
* ``cut_rule_id`` (fail) — present on every frame and a single value within a policy.

RFC 0012 ``memory.compacted``

* ``event_per_artifact`` (fail) — every artifact a compaction produced (checkpoint frames
  and ``summary.merged`` rows with an artifact id) has exactly one ``memory.compacted``
  event with that ``outputId``, and no event names an output nobody produced.
* ``source_ids_limit`` (fail) — ``sourceIds`` is omitted when ``sourceCount > 100``
  (our profile of RFC 0012 §B's "MAY omit above 100"). ``source_ids_missing`` (warn) —
  omitted although ``sourceCount <= 100`` (allowed by the RFC; our engine lists them).
* ``source_ids_count`` (fail) — ``len(sourceIds) <= sourceCount``, ids distinct.
  ``source_ids_exhaustive`` (warn) — fewer ids than ``sourceCount`` although listed.
* ``provenance_tag`` — the output's ``compacted-from:<runId>`` tag: absent is a *warn*
  (§C is a SHOULD); an empty/whitespace id, or an id different from the run's id, is a
  *fail*.

Overflow truncations (``context.truncated``)

A truncation is the overflow's last resort, not a compaction: it appends no checkpoint
frame and produces no artifact, so no ``memory.compacted`` event is expected for it and the
checks above never see it. ``truncation_not_compaction`` (fail) — a truncation row carries
no frame seq and no artifact id, covers ``from_seq <= to_seq``, and follows a
``context.overflow`` at the same request.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from workbench.conformance.schemas import schema_errors, to_wire
from workbench.rundir.wire import (
    CHECKPOINT_EVENT,
    COMPACTED_EVENT,
    LOCAL_EVENT,
    MERGE_EVENT,
    OPAQUE_KIND,
    OVERFLOW_EVENT,
    SOURCE_IDS_LIMIT,
    TRUNCATION_EVENT,
)

FAIL, WARN = "fail", "warn"
TAG_PREFIX = "compacted-from:"
_TAG_ID = re.compile(r"^[^\s\x00-\x1f\x7f]+$")

CHECKS: dict[str, str] = {
    "wire_shape": "frames and memory.compacted events validate against their JSON Schemas",
    "coverage_order": "from_seq <= to_seq",
    "cut_exists": "from/to seq are events of the continuity and the message ids name them",
    "cut_is_message": "to_seq is a message event (policies requiring message boundaries)",
    "cut_not_message_allowed": "to_seq is not a message, allowed by the policy (finding only)",
    "tool_pair_split": "no cut between a tool call and its result",
    "frame_append_only": "frame seqs strictly increase, come after the cut, never reuse an event seq",
    "cut_monotonic": "to_seq never moves below an earlier frame's to_seq",
    "artifact_immutable": "same artifact id => same coverage",
    "artifact_scope": "an artifact id belongs to one continuity x policy",
    "cut_rule_id": "cut_rule_id present and stable within a policy",
    "event_per_artifact": "exactly one memory.compacted per produced artifact, none orphaned",
    "source_ids_limit": "sourceIds omitted when sourceCount > 100",
    "source_ids_missing": "sourceIds omitted although sourceCount <= 100 (finding only)",
    "source_ids_count": "len(sourceIds) <= sourceCount and ids distinct",
    "source_ids_exhaustive": "listed sourceIds fewer than sourceCount (finding only)",
    "provenance_tag": "compacted-from:<runId> present (warn) and well formed (fail)",
    "truncation_not_compaction": "an overflow truncation has no frame seq or artifact and follows an overflow",
}
FINDING_SCHEMA = {"check": "String", "continuity_id": "String", "policy": "String",
                  "severity": "String", "detail": "String"}


class InvariantReport(NamedTuple):
    findings: Any  # polars.DataFrame (check, continuity_id, policy, severity, detail)
    passed: bool

    def counts(self):
        """Findings per check and severity."""
        import polars as pl

        if self.findings.height == 0:
            return pl.DataFrame(schema={"check": pl.String, "severity": pl.String, "n": pl.UInt32})
        return self.findings.group_by("check", "severity").agg(n=pl.len()).sort("check", "severity")

    def failures(self):
        import polars as pl

        return self.findings.filter(pl.col("severity") == FAIL)


class _Findings:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, check: str, severity: str, detail: str, continuity_id=None, policy=None) -> None:
        assert check in CHECKS, check
        self.rows.append({"check": check, "continuity_id": continuity_id, "policy": policy,
                          "severity": severity, "detail": detail})

    def frame(self):
        import polars as pl

        schema = {k: getattr(pl, v) for k, v in FINDING_SCHEMA.items()}
        return pl.DataFrame(self.rows, schema=schema)


# --------------------------------------------------------------------------- inputs


def _dataset_events(dataset_events, continuities):
    """Dataset events as (continuity_id, seq, kind, flags, pair_seq[, message_id]), or None."""
    if dataset_events is None:
        return None
    if callable(getattr(dataset_events, "continuities", None)):  # a Dataset, not a frame
        ds = dataset_events
        dataset_events = ds.events(columns=["continuity", "seq", "kind", "flags", "pair_seq", "message_id"])
        continuities = ds.continuities() if continuities is None else continuities
    ev = dataset_events
    if "continuity_id" not in ev.columns:
        if continuities is None:
            raise ValueError("dataset events carry a continuity index only: pass continuities= "
                             "(the dataset's continuities frame) to map it to continuity_id")
        # an inner join: an event of a continuity the table does not list names no frame's continuity
        ev = ev.join(continuities.select("continuity", "continuity_id"), on="continuity")
    # without message ids the engine names every event evt_<seq> (_check_frames)
    return ev.select(["continuity_id", "seq", "kind", "flags", "pair_seq"]
                     + (["message_id"] if "message_id" in ev.columns else []))


def _message_boundary(policy: str, cut_rule: str | None, message_boundary, config) -> bool:
    if message_boundary is not None and policy in message_boundary:
        return bool(message_boundary[policy])
    if config:
        try:
            return bool(config["policies"][policy]["policy"]["trigger"]["message_boundary"])
        except (KeyError, TypeError):
            pass
    # a cut_rule_id lists the rule's non-default parameters (CutRule.rule_id)
    return not (cut_rule and "message_boundary=False" in cut_rule)


def _col(frame, name: str, default=None):
    return frame[name].to_list() if name in frame.columns else [default] * frame.height


# --------------------------------------------------------------------------- the checker


def check_invariants(events, dataset_events=None, *, continuities=None, run_id: str | None = None,
                     message_boundary: Mapping[str, bool] | None = None,
                     config: Mapping[str, Any] | None = None) -> InvariantReport:
    """Check a run's events frame (``SimulationResult.events`` / ``events.parquet``).

    ``dataset_events``: the dataset's events (a polars frame with ``continuity_id`` — or
    ``continuity`` plus ``continuities=`` — and ``seq``, ``kind``, ``flags``, ``pair_seq``,
    ``message_id``), or a :class:`~workbench.continuity.dataset.Dataset`. Without it the
    dataset-dependent checks (``cut_exists``, ``tool_pair_split``) are skipped and
    ``cut_is_message`` reads the engine's ``to_is_message`` column.
    ``run_id``: the run's id (default: each row's ``run_id``) for the provenance tag.
    ``message_boundary``: policy -> whether cuts must be messages (default: from
    ``config`` = ``SimulationResult.config``, else from the ``cut_rule_id``).
    """
    import polars as pl

    out = _Findings()
    if events is None or events.height == 0 or "event_type" not in events.columns:
        return InvariantReport(out.frame(), True)
    ds = _dataset_events(dataset_events, continuities)
    ev = events.with_row_index("__row")
    cps = ev.filter(pl.col("event_type") == CHECKPOINT_EVENT)
    mcs = ev.filter(pl.col("event_type") == COMPACTED_EVENT)
    # what produces a readable artifact besides checkpoint frames: merges, local checkpoints
    merges = ev.filter(pl.col("event_type").is_in([MERGE_EVENT, LOCAL_EVENT]))

    _check_wire(cps, mcs, out)
    _check_frames(ev, cps, ds, out, message_boundary, config)
    _check_artifacts(cps, merges, mcs, out)
    _check_cut_rule(cps, out)
    _check_source_ids(mcs, out)
    _check_tags(mcs, run_id, out)
    _check_truncations(ev, out)
    findings = out.frame()
    return InvariantReport(findings, bool((findings["severity"] != FAIL).all()))


def check_result(result, dataset=None, **kwargs) -> InvariantReport:
    """:func:`check_invariants` on a :class:`~workbench.engine.run.SimulationResult`.

    ``dataset``: a Dataset, a dataset directory, or None (dataset checks skipped).
    """
    if isinstance(dataset, (str, Path)):
        from workbench.continuity.dataset import load_dataset

        dataset = load_dataset(dataset)
    kwargs.setdefault("run_id", result.run_id)
    kwargs.setdefault("config", result.config)
    return check_invariants(result.events, dataset, **kwargs)


def _check_wire(cps, mcs, out: _Findings) -> None:
    for part, kind in ((cps, CHECKPOINT_EVENT), (mcs, COMPACTED_EVENT)):
        for r in part.iter_rows(named=True):
            errs = schema_errors(kind, to_wire(r))
            if errs:
                ref = f"frame seq {r.get('frame_seq')}" if kind == CHECKPOINT_EVENT else f"outputId {r.get('outputId')}"
                out.add("wire_shape", FAIL, f"{kind} ({ref}): " + "; ".join(errs),
                        r.get("continuity_id"), r.get("policy"))


def _emergency_rows(ev) -> set[int]:
    """Row indices of checkpoint frames appended after an overflow at the same request."""
    import polars as pl

    marks = ev.filter(pl.col("event_type").is_in([OVERFLOW_EVENT, CHECKPOINT_EVENT]))
    out: set[int] = set()
    seen: set[tuple] = set()
    for r in marks.select("__row", "continuity_id", "policy", "request", "event_type").iter_rows():
        key = (r[1], r[2], r[3])
        if r[4] == OVERFLOW_EVENT:
            seen.add(key)
        elif key in seen:
            out.add(r[0])
    return out


def _check_frames(ev, cps, ds, out: _Findings, message_boundary, config) -> None:
    import polars as pl

    from workbench.continuity.enums import EventFlag, EventKind

    if cps.height == 0:
        return
    emergency = _emergency_rows(ev)
    by_cont: dict[str, dict[str, Any]] = {}
    if ds is not None:
        wanted = set(cps["continuity_id"].unique().to_list())
        for (cid,), part in ds.filter(pl.col("continuity_id").is_in(list(wanted))).group_by("continuity_id"):
            part = part.sort("seq")
            seq = part["seq"].to_numpy()
            kind = part["kind"].to_numpy()
            side = (part["flags"].to_numpy() & int(EventFlag.SIDECHAIN)) != 0
            mids = _col(part, "message_id")
            # a call whose pair_seq is missing or not after it can never straddle a cut
            calls = (kind == int(EventKind.TOOL_CALL)) & ~side
            by_cont[cid] = {
                "index": {int(s): i for i, s in enumerate(seq)},
                "is_message": (kind == int(EventKind.MESSAGE)) & ~side,
                "mid": [mids[i] or f"evt_{int(s)}" for i, s in enumerate(seq)],
                "call_seq": seq[calls], "result_seq": part["pair_seq"].to_numpy()[calls],
            }
    has_flag = "to_is_message" in cps.columns
    for (cid, pol), part in cps.group_by("continuity_id", "policy", maintain_order=True):
        part = part.sort("__row")
        cut_rule = next((c for c in _col(part, "cut_rule_id") if c), None)
        need_msg = _message_boundary(pol, cut_rule, message_boundary, config)
        cont = by_cont.get(cid)
        if ds is not None and cont is None:
            out.add("cut_exists", FAIL, f"continuity {cid!r} is not in the dataset", cid, pol)
        prev_frame: int | None = None
        max_to: int | None = None
        for r in part.iter_rows(named=True):
            fs, f, t = r.get("frame_seq"), r.get("from_seq"), r.get("to_seq")
            ref = f"frame seq {fs}"
            if f is not None and t is not None and f > t:
                out.add("coverage_order", FAIL, f"{ref}: from_seq {f} > to_seq {t}", cid, pol)
            # append-only
            if fs is not None:
                if prev_frame is not None and fs <= prev_frame:
                    out.add("frame_append_only", FAIL,
                            f"{ref} does not follow the previous frame (seq {prev_frame})", cid, pol)
                if t is not None and fs <= t:
                    out.add("frame_append_only", FAIL, f"{ref} precedes or equals its cut (to_seq {t})", cid, pol)
                if cont is not None and int(fs) in cont["index"]:
                    out.add("frame_append_only", FAIL, f"{ref} reuses the seq of a continuity event", cid, pol)
                prev_frame = fs if prev_frame is None else max(prev_frame, fs)
            if t is None:
                continue
            # monotonic cut
            if max_to is not None and t < max_to:
                emerg = r["__row"] in emergency
                out.add("cut_monotonic", WARN if emerg else FAIL,
                        f"{ref}{' (emergency)' if emerg else ''}: to_seq {t} < earlier to_seq {max_to}", cid, pol)
            max_to = t if max_to is None else max(max_to, t)
            # message boundary and ids
            is_msg: bool | None = None
            if cont is not None:
                ends = [("to", t, r.get("to_message_id"))]
                if f is not None:
                    ends.append(("from", f, r.get("from_message_id")))
                for name, s, mid in ends:
                    i = cont["index"].get(int(s))
                    if i is None:
                        out.add("cut_exists", FAIL, f"{ref}: {name}_seq {s} is not an event of the continuity",
                                cid, pol)
                        continue
                    if mid is not None and mid != cont["mid"][i]:
                        out.add("cut_exists", FAIL, f"{ref}: {name}_message_id {mid!r} does not name event "
                                f"{s} ({cont['mid'][i]!r})", cid, pol)
                    if name == "to":
                        is_msg = bool(cont["is_message"][i])
                opened = int(np.count_nonzero((cont["call_seq"] <= t) & (cont["result_seq"] > t)))
                if opened > 0:
                    out.add("tool_pair_split", FAIL,
                            f"{ref}: cut at to_seq {t} leaves {opened} tool call(s) before it whose result "
                            "comes after it", cid, pol)
            elif has_flag and r.get("to_is_message") is not None:
                is_msg = bool(r["to_is_message"])
            if is_msg is not None and not is_msg:
                if need_msg:
                    out.add("cut_is_message", FAIL, f"{ref}: to_seq {t} is not a message event", cid, pol)
                else:
                    out.add("cut_not_message_allowed", WARN,
                            f"{ref} ({r.get('summary_kind')}): to_seq {t} is not a message event; the policy "
                            "does not require message boundaries", cid, pol)


def _coverage(r: Mapping[str, Any]) -> tuple:
    return (r.get("continuity_id"), r.get("from_seq"), r.get("to_seq"), r.get("from_message_id"),
            r.get("to_message_id"))


def _check_artifacts(cps, merges, mcs, out: _Findings) -> None:
    coverage: dict[str, set] = defaultdict(set)
    scopes: dict[str, set] = defaultdict(set)
    produced: dict[tuple, list[str]] = defaultdict(list)  # (cid, pol) -> artifact ids
    for part in (cps, merges):
        for r in part.iter_rows(named=True):
            art = r.get("summary_artifact_id")
            if art is None:
                continue
            key = (r.get("continuity_id"), r.get("policy"))
            scopes[art].add(key)
            if r["event_type"] == CHECKPOINT_EVENT:
                coverage[art].add(_coverage(r))
                if r.get("summary_kind") != OPAQUE_KIND:  # a provider item is metadata, not memory
                    produced[key].append(art)
            elif art not in produced[key]:
                produced[key].append(art)
    for art, covs in coverage.items():
        if len(covs) > 1:
            cid, pol = next(iter(sorted(scopes[art], key=str)))
            shown = "; ".join(f"{c[1]}..{c[2]}" for c in sorted(covs, key=str))
            out.add("artifact_immutable", FAIL, f"artifact {art} referenced with {len(covs)} coverages: {shown}",
                    cid, pol)
    for art, sc in scopes.items():
        if len(sc) > 1:
            names = ", ".join(f"{c}/{p}" for c, p in sorted(sc, key=str))
            out.add("artifact_scope", FAIL, f"artifact {art} appears in several continuity x policy scopes: {names}")
    events_by: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in mcs.iter_rows(named=True):
        events_by[(r.get("continuity_id"), r.get("policy"))][r.get("outputId")] += 1
    for key in sorted(set(produced) | set(events_by), key=str):
        cid, pol = key
        arts = dict.fromkeys(produced.get(key, []))
        seen = events_by.get(key, {})
        for art in arts:
            n = seen.get(art, 0)
            if n != 1:
                out.add("event_per_artifact", FAIL,
                        f"artifact {art}: {n} memory.compacted events (expected exactly 1)", cid, pol)
        for oid, n in seen.items():
            if oid not in arts:
                out.add("event_per_artifact", FAIL,
                        f"memory.compacted outputId {oid!r} ({n} event(s)) was produced by no checkpoint or merge",
                        cid, pol)


def _check_cut_rule(cps, out: _Findings) -> None:
    if cps.height == 0:
        return
    per_policy: dict[str, set] = defaultdict(set)
    for r in cps.iter_rows(named=True):
        rule = r.get("cut_rule_id")
        if not rule:
            out.add("cut_rule_id", FAIL, f"frame seq {r.get('frame_seq')}: cut_rule_id missing",
                    r.get("continuity_id"), r.get("policy"))
        else:
            per_policy[r.get("policy")].add(rule)
    for pol, rules in per_policy.items():
        if len(rules) > 1:
            out.add("cut_rule_id", FAIL, f"{len(rules)} cut_rule_ids within one policy: {sorted(rules)}",
                    None, pol)


def _check_source_ids(mcs, out: _Findings) -> None:
    for r in mcs.iter_rows(named=True):
        ids, count = r.get("sourceIds"), r.get("sourceCount")
        cid, pol, oid = r.get("continuity_id"), r.get("policy"), r.get("outputId")
        if count is None:
            continue  # wire_shape reports it
        if ids is not None:
            ids = list(ids)
            if count > SOURCE_IDS_LIMIT:
                out.add("source_ids_limit", FAIL,
                        f"outputId {oid}: sourceIds present ({len(ids)}) with sourceCount {count} > "
                        f"{SOURCE_IDS_LIMIT}", cid, pol)
            if len(ids) > count:
                out.add("source_ids_count", FAIL, f"outputId {oid}: {len(ids)} sourceIds > sourceCount {count}",
                        cid, pol)
            elif len(ids) < count:
                out.add("source_ids_exhaustive", WARN,
                        f"outputId {oid}: {len(ids)} sourceIds listed of sourceCount {count}", cid, pol)
            if len(set(ids)) != len(ids):
                out.add("source_ids_count", FAIL, f"outputId {oid}: duplicate sourceIds", cid, pol)
        elif 0 < count <= SOURCE_IDS_LIMIT:
            out.add("source_ids_missing", WARN,
                    f"outputId {oid}: sourceIds omitted with sourceCount {count} <= {SOURCE_IDS_LIMIT}", cid, pol)


def provenance_tag_problems(tags, run_id: str | None) -> tuple[str, list[str]]:
    """(status, problems) for an output's tags.

    status: ``"ok"``; ``"absent"`` (no ``compacted-from:`` tag: §C is a SHOULD);
    ``"duplicate"`` (several well-formed tags); ``"malformed"`` (an empty or
    whitespace-bearing id, or an id that is not ``run_id`` when given).
    """
    tags = list(tags or [])
    mine = [t for t in tags if isinstance(t, str) and t.startswith(TAG_PREFIX)]
    if not mine:
        return "absent", [f"no {TAG_PREFIX}<runId> tag"]
    problems = []
    for t in mine:
        rid = t[len(TAG_PREFIX):]
        if not rid or not _TAG_ID.match(rid):
            problems.append(f"malformed tag {t!r}: the run id must be a non-empty opaque string without "
                            "whitespace or control characters")
        elif run_id is not None and rid != run_id:
            problems.append(f"tag {t!r} names run {rid!r}, not this run ({run_id!r})")
    if problems:
        return "malformed", problems
    if len(mine) > 1:
        return "duplicate", [f"{len(mine)} {TAG_PREFIX} tags on one output"]
    return "ok", []


def _check_tags(mcs, run_id: str | None, out: _Findings) -> None:
    if mcs.height == 0:
        return
    if "tags" not in mcs.columns:
        for (cid, pol), part in mcs.group_by("continuity_id", "policy", maintain_order=True):
            out.add("provenance_tag", WARN, f"{part.height} outputs carry no tags at all", cid, pol)
        return
    for r in mcs.iter_rows(named=True):
        status, problems = provenance_tag_problems(r.get("tags"), run_id if run_id is not None else r.get("run_id"))
        if status == "ok":
            continue
        sev = FAIL if status == "malformed" else WARN
        out.add("provenance_tag", sev, f"outputId {r.get('outputId')}: " + "; ".join(problems),
                r.get("continuity_id"), r.get("policy"))


def _check_truncations(ev, out: _Findings) -> None:
    import polars as pl

    marks = ev.filter(pl.col("event_type").is_in([OVERFLOW_EVENT, TRUNCATION_EVENT]))
    overflowed: set[tuple] = set()
    for r in marks.sort("__row").iter_rows(named=True):
        cid, pol = r.get("continuity_id"), r.get("policy")
        key = (cid, pol, r.get("request"))
        if r["event_type"] == OVERFLOW_EVENT:
            overflowed.add(key)
            continue
        ref = f"truncation at request {r.get('request')}"
        if r.get("frame_seq") is not None or r.get("summary_artifact_id") is not None:
            out.add("truncation_not_compaction", FAIL,
                    f"{ref} carries a checkpoint frame seq or an artifact id: a truncation is not a compaction",
                    cid, pol)
        f, t = r.get("from_seq"), r.get("to_seq")
        if f is None or t is None or f > t:
            out.add("truncation_not_compaction", FAIL, f"{ref}: dropped span {f}..{t} is not a range", cid, pol)
        if key not in overflowed:
            out.add("truncation_not_compaction", FAIL, f"{ref} follows no context.overflow of that request",
                    cid, pol)
