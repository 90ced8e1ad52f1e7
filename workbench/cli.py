"""The ``workbench`` command line. Each command imports its machinery lazily so that
``workbench --help`` stays fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.errors import WorkbenchError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Replay agent continuities through compaction policies and measure them.")


def _register_subcommands() -> None:
    from workbench.cli_audit import audit_app

    app.add_typer(audit_app, name="audit")


def _fail(exc: Exception) -> None:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


@app.command()
def generate(
    profile: Annotated[str, typer.Option(help="coding | chat | long-running | multi-actor")] = "coding",
    events: Annotated[int, typer.Option(help="number of events to generate")] = 20_000,
    seed: Annotated[int, typer.Option(help="random seed (same seed, same bytes)")] = 0,
    out: Annotated[Path, typer.Option(help="dataset directory, e.g. datasets/NAME")] = Path("datasets/synthetic"),
    text: Annotated[str, typer.Option(help="auto | full | labels-only")] = "auto",
    tokenizer: Annotated[list[str] | None, typer.Option(help="token-count columns to store")] = None,
) -> None:
    """Generate a seeded synthetic continuity dataset."""
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    try:
        cfg = GeneratorConfig(profile=profile, events=events, seed=seed, text=text,
                              tokenizers=tuple(tokenizer) if tokenizer else None)
        ds = generate_dataset(cfg, out, progress=sys.stderr.isatty())
    except WorkbenchError as exc:
        _fail(exc)
    c = ds.manifest["counts"]
    typer.echo(f"wrote {ds.path} ({c['events']:,} events, {c['requests']:,} requests, "
               f"{c['facts']} facts, {c['secrets']} secrets, {c['hard_negatives']} hard negatives)")


@app.command(name="import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="files or directories (recursed)")],
    out: Annotated[Path, typer.Option(help="dataset directory, e.g. datasets/NAME")],
    format: Annotated[str | None, typer.Option("--format", help="force a source format")] = None,
    on_error: Annotated[str, typer.Option(help="fail | skip malformed records")] = "fail",
) -> None:
    """Import real agent logs into the canonical format."""
    from workbench.sources.importer import import_paths

    try:
        ds = import_paths(paths, out, fmt=format, on_error=on_error, progress=True)
    except WorkbenchError as exc:
        _fail(exc)
    c = ds.manifest["counts"]
    skipped = ds.manifest.get("import", {}).get("skipped_total", 0)
    typer.echo(f"wrote {ds.path} ({c['continuities']} continuities, {c['events']:,} events, "
               f"{c['requests']:,} requests, {skipped} records skipped)")


@app.command()
def inspect(
    dataset: Annotated[Path, typer.Argument(help="dataset directory")],
    json: Annotated[bool, typer.Option("--json", help="stable machine-readable output")] = False,
) -> None:
    """Describe a dataset: events by kind, requests, tokens, usage, compactions, labels."""
    from workbench.continuity.inspect import inspect_dataset, render_text

    try:
        info = inspect_dataset(dataset)
    except WorkbenchError as exc:
        _fail(exc)
    if json:
        import orjson

        typer.echo(orjson.dumps(info, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
    else:
        render_text(info)


@app.command()
def tokens(
    dataset: Annotated[Path, typer.Argument(help="dataset directory")],
    tokenizer: Annotated[str, typer.Option(help="cl100k | approx | chars4")] = "approx",
) -> None:
    """Add (or recompute) a token-count column for another tokenizer."""
    from workbench.tokens.tokenizers import add_token_column

    try:
        ds = add_token_column(dataset, tokenizer)
    except WorkbenchError as exc:
        _fail(exc)
    typer.echo(f"{ds.path}: tokenizers {', '.join(ds.tokenizers)}")


@app.command()
def policies(
    json: Annotated[bool, typer.Option("--json", help="full parameters as JSON")] = False,
) -> None:
    """List the policy presets and their parameters."""
    from workbench.engine.presets import PRESETS

    if json:
        import orjson

        typer.echo(orjson.dumps({n: p.to_dict() for n, p in PRESETS.items()},
                                option=orjson.OPT_INDENT_2).decode())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("preset", "trigger", "strategy", "flush", "masking", "description")
    for name, p in PRESETS.items():
        table.add_row(name, p.trigger.rule_id(), p.compaction.kind,
                      "yes" if p.flush.enabled else "", str(p.masking.after_turns or ""), p.description)
    Console().print(table)


@app.command()
def simulate(
    dataset: Annotated[Path, typer.Option(help="dataset directory")],
    policy: Annotated[list[str], typer.Option(help="preset name or .yaml/.toml spec; repeat")],
    out: Annotated[Path, typer.Option(help="run directory, e.g. runs/NAME")],
    engine: Annotated[str, typer.Option(help="kernel | reference")] = "kernel",
    tokenizer: Annotated[str, typer.Option(help="token-count column to replay with")] = "cl100k",
    model: Annotated[str | None, typer.Option(help="price every policy as this model")] = None,
    seed: Annotated[int, typer.Option(help="seed recorded with the run")] = 0,
    evaluate: Annotated[bool, typer.Option(help="also run the redaction/retention audit")] = False,
    baseline: Annotated[bool, typer.Option(help="with --evaluate: also measure detect-secrets (slow)")] = False,
) -> None:
    """Replay a dataset through policies; write ledger/events/summary Parquet + config."""
    from workbench.engine.run import simulate as run_simulation

    try:
        result = run_simulation(dataset, policy, engine=engine, tokenizer=tokenizer, model=model,
                                seed=seed, progress=True)
        path = result.write(out)
        if evaluate:
            from workbench.continuity.dataset import load_dataset
            from workbench.evaluate.pipeline import evaluate_run

            evaluate_run(result, load_dataset(dataset), path, baseline=baseline)
    except WorkbenchError as exc:
        _fail(exc)
    _print_summary(result.summary)
    typer.echo(f"wrote {path} (run {result.run_id})")


def _print_summary(summary) -> None:
    import polars as pl
    from rich.console import Console
    from rich.table import Table

    agg = (summary.group_by("policy", maintain_order=True)
           .agg(pl.col("requests").sum(), pl.col("cost_usd").sum(), pl.col("compactions").sum(),
                pl.col("flushes").sum(), pl.col("overflows").sum(),
                pl.col("peak_context_tokens").max(), pl.col("cached_input_tokens").sum(),
                pl.col("prompt_tokens").sum()))
    table = Table("policy", "requests", "cost $", "compactions", "flushes", "overflows",
                  "peak context", "cache hit")
    for r in agg.iter_rows(named=True):
        hit = r["cached_input_tokens"] / r["prompt_tokens"] if r["prompt_tokens"] else 0.0
        table.add_row(r["policy"], f"{r['requests']:,}", f"{r['cost_usd']:.2f}", str(r["compactions"]),
                      str(r["flushes"]), str(r["overflows"]), f"{r['peak_context_tokens']:,}", f"{hit:.1%}")
    Console().print(table)


@app.command()
def demo(
    events: Annotated[int, typer.Option(help="size of the synthetic continuity")] = 60_000,
) -> None:
    """The main job: import the real logs, generate a synthetic set, replay every preset."""
    from workbench.demo import run_demo

    try:
        run_demo(events=events, say=typer.echo)
    except WorkbenchError as exc:
        _fail(exc)


@app.command()
def report(
    kind: Annotated[str, typer.Argument(help="policy-comparison | threshold-sweep | redaction-audit | "
                                             "determinism-audit | fidelity")],
    run: Annotated[Path, typer.Option(help="run directory (for threshold-sweep: the sweep directory)")],
    out: Annotated[Path, typer.Option(help="report directory, e.g. reports/NAME")],
    determinism: Annotated[Path | None, typer.Option(help="where `workbench audit determinism --out` wrote "
                                                          "(default: the run directory)")] = None,
    fidelity: Annotated[Path | None, typer.Option(help="where the fidelity audit wrote its Parquet "
                                                       "(default: the run directory)")] = None,
    continuity: Annotated[str | None, typer.Option(help="continuity id drawn in the sawtooth")] = None,
    max_overflows: Annotated[int, typer.Option(help="constraint: overflows at most")] = 0,
    max_leaks: Annotated[int, typer.Option(help="constraint: leaked secrets at most")] = 0,
    min_retention: Annotated[float, typer.Option(help="constraint: fact retention at least")] = 0.95,
) -> None:
    """Render a report: papermill runs notebooks/KIND.ipynb on the run, nbconvert writes HTML
    without code, figures are exported as PNG."""
    from workbench.report.render import render_report
    from workbench.report.verdict import Constraints

    try:
        res = render_report(kind, run, out, determinism=determinism, fidelity=fidelity, continuity=continuity,
                            constraints=Constraints(max_overflows, max_leaks, min_retention))
    except WorkbenchError as exc:
        _fail(exc)
    typer.echo(f"{len(res.figures)} figures (PNG) and the executed notebook in {out}")
    typer.echo(f"wrote {res.html}")


_register_subcommands()


def _run_spec(spec_path: Path, out: Path | None, executor: str, workers: int | None,
              scheduler: str | None, retry_failed: bool):
    from workbench.sweep.runner import run_sweep

    report = run_sweep(spec_path, out, executor=executor, workers=workers, scheduler=scheduler,
                       progress=sys.stderr.isatty(), retry_failed=retry_failed)
    typer.echo(f"{report.out}: {report.line()}", err=True)
    return report


@app.command()
def sweep(
    spec: Annotated[Path, typer.Argument(help="sweep spec, e.g. simulations/codex-limit.yaml")],
    out: Annotated[Path | None, typer.Option(help="sweep directory (default runs/sweeps/NAME)")] = None,
    executor: Annotated[str, typer.Option(help="process | dask | serial")] = "process",
    workers: Annotated[int | None, typer.Option(help="worker processes (default: CPU count)")] = None,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address (--executor dask)")] = None,
    retry_failed: Annotated[bool, typer.Option(help="run failed configurations again")] = False,
) -> None:
    """Run a declarative sweep (resumable: completed runs are skipped)."""
    import polars as pl

    from workbench.sweep.runner import aggregate, collect
    from workbench.sweep.tune import render_configs

    try:
        report = _run_spec(spec, out, executor, workers, scheduler, retry_failed)
        agg = aggregate(collect(report.out))
    except WorkbenchError as exc:
        _fail(exc)
    render_configs(agg)
    failed = agg.filter(~pl.col("complete"))
    for r in failed.select("config_index", "error").iter_rows(named=True):
        typer.echo(f"configuration {r['config_index']} failed: {r['error']}", err=True)


@app.command()
def tune(
    spec: Annotated[Path, typer.Argument(help="sweep spec, e.g. simulations/openclaw-flush.yaml")],
    objective: Annotated[str, typer.Option(help="metric to optimise (e.g. cost_usd)")] = "cost_usd",
    maximize: Annotated[bool, typer.Option("--maximize", help="maximise the objective instead")] = False,
    constraint: Annotated[list[str] | None, typer.Option(help="'metric op number', repeat; e.g. 'overflows==0'")] = None,
    harness: Annotated[str | None, typer.Option(help="claude-code | codex | openclaw | openhands | anthropic | langchain")] = None,
    out: Annotated[Path | None, typer.Option(help="sweep directory (default runs/sweeps/NAME)")] = None,
    executor: Annotated[str, typer.Option(help="process | dask | serial")] = "process",
    workers: Annotated[int | None, typer.Option(help="worker processes (default: CPU count)")] = None,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address (--executor dask)")] = None,
    top: Annotated[int, typer.Option(help="rows of the table besides the Pareto front")] = 10,
    no_run: Annotated[bool, typer.Option("--no-run", help="use the results already written; run nothing")] = False,
) -> None:
    """Run (or reuse) a sweep, pick the best feasible thresholds, print them in a harness's keys."""
    from workbench.sweep.harness_config import HARNESSES, render
    from workbench.sweep.runner import aggregate, collect, default_out
    from workbench.sweep.spec import SweepSpec
    from workbench.sweep.tune import best_policy, render_table
    from workbench.sweep.tune import tune as tune_sweep

    try:
        if harness is not None and harness not in HARNESSES:
            raise WorkbenchError(f"unknown harness {harness!r}; choose one of {', '.join(HARNESSES)}")
        loaded = SweepSpec.load(spec)
        out = out or default_out(loaded)
        if not no_run:
            _run_spec(spec, out, executor, workers, scheduler, retry_failed=False)
        agg = aggregate(collect(out))
        result = tune_sweep(agg, objective, constraint or [], "max" if maximize else "min")
    except WorkbenchError as exc:
        _fail(exc)
    render_table(result, top=top)
    if result.best is None:
        typer.secho("no configuration satisfies every constraint", fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(1)
    best = result.best
    chosen = {k: best[k] for k in loaded.parameter_keys()}
    typer.echo(f"best: configuration {best['config_index']} ({best['config_id']}): "
               + ", ".join(f"{k}={v}" for k, v in chosen.items())
               + f"; {objective}={best[objective]}")
    if harness is not None:
        try:
            policy = best_policy(result, loaded)
            snippet = render(harness, policy, window=int(best.get("context_window") or 0) or None)
        except WorkbenchError as exc:
            _fail(exc)
        typer.echo("")
        typer.echo(snippet.text())


def main() -> None:
    app()


if __name__ == "__main__":
    main()
