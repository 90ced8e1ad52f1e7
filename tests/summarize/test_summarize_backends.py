"""Extractive and recorded backends, the registry and the ADR-0011 artifact document."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from workbench.errors import WorkbenchError
from workbench.summarize import (
    ARTIFACT_SCHEMA,
    RecordedSummaryMissingError,
    SpanEvent,
    SpanLabel,
    Summarizer,
    SummarizerConfigError,
    SummaryRequest,
    SummaryResult,
    artifact_document,
    get_summarizer,
    register_summarizer,
    summarizer_names,
)
from workbench.summarize.extractive import ExtractiveSummarizer
from workbench.summarize.recorded import RecordedSummarizer

_TEXT = ("we looked at the queue worker and the parser while the cache layer kept stale "
         "entries so the fix adds a version field to each entry before the next deploy")
_WORDS = tuple(_TEXT.split())
SECRET = "ghp_" + "R8kT2mW9xQ4vZ7nB3cY6pL1sD5fH0jK8gA2e"


def _sentence(rng) -> str:
    n = int(rng.integers(8, 16))
    return " ".join(_WORDS[i] for i in rng.integers(0, len(_WORDS), n)).capitalize() + "."


def long_span(seed: int = 0, n: int = 120) -> SummaryRequest:
    rng = np.random.default_rng(seed)
    events = [SpanEvent(0, "message", "user",
                        "Please make the importer skip malformed lines in src/ingest/reader.py.")]
    for i in range(1, n):
        kind, role = [("message", "assistant"), ("tool_call", "assistant"),
                      ("tool_result", "tool"), ("message", "user")][i % 4]
        lines = [_sentence(rng) for _ in range(int(rng.integers(1, 4)))]
        if i % 9 == 0:
            lines.append(f"ValueError: bad record at line {i} of data/batch_{i}.jsonl")
        if i % 7 == 0:
            lines.append(f"We decided to set the batch size to {100 + i} rows.")
        events.append(SpanEvent(i, kind, role, "\n".join(lines)))
    events.append(SpanEvent(n, "message", "assistant",
                            "The importer now skips malformed lines and the tests pass."))
    return SummaryRequest("cont-x", "art-x", 0, n, tuple(events), None, 300)


# --------------------------------------------------------------------------- extractive


def test_extractive_is_deterministic_and_keeps_the_key_lines():
    req = long_span()
    a = ExtractiveSummarizer().summarize(req)
    b = get_summarizer("extractive").summarize(req)
    assert a == b and a.backend == "extractive"
    assert "src/ingest/reader.py" in a.text                 # the first user request
    assert "tests pass" in a.text                           # the last assistant message
    assert "ValueError: bad record" in a.text               # error lines
    assert "We decided to set the batch size" in a.text     # decisions
    assert a.diagnostics["status"] == "ok" and a.diagnostics["lines"] > 3


@pytest.mark.parametrize("target", [60, 150, 400, 1000])
def test_extractive_respects_the_target_size(target):
    req = dataclasses.replace(long_span(1), target_tokens=target)
    res = ExtractiveSummarizer().summarize(req)
    assert len(res.text) <= target * 4 * 1.05
    assert len(res.text) >= min(target * 4 * 0.6, 200)


def test_extractive_size_grows_with_the_target():
    req = long_span(2)
    sizes = [len(ExtractiveSummarizer().summarize(dataclasses.replace(req, target_tokens=t)).text)
             for t in (50, 200, 800)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1] / 4


def test_extractive_copies_secrets_in_selected_lines():
    events = (SpanEvent(1, "message", "user", f"Deploy with GITHUB_TOKEN={SECRET} please."),
              SpanEvent(2, "tool_result", "tool", f"error: 401 Unauthorized for token {SECRET[:20]}"),
              SpanEvent(3, "message", "assistant", "Deployed."))
    res = ExtractiveSummarizer().summarize(SummaryRequest("c", "a", 1, 3, events, None, 200))
    assert SECRET in res.text and f"token {SECRET[:20]}" in res.text


def test_extractive_ignores_labels_and_prepends_the_previous_summary():
    req = long_span(3)
    lab = SpanLabel("f", "port", 0, 0, 6, "Please", "Please", True)
    assert (ExtractiveSummarizer().summarize(dataclasses.replace(req, labels=(lab,))).text
            == ExtractiveSummarizer().summarize(req).text)
    prev = "\n".join(f"- earlier point {i}" for i in range(200))
    res = ExtractiveSummarizer().summarize(dataclasses.replace(req, previous_summary=prev))
    assert res.text.index("### Previous summary") < res.text.index("### Request")
    assert "- earlier point 0" in res.text and "- earlier point 199" not in res.text
    prev_part = res.text.split("### Request")[0]
    assert len(prev_part) <= 0.5 * 300 * 4 + 200


def test_extractive_never_empty_and_purposes():
    ev = (SpanEvent(5, "message", "user", "x" * 5000),)
    res = ExtractiveSummarizer().summarize(SummaryRequest("c", "a", 5, 5, ev, None, 10))
    assert "xxxx" in res.text and len(res.text) < 200
    flush = ExtractiveSummarizer().summarize(dataclasses.replace(long_span(), purpose="flush"))
    assert flush.text.startswith("## Memory notes")


# --------------------------------------------------------------------------- recorded


def test_recorded_returns_the_given_text():
    req = SummaryRequest("cont-1", "art-3", 0, 9, (), None, 100)
    assert RecordedSummarizer({"art-3": "recorded text"}).summarize(req).text == "recorded text"
    pair = {("cont-1", "art-3"): "by pair", "art-3": "by artifact"}
    assert get_summarizer("recorded", summaries=pair).summarize(req).text == "by pair"
    res = RecordedSummarizer(lambda r: f"summary of {r.from_seq}-{r.to_seq}").summarize(req)
    assert res.text == "summary of 0-9" and res.backend == "recorded" and not res.opaque


def test_recorded_without_a_summary_is_a_clear_workbench_error():
    req = SummaryRequest("cont-1", "art-404", 0, 9, (), None, 100)
    for backend in (RecordedSummarizer({"other": "x"}), RecordedSummarizer(lambda r: None),
                    RecordedSummarizer()):
        with pytest.raises(RecordedSummaryMissingError, match="art-404") as info:
            backend.summarize(req)
        assert isinstance(info.value, WorkbenchError)
    with pytest.raises(SummarizerConfigError):
        RecordedSummarizer(42)


# --------------------------------------------------------------------------- registry, artifact


def test_registry():
    assert {"modelled", "extractive", "recorded", "http"} <= set(summarizer_names())
    for name in ("modelled", "extractive", "recorded"):
        s = get_summarizer(name)
        assert isinstance(s, Summarizer) and s.name == name
        assert get_summarizer(name, seed=5).name == name   # every backend takes a seed
    h = get_summarizer("http", base_url="http://127.0.0.1:9/v1", model="m", seed=5)
    assert h.name == "http"
    with pytest.raises(SummarizerConfigError, match="unknown summarizer"):
        get_summarizer("gpt-magic")
    with pytest.raises(SummarizerConfigError, match="bad options"):
        get_summarizer("extractive", no_such_option=1)

    class Echo:
        name = "echo-test"

        def summarize(self, request):
            return SummaryResult(text="echo", backend=self.name)

    register_summarizer("echo-test", Echo)
    assert get_summarizer("echo-test").summarize(long_span()).text == "echo"
    with pytest.raises(SummarizerConfigError):
        register_summarizer("modelled", Echo)


def test_artifact_document_shape_and_determinism():
    req = long_span()
    res = get_summarizer("modelled", seed=1).summarize(req)
    doc = artifact_document(req, res)
    assert doc == {
        "schema": ARTIFACT_SCHEMA,
        "coverage": {"thread_id": "cont-x", "from_seq": 0, "to_seq": req.to_seq},
        "provenance": {"actor_id": "workbench", "origin": "background", "produced_by": "modelled"},
        "summary": {"format": "markdown", "text": res.text},
    }
    doc2 = artifact_document(req, res, thread_id="thr", from_message_id="m0", to_message_id="m9",
                             actor_id="agent-7", origin="replay")
    assert list(doc2["coverage"]) == ["thread_id", "from_seq", "from_message_id", "to_seq",
                                      "to_message_id"]
    assert doc2["coverage"]["to_message_id"] == "m9"
    assert doc2["provenance"] == {"actor_id": "agent-7", "origin": "replay",
                                  "produced_by": "modelled"}
    blob = json.dumps(doc, sort_keys=True).encode()
    again = artifact_document(req, get_summarizer("modelled", seed=1).summarize(req))
    assert json.dumps(again, sort_keys=True).encode() == blob
    http_like = SummaryResult(text="[compaction item: 12 bytes encrypted]", backend="http",
                              diagnostics={"model": "gpt-x"}, opaque=True)
    assert artifact_document(req, http_like)["provenance"]["produced_by"] == "http:gpt-x"
