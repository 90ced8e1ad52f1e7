"""Progress of an evaluated run's summaries on stderr, for a live model.

An evaluated run asks its summarizer once per readable artifact and flush. With a live
endpoint (``--summarizer http``, a small local model at a few tokens a second) that is the
slow part of a run, so it shows how far it is: summaries done of the run's total, the
tokens per second the model writes and the time left. Nothing is shown while no request
reaches an endpoint (the modelled summarizers, a run replayed from its cassette): a live
request is one that raised the backend's ``stats["requests"]``
(:class:`workbench.summarize.http.HttpSummarizer` counts them).

:func:`expect_summaries` announces a run's summaries before they are asked (the evaluation
calls it once per text derivation) and :func:`counted` wraps the one method that asks for
each of them (``_Derive.summarize`` in :mod:`workbench.evaluate.texts`), answers the memo
already held included, so the count ends at the total. On a terminal the line is a rich
progress bar redrawn in place; elsewhere (a log file) it is printed every
``PLAIN_INTERVAL_S`` seconds and when the run's summaries are done.

>>> p = SummaryProgress(stream=None)
>>> p.expect(4)
>>> p.record(seconds=2.0, completion_tokens=40, live=True)
>>> p.record(seconds=0.0, completion_tokens=0, live=False)
>>> p.describe()
'summaries 2/4 (1 asked live, 1 replayed), 20.0 tokens/s, 30.0 summaries/min, about 4 s left'
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

#: seconds between two progress lines when stderr is not a terminal
PLAIN_INTERVAL_S = 30.0


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class SummaryProgress:
    """Summaries expected and done; the live ones' seconds and written tokens.

    ``stream`` None: counts only (doctests); ``"stderr"``: whatever ``sys.stderr`` is when a
    line is shown. The display starts at the first live summary.
    """

    def __init__(self, stream: TextIO | None | str = "stderr", *, clock: Callable[[], float] = time.monotonic,
                 interval: float = PLAIN_INTERVAL_S):
        self.stream = stream
        self.clock = clock
        self.interval = float(interval)
        self.total = self.done = self.live = 0
        self.live_seconds = 0.0
        self.completion_tokens = 0
        self._lock = threading.Lock()
        self._bar: Any = None  # rich's Progress on a terminal
        self._task: Any = None
        self._last_line = float("-inf")

    def expect(self, n: int) -> None:
        """``n`` more summaries will be asked (one derivation of a run's texts)."""
        with self._lock:
            if self.done >= self.total:  # the previous run's are all done: count afresh
                self._close()
                self.total = self.done = self.live = 0
                self.live_seconds, self.completion_tokens = 0.0, 0
            self.total += max(0, int(n))

    def record(self, *, seconds: float, completion_tokens: int, live: bool) -> None:
        """One summary done: ``live`` when it was asked of an endpoint (not the memo, not a cassette)."""
        with self._lock:
            self.done += 1
            if live:
                self.live += 1
                self.live_seconds += max(0.0, seconds)
                self.completion_tokens += max(0, int(completion_tokens))
            self._show()

    # ------------------------------------------------------------------ figures

    @property
    def tokens_per_second(self) -> float:
        return self.completion_tokens / self.live_seconds if self.live_seconds > 0 else 0.0

    @property
    def summaries_per_minute(self) -> float:
        return 60.0 * self.live / self.live_seconds if self.live_seconds > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        """The summaries still to ask at the live ones' mean time (None before the first)."""
        if not self.live:
            return None
        return max(0, self.total - self.done) * self.live_seconds / self.live

    def describe(self) -> str:
        replayed = self.done - self.live
        left = self.seconds_left
        return (f"summaries {self.done}/{self.total} ({self.live} asked live, {replayed} replayed), "
                f"{self.tokens_per_second:.1f} tokens/s, {self.summaries_per_minute:.1f} summaries/min"
                + ("" if left is None else f", about {_duration(left)} left"))

    # ------------------------------------------------------------------ display

    def _out(self) -> TextIO | None:
        return sys.stderr if self.stream == "stderr" else self.stream

    def _show(self) -> None:
        if self._out() is None or not self.live:
            return
        finished = self.done >= self.total
        if self._is_terminal():
            self._draw()
            if finished:
                self._close()
            return
        now = self.clock()
        if finished or now - self._last_line >= self.interval:
            self._last_line = now
            print(self.describe(), file=self._out(), flush=True)

    def _is_terminal(self) -> bool:
        isatty = getattr(self._out(), "isatty", None)
        return bool(isatty and isatty())

    def _draw(self) -> None:
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(TextColumn("summaries"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"),
                                 console=Console(file=self._out()), transient=False)
            self._task = self._bar.add_task("summaries", total=self.total, rate="")
            self._bar.start()
        left = self.seconds_left
        rate = (f"{self.tokens_per_second:.1f} tokens/s, {self.summaries_per_minute:.1f}/min"
                + ("" if left is None else f", ETA {_duration(left)}"))
        self._bar.update(self._task, total=self.total, completed=self.done, rate=rate)

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = self._task = None


#: the process's one display (one stderr): every derivation in the process adds to it
PROGRESS = SummaryProgress()


def expected_summaries(result) -> int:
    """How many times a derivation of ``result``'s texts asks its summarizer: every readable
    summary checkpoint (a recorded one is replayed from the log, an opaque one has no text),
    local checkpoint, merge and flush the engine logged."""
    import polars as pl

    from workbench.rundir import wire as W

    ev = result.events
    if ev is None or ev.height == 0:
        return 0
    asked = (((pl.col("event_type") == W.CHECKPOINT_EVENT) & (pl.col("summary_kind") == W.SUMMARY_KIND))
             | pl.col("event_type").is_in([W.LOCAL_EVENT, W.MERGE_EVENT, W.FLUSH_EVENT]))
    return int(ev.filter(asked).height)


def expect_summaries(result, progress: SummaryProgress | None = None) -> None:
    (progress or PROGRESS).expect(expected_summaries(result))


def counted(summarize: Callable) -> Callable:
    """Wrap a deriver's ``summarize(self, req, ...)`` (``self.backend`` is its summarizer) so
    each summary it returns is counted in :data:`PROGRESS`, timed when it reached an endpoint."""

    @functools.wraps(summarize)
    def wrapper(self, req, *args, **kwargs):
        stats = getattr(self.backend, "stats", None)
        asked = stats.get("requests", 0) if isinstance(stats, dict) else 0
        t0 = time.perf_counter()
        result = summarize(self, req, *args, **kwargs)
        seconds = time.perf_counter() - t0
        live = isinstance(stats, dict) and stats.get("requests", 0) > asked
        usage = (getattr(result, "diagnostics", None) or {}).get("usage") or {}
        tokens = usage.get("completion_tokens", 0) if isinstance(usage, dict) else 0
        PROGRESS.record(seconds=seconds, completion_tokens=int(tokens or 0), live=live)
        return result

    return wrapper
