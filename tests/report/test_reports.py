"""Reports end to end: every notebook executed by papermill on tiny data, the HTML's
sections, the verdict against the runner's Parquet, no planted secret in any report, a
broken run's error naming the cell, and a rendered report opened in headless Chromium.

One tiny synthetic run (four policies, one with SR-1 off; redaction audit; a determinism
audit's files) is shared by the module; papermill takes ~5-8 s per notebook.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import orjson
import polars as pl
import pytest
from bundled_logs import BUNDLED_LOGS

from workbench.report import KINDS
from workbench.report.html import fmt
from workbench.report.render import render_report
from workbench.report.verdict import ReportError, build_verdict
from workbench.selection import Constraints

PROJECT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")

ENGINE = "kernel"  # the numba engine; the reference engine gives identical ledgers

NO_SR1 = "llm-summary-no-sr1"


# ---- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny coding dataset and a run: 4 policies (one with SR-1 off), redaction audit
    (summarizer set to copy secrets verbatim), determinism files beside it."""
    from workbench.audits import redaction_audit
    from workbench.engine.presets import get_policy
    from workbench.engine.run import simulate
    from workbench.evaluate.determinism import run_hashes
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    root = tmp_path_factory.mktemp("report")
    ds = generate_dataset(GeneratorConfig(profile="coding", events=2500, seed=3), root / "ds")
    policies = ["claude-code", "llm-summary", "observation-masking",
                get_policy("llm-summary", {"redaction.sr1_carry_forward": False}, rename=NO_SR1)]
    result = simulate(ds, policies, engine=ENGINE)
    run = result.write(root / "run")
    redaction_audit(result, ds, baseline=False, summary_samples=3,
                    summarizer_options={"p_copy_secret": 0.9, "p_partial_secret": 0.1, "copy_form": "value",
                                        "p_paraphrase_fact": 0.1}).write(run)
    # the files `workbench audit determinism --out RUN` writes (the audit itself is tested in
    # tests/evaluate; here only its rendering)
    hashes = run_hashes(result)
    checks = pl.DataFrame([{"check": c, "policy": p, "status": "pass", "detail": "same bytes"}
                           for c in ("repeat", "process_restart_cold_cache", "worker_count") for p in hashes])
    checks.write_parquet(run / "determinism.parquet")
    pl.DataFrame([{"policy": p, "trigger": "tokens", "tokenizer": "cl100k", "other": "approx", "cuts": 1,
                   "cuts_other": 1, "moved": 0, "identical": True} for p in hashes]).write_parquet(run / "drift.parquet")
    (run / "determinism.json").write_bytes(orjson.dumps({"passed": True, "hashes": hashes}))
    return {"root": root, "dataset": Path(ds.path), "run": run}


@pytest.fixture(scope="module")
def rendered(tiny):
    out = tiny["root"] / "reports"
    return {kind: render_report(kind, tiny["run"], out) for kind in
            ("policy-comparison", "redaction-audit", "determinism-audit", "compaction-inspector")}


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory):
    """The bundled Claude Code session with an automatic compaction, replayed as recorded,
    with the fidelity tables beside it."""
    from workbench.engine.run import simulate
    from workbench.evaluate.fidelity import fidelity_table
    from workbench.sources.importer import import_paths

    src = BUNDLED_LOGS / "claude-code" / "session-624a4a58.jsonl"
    root = tmp_path_factory.mktemp("recorded")
    ds = import_paths([src], root / "ds")
    run = simulate(ds, ["as-recorded", "claude-code"], engine=ENGINE).write(root / "run")
    fid = fidelity_table(ds, engine=ENGINE, price_as="claude-sonnet-4-5")
    fid["summary"].write_parquet(run / "fidelity.parquet")
    fid["requests"].write_parquet(run / "fidelity_requests.parquet")
    fid["compactions"].write_parquet(run / "fidelity_compactions.parquet")
    return run


@pytest.fixture(scope="module")
def sweep_dir(tiny, tmp_path_factory):
    from workbench.sweep import runner

    spec = tmp_path_factory.mktemp("sweep") / "tiny.yaml"
    spec.write_text(f"""
name: tiny-threshold
dataset: {tiny['dataset']}
base: llm-summary
parameters:
  trigger.every_turns: [10, 30]
seeds: [0]
evaluate: true
engine: {ENGINE}
tokenizer: cl100k
""")
    out = spec.parent / "out"
    runner.run_sweep(spec, out, executor="serial")
    return out


# ---- helpers ----------------------------------------------------------------------------------
def _html(res) -> str:
    return res.html.read_text(encoding="utf-8")


def _pngs(html: str) -> list[str]:
    return re.findall(r'<img[^>]*src="data:image/png;base64,([^"]*)"', html)


def _check_report(res, *, figures: int = 1) -> str:
    html = _html(res)
    assert res.notebook.is_file()
    assert re.search(r"<h2[^>]*>\s*Verdict", html), "no Verdict section"
    assert re.search(r"<h3[^>]*>\s*Provenance", html), "no Provenance section"
    assert "Reviewed and signed off by" in html
    pngs = _pngs(html)
    assert len(pngs) >= figures and all(len(p) > 1000 for p in pngs), "figures missing as <img> PNG data"
    assert len(res.figures) >= figures and all(p.stat().st_size > 1000 for p in res.figures)
    assert "hl-ipython3" not in html and "from workbench.report import" not in html, "code cells must be hidden"
    # no cell failed (the word "Traceback" itself may be shown: agents' tool outputs hold them)
    import nbformat

    nb = nbformat.read(str(res.notebook), as_version=4)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                if o.get("output_type") == "error" or o.get("name") == "stderr"], "a cell failed or wrote stderr"
    return html


# ---- every notebook executes ------------------------------------------------------------------
def test_policy_comparison_report(tiny, rendered):
    html = _check_report(rendered["policy-comparison"], figures=6)
    for heading in ("Context size over requests", "Cumulative cost", "Cache-hit rate", "Cost against retention",
                    "Leakage by secret format", "What the summaries say", "Compactions",
                    "Drift over repeated summaries", "Summary variance", "Determinism"):
        assert heading in html
    names = {p.name for p in rendered["policy-comparison"].figures}
    for fig in ("sawtooth", "cumulative-cost", "cache-hit-rate", "pareto", "leakage-heatmap", "determinism-matrix",
                "compaction-fates", "facts-surviving", "summary-spread"):
        assert f"policy-comparison-{fig}.png" in names
    # the worst compaction of each policy that dropped a fact, side by side with its summary
    assert html.count("What it dropped") >= 2 and "What replaced it" in html
    assert "Within the spread" in html and "across 3 summary samples" in html


def test_policy_comparison_groups_policies_by_harness(rendered):
    """The verdict's policy table has a harness column and a heading row per harness:
    claude-code, then complexity-trap (llm-summary, observation-masking), then the policy
    renamed in a spec, which mirrors no harness ("-"), last."""
    html = _html(rendered["policy-comparison"])
    verdict = html[html.index('class="wb-verdict'):html.index("Reviewed and signed off by")]
    table = verdict[verdict.index('<table class="wb-table">'):]
    assert '<th class="s">harness</th>' in table  # a text column: its header sits left
    groups = re.findall(r'<tr class="wb-group"><th colspan="\d+">([^<]*)</th></tr>', table)
    assert groups == ["claude-code", "complexity-trap", "-"]
    where = {name: table.index(f'<td class="s">{name}</td>') for name in
             ("claude-code", "llm-summary", "observation-masking", NO_SR1)}
    assert f'<td class="s">-</td><td class="s">{NO_SR1}</td>' in table  # harness, then policy
    heads = [m.start() for m in re.finditer(r'<tr class="wb-group">', table)]
    assert heads[0] < where["claude-code"] < heads[1] < where["llm-summary"] < heads[2]
    assert heads[1] < where["observation-masking"] < heads[2] < where[NO_SR1]


def test_compaction_inspector_report(tiny, rendered):
    html = _check_report(rendered["compaction-inspector"], figures=3)
    for heading in ("What each compaction kept", "The worst compaction of each policy",
                    "Drift over repeated summaries", "Summary variance", "A/B of the compaction prompt and model"):
        assert heading in html
    assert "What it dropped" in html and "No A/B sweep given" in html
    compactions = pl.read_parquet(tiny["run"] / "compactions.parquet")
    for policy in compactions["policy"].unique().to_list():
        assert policy in html


def test_every_compaction_view_hides_every_planted_secret(tiny):
    """The view of every compaction of the SR-1-off policy (raw secrets in its stored
    summaries, in the dropped events always) shows no planted value nor a 12-character
    fragment of one, while it does mark the secrets by id."""
    from workbench.report.inspector import compaction_view

    values = _planted(tiny["dataset"])
    compactions = pl.read_parquet(tiny["run"] / "compactions.parquet")
    mine = compactions.filter(pl.col("policy") == NO_SR1)
    assert mine["secrets_leaked"].sum() > 0, "the SR-1-off summaries leak nothing: the test would mean nothing"
    badges = 0
    for n in mine["compaction"].to_list():
        body = compaction_view(tiny["run"], NO_SR1, n=n, max_events=200, event_chars=100_000).to_html()
        badges += body.count('class="wb-sec wb-leaked"')
        _assert_no_secret(body, values, f"compaction {n}")
    assert badges > 0


def test_redaction_audit_report(rendered):
    html = _check_report(rendered["redaction-audit"], figures=3)
    assert "Leaks by policy and channel" in html and "Over-redaction" in html
    assert NO_SR1 in html


def test_determinism_audit_report(rendered):
    html = _check_report(rendered["determinism-audit"], figures=1)
    assert "Tokenizer drift" in html and "process_restart_cold_cache" in html
    assert "PASS" in html


def test_threshold_sweep_report(sweep_dir, tmp_path):
    res = render_report("threshold-sweep", sweep_dir, tmp_path)
    html = _check_report(res, figures=2)
    assert "tiny-threshold" in html and "trigger.every_turns" in html
    assert "#0" in html and "#1" in html


def test_fidelity_report(recorded_run, tmp_path):
    res = render_report("fidelity", recorded_run, tmp_path)
    html = _check_report(res, figures=2)
    assert "Simulated against recorded usage" in html and "claude_code" in html
    assert "no planted secrets" in html  # real logs: leakage is not measurable, and the verdict says so


def test_getting_started_notebook(tiny, sweep_dir, tmp_path):
    import nbformat
    import papermill as pm

    from workbench.report.render import kernel_config

    out = tmp_path / "getting-started.ipynb"
    with kernel_config() as config:
        pm.execute_notebook(str(PROJECT / "notebooks" / "getting-started.ipynb"), str(out),
                            parameters={"dataset_path": str(tiny["dataset"]), "run_dir": str(tmp_path / "run"),
                                        "long_dataset_path": str(tmp_path / "long"), "ab_sweep_dir": str(sweep_dir)},
                            kernel_name="python3", language="python", cwd=str(PROJECT / "notebooks"),
                            progress_bar=False, config=config)
    nb = nbformat.read(str(out), as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3, "sawtooth, drift and spread not drawn"
    assert not [o for o in outputs if o.get("output_type") == "error" or o.get("name") == "stderr"]
    text = json.dumps([o for o in outputs])
    assert "the harness found" in text and "claude-code" in text
    # 1-4 of issue 17: a compaction's view, the drift curve's points, the spread, the A/B pick
    assert "What it dropped" in text and "facts_paraphrased" in text
    assert "claude-code-anchored" in text and "retention mean" in text and "best:" in text
    assert (tmp_path / "run" / "compactions.parquet").is_file()
    _assert_no_secret(out.read_text(encoding="utf-8"), _planted(tiny["dataset"]), out.name)


# ---- the verdict matches the runner's Parquet -------------------------------------------------
def test_verdict_matches_runner_parquet(tiny, rendered):
    run = tiny["run"]
    v = build_verdict(run)
    summary = pl.read_parquet(run / "summary.parquet")
    evaluation = json.loads((run / "evaluation.json").read_text())
    leakage = pl.read_parquet(run / "leakage.parquet")
    html = _html(rendered["policy-comparison"])
    assert list(v.compared) == summary["policy"].unique(maintain_order=True).to_list()
    for row in v.table.iter_rows(named=True):
        rows = [r for r in summary.iter_rows(named=True) if r["policy"] == row["policy"]]
        for col in ("requests", "calls", "compactions", "flushes", "overflows", "prompt_tokens",
                    "cached_input_tokens"):
            assert row[col] == sum(r[col] for r in rows), col
        assert row["peak_context_tokens"] == max(r["peak_context_tokens"] for r in rows)
        assert math.isclose(row["cost_usd"], sum(r["cost_usd"] for r in rows), rel_tol=1e-12)
        if len(rows) == 1:
            assert row["cost_usd"] == rows[0]["cost_usd"]
            assert row["cache_hit_rate"] == rows[0]["cache_hit_rate"]
        head = evaluation["policies"][row["policy"]]
        assert (row["leaks"], row["retention"], row["sr1"]) == (head["leaks"], head["retention"], head["sr1"])
        # and the runner's leakage table, counted independently
        derived = leakage.filter((pl.col("policy") == row["policy"]) & pl.col("channel").is_in(["summary", "memory"])
                                 & pl.col("leaked"))
        assert row["leaks"] == derived["secret_id"].n_unique()
        # the rendered report shows the same figures
        assert fmt(row["cost_usd"], "usd")[0] in html
        assert fmt(row["retention"], "pct")[0] in html
    # the recommendation: the cheapest row meeting every constraint, or none
    ok = v.table.filter(pl.col("meets") == True)  # noqa: E712
    if ok.height:
        assert v.chosen == ok.sort("cost_usd")["policy"][0] and v.chosen_verified
    assert v.leaks["total"] == sum(h["leaks"] for h in evaluation["policies"].values())
    assert v.provenance["run_id"] == json.loads((run / "config.json").read_text())["run_id"]
    assert all(f["status"] == "unchanged" for f in v.provenance["dataset_files"])
    assert v.determinism["passed"] is True


def test_verdict_without_evaluation_says_so(tiny, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(tiny["run"], run)
    for f in ("evaluation.json", "leakage.parquet", "retention.parquet", "texts.parquet", "determinism.json"):
        (run / f).unlink()
    v = build_verdict(run, constraints=Constraints(max_overflows=10**9))
    assert not v.leaks["evaluated"] and "not evaluated" in v.leaks["text"]
    assert any("evaluation.json is missing" in n for n in v.notes)
    assert v.table["meets"].null_count() == v.table.height  # unverified, never assumed
    assert v.chosen is not None and not v.chosen_verified and "UNVERIFIED" in v.statement
    assert v.determinism is None and "not audited" in v.to_html()


# ---- no secrets in reports --------------------------------------------------------------------
def _planted(dataset: Path) -> list[str]:
    sec = pl.read_parquet(dataset / "secrets.parquet").filter(~pl.col("negative"))
    return sorted(set(sec["value"].to_list()))


def test_no_planted_secret_in_any_report(tiny, rendered):
    values = _planted(tiny["dataset"])
    assert values
    # the test means something: the SR-1-off policy stored raw secrets in texts.parquet
    texts = pl.read_parquet(tiny["run"] / "texts.parquet").filter(pl.col("policy") == NO_SR1)
    raw = "\n".join(t for t in texts["text"].to_list() if t)
    assert any(v in raw for v in values), "no planted secret reached the SR-1-off summaries"
    for res in rendered.values():
        for path in (res.html, res.notebook):
            _assert_no_secret(path.read_text(encoding="utf-8"), values, path.name)


def _assert_no_secret(body: str, values: list[str], where: str) -> None:
    for v in values:
        assert v not in body, f"planted secret in {where}"
        if len(v) >= 12:
            for frag in {v[:12], v[len(v) // 2 - 6: len(v) // 2 + 6], v[-12:]}:
                assert frag not in body, f"12-character fragment of a planted secret in {where}"
        assert json.dumps(v)[1:-1] not in body  # as a JSON-escaped string in the notebook


# ---- errors -----------------------------------------------------------------------------------
def test_broken_run_names_the_failing_cell(tiny, tmp_path):
    run = tmp_path / "broken"
    shutil.copytree(tiny["run"], run)
    (run / "ledger.parquet").write_bytes(b"PAR1 this is not a parquet file")
    with pytest.raises(ReportError) as err:
        render_report("policy-comparison", run, tmp_path / "out")
    msg = str(err.value)
    assert re.search(r"policy-comparison report failed in cell \d+", msg), msg
    assert "ledger = R.load_table" in msg and "RunDirError" in msg and "ledger.parquet" in msg, msg
    assert "ledger.parquet is damaged or incomplete" in msg  # its size differs from the one written


def test_the_inspector_needs_the_redaction_audit(tiny, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(tiny["run"], run)
    (run / "compactions.parquet").unlink()
    with pytest.raises(ReportError, match="no compactions.parquet; run `workbench audit redaction"):
        render_report("compaction-inspector", run, tmp_path / "out")
    with pytest.raises(ReportError, match="--ab-sweep is read by the compaction-inspector report only"):
        render_report("policy-comparison", tiny["run"], tmp_path / "out", ab_sweep=tmp_path)


def test_missing_run_and_unknown_kind(tmp_path):
    with pytest.raises(ReportError, match="no such run directory"):
        render_report("policy-comparison", tmp_path / "nope", tmp_path / "out")
    with pytest.raises(ReportError, match="unknown report"):
        render_report("nonsense", tmp_path, tmp_path / "out")
    assert set(KINDS) == {"policy-comparison", "threshold-sweep", "redaction-audit", "determinism-audit", "fidelity",
                          "compaction-inspector", "replication"}



def test_cli_report(tmp_path):
    from typer.testing import CliRunner

    from workbench.cli import app

    res = CliRunner().invoke(app, ["report", "policy-comparison", "--run", str(tmp_path / "missing"),
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no such run directory" in res.output
    res = CliRunner().invoke(app, ["report", "fidelity-of-nothing", "--run", str(tmp_path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "unknown report" in res.output


# ---- a browser opens it -----------------------------------------------------------------------
def test_report_renders_in_headless_chromium(rendered, tmp_path):
    if not CHROMIUM.is_file():
        pytest.skip("Debian chromium is not installed (/usr/bin/chromium): `make test` installs it "
                    "when run as root (test-deps); otherwise `sudo apt-get install chromium`")
    import matplotlib.image as mpimg
    import numpy as np

    html = rendered["policy-comparison"].html
    shot = tmp_path / "shot.png"
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
           f"--screenshot={shot}", "--window-size=1280,2400", html.resolve().as_uri()]
    # a home of its own: with only --user-data-dir, Chromium still writes ~/.config/chromium
    # and dconf ~/.cache/dconf in the user's home
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_STATE_HOME": str(home / ".local" / "state")}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert shot.is_file(), f"no screenshot: {proc.returncode} {proc.stderr[-2000:]}"
    img = mpimg.imread(str(shot))[..., :3]
    assert img.shape[0] >= 2000 and img.shape[1] >= 1200
    assert float(img.std()) > 0.05, "blank screenshot (a single colour)"
    non_white = float((img.min(axis=2) < 0.9).mean())
    assert 0.02 < non_white < 0.9, f"implausible share of non-white pixels: {non_white:.3f}"
    # and the <img> tags carry real PNGs
    import base64

    pngs = _pngs(html.read_text(encoding="utf-8"))
    assert pngs
    for data in pngs:
        raw = base64.b64decode(data)
        assert raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) > 1000
    assert np is not None


def test_inspect_compaction_through_the_front_door(tiny):
    import workbench as wb
    from workbench.errors import WorkbenchError

    run = tiny["run"]
    compactions = pl.read_parquet(run / "compactions.parquet")
    mine = compactions.filter(pl.col("policy") == "llm-summary")
    worst = wb.inspect_compaction(run, "llm-summary", n="worst")
    assert worst.row["facts_lost"] == mine["facts_lost"].max()
    first = wb.inspect_compaction(run, "llm-summary", n=0)
    assert first.row["compaction"] == 0 and "What it dropped" in first._repr_html_()
    # every event shown is one the compaction dropped, every labelled one among them is shown
    assert {e.seq for e in first.events} <= set(first.row["dropped_seqs"])
    with pytest.raises(WorkbenchError, match="no compaction of policy 'nope'.*llm-summary"):
        wb.inspect_compaction(run, "nope")
    with pytest.raises(WorkbenchError, match=r"give 0\.\.\d+ or 'worst'"):
        wb.inspect_compaction(run, "llm-summary", n=10_000)
    with pytest.raises(WorkbenchError, match="no compaction in continuity 'elsewhere'"):
        wb.inspect_compaction(run, "llm-summary", "elsewhere")
