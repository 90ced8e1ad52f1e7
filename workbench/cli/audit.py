"""``workbench audit redaction|determinism|conformance|fidelity``: the audits of
:mod:`workbench.audits`, their files written into the run (or ``--out``), a short summary
printed; exit code 1 when a conformance or determinism check fails. ``workbench
compactions`` prints the redaction audit's compaction inspector table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import summarizer as S
from workbench.cli._app import Force, Format, audit_app, command, say
from workbench.report.console import print_evaluation
from workbench.rundir import names as N
from workbench.util.tables import emit

RunDir = Annotated[Path, typer.Option("--run", help="run directory written by `workbench simulate`")]


@command(audit_app)
def redaction(
    run: RunDir,
    summarizer: S.Summarizer = "modelled",
    summarizer_base_url: S.BaseUrl = None,
    summarizer_model: S.Model = None,
    summarizer_key_env: S.KeyEnv = None,
    summarizer_cassette: S.Cassette = None,
    summarizer_mode: S.Mode = "chat",
    summarizer_timeout: S.Timeout = None,
    baseline: S.Baseline = False,
    summary_samples: S.Samples = 1,
    draws: S.Draws = "policy",
    filler: S.Filler = True,
    judge_probes: S.JudgeProbes = False,
    fmt: Format = "table",
) -> None:
    """Summaries and memory entries through SR-1; secret leakage by channel; fact retention;
    what each compaction kept (compactions.parquet) and its drift (generations.parquet)."""
    from workbench.audits import redaction_audit
    from workbench.rundir import Kind, require
    from workbench.rundir.read import load_run

    require(run, Kind.RUN)
    options = S.summarizer_options(summarizer, base_url=summarizer_base_url, model=summarizer_model,
                                   key_env=summarizer_key_env, cassette=summarizer_cassette,
                                   mode=summarizer_mode, baseline=baseline, timeout=summarizer_timeout,
                                   draws=draws, filler=filler)
    result, ds = load_run(run)
    audit = redaction_audit(result, ds, summary_samples=summary_samples,
                            judge_probes=judge_probes, keep_index=True, **options)
    audit.write(run)
    print_evaluation(audit.details["report"], fmt)
    say(f"wrote texts/leakage/over_redaction/retention/compactions/generations/summary_samples Parquet "
        f"and evaluation.json to {run}")


@command(audit_app)
def determinism(
    out: Annotated[Path, typer.Option(help="directory for determinism.parquet and drift.parquet "
                                           "(a run directory, or a new one)")],
    dataset: Annotated[Path | None, typer.Option(help="dataset directory (default: the one the run "
                                                      "at --out replayed)")] = None,
    policy: Annotated[list[str] | None, typer.Option(help="preset or spec; repeat (default: the "
                                                          "policies of the run at --out)")] = None,
    engine: Annotated[str, typer.Option(help="kernel | reference")] = "kernel",
    drift_tokenizer: Annotated[str, typer.Option(help="second tokenizer for drift")] = "approx",
    force: Force = False,
    fmt: Format = "table",
) -> None:
    """Byte-identical ledgers, checkpoints and compiled contexts; tokenizer drift of cut points.

    `workbench audit determinism --out RUN_DIR` audits a run's own dataset and policies."""
    from workbench.audits import determinism_audit
    from workbench.rundir import Kind, check_output

    check_output(out, Kind.AUDIT, accept=(Kind.RUN,), force=force, replacing=False)
    dataset, policies = _determinism_inputs(out, dataset, policy)
    audit = determinism_audit(dataset, policies, engine=engine, drift_tokenizer=drift_tokenizer)
    audit.write(out, force=force)
    checks = audit.tables[N.DETERMINISM]
    # a row per policy: presets are many, checks are few, so this stays readable in a terminal
    names = checks["check"].unique(maintain_order=True).to_list()
    rows = []
    for name in checks["policy"].unique(maintain_order=True).to_list():
        status = dict(checks.filter(checks["policy"] == name).select("check", "status").iter_rows())
        rows.append({"policy": name, **{c: status.get(c, "-") for c in names}})
    emit(rows, ["policy", *names], fmt=fmt, title="Determinism", name="determinism")
    drift = audit.tables[N.DRIFT]
    emit(drift.to_dicts(), ["policy", "trigger", "cuts", "cuts_other", "moved"], fmt=fmt,
         title="Tokenizer drift", name="drift", headers={"cuts_other": f"cuts ({drift_tokenizer})"})
    from workbench.evaluate.determinism import describe_checks

    c = audit.details["checked"]
    say(f"checked {describe_checks(c, c['policies'])}; {c['checkpoints_raced']:,} checkpoints raced")
    if not c["checkpoints_raced"]:
        say("no checkpoint to race: no policy compacted this dataset, so checkpoint selection was not exercised")
    say(f"{'PASS' if audit.passed else 'FAIL'}: wrote {out}/determinism.parquet, drift.parquet")
    if not audit.passed:
        raise typer.Exit(1)


def _determinism_inputs(out: Path, dataset: Path | None, policy: list[str] | None):
    """The dataset and policies to audit: as given, else those of the run at ``out``."""
    from workbench.errors import WorkbenchError

    if dataset is not None and policy:
        return dataset, policy
    if not (out / N.CONFIG).is_file():
        missing = " and ".join(o for o, v in (("--dataset", dataset), ("--policy", policy)) if not v)
        raise WorkbenchError(f"{out} is not a run directory (no {N.CONFIG}): give {missing}, or pass a "
                             "run directory as --out to audit its dataset and policies")
    from types import SimpleNamespace

    from workbench.evaluate.texts import policies_of
    from workbench.rundir.read import load_config

    config = load_config(out)
    if dataset is None:
        dataset = Path(config["dataset"]["path"])
    # policies_of reads only the run's config (the policies it recorded, parameters and all)
    return dataset, policy or list(policies_of(SimpleNamespace(config=config)).values())


@command(audit_app)
def conformance(run: RunDir, fmt: Format = "table") -> None:
    """JSON Schemas, ADR-0011 invariants, RFC 0012 scenarios, RFC 0080 degraded projection."""
    from workbench.audits import conformance_audit
    from workbench.rundir import Kind, require

    require(run, Kind.RUN)
    audit = conformance_audit(run)
    audit.write(run)
    scenarios = audit.tables[N.SCENARIOS]
    emit(scenarios.to_dicts(), ["policy", "scenario", "status", "detail"], fmt=fmt, title="RFC 0012 scenarios")
    findings = audit.tables[N.CONFORMANCE]
    fails = findings.filter(findings["severity"] == "fail")
    inv = audit.details["invariants_passed"]
    say(f"ADR-0011 invariants: {'pass' if inv else 'FAIL'} "
        f"({fails.height} failures, {findings.height - fails.height} warnings)")
    for r in fails.head(10).iter_rows(named=True):
        say(f"  {r['check']} {r['policy']} {r['continuity_id']}: {r['detail']}")
    c = audit.details["checked"]
    say(f"checked {c['checkpoints']:,} checkpoints and {c['memory_compacted']:,} memory.compacted events of "
        f"{c['policies']} policies; {c['scenarios_run']} scenarios run, {c['scenarios_skipped']} skipped")
    say("two compaction layers (items examined): " + ", ".join(f"{k} {n:,}" for k, n in c["two_layer"].items()))
    if not c["checkpoints"]:
        say("no checkpoint to check: the run made no compaction, so no ADR-0011 invariant was exercised")
    refs = audit.details["bundle_summary_refs"]
    if refs is not None:
        say(f"context bundles: {refs['summary_refs']:,} summary_ref items in {refs['bundles']:,} bundles, "
            f"{refs['unresolved']:,} not resolved in the artifact store")
        for problem in refs["problems"][:10]:
            say(f"  {problem}")
    say(f"{'PASS' if audit.passed else 'FAIL'}: wrote conformance/scenarios/capability Parquet to {run}")
    if not audit.passed:
        raise typer.Exit(1)


@command(audit_app)
def fidelity(
    dataset: Annotated[Path, typer.Option(help="an imported dataset (real logs with recorded usage)")],
    out: Annotated[Path, typer.Option(help="directory for the fidelity Parquet tables (a run "
                                           "directory, or a new one)")],
    engine: Annotated[str, typer.Option(help="kernel | reference")] = "kernel",
    model_price_as: Annotated[str | None, typer.Option(
        help="price models genai-prices does not know as this one")] = None,
    accounting: Annotated[str, typer.Option(
        help="provider: replay in provider tokens (the line inside the replay) | counted: replay "
             "counted tokens and apply the line afterwards")] = "provider",
    force: Force = False,
    fmt: Format = "table",
) -> None:
    """Replay `as-recorded` and each log's harness preset; compare with the usage and
    compactions the logs recorded, in sample and leave-one-log-out (`--format` other than
    table: the tables the report reads)."""
    from workbench.audits import fidelity_audit
    from workbench.rundir import Kind, check_output

    check_output(out, Kind.AUDIT, accept=(Kind.RUN,), force=force, replacing=False)
    audit = fidelity_audit(dataset, engine=engine, price_as=model_price_as, accounting=accounting)
    audit.write(out, force=force)
    if fmt == "table":
        say(audit.details["text"])
    else:
        for name in (N.FIDELITY, N.FIDELITY_CONTINUITIES, N.FIDELITY_TOTALS, N.FIDELITY_PRESET):
            frame = audit.tables[name]
            emit(frame.to_dicts(), frame.columns, fmt=fmt, name=name.removesuffix(".parquet"))
    say(f"wrote fidelity Parquet tables to {out}")


@command()
def compactions(
    run: RunDir,
    policy: Annotated[list[str] | None, typer.Option(help="only these policies; repeat")] = None,
    continuity: Annotated[str | None, typer.Option(help="only this continuity id")] = None,
    fmt: Format = "table",
) -> None:
    """What each compaction kept: one row per compaction (compactions.parquet, written by
    `workbench audit redaction`): the span it dropped, its facts kept / paraphrased / lost,
    its secrets carried / redacted / leaked, summarizer calls and the cache loss."""
    import polars as pl

    from workbench.errors import WorkbenchError
    from workbench.report.console import print_compactions
    from workbench.rundir.read import load_config, load_table

    load_config(run)
    table = load_table(run, "compactions", required=True)
    for column, wanted in (("policy", policy or []), ("continuity_id", [continuity] if continuity else [])):
        known = table[column].unique(maintain_order=True).to_list()
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise WorkbenchError(f"{run}: no {column.replace('_id', '')} {', '.join(map(repr, unknown))} in "
                                 f"compactions.parquet; it has: {', '.join(known) or 'none (no compaction)'}")
        if wanted:
            table = table.filter(pl.col(column).is_in(wanted))
    print_compactions(table, fmt)
