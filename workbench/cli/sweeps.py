"""Sweeps: ``sweep`` and ``tune``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.cli._app import Force, Format, command, fail, say, warn

Executor = Annotated[str, typer.Option(help="process | dask | serial")]
Workers = Annotated[int | None, typer.Option(min=1, help="worker processes (default: CPU count)")]
Scheduler = Annotated[str | None, typer.Option(help="Dask scheduler address (--executor dask)")]
Root = Annotated[Path | None, typer.Option(help="project directory: a spec's relative paths are "
                                                "taken from it and it writes nowhere outside it "
                                                "(default: the current directory)")]
SweepOut = Annotated[Path | None, typer.Option(help="sweep directory (default ROOT/runs/sweeps/NAME)")]


def _run_spec(spec_path: Path, out: Path | None, executor: str, workers: int | None,
              scheduler: str | None, retry_failed: bool, root: Path | None, force: bool):
    from workbench.sweep.runner import run_sweep

    report = run_sweep(spec_path, out, executor=executor, workers=workers, scheduler=scheduler,
                       progress=sys.stderr.isatty(), retry_failed=retry_failed, root=root, force=force)
    say(f"{report.out}: {report.line()}", err=True)
    return report


def failed_configurations(agg) -> list[dict]:
    import polars as pl

    return agg.filter(~pl.col("complete")).select("config_index", "runs", "runs_ok", "error").to_dicts()


def _list_failures(failed: list[dict], total: int) -> None:
    for r in failed[:20]:
        say(f"configuration {r['config_index']} failed ({r['runs'] - r['runs_ok']} of {r['runs']} runs): "
            f"{r['error']}", err=True)
    if len(failed) > 20:
        say(f"... and {len(failed) - 20} more failed configurations (status in results/*.json)", err=True)


@command()
def sweep(
    spec: Annotated[Path, typer.Argument(help="sweep spec, e.g. simulations/codex-limit.yaml")],
    out: SweepOut = None,
    executor: Executor = "process",
    workers: Workers = None,
    scheduler: Scheduler = None,
    retry_failed: Annotated[bool, typer.Option(help="run failed configurations again")] = False,
    root: Root = None,
    force: Force = False,
    fmt: Format = "table",
) -> None:
    """Run a declarative sweep (resumable: completed runs are skipped).

    Every configuration runs even when others fail; the exit code is 1 when any failed
    (they are listed)."""
    from workbench.sweep.bands import sweep_bands, with_bands
    from workbench.sweep.runner import aggregate, collect
    from workbench.sweep.tune import TABLE_LIMIT, render_configs

    report = _run_spec(spec, out, executor, workers, scheduler, retry_failed, root, force)
    agg = aggregate(collect(report.out))
    bands = sweep_bands(report.out, agg, only=agg["config_index"].head(TABLE_LIMIT).to_list())
    render_configs(with_bands(agg, bands), fmt=fmt, notes=bands.notes)
    if fmt != "table":  # the table prints its notes under it; a document has no place for them
        for n in bands.notes:
            say(f"note: {n}", err=True)
    failed = failed_configurations(agg)
    if failed and len(failed) == agg.height:
        raise fail(f"all {agg.height} configurations failed; the first error: {failed[0]['error']}", 1)
    if failed:
        _list_failures(failed, agg.height)
        raise fail(f"{len(failed)} of {agg.height} configurations failed (listed above; "
                   "`--retry-failed` runs them again)", 1)


@command()
def tune(
    spec: Annotated[Path, typer.Argument(help="sweep spec, e.g. simulations/openclaw-flush.yaml")],
    objective: Annotated[str, typer.Option(help="metric to optimise (e.g. cost_usd)")] = "cost_usd",
    maximize: Annotated[bool, typer.Option("--maximize", help="maximise the objective instead")] = False,
    constraint: Annotated[list[str] | None, typer.Option(help="'metric op number', repeat; e.g. 'overflows==0'")] = None,
    harness: Annotated[str | None, typer.Option(
        help="print the winner in this harness's keys: claude-code | codex | openclaw | openhands | anthropic | "
             "langchain | gemini-cli | cline | roo-code | opencode | aider | hermes")] = None,
    out: SweepOut = None,
    executor: Executor = "process",
    workers: Workers = None,
    scheduler: Scheduler = None,
    top: Annotated[int, typer.Option(min=0, help="rows of the table besides the Pareto front")] = 10,
    no_run: Annotated[bool, typer.Option("--no-run", help="use the results already written; run nothing")] = False,
    root: Root = None,
    force: Force = False,
    fmt: Format = "table",
) -> None:
    """Run (or reuse) a sweep, pick the best feasible thresholds, print them in a harness's keys.

    On an imported log with a cache-miss profile each configuration also gets its expected cost
    and p10-p90 under the provider's own cache misses (cost_expected_usd, cost_p10_usd,
    cost_p90_usd)."""
    from workbench.errors import WorkbenchError
    from workbench.rundir import Kind, require
    from workbench.sweep.bands import describe, tune_with_bands
    from workbench.sweep.harness_config import HARNESSES, render
    from workbench.sweep.runner import aggregate, collect, default_out
    from workbench.sweep.spec import SweepSpec
    from workbench.sweep.tune import best_policy, render_table

    if harness is not None and harness not in HARNESSES:
        raise WorkbenchError(f"unknown harness {harness!r}; choose one of {', '.join(HARNESSES)}")
    loaded = SweepSpec.load(spec)
    out = out or default_out(loaded, root)
    if not no_run:
        _run_spec(spec, out, executor, workers, scheduler, False, root, force)
    require(out, Kind.SWEEP)  # a sweep that stopped halfway is finished first, not tuned
    agg = aggregate(collect(out))
    failed = failed_configurations(agg)
    if failed and len(failed) == agg.height:
        _list_failures(failed, agg.height)
        raise fail(f"nothing to tune: all {agg.height} configurations of {out} failed (listed above)", 1)
    result, bands = tune_with_bands(out, agg, objective, constraint or [], "max" if maximize else "min", top=top)
    render_table(result, top=top, fmt=fmt)
    if fmt != "table":  # the table prints its notes under it; a document has no place for them
        for n in result.notes:
            say(f"note: {n}", err=True)
    if failed:
        warn(f"{len(failed)} of {agg.height} configurations failed and were not considered: "
             + ", ".join(str(r["config_index"]) for r in failed[:20]))
    if result.best is None:
        raise fail("no configuration satisfies every constraint", 1)
    best = result.best
    chosen = {k: best[k] for k in loaded.parameter_keys()}
    say(f"best: configuration {best['config_index']} ({best['config_id']}): "
        + ", ".join(f"{k}={v}" for k, v in chosen.items()) + f"; {objective}={best[objective]}")
    if bands.frame is not None:
        say(f"best: cost ${best['cost_usd']:,.4f} with every cached read; {describe(best)}")
    if bands.shipped is not None:
        s = bands.shipped
        where = (f"configuration {s['config_index']}" if s["config_index"] is not None
                 else "not a configuration of this sweep")
        say(f"as shipped ({loaded.base.get('name')}, {where}): cost ${s['cost_usd']:,.4f} with every cached "
            f"read; {describe(s)}")
    if harness is not None:
        policy = best_policy(result, loaded)
        snippet = render(harness, policy, window=int(best.get("context_window") or 0) or None)
        say("")
        say(snippet.text())
