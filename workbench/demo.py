"""The main job behind ``make demo``: real logs and a synthetic set through the presets,
ending with the policy comparison reports a reviewer reads.

Steps: generate a seeded synthetic coding continuity (and a smaller one for the
text-level audit), import the bundled real agent logs (``datasets/bundled``, else the
workplace's ``../shared/datasets/recorded``), inspect them, replay every preset on each
(``runs/demo-*``), run the redaction and conformance audits on the smaller synthetic run,
and render a policy comparison report per run (``reports/demo-*/policy-comparison.html``).
Each step prints what it did and where it wrote; the HTML paths come last.
"""

from __future__ import annotations

import time
from pathlib import Path

from workbench.engine.presets import PRESETS

PROJECT = Path(__file__).resolve().parent.parent
# the text-level audit (summaries, redaction, retention) costs ~10 ms per event and preset,
# so it runs on a smaller continuity than the cost comparison
AUDIT_EVENTS = 3_000
RECORDED_CANDIDATES = (
    PROJECT / "datasets" / "bundled",  # shipped with the project (see datasets/README.md)
    PROJECT.parent / "shared" / "datasets" / "recorded",  # the workplace's shared copy
)


def recorded_logs() -> Path | None:
    for path in RECORDED_CANDIDATES:
        if path.is_dir() and any(path.rglob("*.json*")):
            return path
    return None


def run_demo(root: Path = PROJECT, *, events: int = 60_000, say=print, audit_events: int = AUDIT_EVENTS,
             reports: bool = True, policies: list[str] | None = None) -> dict[str, Path]:
    """Run the demo under ``root`` (datasets/, runs/, reports/); ``policies`` defaults to
    every preset. Returns the paths written, by name (``report-audit`` is the full verdict)."""
    from workbench.continuity.inspect import inspect_dataset, render_text
    from workbench.engine.run import simulate
    from workbench.report.console import print_summary
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    started = time.perf_counter()
    out: dict[str, Path] = {}
    synthetic = root / "datasets" / "demo-coding"
    say(f"1/6 generating a synthetic coding continuity ({events:,} events, seed 1) -> {synthetic}")
    ds_syn = generate_dataset(GeneratorConfig(profile="coding", events=events, seed=1), synthetic)
    render_text(inspect_dataset(ds_syn.path))
    out["synthetic"] = ds_syn.path
    audit = root / "datasets" / "demo-audit"
    say(f"   and a smaller one for the text-level audit ({audit_events:,} events, seed 2) -> {audit}")
    out["audit"] = generate_dataset(GeneratorConfig(profile="coding", events=audit_events, seed=2), audit).path

    logs = recorded_logs()
    if logs is not None:
        from workbench.sources.importer import import_paths

        recorded = root / "datasets" / "demo-recorded"
        say(f"2/6 importing the real agent logs in {logs} -> {recorded}")
        ds_rec = import_paths([logs], recorded, on_error="fail", progress=True)
        render_text(inspect_dataset(ds_rec.path))
        out["recorded"] = ds_rec.path
    else:
        say("2/6 no recorded logs found; skipping the import step")

    policies = list(PRESETS) if policies is None else list(policies)
    runs: dict[str, Path] = {}
    for name in ("synthetic", "audit", "recorded"):
        if name not in out:
            continue
        run_dir = root / "runs" / f"demo-{name}"
        say(f"3/6 replaying {len(policies)} presets on the {name} dataset -> {run_dir}")
        result = simulate(out[name], policies, progress=True)
        result.write(run_dir)
        print_summary(result.summary)
        runs[name] = out[f"run-{name}"] = run_dir

    say(f"4/6 auditing {runs['audit']}: summaries and memory entries through SR-1, secret leakage, "
        "fact retention (modelled summarizer; detect-secrets as the baseline), conformance, then "
        "determinism (repeat, a cold process, worker counts; tokenizer drift)")
    audit_run(runs["audit"], out["audit"], policies, say=say)

    html: dict[str, Path] = {}
    if reports:
        from workbench.report.render import render_report

        for name, run_dir in runs.items():
            dest = root / "reports" / f"demo-{name}"
            say(f"5/6 rendering the policy comparison report of {run_dir} -> {dest}")
            html[name] = render_report("policy-comparison", run_dir, dest, cwd=root).html
            out[f"report-{name}"] = html[name]
    minutes, seconds = divmod(round(time.perf_counter() - started), 60)
    say(f"6/6 done in {minutes}m{seconds:02d}s. Results (Parquet + config.json) and reports:")
    for key, path in out.items():
        say(f"  {key:17s} {path}")
    if html:
        say("Policy comparison reports (open in a browser; the audited one carries the full verdict):")
        for name in ("audit", "synthetic", "recorded"):
            if name in html:
                say(f"  {html[name]}")
    return out


def audit_run(run_dir: Path, dataset: Path, policies: list[str], say=print) -> dict[str, bool | None]:
    """The redaction, conformance and determinism audits of ``run_dir``, written into it
    (a failed audit is a finding the report shows, not a crash). Returns each verdict."""
    from workbench.audits import conformance_audit, determinism_audit, redaction_audit
    from workbench.continuity.dataset import load_dataset
    from workbench.rundir.read import load_run

    result, ds = load_run(run_dir)
    verdicts: dict[str, bool | None] = {}
    for name, audit in (
        ("redaction", lambda: redaction_audit(result, ds, summarizer="modelled", baseline=True)),
        ("conformance", lambda: conformance_audit(run_dir)),
        ("determinism", lambda: determinism_audit(load_dataset(dataset), policies)),
    ):
        res = audit()
        res.write(run_dir)
        verdicts[name] = res.passed
        if res.passed is not None:
            say(f"   {name}: {'PASS' if res.passed else 'FAIL'}")
    return verdicts
