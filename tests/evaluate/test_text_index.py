"""The dataset's text index stored beside it (workbench/evaluate/text_index.py): the same
evaluation with and without it, rebuilt when the dataset changed, never trusted or
replaced when the workbench did not write it; sweep workers read it once; a CLI
evaluation stores the one it built for the next."""

from __future__ import annotations

import shutil

import numpy as np
import orjson
import polars as pl
import pytest

from workbench.evaluate import dataset_text, text_index
from workbench.rundir.markers import read_marker
from workbench.rundir.names import TEXT_INDEX
from workbench.synth.generate import GeneratorConfig, generate_dataset


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("text-index")
    return [generate_dataset(GeneratorConfig(profile="coding", events=2500, seed=s), root / f"d{s}")
            for s in (1, 2)]


@pytest.fixture
def fresh(datasets, tmp_path):
    """A copy of the first dataset (its own directory, no index yet), and no index held in
    this process."""
    from workbench.continuity.dataset import load_dataset

    dataset_text._RECENT.clear()
    shutil.copytree(datasets[0].path, tmp_path / "d")
    yield load_dataset(tmp_path / "d")
    dataset_text._RECENT.clear()


def same_index(a: text_index.TextIndex, b: text_index.TextIndex) -> None:
    assert a.texts == b.texts
    assert a.by_cont.keys() == b.by_cont.keys()
    for c in a.by_cont:
        for k in a.by_cont[c]:
            assert a.by_cont[c][k].dtype == b.by_cont[c][k].dtype
            assert np.array_equal(a.by_cont[c][k], b.by_cont[c][k])
    assert a.facts.equals(b.facts) and a.secrets.equals(b.secrets)
    assert np.array_equal(a.fact_rows, b.fact_rows) and np.array_equal(a.secret_rows, b.secret_rows)
    assert a.mention_rows.keys() == b.mention_rows.keys()
    assert all(np.array_equal(a.mention_rows[f], b.mention_rows[f]) for f in a.mention_rows)
    assert a.leak_values == b.leak_values and a.fragments == b.fragments


def test_the_stored_index_is_the_built_one_and_the_marker_claims_it(fresh):
    assert text_index.read(fresh) is None
    assert text_index.write(fresh) == "written"
    marker = read_marker(fresh.path)
    assert TEXT_INDEX in marker.entries and marker.files[TEXT_INDEX]["sha256"]
    stored = text_index.read(fresh)
    built = text_index.build(fresh)
    same_index(stored, built)
    assert built.secret_rows.max() >= 0 and len(built.fragments) > 0  # labels located, fragments kept
    assert text_index.write(fresh) == "current"


def test_an_evaluation_is_the_same_with_and_without_the_stored_index(fresh):
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.evaluate.pipeline import evaluate_run

    policy = get_policy("openclaw-flush", {"provider.context_window": 40_000})
    result = simulate(fresh, [policy], engine="kernel")
    loads = dict(dataset_text.LOADS)
    without = evaluate_run(result, fresh)
    assert dataset_text.LOADS["built"] == loads["built"] + 1
    dataset_text._RECENT.clear()
    text_index.write(fresh)
    with_index = evaluate_run(result, fresh)
    assert dataset_text.LOADS["read"] == loads["read"] + 1
    for name in ("texts", "leakage", "over_redaction", "retention", "compactions", "generations"):
        assert with_index[name].height > 0 or name == "over_redaction"
        assert with_index[name].equals(without[name]), name
    assert orjson.dumps(with_index["report"]) == orjson.dumps(without["report"])


def test_an_index_of_other_files_is_rebuilt(fresh, datasets):
    """Ours (the marker lists it with its bytes) but built from another dataset's files: not
    read, and replaced by the current one."""
    from workbench.rundir.output import write_file

    other = datasets[1]
    stale = text_index.to_bytes(text_index.build(other), text_index.dataset_digest(other))
    write_file(fresh.path, TEXT_INDEX, stale)
    assert text_index.read(fresh) is None
    assert text_index.write(fresh) == "written"
    same_index(text_index.read(fresh), text_index.build(fresh))
    assert (fresh.path / TEXT_INDEX).read_bytes() != stale


def test_a_file_the_workbench_did_not_write_is_neither_read_nor_replaced(fresh):
    # a valid index of this very dataset, but put there by someone else
    foreign = text_index.to_bytes(text_index.build(fresh), text_index.dataset_digest(fresh))
    (fresh.path / TEXT_INDEX).write_bytes(foreign)
    assert text_index.read(fresh) is None
    assert text_index.write(fresh) == "foreign"
    assert (fresh.path / TEXT_INDEX).read_bytes() == foreign
    assert TEXT_INDEX not in read_marker(fresh.path).entries
    loads = dict(dataset_text.LOADS)
    dataset_text.DatasetText.of(fresh)
    assert {**loads, "built": loads["built"] + 1} == dataset_text.LOADS


def test_an_index_changed_after_the_workbench_wrote_it_is_not_trusted(fresh):
    assert text_index.write(fresh) == "written"
    path = fresh.path / TEXT_INDEX
    changed = text_index.to_bytes(text_index.build(fresh), text_index.dataset_digest(fresh)) + b"\0"
    path.write_bytes(changed)
    assert text_index.read(fresh) is None
    assert text_index.write(fresh) == "foreign"
    assert path.read_bytes() == changed


def test_a_cli_evaluation_stores_the_index_it_built_and_the_next_one_reads_it(fresh, tmp_path):
    from typer.testing import CliRunner

    from workbench.cli import app

    def evaluate(name: str) -> None:
        dataset_text._RECENT.clear()  # (each command as if in its own process)
        r = CliRunner().invoke(app, ["simulate", "--dataset", str(fresh.path), "--policy", "openclaw-flush",
                                     "--evaluate", "--out", str(tmp_path / name)])
        assert r.exit_code == 0, r.output

    loads = dict(dataset_text.LOADS)
    evaluate("first")
    assert {**loads, "built": loads["built"] + 1} == dataset_text.LOADS
    assert TEXT_INDEX in read_marker(fresh.path).entries
    same_index(text_index.read(fresh), text_index.build(fresh))
    evaluate("second")
    assert {"built": loads["built"] + 1, "read": loads["read"] + 1} == dataset_text.LOADS
    dataset_text._RECENT.clear()
    r = CliRunner().invoke(app, ["audit", "redaction", "--run", str(tmp_path / "second")])
    assert r.exit_code == 0, r.output
    assert {"built": loads["built"] + 1, "read": loads["read"] + 2} == dataset_text.LOADS


def test_an_evaluation_keeping_its_index_leaves_a_file_it_did_not_write_alone(fresh):
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.evaluate.pipeline import evaluate_run

    foreign = b"not an index"
    (fresh.path / TEXT_INDEX).write_bytes(foreign)
    result = simulate(fresh, [get_policy("openclaw-flush", {"provider.context_window": 40_000})])
    assert evaluate_run(result, fresh, compactions=False, keep_index=True)["texts"].height > 0
    assert (fresh.path / TEXT_INDEX).read_bytes() == foreign
    assert TEXT_INDEX not in read_marker(fresh.path).entries


def test_sweep_workers_keep_their_state_and_read_the_stored_index(datasets, tmp_path):
    """One worker, four evaluated runs: the dataset is prepared once, its text index read
    (the driver stored it) and never built in the worker."""
    from workbench.sweep.runner import RESULTS_DIR, run_sweep
    from workbench.sweep.spec import SweepSpec

    shutil.copytree(datasets[1].path, tmp_path / "d")
    spec = SweepSpec.from_dict({"name": "t", "dataset": str(tmp_path / "d"), "base": "openclaw-flush",
                                "parameters": {"trigger.reserve_tokens": [8_000, 12_000, 16_000, 20_000],
                                               "provider.context_window": 40_000},
                                "evaluate": True, "seeds": [0]})
    report = run_sweep(spec, tmp_path / "sweep", executor="process", workers=1)
    assert report.completed == 4
    metas = [orjson.loads(p.read_bytes()) for p in sorted((tmp_path / "sweep" / RESULTS_DIR).glob("*.json"))]
    assert len({m["worker"] for m in metas}) == 1
    last = max(metas, key=lambda m: m["finished_at"])
    assert max(m["worker_loads"]["prepared"] for m in metas) == 1
    assert {m["worker_loads"]["text_index_built"] for m in metas} == {0}
    assert {m["worker_loads"]["text_index_read"] for m in metas} == {1}, last
    assert (tmp_path / "d" / TEXT_INDEX).is_file()
    frame = pl.read_parquet(tmp_path / "sweep" / RESULTS_DIR / f"{metas[0]['run_id']}.parquet")
    assert frame["retention"].is_not_null().all()


def test_building_the_index_imports_neither_pandas_nor_pyarrow_dataset(datasets):
    """An evaluated run's start-up: reading the events dictionary-encoded must not pull in
    pyarrow.dataset and pandas (seconds of imports an evaluation never uses)."""
    import subprocess
    import sys

    code = ("import sys; from workbench.continuity.dataset import load_dataset; "
            "from workbench.evaluate import text_index; "
            f"index = text_index.build(load_dataset({str(datasets[0].path)!r})); "
            "print(len(index.texts) > 0, [m for m in ('pandas', 'pyarrow.dataset') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == "True []"


def test_a_one_shot_audit_releases_what_it_derived_and_a_second_is_identical(fresh):
    from workbench.audits import redaction_audit
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate

    result = simulate(fresh, [get_policy("openclaw-flush", {"provider.context_window": 40_000})])
    first = redaction_audit(result, fresh)
    dt = dataset_text.DatasetText.of(fresh)
    assert not dt.summaries and not dt.redactions and not dt._span_events
    assert not dt.leak_scanner._text and not dt.leak_scanner._line
    second = redaction_audit(result, fresh)
    for name, frame in first.tables.items():
        assert frame.equals(second.tables[name]), name
