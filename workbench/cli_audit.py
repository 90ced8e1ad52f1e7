"""``workbench audit redaction|determinism|conformance|fidelity``: Parquet tables plus a
short text summary; the exit code is 1 when a conformance or determinism check fails."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.errors import WorkbenchError

audit_app = typer.Typer(no_args_is_help=True, help="Evaluate runs: leakage and retention, "
                        "determinism, conformance, fidelity.")


def _fail(exc: Exception) -> None:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def _write_json(path: Path, obj) -> None:
    import orjson

    from workbench.util.atomic import atomic_write_bytes

    atomic_write_bytes(path, orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


@audit_app.command()
def redaction(
    run: Annotated[Path, typer.Option(help="run directory written by `workbench simulate`")],
    summarizer: Annotated[str, typer.Option(help="modelled | extractive | recorded | http")] = "modelled",
    baseline: Annotated[bool, typer.Option(help="also measure detect-secrets as the SR-1 redactor (slow)")] = False,
) -> None:
    """Summaries and memory entries through SR-1; secret leakage by channel; fact retention."""
    from rich.console import Console
    from rich.table import Table

    from workbench.evaluate.pipeline import evaluate_run, load_run

    try:
        result, ds = load_run(run)
        out = evaluate_run(result, ds, run, summarizer=summarizer, baseline=baseline)
    except WorkbenchError as exc:
        _fail(exc)
    table = Table("policy", "SR-1", "secrets", "leaks (summaries+memory)", "in context after compaction",
                  "retention", title=f"Redaction and retention ({summarizer} summarizer)")
    for name, h in out["report"]["policies"].items():
        table.add_row(name, "on" if h["sr1"] else "off", str(h["secrets"]), str(h["leaks"]),
                      str(h["leaks_context"]), "-" if h["retention"] is None else f"{h['retention']:.1%}")
    Console().print(table)
    o = out["report"]["over_redaction"]
    typer.echo(f"hard negatives that reached derived text: {o['negatives_in_derived_text']}; "
               f"destroyed by the harness: {o['harness']}, by detect-secrets: "
               f"{'not measured (--baseline)' if o['detect_secrets'] is None else o['detect_secrets']}")
    typer.echo(f"wrote texts/leakage/over_redaction/retention Parquet and evaluation.json to {run}")


@audit_app.command()
def determinism(
    dataset: Annotated[Path, typer.Option(help="dataset directory")],
    policy: Annotated[list[str], typer.Option(help="preset or spec; repeat")],
    out: Annotated[Path, typer.Option(help="directory for determinism.parquet and drift.parquet")],
    engine: Annotated[str, typer.Option(help="kernel | reference")] = "kernel",
    drift_tokenizer: Annotated[str, typer.Option(help="second tokenizer for drift")] = "approx",
) -> None:
    """Byte-identical ledgers, checkpoints and compiled contexts; tokenizer drift of cut points."""
    from rich.console import Console
    from rich.table import Table

    from workbench.evaluate.determinism import audit_determinism

    try:
        res = audit_determinism(dataset, policy, engine=engine, drift_tokenizer=drift_tokenizer)
    except WorkbenchError as exc:
        _fail(exc)
    out.mkdir(parents=True, exist_ok=True)
    res["checks"].write_parquet(out / "determinism.parquet")
    res["drift"].write_parquet(out / "drift.parquet")
    _write_json(out / "determinism.json", {"passed": res["passed"], "hashes": res["hashes"]})
    checks = res["checks"]
    # a row per policy: presets are many, checks are few, so this stays readable in a terminal
    names = checks["check"].unique(maintain_order=True).to_list()
    table = Table("policy", *names, title="Determinism")
    for policy in checks["policy"].unique(maintain_order=True).to_list():
        status = dict(checks.filter(checks["policy"] == policy).select("check", "status").iter_rows())
        table.add_row(policy, *(status.get(c, "-") for c in names))
    Console().print(table)
    d = res["drift"]
    table = Table("policy", "trigger", "cuts", f"cuts ({drift_tokenizer})", "moved", title="Tokenizer drift")
    for r in d.iter_rows(named=True):
        table.add_row(r["policy"], r["trigger"], str(r["cuts"]), str(r["cuts_other"]), str(r["moved"]))
    Console().print(table)
    typer.echo(f"{'PASS' if res['passed'] else 'FAIL'}: wrote {out}/determinism.parquet, drift.parquet")
    if not res["passed"]:
        raise typer.Exit(1)


@audit_app.command()
def conformance(
    run: Annotated[Path, typer.Option(help="run directory written by `workbench simulate`")],
) -> None:
    """JSON Schemas, ADR-0011 invariants, RFC 0012 scenarios, RFC 0080 degraded projection."""
    from rich.console import Console
    from rich.table import Table

    from workbench.conformance.capability import degraded_matrix
    from workbench.conformance.invariants import check_result
    from workbench.conformance.scenarios import run_scenarios, scenarios_frame
    from workbench.evaluate.pipeline import load_run

    try:
        result, ds = load_run(run)
        report = check_result(result, ds)
        scenarios = scenarios_frame(run_scenarios(result))
    except WorkbenchError as exc:
        _fail(exc)
    matrix = degraded_matrix()
    report.findings.write_parquet(run / "conformance.parquet")
    scenarios.write_parquet(run / "scenarios.parquet")
    matrix.write_parquet(run / "capability.parquet")
    failed_scen = scenarios.filter(scenarios["status"] == "fail")
    passed = report.passed and failed_scen.height == 0
    _write_json(run / "conformance.json", {"passed": passed, "invariants_passed": report.passed,
                                           "scenario_failures": failed_scen.height})
    table = Table("policy", "scenario", "status", "detail", title="RFC 0012 scenarios")
    for r in scenarios.iter_rows(named=True):
        table.add_row(r["policy"], r["scenario"], r["status"], str(r.get("detail", ""))[:80])
    Console().print(table)
    fails = report.findings.filter(report.findings["severity"] == "fail")
    typer.echo(f"ADR-0011 invariants: {'pass' if report.passed else 'FAIL'} "
               f"({fails.height} failures, {report.findings.height - fails.height} warnings)")
    for r in fails.head(10).iter_rows(named=True):
        typer.echo(f"  {r['check']} {r['policy']} {r['continuity_id']}: {r['detail']}")
    typer.echo(f"{'PASS' if passed else 'FAIL'}: wrote conformance/scenarios/capability Parquet to {run}")
    if not passed:
        raise typer.Exit(1)


@audit_app.command()
def fidelity(
    dataset: Annotated[Path, typer.Option(help="an imported dataset (real logs with recorded usage)")],
    out: Annotated[Path, typer.Option(help="directory for the fidelity Parquet tables")],
    engine: Annotated[str, typer.Option(help="kernel | reference")] = "kernel",
) -> None:
    """Replay `as-recorded` and compare with the usage and compactions the logs recorded."""
    from workbench.evaluate.fidelity import fidelity_table, render_summary

    try:
        res = fidelity_table(dataset, engine=engine)
    except WorkbenchError as exc:
        _fail(exc)
    out.mkdir(parents=True, exist_ok=True)
    res["requests"].write_parquet(out / "fidelity_requests.parquet")
    res["summary"].write_parquet(out / "fidelity.parquet")
    res["compactions"].write_parquet(out / "fidelity_compactions.parquet")
    res["continuities"].write_parquet(out / "fidelity_continuities.parquet")
    _write_json(out / "fidelity.json", res["config"])
    typer.echo(render_summary(res))
    typer.echo(f"wrote fidelity Parquet tables to {out}")
