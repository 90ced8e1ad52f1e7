"""The recorded summarizer: the summary a real log recorded for this compaction.

Constructed with a mapping (``artifact_id`` -> text, or ``(continuity_id, artifact_id)`` ->
text; the pair wins) or a callable ``request -> text | None``. The caller passes the text of
the log's recorded SUMMARY event; nothing is invented when none is known.

>>> from workbench.summarize.base import SummaryRequest
>>> s = RecordedSummarizer({"art-7": "The user asked to fix the build."})
>>> s.summarize(SummaryRequest("c", "art-7", 0, 9, (), None, 100)).text
'The user asked to fix the build.'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from workbench.summarize.base import (
    STATUS_OK,
    RecordedSummaryMissingError,
    SummarizerConfigError,
    SummaryRequest,
    SummaryResult,
    approx_tokens,
    check_request,
)


class RecordedSummarizer:
    """Returns recorded summary text. See the module docstring."""

    name = "recorded"

    def __init__(self, summaries: Mapping | Callable[[SummaryRequest], str | None] | None = None,
                 *, seed: int | None = None):  # seed: accepted and ignored (nothing is drawn)
        if summaries is None:
            summaries = {}
        if not (callable(summaries) or isinstance(summaries, Mapping)):
            raise SummarizerConfigError(
                "recorded summarizer needs a mapping artifact_id -> text or a callable "
                f"request -> text, got {type(summaries).__name__}")
        self._source = summaries

    def _lookup(self, req: SummaryRequest) -> str | None:
        src = self._source
        if isinstance(src, Mapping):
            text = src.get((req.continuity_id, req.artifact_id))
            return src.get(req.artifact_id) if text is None else text
        return src(req)

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        check_request(request)
        text = self._lookup(request)
        if text is None:
            raise RecordedSummaryMissingError(
                f"no recorded summary for artifact {request.artifact_id!r} of continuity "
                f"{request.continuity_id!r} (events {request.from_seq}-{request.to_seq}); "
                "the recorded backend only replays summaries found in an imported log")
        if not isinstance(text, str):
            raise SummarizerConfigError(
                f"recorded summary for {request.artifact_id!r} is {type(text).__name__}, not str")
        return SummaryResult(text=text, backend=self.name,
                             diagnostics={"status": STATUS_OK, "tokens": approx_tokens(text),
                                          "target_tokens": request.target_tokens})
