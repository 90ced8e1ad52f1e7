"""The compaction inspector's tables (compactions.parquet, generations.parquet): one row per
compaction whose fact counts add up to the facts in the span it dropped, counted here
independently from the dataset's labels; statuses that agree with the stored texts; the
summarizer calls and cache loss the ledger holds; the drift of each dropped label through
the later summaries."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.audits import redaction_audit
from workbench.engine.presets import get_policy
from workbench.engine.run import simulate
from workbench.rundir.read import load_table
from workbench.synth.fact_forms import form_pattern
from workbench.synth.generate import GeneratorConfig, generate_dataset

ANCHORED = "llm-summary-anchored"
NO_SR1 = "llm-summary-no-sr1"
OPTIONS = {"p_paraphrase_fact": 0.15, "p_copy_secret": 0.6, "p_partial_secret": 0.2}


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    root = tmp_path_factory.mktemp("compactions")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=2, facts=40, secrets=40),
                          root / "ds")
    policies = ["claude-code", "codex-local", "llm-summary", "openai-responses-compact", "no-compaction",
                get_policy("llm-summary", {"redaction.sr1_carry_forward": False}, rename=NO_SR1),
                get_policy("llm-summary", {"compaction.accumulate": True, "compaction.ratio": 0.02},
                           rename=ANCHORED)]
    result = simulate(ds, policies)
    audit = redaction_audit(result, ds, summarizer_options=OPTIONS)
    run = result.write(root / "run")
    audit.write(run)
    return {"result": result, "ds": ds, "run": run, "audit": audit,
            "compactions": load_table(run, "compactions", required=True),
            "generations": load_table(run, "generations", required=True),
            "texts": audit.details["evaluation"]["texts"]}


def _planted(ds):
    facts = ds.facts().select("fact_id", "seq", "kind", "answer")
    secrets = ds.secrets().filter(~pl.col("negative")).select("secret_id", "seq", "value")
    return facts, secrets


def test_one_row_per_compaction(audited):
    c, summary = audited["compactions"], audited["result"].summary
    per = c.group_by("policy", "continuity_id").len()
    for r in summary.iter_rows(named=True):
        n = per.filter((pl.col("policy") == r["policy"]) & (pl.col("continuity_id") == r["continuity_id"]))
        assert (n["len"][0] if n.height else 0) == r["compactions"], r["policy"]
    assert c.filter(pl.col("policy") == "llm-summary").height > 10
    # rows are numbered per policy and continuity, in request order
    for (_, _), part in c.group_by("policy", "continuity_id"):
        assert part.sort("compaction")["compaction"].to_list() == list(range(part.height))
        assert part.sort("compaction")["request"].is_sorted()


def test_fact_counts_sum_to_the_facts_in_the_dropped_span(audited):
    facts, secrets = _planted(audited["ds"])
    c = audited["compactions"]
    assert c["facts_in_span"].sum() > 20 and c["facts_paraphrased"].sum() > 0 and c["facts_lost"].sum() > 0
    for r in c.iter_rows(named=True):
        dropped = set(r["dropped_seqs"])
        assert len(dropped) == r["dropped_events"]
        in_span = set(facts.filter(pl.col("seq").is_in(list(dropped)))["fact_id"])
        assert r["facts_kept"] + r["facts_paraphrased"] + r["facts_lost"] == r["facts_in_span"] == len(in_span)
        ids = [*r["kept_fact_ids"], *r["paraphrased_fact_ids"], *r["lost_fact_ids"]]
        assert len(ids) == len(set(ids)) and set(ids) == in_span
        assert (len(r["kept_fact_ids"]), len(r["paraphrased_fact_ids"]), len(r["lost_fact_ids"])) == (
            r["facts_kept"], r["facts_paraphrased"], r["facts_lost"])
        sec_in_span = set(secrets.filter(pl.col("seq").is_in(list(dropped)))["secret_id"])
        assert r["secrets_in_span"] == len(sec_in_span)
        assert r["secrets_carried"] == r["secrets_redacted"] + r["secrets_leaked"] <= r["secrets_in_span"]
        assert set(r["leaked_secret_ids"]) | set(r["redacted_secret_ids"]) <= sec_in_span


def test_statuses_agree_with_the_stored_text(audited):
    facts, _ = _planted(audited["ds"])
    answer = {f["fact_id"]: f for f in facts.iter_rows(named=True)}
    texts = audited["texts"]
    stored = dict(zip(texts["artifact_id"].to_list(), texts["text"].to_list(), strict=True))
    checked = 0
    for r in audited["compactions"].iter_rows(named=True):
        text = stored.get(r["artifact_id"]) or ""
        retained = set(r["retained_seqs"])
        for fid in r["kept_fact_ids"]:
            f = answer[fid]
            assert f["answer"] in text or f["seq"] in retained
        for fid in r["paraphrased_fact_ids"]:
            f = answer[fid]
            assert f["answer"] not in text and form_pattern(f["kind"], f["answer"]).search(text)
            checked += 1
        for fid in r["lost_fact_ids"]:
            f = answer[fid]
            assert f["answer"] not in text and not form_pattern(f["kind"], f["answer"]).search(text)
        if r["summary_kind"] in ("provider_opaque_v1", "truncation_v1"):
            assert not r["readable"] and r["facts_kept"] == r["facts_kept_raw"] and r["facts_paraphrased"] == 0
    assert checked > 0
    c = audited["compactions"]
    # codex keeps recent user messages raw across the cut: a fact there is kept raw
    assert c.filter(pl.col("policy") == "codex-local")["retained_seqs"].list.len().sum() > 0
    for r in c.iter_rows(named=True):
        raw = set(r["dropped_seqs"]) & set(r["retained_seqs"])
        assert r["facts_kept_raw"] == facts.filter(pl.col("seq").is_in(list(raw))).height
    # with SR-1 off nothing is redacted; with it on the summarizer's copies are
    off, on = c.filter(pl.col("policy") == NO_SR1), c.filter(pl.col("policy") == "llm-summary")
    assert off["secrets_redacted"].sum() == 0 and off["secrets_leaked"].sum() > 0
    assert on["secrets_redacted"].sum() > 0


def test_summarizer_calls_and_cache_loss_are_the_ledgers(audited):
    ledger, c = audited["result"].ledger, audited["compactions"]
    for name in c["policy"].unique().to_list():
        calls = ledger.filter((pl.col("policy") == name) & pl.col("call_kind").is_in(["compaction", "merge"]))
        part = c.filter(pl.col("policy") == name)
        assert part["summarizer_calls"].sum() == calls.height, name
        assert part["summarizer_cost_usd"].sum() == pytest.approx(calls["cost_usd"].sum(), rel=1e-9, abs=1e-12)
    main = ledger.filter(pl.col("call_kind") == "main")
    for r in c.filter(pl.col("cache_loss_tokens").is_not_null()).head(200).iter_rows(named=True):
        m = main.filter((pl.col("policy") == r["policy"]) & (pl.col("continuity_id") == r["continuity_id"])
                        & (pl.col("request") == r["request"])).row(0, named=True)
        assert r["cache_loss_tokens"] == m["prompt_tokens"] - m["cached_input_tokens"]
        assert r["cache_loss"] == m["cache_loss"]
        assert 0 <= r["cache_loss_usd"] <= m["cost_usd"]
    summarized = c.filter(pl.col("summary_kind") == "llm_summary_v1")
    assert (summarized["cache_loss_usd"] > 0).any()


def test_generations_follow_each_dropped_label(audited):
    c, g = audited["compactions"], audited["generations"]
    facts = g.filter(pl.col("label") == "fact")
    # generation 0 is the compaction's own verdict (no merges in these policies)
    first = facts.filter(pl.col("generation") == 0)
    for r in c.iter_rows(named=True):
        mine = first.filter((pl.col("policy") == r["policy"]) & (pl.col("first_compaction") == r["compaction"]))
        status = dict(zip(mine["label_id"].to_list(), mine["status"].to_list(), strict=True))
        assert sorted(fid for fid, s in status.items() if s == "kept") == sorted(r["kept_fact_ids"])
        assert sorted(fid for fid, s in status.items() if s == "lost") == sorted(r["lost_fact_ids"])
    # one row per later compaction of the same policy
    n = c.group_by("policy").len()
    for (policy, _label, k), part in facts.group_by("policy", "label_id", "first_compaction"):
        total = n.filter(pl.col("policy") == policy)["len"][0]
        assert part.sort("generation")["generation"].to_list() == list(range(total - k))
    # an anchored summary is never re-written: kept stays kept
    anchored = facts.filter(pl.col("policy") == ANCHORED)
    assert not anchored["summarizes_summaries"].any()
    kept0 = set(anchored.filter((pl.col("generation") == 0) & (pl.col("status") == "kept"))["label_id"])
    assert kept0 and set(anchored.filter(pl.col("label_id").is_in(list(kept0)))["status"]) == {"kept"}
    # a folded one loses some of them as it is summarized again
    folded = facts.filter(pl.col("policy") == "llm-summary")
    assert folded["summarizes_summaries"].all()
    kept0 = set(folded.filter((pl.col("generation") == 0) & (pl.col("status") == "kept"))["label_id"])
    later = folded.filter(pl.col("label_id").is_in(list(kept0)) & (pl.col("generation") > 0))
    assert (later["status"] == "lost").any()
    assert g.filter(pl.col("label") == "secret").height > 0


def test_the_tables_are_the_row_by_row_oracles(audited):
    """The columnar tables, scanning each text once for both, equal the row-by-row
    construction they replaced (tests/evaluate/compactions_oracle.py), alone or sharing scans."""
    import compactions_oracle as oracle

    from workbench.evaluate import compactions as C
    from workbench.evaluate.dataset_text import DatasetText
    from workbench.evaluate.texts import derive_texts

    result, ds = audited["result"], audited["ds"]
    dt = DatasetText.of(ds)
    texts, checkpoints = derive_texts(result, ds, summarizer_options=OPTIONS, dataset_text=dt)
    old_c = oracle.compaction_table(result, texts, checkpoints, dt)
    old_g = oracle.generation_table(result, texts, checkpoints, dt)
    assert old_g.height > 1000 and set(old_g["status"]) == {*C.FACT_STATUSES, *C.SECRET_STATUSES}
    scans = C.TextScans(texts, dt)
    assert C.compaction_table(result, texts, checkpoints, dt, scans).equals(old_c, null_equal=True)
    assert C.generation_table(result, texts, checkpoints, dt, scans).equals(old_g, null_equal=True)
    assert C.generation_table(result, texts, checkpoints, dt).equals(old_g, null_equal=True)
    assert old_g.equals(audited["generations"]) and old_c.equals(audited["compactions"], null_equal=True)
    # a run with no dropped label, and one with no compaction: empty tables of the same schema
    for kept in ([c for c in checkpoints if not c.dropped], []):
        new, old = (m.generation_table(result, texts, kept, dt) for m in (C, oracle))
        assert new.schema == old.schema and new.equals(old)


def test_the_files_are_written_beside_the_run(audited):
    run = audited["run"]
    for name in ("compactions", "generations", "summary_samples"):
        assert (run / f"{name}.parquet").is_file()
    samples = load_table(run, "summary_samples", required=True)
    assert samples["sample"].to_list() == [0] * samples.height  # one sample unless asked for more
    headline = audited["audit"].documents["evaluation.json"]["policies"]
    for r in samples.iter_rows(named=True):
        assert r["retention"] == headline[r["policy"]]["retention"]
        assert r["leaks"] == headline[r["policy"]]["leaks"]


def test_real_logs_have_no_secret_counts_only_not_measured(tmp_path):
    """An imported log has no planted secrets: its compactions' secret columns are null (not
    measured), never 0; its recorded compaction still has its row, and its facts are the
    ones the log names."""
    from bundled_logs import BUNDLED_LOGS

    from workbench.sources.importer import import_paths

    ds = import_paths([BUNDLED_LOGS / "claude-code" / "session-624a4a58.jsonl"], tmp_path / "ds")
    result = simulate(ds, ["as-recorded"])
    c = redaction_audit(result, ds).tables["compactions.parquet"]
    assert c.height == int(result.summary["compactions"].sum()) >= 1
    for col in ("secrets_in_span", "secrets_carried", "secrets_redacted", "secrets_leaked"):
        assert c[col].null_count() == c.height, col
    # the facts the log names stand in for planted ones (issue 27): measured, never assumed 0
    assert c["facts_in_span"].sum() == c["facts_kept"].sum() + c["facts_paraphrased"].sum() + c["facts_lost"].sum()
    assert c["facts_in_span"].sum() > 0 and c["dropped_events"].min() > 0


def test_degenerate_summaries_are_flagged_and_counted(audited):
    from workbench.evaluate.degenerate import count_degenerate, degenerate_flags
    from workbench.report.verdict import build_verdict

    c, texts = audited["compactions"], audited["texts"]
    stored = {r["artifact_id"]: r["text"] for r in texts.iter_rows(named=True)}
    opaque = c.filter(pl.col("policy") == "openai-responses-compact")
    assert opaque.height and opaque["degenerate"].is_null().all()  # nothing readable to judge
    readable = c.filter(pl.col("readable"))
    assert readable.height > 10 and readable["degenerate"].is_not_null().all()
    for r in readable.iter_rows(named=True):
        assert r["degenerate"] == degenerate_flags(stored[r["artifact_id"]], budget_tokens=r["summary_tokens"],
                                                   span_tokens=r["dropped_tokens"])
    evaluation = audited["audit"].details["report"]
    assert evaluation["degenerate"] == count_degenerate(c)
    verdict = build_verdict(audited["run"]).table
    for name, counts in evaluation["degenerate"].items():
        assert verdict.filter(pl.col("policy") == name)["degenerate_summaries"][0] == counts["degenerate_summaries"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.frozensets(st.integers(0, 30), max_size=8), min_size=1, max_size=6),
       st.lists(st.lists(st.integers(0, 30), min_size=1, max_size=3), min_size=1, max_size=6), st.data())
def test_array_lookups_are_set_membership(sets, label_rows, data):
    """The generation table's look-ups (which state holds which key; is any of a label's rows
    kept raw at a state) are plain set membership, for any pairs, missing keys (-1) included."""
    import numpy as np

    from workbench.evaluate.compactions import _any_row_retained, _Members

    pairs = data.draw(st.lists(st.tuples(st.integers(0, len(sets) - 1), st.integers(-1, 30),
                                         st.integers(0, len(label_rows) - 1)), max_size=40))
    state = np.asarray([s for s, _, _ in pairs], dtype=np.int64)
    key = np.asarray([k for _, k, _ in pairs], dtype=np.int64)
    label = np.asarray([lb for _, _, lb in pairs], dtype=np.int64)
    assert _Members(sets, 32).holds(state, key).tolist() == [k in sets[s] for s, k, _ in pairs]
    retained = [tuple(sorted(s)) for s in sets]
    assert _any_row_retained(retained, label_rows, label, state).tolist() == [
        any(r in sets[s] for r in label_rows[lb]) for s, _, lb in pairs]
