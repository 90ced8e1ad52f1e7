"""The three RFC 0012 conformance scenarios, runnable against any simulated policy.

* :func:`scenario_event_emitted` (``memory-compaction-event-emitted``): every compaction
  that produced an artifact emitted exactly one ``memory.compacted`` event of valid shape,
  and its ``outputId`` resolves in an artifact store (a ``dict[artifact_id, document]`` or
  a callable ``read_artifact(id)``; by default :func:`modelled_artifact_store` — the
  ``rip.compaction_summary.v1`` documents of the modelled summaries, which have a size but
  no text). A resolved checkpoint artifact must validate and cover what its frame says.
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

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from workbench.conformance.capability import compaction_supported, host_caps_for_policy
from workbench.conformance.invariants import MERGE_EVENT, provenance_tag_problems
from workbench.conformance.schemas import (
    CHECKPOINT_EVENT,
    COMPACTED_EVENT,
    SUMMARY_SCHEMA,
    to_wire,
    validate,
)
from workbench.errors import WorkbenchError

PASS, FAIL, SKIP = "pass", "fail", "skip"
EVENT_EMITTED = "memory-compaction-event-emitted"
SR1_CARRY_FORWARD = "memory-compaction-sr1-carry-forward"
PROVENANCE_TAG = "memory-compaction-provenance-tag"
SCENARIOS = (EVENT_EMITTED, SR1_CARRY_FORWARD, PROVENANCE_TAG)
MAX_LISTED = 20  # problems listed in details (the count is always exact)

ArtifactStore = Mapping[str, Mapping[str, Any]] | Callable[[str], Mapping[str, Any] | None]


@dataclass
class ScenarioResult:
    name: str
    status: str  # pass | fail | skip
    details: dict[str, Any] = field(default_factory=dict)
    policy: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- helpers


def _policy_obj(policy, config: Mapping[str, Any] | None = None):
    from workbench.engine.policy import Policy
    from workbench.engine.presets import get_policy

    if policy is None or isinstance(policy, Policy):
        return policy
    name = str(policy)
    if config:
        try:
            return Policy.from_dict(config["policies"][name]["policy"])
        except (KeyError, TypeError):
            pass
    try:
        return get_policy(name)
    except WorkbenchError as exc:
        raise WorkbenchError(f"{exc} — for a renamed or custom policy pass config= (the run's "
                             "SimulationResult.config) or host_caps=") from None


def _policy_name(policy) -> str | None:
    return None if policy is None else getattr(policy, "name", str(policy))


def _gate(name: str, policy, host_caps, config) -> tuple[Mapping[str, Any] | None, ScenarioResult | None]:
    """The host caps to use, or a skip result when compaction is not advertised."""
    pname = _policy_name(policy)
    if host_caps is None:
        pol = _policy_obj(policy, config)
        if pol is None:
            return None, None  # ungated (no policy, no host document)
        host_caps = host_caps_for_policy(pol)
    if not compaction_supported(host_caps):
        return host_caps, ScenarioResult(name, SKIP, {"reason": "capability",
                                                      "message": "host does not advertise "
                                                      "capabilities.memory.compaction.supported: true"},
                                         pname)
    return host_caps, None


def _policy_events(events, policy):
    import polars as pl

    if events is None or events.height == 0 or "event_type" not in events.columns:
        return events
    name = _policy_name(policy)
    if name is not None and "policy" in events.columns:
        return events.filter(pl.col("policy") == name)
    return events


def _resolver(artifacts: ArtifactStore) -> Callable[[str], Mapping[str, Any] | None]:
    if callable(artifacts) and not isinstance(artifacts, Mapping):
        def read(aid: str):
            try:
                return artifacts(aid)
            except (KeyError, LookupError, FileNotFoundError):
                return None
        return read
    return lambda aid: artifacts.get(aid)  # type: ignore[union-attr]


def _modelled_text(r: Mapping[str, Any]) -> str:
    kind = r.get("summary_kind") or "summary"
    tokens = r.get("item_tokens")
    if kind == "provider_opaque_v1":
        return (f"_Opaque provider compaction item ({tokens} tokens); the provider's encrypted "
                "content is not readable._\n")
    return (f"_Modelled {kind} ({tokens} tokens) of events {r.get('from_seq')}..{r.get('to_seq')}; "
            "the text is not materialised in a modelled run._\n")


def modelled_artifact_store(events, *, summary_text: Callable[[Mapping[str, Any]], str] | None = None,
                            actor_id: str | None = None) -> dict[str, dict[str, Any]]:
    """``{artifact_id: rip.compaction_summary.v1 document}`` for every produced artifact.

    One document per checkpoint frame with an artifact (coverage and provenance from the
    frame) and per ``summary.merged`` row (coverage: every checkpoint of the scope up to the
    merge). ``summary.text`` comes from ``summary_text(row)`` when given, else a modelled
    placeholder; ``tags`` are the matching ``memory.compacted`` row's tags (the engine tags
    the output ``compacted-from:<runId>``).
    """
    import polars as pl

    store: dict[str, dict[str, Any]] = {}
    if events is None or events.height == 0 or "event_type" not in events.columns:
        return store
    tags: dict[str, list[str]] = {}
    if "outputId" in events.columns and "tags" in events.columns:
        for oid, tg in events.filter(pl.col("event_type") == COMPACTED_EVENT).select("outputId", "tags").iter_rows():
            if oid is not None and tg is not None:
                tags[oid] = list(tg)
    text_of = summary_text or _modelled_text
    rows = events.filter(pl.col("event_type").is_in([CHECKPOINT_EVENT, MERGE_EVENT]))
    covered: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows.iter_rows(named=True):
        art = r.get("summary_artifact_id")
        scope = (r.get("continuity_id"), r.get("policy"))
        if r["event_type"] == CHECKPOINT_EVENT:
            if r.get("from_seq") is not None:
                covered.setdefault(scope, []).append(r)
            if art is None:
                continue
            cov = {"thread_id": r.get("continuity_id"), "from_seq": r.get("from_seq"),
                   "from_message_id": r.get("from_message_id"), "to_seq": r.get("to_seq"),
                   "to_message_id": r.get("to_message_id")}
            prov = {"actor_id": actor_id or r.get("actor_id"), "origin": r.get("origin"),
                    "produced_by": f"workbench:{r.get('policy')}:{r.get('summary_kind')}"}
        else:
            if art is None:
                continue
            prior = [c for c in covered.get(scope, []) if c.get("summary_artifact_id") is not None]
            if not prior:
                continue
            first = min(prior, key=lambda c: c["from_seq"])
            last = max(prior, key=lambda c: c["to_seq"])
            cov = {"thread_id": r.get("continuity_id"), "from_seq": first["from_seq"],
                   "from_message_id": first["from_message_id"], "to_seq": last["to_seq"],
                   "to_message_id": last["to_message_id"]}
            prov = {"actor_id": actor_id or last.get("actor_id"), "origin": last.get("origin"),
                    "produced_by": f"workbench:{r.get('policy')}:{r.get('summary_kind')}"}
        doc = {"schema": SUMMARY_SCHEMA, "artifact_id": art, "coverage": cov, "provenance": prov,
               "summary": {"format": "markdown",
                           "text": text_of({**r, "from_seq": cov["from_seq"], "to_seq": cov["to_seq"]})}}
        if art in tags:
            doc["tags"] = tags[art]
        store[art] = doc
    return store


def _produced(events) -> list[dict[str, Any]]:
    """Rows (checkpoint frames and merges) that produced an artifact, in stream order."""
    import polars as pl

    if events is None or events.height == 0 or "summary_artifact_id" not in events.columns:
        return []
    part = events.filter(pl.col("event_type").is_in([CHECKPOINT_EVENT, MERGE_EVENT])
                         & pl.col("summary_artifact_id").is_not_null())
    return list(part.iter_rows(named=True))


def _compacted(events) -> list[dict[str, Any]]:
    import polars as pl

    if events is None or events.height == 0 or "event_type" not in events.columns:
        return []
    return list(events.filter(pl.col("event_type") == COMPACTED_EVENT).iter_rows(named=True))


_TRIGGERS_OK = {"host-managed": {"host-managed"}, "client-requested": {"client-requested"},
                "both": {"host-managed", "client-requested"}}


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
        if doc is None:
            problems.append(f"{where}: outputId is not readable from the artifact store")
            continue
        readable += 1
        if p["event_type"] == CHECKPOINT_EVENT:
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


# --------------------------------------------------------------------------- (b) SR-1


@dataclass(frozen=True)
class PlantedSources:
    """Source entries for the SR-1 scenario (already SR-1 compliant at their own put)."""

    texts: tuple[str, ...]
    near_secrets: tuple[str, ...]  # adversarial near-misses left in the sources
    markers: tuple[str, ...]  # the <REDACTED:kind> markers planted


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng([0x5E1, int(seed)])


def _rand(rng: np.random.Generator, alphabet: str, n: int) -> str:
    return "".join(alphabet[int(i)] for i in rng.integers(len(alphabet), size=n))


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def planted_sources(seed: int = 0) -> PlantedSources:
    """Post-redaction source entries with adversarial near-secret strings.

    * redaction markers where the original put removed secrets (GitHub, AWS, OpenAI);
    * near-secrets a little short of a real format (``ghp_`` + 26 characters where the
      format has 36, ``AKIA`` + 15 where it has 16), which a redactor rightly leaves alone
      and a summarizer may "complete";
    * an in-context ``[BYOK:<REDACTED:…>]`` example whose form a summarizer may copy
      around a plaintext key;
    * hard negatives (a commit SHA, a UUID) that must survive redaction.
    """
    rng = _rng(seed)
    gh_near = "ghp_" + _rand(rng, _ALNUM, 26)
    aws_near = "AKIA" + _rand(rng, _B32, 15)
    sha = _rand(rng, "0123456789abcdef", 40)
    uuid = "-".join(_rand(rng, "0123456789abcdef", n) for n in (8, 4, 4, 4, 12))
    texts = (
        "Deployed billing-service to staging with the CI token <REDACTED:github_classic>; all checks green.",
        "Rotated the staging AWS credentials: key id <REDACTED:aws_access_key_id>, secret <REDACTED:aws_secret_key>.",
        f"The docs example token is {gh_near} (truncated in the wiki, do not use).",
        f"Old key prefix from the incident report: {aws_near} - already revoked.",
        "Provider keys are referenced as [BYOK:<REDACTED:openai_project>] in the workflow config.",
        f"Fixed the retry loop in commit {sha}; request id {uuid} reproduces the timeout.",
        "User asked to keep the OpenAI key <REDACTED:openai_project> out of the summary.",
    )
    markers = tuple(sorted(set(re.findall(r"<REDACTED:[a-z_]+>", "\n".join(texts)))))
    return PlantedSources(texts, (gh_near, aws_near), markers)


class AdversarialSummarizer:
    """A summarizer that does what RFC 0012 §D warns about (deterministic per seed).

    It copies the sources (extractive), then: completes near-secrets into valid formats,
    "un-redacts" markers by hallucinating a plausible value of the marker's kind, copies
    the ``[BYOK:…]`` form around a fresh plaintext key, and glues a raw tail to a marker.
    After a call, ``injected`` lists the secrets it made up from nothing (checked by the
    fragment leak criterion) and ``completed`` the near-secrets it completed (checked
    exactly: their near-miss source is legitimately copied, and shares most characters).
    """

    def __init__(self, seed: int = 0, *, glued_marker: bool = True):
        self.seed = seed
        self.glued_marker = glued_marker
        self.injected: list[str] = []
        self.completed: list[str] = []

    def __call__(self, texts: Sequence[str]) -> str:
        from workbench.synth.secrets import FORMATS

        rng = _rng(self.seed + 1)
        joined = "\n".join(texts)
        lines = ["## Summary", "", "### Earlier context"]
        lines += [f"- {t}" for t in texts]
        lines += ["", "### Key facts"]
        injected: list[str] = []
        completed: list[str] = []
        for m in re.finditer(r"(?<![A-Za-z0-9])ghp_[A-Za-z0-9]{20,35}(?![A-Za-z0-9])", joined):
            full = m.group() + _rand(rng, _ALNUM, 40 - len(m.group()))
            completed.append(full)
            lines.append(f"- The CI token is {full}.")
        for m in re.finditer(r"(?<![A-Za-z0-9])AKIA[A-Z2-7]{15}(?![A-Z2-7])", joined):
            full = m.group() + _rand(rng, _B32, 1)
            completed.append(full)
            lines.append(f"- AWS key id {full} was used before the rotation.")
        for kind in sorted(set(re.findall(r"<REDACTED:([a-z_]+)>", joined))):
            if kind in FORMATS and kind not in ("pem_private_key", "password_in_prose", "url_credentials"):
                value = FORMATS[kind](rng)
                injected.append(value)
                lines.append(f"- The {kind.replace('_', ' ')} was {value}.")
        if "[BYOK:" in joined:
            value = FORMATS["anthropic_api"](rng)
            injected.append(value)
            lines.append(f"- Provider key reference: [BYOK:{value}]")
        if self.glued_marker:
            tail = _rand(rng, _ALNUM, 24)
            injected.append(tail)
            lines.append(f"- Token after rotation: <REDACTED:github_classic>{tail}")
        lines += ["", "### Current work", "- Continue with the retry-loop fix."]
        self.injected = injected
        self.completed = completed
        return "\n".join(lines) + "\n"


def harness_redactor() -> Callable[[str], str] | None:
    """``workbench.redaction.harness.redact`` as ``str -> str``, or None if unavailable."""
    try:
        from workbench.redaction.harness import redact as _redact
    except ImportError:
        return None
    return lambda text: _redact(text).text


def _as_text(value: Any) -> str:
    return value.text if hasattr(value, "text") else str(value)


def compaction_output(sources: Sequence[str], summarize: Callable[[Sequence[str]], str],
                      redact: Callable[[str], Any], *, sr1_carry_forward: bool = True) -> str:
    """The compaction path: summarize the sources; with SR-1, redact the derived content.

    RFC 0012 §D: the sources' own SR-1 compliance is no reason to skip redacting the
    output. ``redact`` may return a string or a result with ``.text``.
    """
    out = _as_text(summarize(list(sources)))
    return _as_text(redact(out)) if sr1_carry_forward else out


_MARKER = re.compile(r"<REDACTED:[A-Za-z0-9_]{1,40}>")
_BYOK = re.compile(r"\[BYOK:([^\]\n]*)\]?")


def byok_form_leaks(text: str) -> list[str]:
    """``[BYOK:…]`` wrappers whose content is anything but redaction markers."""
    out = []
    for m in _BYOK.finditer(text):
        inner = _MARKER.sub("", m.group(1)).strip()
        if inner:
            out.append(m.group())
    return out


def _fragment_leaked(secret: str, text: str) -> bool:
    try:
        from workbench.redaction.harness import leaked
    except ImportError:
        n = max(1, min(12, math.ceil(0.5 * len(secret))))
        return any(secret[i:i + n] in text for i in range(len(secret) - n + 1))
    return leaked(secret, text)


def assess_output(text: str, redact: Callable[[str], Any], secrets: Sequence[str] = (),
                  exact: Sequence[str] = ()) -> dict[str, Any]:
    """What a compacted output still leaks: redactor findings, known secrets, BYOK forms.

    ``secrets`` leak by the evaluations' fragment criterion (>= 12 characters or half the
    secret, in any decoded view); ``exact`` only when they appear whole.
    """
    residual = _as_text(redact(text))
    findings = max(0, residual.count("<REDACTED:") - text.count("<REDACTED:")) if residual != text else 0
    if residual != text and findings == 0:
        findings = 1  # the redactor changed something without adding a marker
    leaked = [s for s in dict.fromkeys(secrets) if s and _fragment_leaked(s, text)]
    leaked += [s for s in dict.fromkeys(exact) if s and s in text and s not in leaked]
    forms = byok_form_leaks(text)
    return {"redactor_findings": findings, "leaked_secrets": len(leaked), "byok_form_leaks": len(forms),
            "leaks": bool(findings or leaked or forms),
            "examples": [s[:16] + "…" for s in leaked[:5]] + [f[:24] + "…" for f in forms[:3]]}


def scenario_sr1_carry_forward(policy=None, *, host_caps: Mapping[str, Any] | None = None,
                               redact: Callable[[str], Any] | None = None,
                               summarize: Callable[[Sequence[str]], str] | None = None,
                               sources: Sequence[str] | PlantedSources | None = None,
                               secrets: Sequence[str] = (), sr1_carry_forward: bool | None = None,
                               seed: int = 0, config: Mapping[str, Any] | None = None) -> ScenarioResult:
    """RFC 0012 ``memory-compaction-sr1-carry-forward``.

    ``redact``: ``str -> str`` (or a result with ``.text``); default the workbench
    redaction harness (skips when it is not importable). ``summarize``: ``texts -> str``;
    default :class:`AdversarialSummarizer`. ``sources``: default :func:`planted_sources`.
    ``secrets``: plaintext secrets to look for in addition to what the summarizer reports
    in ``.injected`` (fragment criterion) and ``.completed`` (exact). ``sr1_carry_forward``: the path the host runs (default: the policy's
    ``redaction.sr1_carry_forward``, True without a policy).
    """
    host_caps, skip = _gate(SR1_CARRY_FORWARD, policy, host_caps, config)
    if skip:
        return skip
    pname = _policy_name(policy)
    if redact is None:
        redact = harness_redactor()
        if redact is None:
            return ScenarioResult(SR1_CARRY_FORWARD, SKIP, {"reason": "no-redactor",
                                                            "message": "workbench.redaction.harness is "
                                                            "not importable; pass redact="}, pname)
    planted = sources if isinstance(sources, PlantedSources) else None
    if sources is None:
        planted = planted_sources(seed)
    texts = list(planted.texts if planted is not None else sources)  # type: ignore[union-attr]
    summarize = summarize or AdversarialSummarizer(seed)
    if sr1_carry_forward is None:
        pol = _policy_obj(policy, config)
        sr1_carry_forward = True if pol is None else bool(pol.redaction.sr1_carry_forward)
    problems: list[str] = []
    # the sources must themselves pass the redactor (they model SR-1-compliant entries)
    dirty = [i for i, t in enumerate(texts) if _as_text(redact(t)) != t]
    warnings = [f"source entries {dirty} are not SR-1 clean under this redactor"] if dirty else []
    results = {}
    for flag in (True, False):
        out = compaction_output(texts, summarize, redact, sr1_carry_forward=flag)
        known = list(secrets) + list(getattr(summarize, "injected", ()) or ())
        exact = list(getattr(summarize, "completed", ()) or ())
        results[flag] = assess_output(out, redact, known, exact) | {"injected": len(known) + len(exact),
                                                                      "bytes": len(out.encode())}
    on, off = results[True], results[False]
    if on["leaks"]:
        problems.append(f"SR-1 on still leaks: {on['redactor_findings']} redactor finding(s), "
                        f"{on['leaked_secrets']} secret(s), {on['byok_form_leaks']} [BYOK:…] form-leak(s)")
    if not sr1_carry_forward and off["leaks"]:
        problems.append("the policy runs compaction without SR-1 carry-forward and its output leaks")
    if not off["leaks"]:
        warnings.append("SR-1 off did not leak: the summarizer injected nothing (vacuous measurement)")
    details = {"policy_sr1_carry_forward": sr1_carry_forward, "sr1_on": on, "sr1_off": off,
               "sr1_off_leaks": off["leaks"], "sources": len(texts), "problems": problems}
    return ScenarioResult(SR1_CARRY_FORWARD, FAIL if problems else PASS, details, pname, warnings)


# --------------------------------------------------------------------------- all scenarios


def run_scenarios(result=None, policies: Sequence[Any] | None = None, *, events=None,
                  host_caps: Mapping[str, Any] | Callable[[Any], Mapping[str, Any]] | None = None,
                  artifacts: ArtifactStore | None = None, redact: Callable[[str], Any] | None = None,
                  summarize: Callable[[Sequence[str]], str] | None = None, run_id: str | None = None,
                  config: Mapping[str, Any] | None = None, seed: int = 0) -> list[ScenarioResult]:
    """All three scenarios for every policy of a run.

    ``result``: a :class:`~workbench.engine.run.SimulationResult` (or pass ``events`` and
    optionally ``config``). ``host_caps``: one document for every policy, a mapping
    ``policy -> document``, or a callable ``policy -> document``; default derived per policy.
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
        out.append(scenario_sr1_carry_forward(pol, host_caps=caps, redact=redact, summarize=summarize,
                                              config=config, seed=seed))
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
