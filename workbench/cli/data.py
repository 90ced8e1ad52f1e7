"""Datasets: ``generate``, ``import``, ``inspect``, ``tokens``; and ``clean``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.cli._app import Force, Format, command, fail, say


@command()
def generate(
    profile: Annotated[str, typer.Option(help="coding | chat | long-running | multi-actor")] = "coding",
    events: Annotated[int, typer.Option(min=2, help="number of events to generate")] = 20_000,
    seed: Annotated[int, typer.Option(help="random seed (same seed, same bytes)")] = 0,
    out: Annotated[Path, typer.Option(help="dataset directory (new, empty, or a dataset the "
                                           "workbench wrote)")] = Path("datasets/synthetic"),
    text: Annotated[str, typer.Option(help="auto | full | labels-only")] = "auto",
    tokenizer: Annotated[list[str] | None, typer.Option(help="token-count columns to store")] = None,
    secret_families: Annotated[str, typer.Option(
        help="core | all (all: also the vendor families of docs/redaction-coverage.md)")] = "core",
    force: Force = False,
) -> None:
    """Generate a seeded synthetic continuity dataset."""
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    cfg = GeneratorConfig(profile=profile, events=events, seed=seed, text=text,
                          tokenizers=tuple(tokenizer) if tokenizer else None,
                          secret_families=secret_families)
    ds = generate_dataset(cfg, out, progress=sys.stderr.isatty(), force=force)
    c = ds.manifest["counts"]
    say(f"wrote {ds.path} ({c['events']:,} events, {c['requests']:,} requests, "
        f"{c['facts']} facts, {c['secrets']} secrets, {c['hard_negatives']} hard negatives)")


@command(name="import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="files or directories (recursed)")],
    out: Annotated[Path, typer.Option(help="dataset directory, e.g. datasets/NAME")],
    format: Annotated[str | None, typer.Option("--format", help="force a source format")] = None,
    on_error: Annotated[str, typer.Option(help="fail | skip malformed records")] = "fail",
    force: Force = False,
) -> None:
    """Import real agent logs into the canonical format."""
    from workbench.sources.importer import import_paths

    ds = import_paths(paths, out, fmt=format, on_error=on_error, progress=True, force=force)
    c = ds.manifest["counts"]
    skipped = ds.manifest.get("import", {}).get("skipped_total", 0)
    say(f"wrote {ds.path} ({c['continuities']} continuities, {c['events']:,} events, "
        f"{c['requests']:,} requests, {skipped} records skipped)")


@command()
def inspect(
    dataset: Annotated[Path, typer.Argument(help="dataset directory")],
    json: Annotated[bool, typer.Option("--json", help="stable machine-readable output")] = False,
    verify: Annotated[bool, typer.Option("--verify", help="check every file against the manifest's "
                                                          "sizes and sha256 (exit 1 on a mismatch)")] = False,
) -> None:
    """Describe a dataset: events by kind, requests, tokens, usage, compactions, labels."""
    from workbench.continuity.dataset import load_dataset
    from workbench.continuity.inspect import inspect_dataset, render_text

    if verify:
        problems = load_dataset(dataset).verify()
        for p in problems:
            say(f"damaged: {p}", err=True)
        if problems:
            raise fail(f"{dataset}: {len(problems)} file(s) differ from the manifest; re-create the "
                       "dataset (`workbench import` or `workbench generate`)", 1)
        say(f"{dataset}: every file matches the manifest (size and sha256)", err=True)
    info = inspect_dataset(dataset)
    if json:
        import orjson

        say(orjson.dumps(info, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
    else:
        render_text(info)


@command()
def tokens(
    dataset: Annotated[Path, typer.Argument(help="dataset directory")],
    tokenizer: Annotated[str, typer.Option(help="cl100k | approx | chars4")] = "approx",
) -> None:
    """Add (or recompute) a token-count column for another tokenizer."""
    from workbench.tokens.tokenizers import add_token_column

    ds = add_token_column(dataset, tokenizer)
    say(f"{ds.path}: tokenizers {', '.join(ds.tokenizers)}")


@command()
def clean(
    paths: Annotated[list[Path] | None, typer.Argument(help="where to look (default: the current "
                                                            "directory), recursively")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="list only; remove nothing")] = False,
) -> None:
    """List and remove what interrupted writes left behind (.NAME.*.tmp).

    A temporary whose writer still runs, or that was written on another host, is listed
    and kept."""
    from workbench.rundir import clean as find_and_clean
    from workbench.util.tables import emit

    rows = []
    for root in paths or [Path(".")]:
        for t in find_and_clean(root, dry_run=dry_run):
            action = ("would remove" if dry_run else "removed") if t.stale else "kept"
            rows.append({"path": str(t.path), "what": action, "why": t.reason,
                         "age": f"{t.age_s / 3600:.1f} h", "bytes": t.bytes})
    if not rows:
        say("no temporaries of interrupted writes found")
        return
    emit(rows, ["path", "what", "why", "age", "bytes"], title="Temporaries of interrupted writes")


@command()
def calibrate(
    dataset: Annotated[Path, typer.Argument(help="an imported dataset (workbench import)")],
    out: Annotated[Path, typer.Option(help="profiles file to write (new, or one the workbench wrote)")],
    tokenizer: Annotated[str, typer.Option(help="token-count column the lines are fitted for")] = "cl100k",
    fmt: Format = "table",
) -> None:
    """Fit harness calibration profiles (provider tokens ≈ a + b·counted) on imported logs,
    with each log's in-sample and leave-one-log-out errors; `simulate --calibration FILE`
    uses them."""
    from workbench.continuity.dataset import load_dataset
    from workbench.sources.profiles import fit_profiles, write_profiles
    from workbench.util.tables import emit

    doc = fit_profiles(load_dataset(dataset), tokenizer)
    write_profiles(doc, out)
    rows = [{"profile": f"{h}/{fam}", "prefix_tokens": round(p["prefix_tokens"]), "factor": p["factor"],
             "logs": len(p["logs"]), "requests": p["requests"], "ape_median_pct": p["ape_median_pct"],
             "ape_p90_pct": p["ape_p90_pct"]}
            for h, fams in doc["profiles"].items() for fam, p in fams.items()]
    emit(rows, list(rows[0]) if rows else ["profile"], fmt=fmt, title="profiles (in sample)")
    logs = [{"log": cid, "profile": f"{e['harness']}/{e['family']}", "requests": e["requests"],
             "own_ape_median_pct": (e["own"] or {}).get("ape_median_pct"),
             "loo_profile": (e["loo"] or {}).get("profile"),
             "loo_ape_median_pct": (e["loo"] or {}).get("ape_median_pct"),
             "loo_ape_p90_pct": (e["loo"] or {}).get("ape_p90_pct")}
            for cid, e in doc["logs"].items() if e["requests"] >= 3]
    emit(logs, ["log", "profile", "requests", "own_ape_median_pct", "loo_profile", "loo_ape_median_pct",
                "loo_ape_p90_pct"], fmt=fmt, title="each log's prompt error: its own line vs the profile "
         "fitted without it (leave-one-log-out)")
    say(f"wrote {out}")
