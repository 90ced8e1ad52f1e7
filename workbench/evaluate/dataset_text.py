"""A dataset's event text and planted labels, indexed once for every evaluation of it.

On an imported dataset (no planted facts) the facts its logs name stand in for planted
ones (:mod:`workbench.evaluate.log_facts`), with the rows of every event that names each.

Event text is dictionary-encoded (each distinct text is one Python string, events hold its
code), so a million events that repeat a few thousand texts cost a few thousand strings,
and every memo keyed by text hits. Planted facts and secrets are located once (their event
row), and the search indexes the evaluations use — every leak fragment of every planted
secret, every fact answer, every hard-negative value — are built once, on first use.

What is the dataset's alone (the texts and codes, the labels' rows, the log facts, the
leak fragments) comes from its :mod:`text index <workbench.evaluate.text_index>`: read
from the file an evaluated sweep or a one-shot evaluation (``of(keep=True)``) stores beside
the dataset when it is there and current, else computed from the dataset's files (``LOADS``
counts both, per process).
:meth:`DatasetText.of` keeps the index of the last datasets used in this process (by path
and file hashes), so the runs of a sweep evaluated by one worker share it and the scans of
single lines; the memoised summaries, redactions and whole-text scans are the run's own (a
sweep worker forgets them after each run: their keys hold the policy, so the next
configuration would not meet them again: ``workbench.sweep.runner._forget_run``).

>>> import tempfile
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = tempfile.TemporaryDirectory()
>>> dataset = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), f"{tmp.name}/d")
>>> dt = DatasetText.of(dataset)
>>> dt.text(0, 12) == dataset.events()["text"][12], dt.labels(0, [10, 11, 12])
(True, ())
>>> tmp.cleanup()
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from workbench.continuity.enums import KIND_NAMES, ROLE_NAMES
from workbench.evaluate import text_index
from workbench.evaluate.matching import FormIndex, LeakScanner, Memo, PatternIndex
from workbench.evaluate.text_index import TextIndex, text_codes

_RECENT: dict[tuple, DatasetText] = {}
RECENT_DATASETS = 2
LOADS = {"built": 0, "read": 0}  # indexes this process built from the dataset's files / read stored

_text_codes = text_codes  # (the name older callers and tests use)


def return_freed_memory() -> None:
    """Give what the C heap and Arrow's allocator keep of freed memory back to the system
    (glibc keeps what millions of small objects freed, and a table built through Arrow leaves
    its buffers in Arrow's pool, so the process's peak would not fall): a one-shot
    evaluation's next phase starts from what is alive. malloc_trim is a no-op elsewhere."""
    import ctypes
    import sys

    try:
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # the C library this process runs on
    except OSError:
        trim = None
    if trim is not None:
        trim(0)
    if "pyarrow" in sys.modules:  # (never imported for this alone)
        sys.modules["pyarrow"].default_memory_pool().release_unused()


def _by_code(names) -> np.ndarray:
    """``names`` (a list, or a dict by code) as an object array indexed by code."""
    if isinstance(names, dict):
        table = np.empty(max(names, default=-1) + 1, dtype=object)
        for code, name in names.items():
            table[code] = name
        return table
    table = np.empty(len(names), dtype=object)
    table[:] = names
    return table


class DatasetText:
    """Event text and planted labels of a dataset, by (continuity index, row)."""

    def __init__(self, dataset, index: TextIndex | None = None):
        """``index``: the dataset's :class:`~workbench.evaluate.text_index.TextIndex` (default:
        the one stored beside the dataset when it is trusted and current, else built)."""
        self.built = False  # computed here from the dataset's files (not read, not given)
        if index is None:
            index = text_index.read(dataset)
            LOADS["read" if index is not None else "built"] += 1
            if index is None:
                index = text_index.build(dataset)
                self.built = True
        self.index = index
        self.texts = index.texts
        self.by_cont = index.by_cont
        self.facts = index.facts
        self.mention_rows = index.mention_rows
        self.secrets = index.secrets
        self._labels: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._span_events: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._names: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._leak_scanner: LeakScanner | None = None
        self._answers: PatternIndex | None = None
        self._negatives: PatternIndex | None = None
        self._fact_forms: FormIndex | None = None
        # derived work, by what produced it (see workbench.evaluate.texts)
        self.summaries: Memo = Memo(50_000)
        self.redactions: Memo = Memo(50_000)
        self.baselines: Memo = Memo(50_000)
        # a text's digest -> the answers in it (workbench.evaluate.retention.answers_in)
        self.answer_scans: Memo = Memo(50_000)

    def release_derived(self) -> None:
        """Forget what evaluations derived (summaries, redactions, scans, the summarizer's
        event objects), keeping the index itself: a one-shot evaluation calls it when done
        (at a million events that is hundreds of MB no later table needs); a sweep worker
        keeps them, its next run reuses them."""
        for memo in (self.summaries, self.redactions, self.baselines, self.answer_scans):
            memo.clear()
        self.release_span_events()
        if self._leak_scanner is not None:
            self._leak_scanner.forget()
        if self._fact_forms is not None:
            self._fact_forms.forget()
        return_freed_memory()


    @classmethod
    def of(cls, dataset, *, keep: bool = False) -> DatasetText:
        """The index of ``dataset``, reused while the dataset's files are unchanged. ``keep``:
        an index built here is stored beside the dataset (:func:`text_index.write
        <workbench.evaluate.text_index.write>`, which leaves a file the workbench did not
        write alone), so the dataset's next evaluation, in any process, reads it."""
        files = dataset.manifest.get("files", {})
        key = (str(Path(dataset.path).resolve()),
               tuple(sorted((f, meta.get("sha256")) for f, meta in files.items())))
        hit = _RECENT.pop(key, None)
        if hit is None:
            hit = cls(dataset)
        if keep and hit.built:
            text_index.write(dataset, hit.index)
            hit.built = False  # (stored, or not ours to store: asked once)
        _RECENT[key] = hit
        while len(_RECENT) > RECENT_DATASETS:
            _RECENT.pop(next(iter(_RECENT)))
        return hit

    # ---- events ------------------------------------------------------------------------
    def text(self, cont: int, row: int) -> str:
        return self.texts[self.by_cont[cont]["code"][row]]

    def row_texts(self, cont: int, rows) -> list[str]:
        codes = self.by_cont[cont]["code"]
        return [self.texts[c] for c in codes[np.asarray(rows, dtype=np.int64)].tolist()]

    def span_events(self, cont: int, rows):
        """The events of ``rows`` as summarizer input: columns gathered from the index
        (:class:`~workbench.summarize.base.SpanEvents`); the event objects, when a backend
        iterates them, are each made once and shared by every span until
        :meth:`release_span_events`."""
        return self._span(cont, np.asarray(rows, dtype=np.int64), objects=True)

    def _span(self, cont: int, at: np.ndarray, objects: bool):
        from workbench.summarize.base import SpanEvents

        if self._names is None:  # code -> name and text, as object arrays (a column is one gather)
            self._names = tuple(_by_code(names) for names in (KIND_NAMES, ROLE_NAMES)) + (_by_code(self.texts),)
        d = self.by_cont[cont]
        return SpanEvents(d["seq"][at], d["kind"][at], d["role"][at], d["code"][at], *self._names,
                          objects=partial(self._event_objects, cont, at) if objects else None)

    def _event_objects(self, cont: int, at: np.ndarray) -> tuple:
        """The :class:`~workbench.summarize.base.SpanEvent` of each row of ``at`` (each made once)."""
        cache = self._span_events.get(cont)
        if cache is None:  # (object and flag arrays: a span of thousands of rows is gathered in C)
            n = len(self.by_cont[cont]["seq"])
            cache = self._span_events[cont] = (np.empty(n, dtype=object), np.zeros(n, dtype=bool))
        events, built = cache
        missing = np.unique(at[~built[at]])
        if missing.size:
            made = np.empty(missing.size, dtype=object)
            made[:] = self._span(cont, missing, objects=False).events()
            events[missing] = made
            built[missing] = True
        return tuple(events[at].tolist())

    def release_span_events(self) -> None:
        """Forget the event objects spans made (a million events' worth is ~100 MB that no
        table after the derived texts reads)."""
        self._span_events.clear()

    # ---- labels ------------------------------------------------------------------------
    def labels(self, cont: int, rows):
        """SpanLabels for planted facts and secrets inside ``rows`` (facts first, each in
        its table's order)."""
        label_rows, labels = self._cont_labels(cont)
        if not len(label_rows) or not len(rows):
            return ()
        at = np.asarray(rows, dtype=np.int64)
        if at.size > 1 and (at[1:] < at[:-1]).any():
            at = np.sort(at)
        i = np.minimum(np.searchsorted(at, label_rows), at.size - 1)
        return tuple(labels[at[i] == label_rows].tolist())

    def _cont_labels(self, cont: int):
        """The planted labels of continuity ``cont`` located in its rows (where the text
        index found them): ``(rows, SpanLabels)``."""
        hit = self._labels.get(cont)
        if hit is not None:
            return hit
        from workbench.summarize.base import SpanLabel

        rows, labels = [], []

        def located(frame, found):
            mine = (frame["continuity"].to_numpy() == cont) & (found >= 0)
            for i, r in zip(found[mine].tolist(), frame.filter(mine).iter_rows(named=True), strict=True):
                rows.append(i)
                yield r, self.text(cont, i)[r["start"]:r["end"]]

        for r, surface in located(self.facts, self.index.fact_rows):
            labels.append(SpanLabel(label_id=r["fact_id"], kind=r["kind"], seq=r["seq"], start=r["start"],
                                    end=r["end"], surface=surface, value=r["answer"], is_fact=True))
        planted = ~self.secrets["negative"].to_numpy()
        for r, surface in located(self.secrets, np.where(planted, self.index.secret_rows, -1)):
            label = r["secret_id"] if r["part"] == 0 else f"{r['secret_id']}#{r['part']}"
            labels.append(SpanLabel(label_id=label, kind=r["kind"], seq=r["seq"], start=r["start"],
                                    end=r["end"], surface=surface, value=r["value"], is_fact=False))
        table = np.empty(len(labels), dtype=object)  # (an object array: a span's labels are one gather)
        table[:] = labels
        hit = self._labels[cont] = (np.asarray(rows, dtype=np.int64), table)
        return hit

    # ---- search indexes ----------------------------------------------------------------
    @property
    def leak_scanner(self) -> LeakScanner:
        """Every leak fragment of every planted (non-negative) secret value."""
        if self._leak_scanner is None:
            self._leak_scanner = LeakScanner(self.index.leak_values, self.index.fragments)
        return self._leak_scanner

    @property
    def answers(self) -> PatternIndex:
        """Every planted fact's answer (``.values``, ``.key_of``)."""
        if self._answers is None:
            self._answers = PatternIndex.of_values(self.facts["answer"].to_list())
        return self._answers

    @property
    def negatives(self) -> PatternIndex:
        """Every hard negative's value (``.values``, ``.key_of``)."""
        if self._negatives is None:
            import polars as pl

            self._negatives = PatternIndex.of_values(self.secrets.filter(pl.col("negative"))["value"].to_list())
        return self._negatives

    @property
    def fact_forms(self) -> FormIndex:
        """Every planted fact's answer in its other forms (``.key_of[(kind, answer)]``)."""
        if self._fact_forms is None:
            self._fact_forms = FormIndex(list(zip(self.facts["kind"].to_list(), self.facts["answer"].to_list(),
                                                  strict=True)))
        return self._fact_forms
