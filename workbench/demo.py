"""The main job behind ``make demo``: real logs and a synthetic set through the presets,
ending with the policy comparison reports a reviewer reads.

Steps: generate a seeded synthetic coding continuity (and a smaller one for the
text-level audit, a long-running one whose summaries are summarized again and again, and a
message-dense chat one long enough for ADR-0011's own stride of 10,000 messages to cut three
times), import the bundled real agent logs (``datasets/bundled``, else the workplace's
recorded logs beside the project, ``shared/datasets/recorded``), inspect them, replay every preset on each
(``runs/demo-*``; the long-running one through the summarizing presets and an anchored
summary, the chat one through ``rip-adr0011`` and ``claude-code``), run the redaction (with
summary samples), conformance and determinism audits on the smaller synthetic run, the
conformance and determinism audits on the stride run, and the redaction audit on the
long-running one, and render a policy comparison report per run
(``reports/demo-*/policy-comparison.html``) and the compaction inspector of the long-running
run. Each step prints what it did and where it wrote, audits with how much they checked;
the HTML paths come last.
"""

from __future__ import annotations

import time
from pathlib import Path

from workbench.engine.presets import PRESETS

PROJECT = Path(__file__).resolve().parent.parent
# the text-level audit (summaries, redaction, retention) costs ~10 ms per event and preset,
# so it runs on a smaller continuity than the cost comparison
AUDIT_EVENTS = 3_000
# a long-running continuity (dense side effects around ~24k model-visible events) that fills
# a 200k window 20+ times, so summaries are summarized again and again: the drift curve
LONG_EVENTS = 170_000
LONG_FACTS = 200
# the policies that summarize their summary (issue 17: claude-code, codex, langchain, letta)
# and one that keeps an anchored summary (each span summarized once, never re-written)
DRIFT_PRESETS = ("claude-code", "codex-local", "langchain-summarization", "letta")
ANCHORED = ("claude-code", {"compaction.accumulate": True, "compaction.ratio": 0.01, "compaction.floor": 500},
            "claude-code-anchored")
# the modelled summarizer of the audits: its defaults, and a share of the facts it does not
# keep written in another form (paraphrased: the inspector tells them apart)
SUMMARIZER_OPTIONS = {"p_paraphrase_fact": 0.1}
# a chat continuity is ~94 % messages: 34,000 events hold ~31,900, three cuts of ADR-0011's
# stride (every 10,000 messages)
STRIDE_EVENTS = 34_000
STRIDE_EVERY = 10_000
AUDIT_SAMPLES = 5  # summary samples of the audit run (the verdict's "within the spread")
LONG_SAMPLES = 3
RECORDED_CANDIDATES = (
    PROJECT / "datasets" / "bundled",  # shipped with the project (see datasets/README.md)
    PROJECT.parent / "shared" / "datasets" / "recorded",  # the workplace's shared copy
)


def recorded_logs() -> Path | None:
    for path in RECORDED_CANDIDATES:
        if path.is_dir() and any(path.rglob("*.json*")):
            return path
    return None


def drift_policies() -> list:
    from workbench.engine.presets import get_policy

    preset, overrides, name = ANCHORED
    return [*DRIFT_PRESETS, get_policy(preset, overrides, rename=name)]


def stride_policies(every: int = STRIDE_EVERY) -> list:
    """``rip-adr0011`` (at ``every`` messages) and ``claude-code``: the stride against a threshold."""
    from workbench.engine.presets import get_policy

    adr = get_policy("rip-adr0011") if every == STRIDE_EVERY else get_policy(
        "rip-adr0011", {"trigger.every_messages": every})
    return [adr, get_policy("claude-code")]


def run_demo(root: Path = PROJECT, *, events: int = 60_000, say=print, audit_events: int = AUDIT_EVENTS,
             long_events: int = LONG_EVENTS, stride_events: int = STRIDE_EVENTS,
             stride_every: int = STRIDE_EVERY, reports: bool = True,
             policies: list[str] | None = None) -> dict[str, Path]:
    """Run the demo under ``root`` (datasets/, runs/, reports/); ``policies`` defaults to
    every preset (the long-running run always replays :func:`drift_policies`). Returns the
    paths written, by name (``report-audit`` is the full verdict)."""
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
    say(f"   and a smaller one for the text-level audit, with an evolving task state (a todo list and the next "
        f"step) whose retention the audit reports apart ({audit_events:,} events, seed 2) -> {audit}")
    out["audit"] = generate_dataset(GeneratorConfig(profile="coding", events=audit_events, seed=2, task_state=True),
                                    audit).path
    long = root / "datasets" / "demo-long-running"
    say(f"   and a long-running one whose summaries are summarized again and again ({long_events:,} events, "
        f"{LONG_FACTS} planted facts, seed 3) -> {long}")
    out["long-running"] = generate_dataset(GeneratorConfig(profile="long-running", events=long_events, seed=3,
                                                           facts=LONG_FACTS), long).path
    stride = root / "datasets" / "demo-stride"
    say(f"   and a message-dense chat one for ADR-0011's own stride of {stride_every:,} messages "
        f"({stride_events:,} events, seed 4) -> {stride}")
    out["stride"] = generate_dataset(GeneratorConfig(profile="chat", events=stride_events, seed=4), stride).path

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
    replays = {"long-running": (drift_policies(), "the summarizing presets and an anchored summary"),
               "stride": (stride_policies(stride_every), f"rip-adr0011 (every {stride_every:,} messages) "
                                                          "and claude-code")}
    for name in ("synthetic", "audit", "recorded", "long-running", "stride"):
        if name not in out:
            continue
        run_dir = root / "runs" / f"demo-{name}"
        replayed, what = replays.get(name, (policies, f"{len(policies)} presets"))
        say(f"3/6 replaying {what} on the {name} dataset -> {run_dir}")
        result = simulate(out[name], replayed, progress=True)
        result.write(run_dir)
        print_summary(result.summary)
        runs[name] = out[f"run-{name}"] = run_dir

    say(f"4/6 auditing {runs['audit']}: summaries and memory entries through SR-1, secret leakage, "
        f"fact retention, what each compaction kept ({AUDIT_SAMPLES} summary samples; modelled summarizer; "
        "detect-secrets as the baseline), conformance, then determinism (repeat, a cold process, worker "
        f"counts; tokenizer drift); and {runs['long-running']}: what each compaction kept and its drift over "
        f"repeated summaries ({LONG_SAMPLES} summary samples)")
    audit_run(runs["audit"], out["audit"], policies, say=say)
    say(f"   and {runs['stride']}: conformance and determinism at ADR-0011's own stride")
    audit_stride(runs["stride"], out["stride"], stride_policies(stride_every), say=say)
    long_result, long_ds = _load(runs["long-running"])
    redaction_audit_of(long_result, long_ds, LONG_SAMPLES).write(runs["long-running"])
    if "recorded" in runs:
        say(f"   and {runs['recorded']}: retention on the real logs (the facts they name; summaries by the "
            "calibrated summarizer, the recorded ones as recorded)")
        recorded_audit(runs["recorded"])

    html: dict[str, Path] = {}
    if reports:
        from workbench.report.render import render_report

        for name, run_dir in runs.items():
            dest = root / "reports" / f"demo-{name}"
            kind = "compaction-inspector" if name == "long-running" else "policy-comparison"
            say(f"5/6 rendering the {kind.replace('-', ' ')} report of {run_dir} -> {dest}")
            html[name] = render_report(kind, run_dir, dest, cwd=root).html
            out[f"report-{name}"] = html[name]
    minutes, seconds = divmod(round(time.perf_counter() - started), 60)
    say(f"6/6 done in {minutes}m{seconds:02d}s. Results (Parquet + config.json) and reports:")
    for key, path in out.items():
        say(f"  {key:20s} {path}")
    if html:
        say("Reports (open in a browser; the audited one carries the full verdict, the long-running one "
            "shows inside the compactions):")
        for name in ("audit", "synthetic", "recorded", "long-running", "stride"):
            if name in html:
                say(f"  {html[name]}")
    return out


def _load(run_dir: Path):
    from workbench.rundir.read import load_run

    return load_run(run_dir)


def redaction_audit_of(result, ds, samples: int, *, baseline: bool = False):
    """The demo's redaction audit: the modelled summarizer with :data:`SUMMARIZER_OPTIONS`."""
    from workbench.audits import redaction_audit

    return redaction_audit(result, ds, summarizer="modelled", summarizer_options=dict(SUMMARIZER_OPTIONS),
                           baseline=baseline, summary_samples=samples)


def recorded_audit(run_dir: Path) -> None:
    """Retention on the real logs: the facts each log names, probed under every policy
    (:mod:`workbench.evaluate.log_facts`); summaries by the calibrated summarizer
    (:mod:`workbench.summarize.calibrated`), the as-recorded preset's by the log's own."""
    from workbench.audits import redaction_audit

    result, ds = _load(run_dir)
    redaction_audit(result, ds, summarizer="calibrated", baseline=False).write(run_dir)


def audit_run(run_dir: Path, dataset: Path, policies: list[str], say=print) -> dict[str, bool | None]:
    """The redaction, conformance and determinism audits of ``run_dir``, written into it
    (a failed audit is a finding the report shows, not a crash). Returns each verdict."""
    from workbench.audits import conformance_audit, determinism_audit
    from workbench.continuity.dataset import load_dataset
    from workbench.rundir.read import load_run

    result, ds = load_run(run_dir)
    return _run_audits(run_dir, (
        ("redaction", lambda: redaction_audit_of(result, ds, AUDIT_SAMPLES, baseline=True)),
        ("conformance", lambda: conformance_audit(run_dir)),
        ("determinism", lambda: determinism_audit(load_dataset(dataset), policies)),
    ), say)


def audit_stride(run_dir: Path, dataset: Path, policies: list, say=print) -> dict[str, bool | None]:
    """Conformance and determinism of the stride run."""
    from workbench.audits import conformance_audit, determinism_audit
    from workbench.continuity.dataset import load_dataset

    return _run_audits(run_dir, (
        ("conformance", lambda: conformance_audit(run_dir)),
        ("determinism", lambda: determinism_audit(load_dataset(dataset), policies)),
    ), say, label="stride ")


def _run_audits(run_dir: Path, audits, say, label: str = "") -> dict[str, bool | None]:
    """Run each ``(name, audit)``, write its files into ``run_dir`` and say its verdict with
    how much it checked (a failed audit is a finding the report shows, not a crash)."""
    verdicts: dict[str, bool | None] = {}
    for name, audit in audits:
        res = audit()
        res.write(run_dir)
        verdicts[name] = res.passed
        if res.passed is not None:
            say(f"   {label}{name}: {'PASS' if res.passed else 'FAIL'}{checked_text(res)}")
    return verdicts


def checked_text(res) -> str:
    """`` (checked ...)``: how much an audit checked, as its details say."""
    c = res.details.get("checked")
    if not c:
        return ""
    if "checkpoints_raced" in c:
        from workbench.evaluate.determinism import describe_checks

        return f" ({describe_checks(c, c['policies'])}; {c['checkpoints_raced']:,} checkpoints raced)"
    by = c.get("checkpoints_by_policy") or {}
    each = ", ".join(f"{p} {n:,}" for p, n in by.items())
    return (f" ({c['checkpoints']:,} checkpoints{f': {each}' if each else ''}; "
            f"{c['memory_compacted']:,} memory.compacted; {c['scenarios_run']} scenarios run)")
