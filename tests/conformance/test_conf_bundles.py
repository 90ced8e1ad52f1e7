"""Per-request context bundles (``rip.context_bundle.v1``, ``bundles.parquet`` written by the
redaction audit) and the conformance check that each ``summary_ref`` resolves in the run's
artifact store (ADR-0011 §3: no hidden reads)."""

from __future__ import annotations

import polars as pl
import pytest
from typer.testing import CliRunner

from workbench.audits import conformance_audit, redaction_audit
from workbench.cli import app
from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.evaluate.bundles import bundle_document, context_bundles
from workbench.evaluate.context import ContextTracker
from workbench.rundir import names as N
from workbench.rundir.artifacts import ARTIFACTS, BLOBS
from workbench.rundir.read import load_run
from workbench.synth.generate import GeneratorConfig, generate_dataset

SMALL = {"provider.context_window": 25_000}


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bundles")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=900, seed=5), tmp / "ds")
    policies = [get_policy("llm-summary", SMALL), get_policy("observation-masking", SMALL),
                get_policy("rip-adr0011", {**SMALL, "trigger.every_messages": 60,
                                           "compile.recent_messages_limit": 12}),
                get_policy("rip-adr0011", {**SMALL, "trigger.every_messages": 60, "compile.strategy":
                                           "recent_messages_v1"}, rename="recent-only")]
    run = simulate(ds, policies, engine="reference").write(tmp / "run")
    result, ds = load_run(run)
    redaction_audit(result, ds).write(run)
    return run, result


def test_a_bundle_is_the_compiled_context(audited):
    """Expanded, each bundle's items are what the context tracker compiles (head, retained,
    one summary_ref per summary shown, the raw window with its placeholders), request by
    request; recent_messages_v1 bundles hold no summary_ref."""
    run, result = audited
    bundles = pl.read_parquet(run / N.BUNDLES)
    assert bundles.equals(context_bundles(result))
    n_requests = sum(inp.n_requests for inp in result.inputs.values())
    assert bundles.height == 4 * n_requests
    inp = next(iter(result.inputs.values()))
    from workbench.evaluate.texts import policies_of

    for name, policy in policies_of(result).items():
        tracker = ContextTracker(inp, policy, result.events, record=result.prompt_record(name, inp.continuity_id))
        rows = bundles.filter(pl.col("policy") == name).sort("request").iter_rows(named=True)
        for r, row in enumerate(rows):
            tracker.advance(r)
            doc = bundle_document(row, inp, policy)
            assert doc["schema"] == "rip.context_bundle.v1"
            p = int(inp.req_first_row[r])
            want = [*tracker.head(p), *tracker.state.retained]
            refs = [a for a, _ in tracker.shown_segments]
            k = int(tracker.main_calls[r])
            shown = tracker.record.tail_rows(k).tolist()
            events = [i for i in doc["items"] if i["type"] != "summary_ref"]
            assert [e["seq"] for e in events] == [int(inp.seq[i]) for i in [*want, *shown]], (name, r)
            assert [i["artifact_id"] for i in doc["items"] if i["type"] == "summary_ref"] == refs
            # the placeholders are the tail rows the prompt held in place of their text: the
            # record's tail less its full rows (no preset here prunes)
            full = set(tracker.raw_rows(r))
            masked = {int(inp.seq[i]) for i in shown if i not in full}
            assert {e["seq"] for e in events if e["placeholder"]} == masked, (name, r)
    per_policy = bundles.group_by("policy").agg(pl.col("summary_refs").list.len().sum().alias("refs"),
                                                pl.col("placeholder_seqs").list.len().sum().alias("masked"))
    got = dict(per_policy.select("policy", "refs").iter_rows())
    assert got["recent-only"] == 0 and got["rip-adr0011"] > 0 and got["llm-summary"] > 0
    assert dict(per_policy.select("policy", "masked").iter_rows())["observation-masking"] > 0


def test_every_summary_ref_resolves_and_a_broken_one_fails_the_audit(audited, tmp_path):
    import shutil

    run, _ = audited
    res = conformance_audit(run)
    refs = res.details["bundle_summary_refs"]
    assert res.passed and refs["summary_refs"] > 0 and refs["unresolved"] == 0

    broken = shutil.copytree(run, tmp_path / "broken")
    bundles = pl.read_parquet(broken / N.BUNDLES)
    k = bundles["summary_refs"].list.len().arg_max()
    bundles = bundles.with_columns(summary_refs=pl.when(pl.int_range(pl.len()) == k)
                                   .then(pl.lit(["0" * 64], dtype=pl.List(pl.String)))
                                   .otherwise(pl.col("summary_refs")))
    bundles.write_parquet(broken / N.BUNDLES)
    res = conformance_audit(broken)
    refs = res.details["bundle_summary_refs"]
    assert res.passed is False and refs["unresolved"] == 1
    assert f"summary_ref {'0' * 64} is not in the artifact store" in refs["problems"][0]
    r = CliRunner().invoke(app, ["audit", "conformance", "--run", str(broken)])
    assert r.exit_code == 1 and "1 not resolved in the artifact store" in r.output, r.output

    # a blob a bundle references removed: every bundle naming it fails
    gone = shutil.copytree(run, tmp_path / "gone")
    art = pl.read_parquet(gone / N.BUNDLES)["summary_refs"].explode().drop_nulls()[0]
    (gone / ARTIFACTS / BLOBS / art).unlink()
    refs = conformance_audit(gone).details["bundle_summary_refs"]
    assert refs["unresolved"] >= 1 and "does not resolve" in refs["problems"][0]


def test_provider_items_are_bundled_as_provider_items_not_summary_refs(tmp_path):
    """An opaque provider-window item is in the context but is no readable memory (Holon
    §4.2): the run's store holds no document of it, so a bundle names it as a
    ``provider_item``, never as a ``summary_ref`` that would not resolve."""
    ds = generate_dataset(GeneratorConfig(profile="coding", events=900, seed=5), tmp_path / "ds")
    run = simulate(ds, [get_policy("codex-remote", SMALL), get_policy("openai-responses-compact", SMALL)],
                   engine="reference").write(tmp_path / "run")
    result, ds = load_run(run)
    redaction_audit(result, ds).write(run)
    bundles = pl.read_parquet(run / N.BUNDLES)
    opaque = set(result.events.filter(pl.col("summary_kind") == "provider_opaque_v1")["summary_artifact_id"])
    provider = set(bundles["provider_items"].explode().drop_nulls())
    assert opaque and provider and provider <= opaque
    assert bundles["summary_refs"].list.len().sum() == 0
    res = conformance_audit(run)
    assert res.passed and res.details["bundle_summary_refs"]["unresolved"] == 0
    row = bundles.filter(pl.col("provider_items").list.len() > 0).row(0, named=True)
    doc = bundle_document(row, result.inputs[row["continuity_id"]], get_policy(row["policy"], SMALL))
    assert [i["compaction_id"] for i in doc["items"] if i["type"] == "provider_item"] == row["provider_items"]


def test_the_bundle_table_is_built_column_by_column_as_its_rows(audited):
    """The columnar table holds exactly the rows the context tracker gives request by request
    (lists empty, not null; raw window null before the head fills)."""
    from workbench.evaluate.bundles import BUNDLE_SCHEMA, _schema
    from workbench.evaluate.texts import policies_of

    _, result = audited
    rows = []
    for name, policy in policies_of(result).items():
        for inp in result.inputs.values():
            tracker = ContextTracker(inp, policy, result.events, record=result.prompt_record(name, inp.continuity_id))
            seq = inp.seq.tolist()
            for r in range(inp.n_requests):
                tracker.advance(r)
                p = int(inp.req_first_row[r])
                shown = tracker.record.tail_rows(int(tracker.main_calls[r])).tolist()
                full = set(tracker.raw_rows(r))
                segs = [a for a, _ in tracker.shown_segments]
                rows.append({"run_id": result.run_id, "policy": name, "continuity_id": inp.continuity_id,
                             "request": r, "schema": BUNDLE_SCHEMA, "strategy": tracker.policy.compile.strategy,
                             "compile_from_seq": seq[p - 1] if p > 0 else -1,
                             "head_seqs": [seq[i] for i in tracker.head(p)],
                             "retained_seqs": [seq[i] for i in tracker.state.retained],
                             "summary_refs": [a for a in segs if a not in tracker.opaque_ids],
                             "provider_items": [a for a in segs if a in tracker.opaque_ids],
                             "raw_from_seq": seq[shown[0]] if shown else None,
                             "raw_to_seq": seq[shown[-1]] if shown else None,
                             "placeholder_seqs": [seq[i] for i in shown if i not in full]})
    table = context_bundles(result)
    assert table.schema == pl.Schema(_schema())
    assert table.equals(pl.DataFrame(rows, schema=_schema()))
    assert table["placeholder_seqs"].null_count() == 0 and table["placeholder_seqs"].list.len().sum() > 0


def test_building_the_bundles_does_not_import_pandas(tmp_path):
    """The bundle table's list columns reach Arrow through polars: ``pyarrow.array`` would
    import pandas (about a second of CPU in a one-shot evaluated run that never uses it)."""
    import subprocess
    import sys

    generate_dataset(GeneratorConfig(profile="coding", events=300, seed=2), tmp_path / "d")
    code = ("import sys; from workbench.continuity.dataset import load_dataset; "
            "from workbench.engine.presets import get_policy; from workbench.engine.run import simulate; "
            "from workbench.evaluate.bundles import context_bundles; "
            f"ds = load_dataset({str(tmp_path / 'd')!r}); "
            "r = simulate(ds, [get_policy('llm-summary', {'provider.context_window': 25000})]); "
            "before = 'pandas' in sys.modules; t = context_bundles(r); "
            "print(t.height > 0, before, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[0] == "True False False", out.stdout + out.stderr
