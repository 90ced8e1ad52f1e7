"""Summarizer backends: modelled, extractive, recorded, and an OpenAI-compatible HTTP one.

``get_summarizer(name, **options)`` builds a backend by registry name; every backend has
``name`` and ``summarize(SummaryRequest) -> SummaryResult``. :func:`artifact_document`
turns a request and its result into the ADR-0011 ``rip.compaction_summary.v1`` artifact.
Backends are imported lazily (the modelled one needs numpy; the package import does not).

>>> from workbench.summarize import SpanEvent, SummaryRequest, get_summarizer, artifact_document
>>> req = SummaryRequest("cont-1", "art-1", 10, 12,
...                      (SpanEvent(10, "message", "user", "Rename the flag to use_v2."),), None, 64)
>>> res = get_summarizer("extractive").summarize(req)
>>> doc = artifact_document(req, res)
>>> doc["schema"], doc["coverage"]["from_seq"], doc["provenance"]["produced_by"]
('rip.compaction_summary.v1', 10, 'extractive')
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from workbench.rundir import wire as W
from workbench.rundir.summary_docs import summary_document
from workbench.summarize.base import (
    PURPOSES,
    STATUS_OK,
    STATUS_SKIPPED_UNSUPPORTED,
    STATUS_UNSUPPORTED,
    CassetteError,
    CassetteMissError,
    EndpointError,
    InvalidProviderInputError,
    RecordedSummaryMissingError,
    SpanEvent,
    SpanLabel,
    Summarizer,
    SummarizerConfigError,
    SummarizerError,
    SummaryRequest,
    SummaryResult,
    TransientEndpointError,
    render_span,
)

ARTIFACT_SCHEMA = W.SUMMARY_SCHEMA

#: registry name -> "module:Class" (imported on first use)
SUMMARIZERS: dict[str, str] = {
    "modelled": "workbench.summarize.modelled:ModelledSummarizer",
    "calibrated": "workbench.summarize.calibrated:CalibratedSummarizer",
    "extractive": "workbench.summarize.extractive:ExtractiveSummarizer",
    "recorded": "workbench.summarize.recorded:RecordedSummarizer",
    "http": "workbench.summarize.http:HttpSummarizer",
}
_EXTRA: dict[str, Callable[..., Summarizer]] = {}


def register_summarizer(name: str, factory: Callable[..., Summarizer]) -> None:
    """Add a backend under ``name`` (a class or any callable returning a Summarizer)."""
    if name in SUMMARIZERS or name in _EXTRA:
        raise SummarizerConfigError(f"summarizer {name!r} is already registered")
    _EXTRA[name] = factory


def summarizer_names() -> tuple[str, ...]:
    return (*SUMMARIZERS, *_EXTRA)


def get_summarizer(name: str, **options) -> Summarizer:
    """Build the backend registered as ``name`` with ``options`` (its constructor's keywords).

    Every built-in backend accepts ``seed`` (only the modelled one uses it), so callers can
    pass one seed whatever the backend.
    """
    if name in _EXTRA:
        factory = _EXTRA[name]
    elif name in SUMMARIZERS:
        module, cls = SUMMARIZERS[name].split(":")
        factory = getattr(importlib.import_module(module), cls)
    else:
        raise SummarizerConfigError(
            f"unknown summarizer {name!r}; known: {', '.join(summarizer_names())}")
    try:
        return factory(**options)
    except (TypeError, ValueError) as exc:  # (an unknown keyword; a value of the wrong kind: int("many"))
        raise SummarizerConfigError(f"bad options for summarizer {name!r}: {exc}") from exc


def artifact_document(request: SummaryRequest, result: SummaryResult, *,
                      thread_id: str | None = None, from_message_id: str | None = None,
                      to_message_id: str | None = None, actor_id: str = "workbench",
                      origin: str = "background", produced_by: str | None = None) -> dict:
    """The ADR-0011 ``rip.compaction_summary.v1`` artifact for ``result``, in the one shape
    of a run's artifacts (:func:`workbench.rundir.summary_docs.summary_document`).

    Coverage is inclusive ``from_seq..to_seq`` of ``thread_id`` (default: the continuity
    id); message ids are included when given. ``produced_by`` defaults to the backend name
    (with the model for the HTTP backend). No timestamps: the same inputs give the same
    document, byte for byte once serialised with sorted keys. The document names no id: its
    id is its hash (:func:`workbench.rundir.artifacts.artifact_id`), which is what
    ``request.artifact_id`` should be once the document exists.
    """
    coverage: dict = {"thread_id": thread_id if thread_id is not None else request.continuity_id,
                      "from_seq": request.from_seq}
    if from_message_id is not None:
        coverage["from_message_id"] = from_message_id
    coverage["to_seq"] = request.to_seq
    if to_message_id is not None:
        coverage["to_message_id"] = to_message_id
    if produced_by is None:
        model = result.diagnostics.get("model") if isinstance(result.diagnostics, dict) else None
        produced_by = f"{result.backend}:{model}" if model else result.backend
    return summary_document(coverage, {"actor_id": actor_id, "origin": origin, "produced_by": produced_by},
                            result.text)


__all__ = [
    "ARTIFACT_SCHEMA", "PURPOSES", "STATUS_OK", "STATUS_SKIPPED_UNSUPPORTED", "STATUS_UNSUPPORTED",
    "SUMMARIZERS", "CassetteError", "CassetteMissError", "EndpointError",
    "InvalidProviderInputError", "RecordedSummaryMissingError", "SpanEvent", "SpanLabel",
    "Summarizer", "SummarizerConfigError", "SummarizerError", "SummaryRequest", "SummaryResult",
    "TransientEndpointError", "artifact_document", "get_summarizer", "register_summarizer",
    "render_span", "summarizer_names",
]
