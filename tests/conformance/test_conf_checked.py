"""A conformance audit says how much it checked, and one that checked no checkpoint fails
instead of passing on nothing (issue 20: tests and audits that cannot fail)."""

from __future__ import annotations

import polars as pl
from typer.testing import CliRunner

from workbench.audits import conformance_audit
from workbench.cli import app
from workbench.engine.run import simulate
from workbench.synth.generate import GeneratorConfig, generate_dataset


def test_a_run_without_checkpoints_fails_and_says_why(tmp_path):
    ds = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp_path / "d")
    quiet = simulate(ds, ["no-compaction"], engine="reference").write(tmp_path / "quiet")
    res = conformance_audit(quiet)
    assert res.details["invariants_passed"] is True  # nothing was wrong: nothing was there
    assert res.details["checked"]["checkpoints"] == 0 and res.passed is False
    r = CliRunner().invoke(app, ["audit", "conformance", "--run", str(quiet)])
    assert r.exit_code == 1 and "no checkpoint to check" in r.output and "FAIL" in r.output, r.output

    busy = simulate(ds, ["llm-summary"], engine="reference").write(tmp_path / "busy")
    res = conformance_audit(busy)
    events = res.details["checked"]
    assert res.passed is True and events["checkpoints"] == events["memory_compacted"] > 0
    r = CliRunner().invoke(app, ["audit", "conformance", "--run", str(busy)])
    assert r.exit_code == 0 and f"checked {events['checkpoints']:,} checkpoints" in r.output, r.output


def test_the_audit_reads_the_runs_own_artifact_store_and_a_rewritten_blob_fails(tmp_path):
    """Every artifact of a written run is a blob named by the hash of its canonical document;
    the conformance audit reads those blobs, so a blob rewritten or removed after the run
    fails it (the check used to read documents it had just built from the events)."""
    import orjson
    import pytest

    from workbench.errors import WorkbenchError
    from workbench.rundir.artifacts import ARTIFACTS, BLOBS, INDEX, blob_id, canonical, write_blobs

    ds = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp_path / "d")
    run = simulate(ds, ["llm-summary"], engine="reference").write(tmp_path / "run")
    index = orjson.loads((run / ARTIFACTS / INDEX).read_bytes())
    frames = pl.read_parquet(run / "events.parquet").filter(pl.col("summary_artifact_id").is_not_null())
    assert set(frames["summary_artifact_id"].to_list()) == set(index) and index
    for name in index.values():
        assert blob_id((run / ARTIFACTS / BLOBS / name).read_bytes()) == name
    res = conformance_audit(run)
    assert res.passed and res.documents["conformance.json"]["artifact_store"] == "run"

    art, name = sorted(index.items())[0]
    blob = run / ARTIFACTS / BLOBS / name
    doc = orjson.loads(blob.read_bytes())
    blob.write_bytes(canonical({**doc, "summary": {**doc["summary"], "text": "rewritten"}}))
    res = conformance_audit(run)
    emitted = res.tables["scenarios.parquet"].filter(pl.col("scenario") == "memory-compaction-event-emitted")
    assert res.passed is False and "rewritten" in emitted["detail"][0], emitted["detail"][0]
    with pytest.raises(WorkbenchError, match="refusing to rewrite"):  # written once, never replaced
        write_blobs(run, {art: doc})  # the original document, at its name, over the rewritten blob
    blob.unlink()
    res = conformance_audit(run)
    assert res.passed is False


def test_the_sr1_scenario_checks_the_texts_of_the_run_it_names():
    """Besides its planted sources, the scenario reads the run's own SR-1 texts: a summary
    the run carried forward with a plaintext key in it fails the policy."""
    from workbench.conformance.sr1 import scenario_sr1_carry_forward

    clean = ["Fixed the retry loop; the key stays <REDACTED:aws_access_key_id>."]
    leaked = clean + ["Deploy with the CI token ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 as before."]
    ok = scenario_sr1_carry_forward("llm-summary", run_texts=clean)
    assert ok.status == "pass" and ok.details["run"] == {"texts": 1, "with_redactor_findings": 0}
    bad = scenario_sr1_carry_forward("llm-summary", run_texts=leaked)
    assert bad.status == "fail" and "1 of the run's 2 SR-1 texts" in bad.details["problems"][0]
    bare = scenario_sr1_carry_forward("llm-summary")
    assert bare.status == "pass" and bare.details["run"] is None  # the planted sources only
