"""The modelled summarizer: determinism, label probabilities, hallucination, size, shape."""

from __future__ import annotations

import dataclasses
import random
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from workbench.errors import WorkbenchError
from workbench.summarize import (
    SpanEvent,
    SpanLabel,
    SummarizerConfigError,
    SummaryRequest,
    get_summarizer,
)
from workbench.summarize.modelled import ModelledSummarizer
from workbench.synth import secrets as sec
from workbench.synth.facts import plant_fact

_TEXT = ("the parser returns early when config is missing so we fall back to defaults and log "
         "a warning before retrying the request with backoff while the cache layer stores each "
         "parsed result keyed by path and the worker marks the task done")
_WORDS = tuple(_TEXT.split())
_FILLER = (
    "Please fix the flaky retry test in tests/test_retry.py before the release.",
    "Running pytest again shows 3 failures in the billing module.",
    "We decided to keep the old schema until the migration finishes.",
    "Next step: update docs/runbook.md with the new rollback procedure.",
    "Error: connection refused when calling the ledger service on startup.",
    "The cache layer now uses a TTL per tenant, which fixes the stale reads.",
)
# one-line, untransformed secrets keep "is the surface in the text" checks exact
_SECRET_FORMATS = tuple(f for f in sec.SECRET_FORMATS if f != "pem_private_key")


def _sentence(rng: np.random.Generator) -> str:
    n = int(rng.integers(8, 16))
    return " ".join(_WORDS[i] for i in rng.integers(0, len(_WORDS), n)).capitalize() + "."


def make_request(seed: int, *, n_events: int = 10, n_facts: int = 3, n_secrets: int = 3,
                 target_tokens: int = 400, transforms=("none",), artifact: str | None = None,
                 sentences: int = 2) -> SummaryRequest:
    """A span of user/assistant messages with planted facts and secrets, labels exact."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(n_events):
        body = " ".join([_FILLER[int(rng.integers(len(_FILLER)))]]
                        + [_sentence(rng) for _ in range(sentences)])
        texts.append(body)
    plants: list[tuple[int, str, str, str, str, bool, int, int]] = []
    for k in range(n_facts):
        f = plant_fact(rng, k)
        plants.append((int(rng.integers(n_events)), f"{f.fact_id}-s{seed}", f.kind, f.answer,
                       f.answer, True, f.start, f.end, f.text))
    for _ in range(n_secrets):
        while True:
            fmt = _SECRET_FORMATS[int(rng.integers(len(_SECRET_FORMATS)))]
            ctx = sec.CONTEXTS[int(rng.integers(len(sec.CONTEXTS)))]
            tr = transforms[int(rng.integers(len(transforms)))]
            if sec.compatible(fmt, ctx, tr) and tr != "split_messages":
                break
        s = sec.plant_secret(rng, fmt, ctx, tr)
        text, a, b = s.parts[0]
        plants.append((int(rng.integers(n_events)), s.secret_id, fmt, text[a:b], s.value, False,
                       a, b, text))
    labels = []
    for e, lid, kind, surface, value, is_fact, a, b, ptext in plants:
        base = texts[e] + "\n\n"
        texts[e] = base + ptext
        labels.append((lid, kind, e, len(base) + a, len(base) + b, surface, value, is_fact))
    events = tuple(SpanEvent(100 + i, "message", "user" if i % 2 == 0 else "assistant", t)
                   for i, t in enumerate(texts))
    out = []
    for lid, kind, e, a, b, surface, value, is_fact in labels:
        assert texts[e][a:b] == surface
        out.append(SpanLabel(lid, kind, 100 + e, a, b, surface, value, is_fact))
    return SummaryRequest(f"cont-{seed}", artifact or f"art-{seed:04d}", 100, 100 + n_events - 1,
                          events, None, target_tokens, labels=tuple(out))


@pytest.fixture(scope="module")
def requests_pool() -> list[SummaryRequest]:
    return [make_request(i) for i in range(300)]


@pytest.fixture(scope="module")
def default_results(requests_pool):
    """Every pooled request summarized once with the default probabilities."""
    s = ModelledSummarizer(seed=11)
    assert (s.p_retain_fact, s.p_copy_secret, s.p_partial_secret, s.p_hallucinate,
            s.p_marker_leak) == (0.8, 0.3, 0.15, 0.05, 0.05)
    return [(req, s.summarize(req)) for req in requests_pool]


# --------------------------------------------------------------------------- determinism


def test_same_seed_and_artifact_give_the_same_summary_whatever_the_call_order(requests_pool):
    reqs = requests_pool[:40]
    a = [ModelledSummarizer(seed=7).summarize(r) for r in reqs]
    shuffled = list(range(len(reqs)))
    random.Random(3).shuffle(shuffled)
    s = ModelledSummarizer(seed=7)
    b = {i: s.summarize(reqs[i]) for i in shuffled}
    with ThreadPoolExecutor(4) as pool:
        c = list(pool.map(ModelledSummarizer(seed=7).summarize, reqs))
    for i in range(len(reqs)):
        assert a[i] == b[i] == c[i]
    # the labels' order in the request does not matter either
    r0 = reqs[0]
    rev = dataclasses.replace(r0, labels=tuple(reversed(r0.labels)))
    assert ModelledSummarizer(seed=7).summarize(rev) == a[0]


def test_seed_and_artifact_change_the_draws(requests_pool):
    reqs = requests_pool[:30]
    base = [ModelledSummarizer(seed=1).summarize(r).text for r in reqs]
    other_seed = [ModelledSummarizer(seed=2).summarize(r).text for r in reqs]
    other_art = [ModelledSummarizer(seed=1).summarize(dataclasses.replace(r, artifact_id="x"))
                 .text for r in reqs]
    assert sum(x != y for x, y in zip(base, other_seed, strict=True)) > 10
    assert sum(x != y for x, y in zip(base, other_art, strict=True)) > 10


# --------------------------------------------------------------------------- probabilities


def test_fact_retention_rate_matches_p_retain_and_is_visible_in_the_text(default_results):
    kept = total = 0
    for req, res in default_results:
        facts = {lb.label_id: lb for lb in req.labels if lb.is_fact}
        d = res.diagnostics
        assert set(d["retained_facts"]) | set(d["dropped_facts"]) == set(facts)
        for lid in d["retained_facts"]:
            assert facts[lid].value in res.text
            assert lid in res.retained
        for lid in d["dropped_facts"]:
            if lid not in d["incidental_facts"]:
                assert not re.search(r"(?<![\w.])" + re.escape(facts[lid].value) + r"(?!\w)",
                                     res.text), (lid, facts[lid].value)
        kept += len(d["retained_facts"])
        total += len(facts)
    assert total == 900
    assert abs(kept / total - 0.8) < 0.05


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0])
def test_fact_retention_extremes(requests_pool, p):
    s = ModelledSummarizer(seed=3, p_retain_fact=p)
    kept = sum(len(s.summarize(r).diagnostics["retained_facts"]) for r in requests_pool[:60])
    if p in (0.0, 1.0):
        assert kept == p * 180
    else:
        assert 0.37 < kept / 180 < 0.63


def test_secret_copy_and_partial_rates(default_results):
    copied = partial = omitted = 0
    for req, res in default_results:
        d = res.diagnostics
        secrets = {lb.label_id: lb for lb in req.labels if not lb.is_fact}
        for lid in d["copied_secrets"]:
            assert secrets[lid].surface in res.text
        for p in d["partial_secrets"]:
            full = secrets[p["label_id"]].surface
            frag = p["fragment"]
            assert frag in res.text and frag in full and frag != full
            assert len(frag) >= 12 or len(frag) >= 0.5 * len(full)
            assert full not in res.text
        for lid in d["omitted_secrets"]:
            lb = secrets[lid]
            assert lb.surface not in res.text and lb.value not in res.text
            # nothing of an omitted secret long enough to count as a leak either (windows
            # shared with another secret-shaped string, e.g. a JWT header, do not count)
            others = ([o.value for o in secrets.values() if o is not lb]
                      + [h["text"] for h in d["hallucinated_secrets"]]
                      + [m["text"] for m in d["marker_leaks"]])
            windows = {lb.value[i:i + 12] for i in range(len(lb.value) - 11)}
            assert not any(w in res.text for w in windows if not any(w in o for o in others))
        copied += len(d["copied_secrets"])
        partial += len(d["partial_secrets"])
        omitted += len(d["omitted_secrets"])
    total = copied + partial + omitted
    assert total == 900
    assert abs(copied / total - 0.3) < 0.05
    assert abs(partial / total - 0.15) < 0.04


def test_copy_form_value_writes_the_plaintext():
    req = make_request(4, n_secrets=6, n_facts=0, transforms=("base64", "hex"))
    res = ModelledSummarizer(seed=1, p_copy_secret=1.0, p_partial_secret=0.0,
                             copy_form="value").summarize(req)
    for lb in req.labels:
        assert lb.value in res.text and lb.surface != lb.value


def test_hallucinated_secrets_match_a_format_but_were_never_in_the_source(requests_pool):
    s = ModelledSummarizer(seed=9, p_hallucinate=1.0, p_marker_leak=0.0, p_copy_secret=0.0,
                           p_partial_secret=0.0)
    formats = set()
    for req in requests_pool[:60]:
        res = s.summarize(req)
        (h,) = res.diagnostics["hallucinated_secrets"]
        assert res.diagnostics["hallucinated"] == 1
        formats.add(h["format"])
        assert re.fullmatch(sec.FORMAT_REGEX[h["format"]], h["text"])
        assert h["text"] in res.text
        assert not any(h["value"] in ev.text for ev in req.events)
    assert len(formats) >= 8


def test_hallucination_and_marker_leak_rates(default_results):
    n_h = n_m = 0
    for _, res in default_results:
        d = res.diagnostics
        for h in d["hallucinated_secrets"]:
            assert h["text"] in res.text or any(m["source"] == "hallucinated"
                                                for m in d["marker_leaks"])
        n_h += d["hallucinated"]
        n_m += len(d["marker_leaks"])
    # 300 summaries, expectation 15 each (binomial sd ~3.8)
    assert 4 <= n_h <= 30
    assert 4 <= n_m <= 30


def test_marker_leaks_wrap_secret_shaped_content():
    seen = set()
    for i in range(40):
        req = make_request(1000 + i)
        res = ModelledSummarizer(seed=i, p_marker_leak=1.0).summarize(req)
        (leak,) = res.diagnostics["marker_leaks"]
        assert leak["text"] in res.text
        seen.add((leak["style"], leak["source"]))
        if leak["style"] == "byok":
            inner = leak["text"][len("[BYOK:"):-1]
            assert leak["text"] == f"[BYOK:{inner}]"
            if leak["source"] == "copied":
                lb = next(lb for lb in req.labels if lb.label_id == leak["label_id"])
                assert inner == lb.surface
            else:
                assert re.fullmatch(sec.FORMAT_REGEX[leak["format"]], inner)
        else:
            assert leak["text"].startswith(f"<REDACTED:{leak['format']}>")
    assert ("byok", "copied") in seen
    assert any(src != "copied" for _, src in seen)


# --------------------------------------------------------------------------- size and shape


def test_size_follows_target_tokens():
    req = make_request(77, n_events=80, n_facts=2, n_secrets=2, sentences=6)
    s = ModelledSummarizer(seed=0, p_hallucinate=0.0, p_marker_leak=0.0)
    sizes = []
    for target in (150, 400, 1000):
        res = s.summarize(dataclasses.replace(req, target_tokens=target))
        chars = target * 4
        assert 0.6 * chars <= len(res.text) <= chars, (target, len(res.text))
        assert not res.diagnostics["over_budget"]
        sizes.append(len(res.text))
    assert sizes == sorted(sizes)


def test_kept_labels_are_written_even_past_a_tiny_target():
    req = dataclasses.replace(make_request(5), target_tokens=10)
    res = ModelledSummarizer(seed=0, p_retain_fact=1.0).summarize(req)
    assert res.diagnostics["over_budget"]
    for lb in req.labels:
        if lb.is_fact:
            assert lb.value in res.text


def test_summary_has_compaction_sections_and_purpose_headers():
    req = make_request(8, n_events=30, target_tokens=800)
    text = ModelledSummarizer(seed=0).summarize(req).text
    assert text.startswith("## Summary of the conversation so far (events 100-129)")
    for title in ("### Primary request and intent", "### Key facts and decisions",
                  "### Files and code", "### Current work"):
        assert title in text
    flush = ModelledSummarizer(seed=0).summarize(dataclasses.replace(req, purpose="flush")).text
    assert flush.startswith("## Memory notes") and "### Durable facts" in flush
    merge = ModelledSummarizer(seed=0).summarize(dataclasses.replace(req, purpose="merge")).text
    assert merge.startswith("## Merged summary")


def test_previous_summary_is_carried_forward_with_losses():
    req = make_request(9, n_events=20, target_tokens=600)
    prev = "## Summary\n\n### Key facts and decisions\n" + "\n".join(
        f"- Carried fact number {i} says the port is {4000 + i}." for i in range(40))
    res = ModelledSummarizer(seed=2, p_retain_fact=0.5).summarize(
        dataclasses.replace(req, previous_summary=prev))
    carried = [i for i in range(40) if f"Carried fact number {i} " in res.text]
    assert 0 < len(carried) < 40
    assert "### Earlier context" in res.text
    assert res.diagnostics["carried_lines"] == len(carried)


def test_summary_without_labels_or_events():
    empty = SummaryRequest("c", "a", 0, 0, (), None, 100)
    res = ModelledSummarizer().summarize(empty)
    assert res.text.startswith("## Summary") and res.diagnostics["status"] == "ok"
    res2 = get_summarizer("modelled", seed=3).summarize(make_request(1))
    assert res2.backend == "modelled"


def test_labels_pointing_outside_the_span_fall_back_to_templates():
    ev = (SpanEvent(1, "message", "user", "Fix the deploy script please, it fails on staging."),)
    labels = (SpanLabel("f1", "port", 99, 0, 4, "6432", "6432", True),
              SpanLabel("s1", "github_classic", 99, 0, 40, "ghp_" + "a1B2" * 9, "ghp_" + "a1B2" * 9,
                        False))
    req = SummaryRequest("c", "a", 1, 1, ev, None, 200, labels=labels)
    res = ModelledSummarizer(p_retain_fact=1.0, p_copy_secret=1.0, p_partial_secret=0.0).summarize(req)
    assert "6432" in res.text and "ghp_" + "a1B2" * 9 in res.text


@pytest.mark.parametrize("opts", [
    {"p_retain_fact": 1.5}, {"p_copy_secret": -0.1}, {"p_copy_secret": 0.9, "p_partial_secret": 0.2},
    {"copy_form": "both"}, {"chars_per_token": 0},
])
def test_bad_options_are_workbench_errors(opts):
    with pytest.raises(SummarizerConfigError):
        ModelledSummarizer(**opts)


def test_bad_requests_are_workbench_errors():
    req = make_request(1)
    with pytest.raises(WorkbenchError, match="purpose"):
        ModelledSummarizer().summarize(dataclasses.replace(req, purpose="poem"))
    with pytest.raises(WorkbenchError, match="from_seq"):
        ModelledSummarizer().summarize(dataclasses.replace(req, from_seq=10_000))


def test_hard_negative_labels_are_not_treated_as_secrets():
    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    text = f"Merged via {sha} (squash). Please rerun the deploy pipeline now."
    ev = (SpanEvent(1, "message", "user", text),)
    neg = SpanLabel("neg-1", "git_sha", 1, 11, 51, sha, sha, False)
    req = SummaryRequest("c", "a", 1, 1, ev, None, 200, labels=(neg,))
    kept = ModelledSummarizer(p_keep_negative=1.0, p_copy_secret=0.0).summarize(req)
    assert sha in kept.text and kept.diagnostics["kept_negatives"] == ["neg-1"]
    assert kept.diagnostics["copied_secrets"] == kept.diagnostics["omitted_secrets"] == []
    dropped = ModelledSummarizer(p_keep_negative=0.0, p_copy_secret=1.0,
                                 p_partial_secret=0.0).summarize(req)
    assert sha not in dropped.text and not dropped.retained
