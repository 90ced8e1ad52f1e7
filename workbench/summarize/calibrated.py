"""The calibrated modelled summarizer: the modelled summarizer whose keep probability for
each fact comes from a retention profile fitted on the summaries real harnesses recorded
(:mod:`workbench.summarize.retention_profile`), instead of one constant ``p_retain_fact``.

Registered as ``calibrated`` (``summarizer: calibrated`` in a run spec; options ``harness``
— whose profile, default the pooled one — and ``profiles`` — a file ``workbench calibrate
--retention-out`` wrote, default the packaged one — besides every option of ``modelled``).
The ``modelled`` summarizer keeps its constants (``p_retain_fact = 0.8``,
``p_copy_secret = 0.3``) and stays the default, so earlier runs reproduce.

For a planted fact of a synthetic continuity the profile is asked about

* its kind, as the log fact kind it stands for (:data:`SYNTHETIC_KINDS`: a planted
  ``file_path`` is a ``path``; a port, version, constant, ticket or date a ``number``; a
  host name a ``url``; an owner or codename an ``identifier``; a planted task-state fact
  (:mod:`workbench.synth.task_state`) is a ``task``, kept with the profile's task-state
  probability — or always, under a task-state checkpoint, option ``task_state``);
* its mention count: the span's events whose text holds its answer;
* its recency: the user messages after the event that planted it (each opens at least one
  request; the span does not carry request numbers).

>>> from workbench.summarize.base import SpanEvent, SpanLabel, SummaryRequest
>>> text = "I moved the retry logic into src/retry.py during the refactor."
>>> i = text.index("src/retry.py")
>>> lab = SpanLabel("fact-1", "file_path", 3, i, i + 12, "src/retry.py", "src/retry.py", True)
>>> req = SummaryRequest("c", "a", 3, 4, (SpanEvent(3, "message", "user", text),
...                      SpanEvent(4, "message", "user", "thanks")), None, 200, labels=(lab,))
>>> s = CalibratedSummarizer(seed=1, harness="claude_code")
>>> 0.0 < s.keep_probability(lab, req) < 1.0
True
>>> s.summarize(req) == s.summarize(req)
True
"""

from __future__ import annotations

from workbench.summarize.base import SpanLabel, SummaryRequest
from workbench.summarize.modelled import ModelledSummarizer

SYNTHETIC_KINDS = {"file_path": "path", "port": "number", "version": "number", "numeric_constant": "number",
                   "ticket": "number", "date": "number", "hostname": "url", "owner": "identifier",
                   "codename": "identifier"}


class CalibratedSummarizer(ModelledSummarizer):
    """See the module docstring."""

    name = "calibrated"

    def __init__(self, seed: int | None = 0, *, harness: str | None = None, profiles: str | None = None,
                 **options):
        from workbench.summarize.retention_profile import load_profiles, profile_for

        if "keep_fact" in options:
            from workbench.summarize.base import SummarizerConfigError

            raise SummarizerConfigError("the calibrated summarizer draws keep probabilities from its profile; "
                                        "keep_fact is not an option of it")
        self.harness = harness
        self.profile = profile_for(load_profiles(profiles), harness)
        super().__init__(seed, keep_fact=self.keep_probability, **options)

    def keep_probability(self, label: SpanLabel, request: SummaryRequest) -> float:
        kind = SYNTHETIC_KINDS.get(label.kind, label.kind)
        mentions = sum(1 for ev in request.events if label.value and label.value in ev.text) or 1
        later_turns = sum(1 for ev in request.events if ev.seq > label.seq and ev.kind == "message"
                          and ev.role == "user")
        return self.profile.keep_probability(kind, mentions, later_turns)

    def __repr__(self) -> str:
        return f"CalibratedSummarizer(seed={self.seed}, harness={self.harness!r})"
