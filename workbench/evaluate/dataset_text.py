"""A dataset's event text and planted labels, indexed once for every evaluation of it.

On an imported dataset (no planted facts) the facts its logs name stand in for planted
ones (:mod:`workbench.evaluate.log_facts`), with the rows of every event that names each.

Event text is dictionary-encoded (each distinct text is one Python string, events hold its
code), so a million events that repeat a few thousand texts cost a few thousand strings,
and every memo keyed by text hits. Planted facts and secrets are located once (their event
row), and the search indexes the evaluations use — every leak fragment of every planted
secret, every fact answer, every hard-negative value — are built once, on first use.

:meth:`DatasetText.of` keeps the index of the last datasets used in this process (by path
and file hashes), so the runs of a sweep evaluated by one worker share it, and with it the
memoised summaries, redactions and scans.

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

from pathlib import Path
from typing import Any

import numpy as np

from workbench.continuity.enums import KIND_NAMES, ROLE_NAMES
from workbench.evaluate.matching import FormIndex, LeakScanner, Memo, PatternIndex

_RECENT: dict[tuple, DatasetText] = {}
RECENT_DATASETS = 2


def _text_codes(column) -> tuple[list[str], np.ndarray]:
    """``(texts, codes)`` of a dictionary-encoded Arrow text column: its distinct texts (a
    null read as "") and each row's index into them (int32)."""
    import pyarrow as pa

    if column.num_chunks == 0:
        return [], np.zeros(0, dtype=np.int32)
    column = pa.table({"t": column}).unify_dictionaries().column("t")
    texts = ["" if t is None else t for t in column.chunk(0).dictionary.to_pylist()]
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) if c.indices.null_count == 0
                            else c.indices.fill_null(-1).to_numpy() for c in column.chunks]).astype(np.int32)
    if (codes < 0).any():  # a null text reads as ""
        empty = texts.index("") if "" in texts else len(texts)
        if empty == len(texts):
            texts.append("")
        codes[codes < 0] = empty
    return texts, codes


class DatasetText:
    """Event text and planted labels of a dataset, by (continuity index, row)."""

    def __init__(self, dataset):
        import polars as pl

        # the text read dictionary-encoded: the distinct texts and a code per event, never a
        # string per event (a million events of a few thousand texts would take 600 MB)
        table = dataset.events_table(["continuity", "seq", "kind", "role", "text"], dictionary=["text"])
        self.texts, codes = _text_codes(table.column("text"))
        ev = pl.from_arrow(table.drop_columns(["text"])).with_columns(pl.Series("code", codes))
        self.by_cont: dict[int, dict[str, Any]] = {}
        for (c,), part in ev.partition_by("continuity", as_dict=True, maintain_order=True).items():
            part = part.sort("seq")
            self.by_cont[int(c)] = {"seq": part["seq"].to_numpy(), "code": part["code"].to_numpy(),
                                    "kind": part["kind"].to_numpy(), "role": part["role"].to_numpy()}
        self.facts = dataset.facts()
        # rows of every event naming a fact, beside its own row (the facts of a real log are
        # named again and again; a planted fact only where it was planted)
        self.mention_rows: dict[str, np.ndarray] = {}
        if self.facts.height == 0 and "import" in dataset.manifest:
            self._use_log_facts(dataset)
        self.secrets = dataset.secrets()
        self._labels: dict[int, tuple[np.ndarray, list]] = {}
        self._span_events: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._leak_scanner: LeakScanner | None = None
        self._answers: PatternIndex | None = None
        self._negatives: PatternIndex | None = None
        self._fact_forms: FormIndex | None = None
        # derived work, by what produced it (see workbench.evaluate.texts)
        self.summaries: Memo = Memo(50_000)
        self.redactions: Memo = Memo(50_000)
        self.baselines: Memo = Memo(50_000)

    def _use_log_facts(self, dataset) -> None:
        """An imported log has no planted facts: the facts it names stand in for them
        (:func:`workbench.evaluate.log_facts.dataset_log_facts`)."""
        from workbench.evaluate.log_facts import dataset_log_facts

        facts = dataset_log_facts(dataset)
        for fid, cont, seqs in zip(facts["fact_id"].to_list(), facts["continuity"].to_list(),
                                   facts["mention_seqs"].to_list(), strict=True):
            own = self.by_cont[int(cont)]["seq"]
            self.mention_rows[fid] = np.searchsorted(own, np.asarray(seqs, dtype=np.int64))
        self.facts = facts.drop("mention_seqs")

    @classmethod
    def of(cls, dataset) -> DatasetText:
        """The index of ``dataset``, reused while the dataset's files are unchanged."""
        files = dataset.manifest.get("files", {})
        key = (str(Path(dataset.path).resolve()),
               tuple(sorted((f, meta.get("sha256")) for f, meta in files.items())))
        hit = _RECENT.pop(key, None)
        if hit is None:
            hit = cls(dataset)
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
        """The events of ``rows`` as summarizer inputs (each built once, then shared)."""
        cache = self._span_events.get(cont)
        if cache is None:  # (object and flag arrays: a span of thousands of rows is gathered in C)
            n = len(self.by_cont[cont]["seq"])
            cache = self._span_events[cont] = (np.empty(n, dtype=object), np.zeros(n, dtype=bool))
        events, built = cache
        at = np.asarray(rows, dtype=np.int64)
        missing = np.unique(at[~built[at]])
        if missing.size:
            from workbench.summarize.base import SpanEvent

            d, texts = self.by_cont[cont], self.texts
            for r, seq, kind, role, code in zip(missing.tolist(), d["seq"][missing].tolist(),
                                                d["kind"][missing].tolist(), d["role"][missing].tolist(),
                                                d["code"][missing].tolist(), strict=True):
                events[r] = SpanEvent(seq=seq, kind=KIND_NAMES[kind], role=ROLE_NAMES[role], text=texts[code])
            built[missing] = True
        return tuple(events[at].tolist())

    # ---- labels ------------------------------------------------------------------------
    def labels(self, cont: int, rows):
        """SpanLabels for planted facts and secrets inside ``rows`` (facts first, each in
        its table's order)."""
        label_rows, labels = self._cont_labels(cont)
        if not len(label_rows) or not len(rows):
            return ()
        keep = np.isin(label_rows, np.asarray(rows, dtype=np.int64))
        return tuple(lb for lb, k in zip(labels, keep.tolist(), strict=True) if k)

    def _cont_labels(self, cont: int):
        hit = self._labels.get(cont)
        if hit is not None:
            return hit
        import polars as pl

        from workbench.summarize.base import SpanLabel

        seqs = self.by_cont[cont]["seq"]
        rows, labels = [], []

        def located(frame):
            for r in frame.iter_rows(named=True):
                i = int(np.searchsorted(seqs, r["seq"]))
                if i < len(seqs) and seqs[i] == r["seq"]:
                    yield i, r, self.text(cont, i)[r["start"]:r["end"]]

        f = self.facts.filter(pl.col("continuity") == cont)
        for i, r, surface in located(f):
            rows.append(i)
            labels.append(SpanLabel(label_id=r["fact_id"], kind=r["kind"], seq=r["seq"], start=r["start"],
                                    end=r["end"], surface=surface, value=r["answer"], is_fact=True))
        s = self.secrets.filter((pl.col("continuity") == cont) & ~pl.col("negative"))
        for i, r, surface in located(s):
            rows.append(i)
            label = r["secret_id"] if r["part"] == 0 else f"{r['secret_id']}#{r['part']}"
            labels.append(SpanLabel(label_id=label, kind=r["kind"], seq=r["seq"], start=r["start"],
                                    end=r["end"], surface=surface, value=r["value"], is_fact=False))
        hit = self._labels[cont] = (np.asarray(rows, dtype=np.int64), labels)
        return hit

    # ---- search indexes ----------------------------------------------------------------
    @property
    def leak_scanner(self) -> LeakScanner:
        """Every leak fragment of every planted (non-negative) secret value."""
        if self._leak_scanner is None:
            import polars as pl

            values = self.secrets.filter(~pl.col("negative"))["value"].unique(maintain_order=True)
            self._leak_scanner = LeakScanner(values.to_list())
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
