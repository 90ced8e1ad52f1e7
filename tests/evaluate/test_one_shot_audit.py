"""The one-shot redaction audit (``simulate --evaluate``, issue 30): writing its tables as they
are final and freeing the replay's records once read changes no byte of what it writes."""

from __future__ import annotations

import importlib.util

import polars as pl
import pytest
from scaled_presets import on_window

from workbench.audits import redaction_audit
from workbench.engine.presets import PRESETS, get_policy
from workbench.engine.run import simulate
from workbench.rundir import names as N
from workbench.synth.generate import GeneratorConfig, generate_dataset

ENGINE = "kernel" if importlib.util.find_spec("workbench.engine.kernel") else "reference"
WINDOW = 25_000
AUDIT_FILES = (N.TEXTS, N.LEAKAGE, N.OVER_REDACTION, N.RETENTION, N.COMPACTIONS, N.GENERATIONS,
               N.SUMMARY_SAMPLES, N.PROBES, N.BUNDLES, N.EVALUATION)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return generate_dataset(GeneratorConfig(profile="coding", events=1500, seed=4, secrets=40, facts=12),
                            tmp_path_factory.mktemp("one-shot") / "ds")


def _policies():
    off = get_policy("llm-summary", {"redaction.sr1_carry_forward": False}, rename="summary-sr1-off")
    return [on_window(PRESETS[n], WINDOW) for n in ("openclaw-flush", "llm-summary", "letta", "codex-local")] + [
        on_window(off, WINDOW)]


@pytest.mark.parametrize("samples, baseline", [(1, False), (2, True)])
def test_one_shot_audit_writes_the_same_files_and_frees_the_replay(dataset, tmp_path, samples, baseline):
    kept = simulate(dataset, _policies(), engine=ENGINE)
    kept_dir = kept.write(tmp_path / "kept")
    audit = redaction_audit(kept, dataset, summary_samples=samples, baseline=baseline)
    audit.write(kept_dir)

    once = simulate(dataset, _policies(), engine=ENGINE)
    once_dir = once.write(tmp_path / "once")
    streamed = redaction_audit(once, dataset, summary_samples=samples, baseline=baseline, into=once_dir)

    for name in AUDIT_FILES:
        assert (once_dir / name).read_bytes() == (kept_dir / name).read_bytes(), name
    assert streamed.documents == audit.documents and streamed.tables == {}
    # what only the audit read of the replay is gone; what the CLI prints after it is not
    assert once.ledger is None and once.prompts == {}
    assert once.summary.equals(kept.summary) and once.run_id == kept.run_id
    # and the run directory is a complete run with the audit's files in its marker
    from workbench.rundir.markers import read_marker

    marker = read_marker(once_dir)
    assert set(AUDIT_FILES) <= set(marker.entries)
    assert marker.entries == read_marker(kept_dir).entries


def test_the_generation_table_is_built_once_the_texts_scans_are_freed(dataset, tmp_path, monkeypatch):
    """The generation table is a million-event evaluation's largest frame: a one-shot audit
    builds it after the texts' scans and the dataset's memos of whole texts are dropped."""
    from workbench.evaluate import compactions as C
    from workbench.evaluate.dataset_text import DatasetText

    seen: list = []
    table, release = C.Generations.table, C.TextScans.release

    def spy_table(self):
        dt = DatasetText.of(dataset)
        seen.append(("table", len(dt.fact_forms._memo), len(dt.answer_scans), len(dt.leak_scanner._text)))
        return table(self)

    def spy_release(self):
        release(self)
        seen.append(("release", len(self.row)))

    monkeypatch.setattr(C.Generations, "table", spy_table)
    monkeypatch.setattr(C.TextScans, "release", spy_release)
    once = simulate(dataset, _policies(), engine=ENGINE)
    redaction_audit(once, dataset, into=once.write(tmp_path / "once"))
    assert seen == [("release", 0), ("table", 0, 0, 0)]


def test_each_summary_is_scanned_for_answers_once(dataset, monkeypatch):
    """Retention and the compaction inspector ask the same summaries which answers they hold:
    the dataset's index scans each distinct text once for both."""
    from collections import Counter

    from workbench.evaluate.dataset_text import DatasetText
    from workbench.evaluate.pipeline import evaluate_run

    dt = DatasetText.of(dataset)
    getattr(dt, "answer_scans", {}).clear()  # (scans an earlier test left)
    answers = dt.answers
    scanned: Counter = Counter()
    keys_in = answers.keys_in

    def counting(text):
        scanned[text] += 1
        return keys_in(text)

    monkeypatch.setattr(answers, "keys_in", counting)
    ev = evaluate_run(simulate(dataset, _policies(), engine=ENGINE), dataset)
    summaries = set(ev["texts"].filter(pl.col("kind") == "summary")["text"].drop_nulls().to_list())
    assert summaries and {scanned[t] for t in summaries} == {1}
