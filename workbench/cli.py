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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
