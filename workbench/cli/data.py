"""Datasets: ``generate``, ``import``, ``inspect``, ``tokens``; and ``clean``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench.cli._app import Force, Format, command, fail, print_document, say


@command()
def generate(
    profile: Annotated[str, typer.Option(help="coding | chat | long-running | multi-actor | swe-bench")] = "coding",
    events: Annotated[int, typer.Option(min=2, help="number of events to generate")] = 20_000,
    continuities: Annotated[int, typer.Option(min=1, help="> 1: that many task-sized continuities, one "
                                                         "episode each (--events is then ignored)")] = 1,
    seed: Annotated[int, typer.Option(help="random seed (same seed, same bytes)")] = 0,
    out: Annotated[Path, typer.Option(help="dataset directory (new, empty, or a dataset the "
                                           "workbench wrote)")] = Path("datasets/synthetic"),
    text: Annotated[str, typer.Option(help="auto | full | labels-only")] = "auto",
    tokenizer: Annotated[list[str] | None, typer.Option(help="token-count columns to store")] = None,
    secret_families: Annotated[str, typer.Option(
        help="core | all (all: also the vendor families of docs/redaction-coverage.md)")] = "core",
    task_state: Annotated[bool, typer.Option(
        "--task-state", help="also plant an evolving task state (a todo list whose items move from open to "
                             "done, and the next step) as facts of kind task")] = False,
    facts: Annotated[int | None, typer.Option(min=0, help="planted facts (default: scales with --events)")] = None,
    secrets: Annotated[int | None, typer.Option(min=0, help="planted secrets (default: scales with --events)")] = None,
    force: Force = False,
) -> None:
    """Generate a seeded synthetic continuity dataset."""
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    cfg = GeneratorConfig(profile=profile, events=events, seed=seed, text=text,
                          tokenizers=tuple(tokenizer) if tokenizer else None, continuities=continuities,
                          secret_families=secret_families, task_state=task_state, facts=facts, secrets=secrets)
    ds = generate_dataset(cfg, out, progress=sys.stderr.isatty(), force=force)
    c = ds.manifest["counts"]
    tasks = f"{c['continuities']:,} continuities, " if continuities > 1 else ""
    say(f"wrote {ds.path} ({tasks}{c['events']:,} events, {c['requests']:,} requests, "
        f"{c['facts']} facts, {c['secrets']} secrets, {c['hard_negatives']} hard negatives)")


@command(name="import")
def import_(
    paths: Annotated[list[Path], typer.Argument(help="files or directories (recursed)")],
    out: Annotated[Path, typer.Option(help="dataset directory, e.g. datasets/NAME")],
    format: Annotated[str | None, typer.Option("--format", help="force a source format")] = None,
    on_error: Annotated[str, typer.Option(help="fail | skip malformed records")] = "fail",
    placeholder_pattern: Annotated[list[str] | None, typer.Option(
        "--placeholder-pattern", help="a redaction placeholder that keeps the original length: a regular "
        "expression with a named group len (repeatable; built-in forms such as [REDACTED len=N sha=...] "
        "are always recognised)")] = None,
    force: Force = False,
) -> None:
    """Import real agent logs into the canonical format."""
    from workbench.sources.importer import import_paths

    ds = import_paths(paths, out, fmt=format, on_error=on_error, progress=True, force=force,
                      placeholder_patterns=tuple(placeholder_pattern or ()))
    c = ds.manifest["counts"]
    imp = ds.manifest.get("import", {})
    skipped = imp.get("skipped_total", 0)
    ph = imp.get("placeholders") or {}
    expanded = (f", {ph['texts_expanded']:,} redacted texts counted at their original length "
                f"({ph['placeholders']:,} placeholders, {ph['original_chars']:,} characters)"
                if ph.get("texts_expanded") else "")
    say(f"wrote {ds.path} ({c['continuities']} continuities, {c['events']:,} events, "
        f"{c['requests']:,} requests, {skipped} records skipped{expanded})")


@command()
def inspect(
    dataset: Annotated[Path, typer.Argument(help="dataset directory")],
    json: Annotated[bool, typer.Option("--json", help="stable machine-readable output")] = False,
    verify: Annotated[bool, typer.Option("--verify", help="check every file against the manifest's "
                                                          "sizes and sha256 (exit 1 on a mismatch)")] = False,
    compactions: Annotated[bool, typer.Option("--compactions", help="per recorded compaction of an "
                                              "imported log: what its summary kept of the facts before "
                                              "the cut (by kind, recency, mentions; task state)")] = False,
    against: Annotated[Path | None, typer.Option("--against", help="DATASET is then an evaluated run and this "
                                                 "another evaluation of the same replay with another summarizer "
                                                 "(e.g. a local model against --summarizer calibrated): their "
                                                 "retention, secret-copy rate and size ratio side by side")] = None,
    compaction: Annotated[int | None, typer.Option("--compaction", min=0, help="with --against: the "
                                                   "compaction (row) whose two summaries are shown")] = None,
) -> None:
    """Describe a dataset: events by kind, requests, tokens, usage, compactions, labels."""
    from workbench.continuity.dataset import load_dataset
    from workbench.continuity.inspect import inspect_dataset, render_text

    if against is not None:
        _inspect_against(dataset, against, compaction, json)
        return
    if compactions:
        _inspect_compactions(load_dataset(dataset), json)
        return

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

        print_document(orjson.dumps(info, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
    else:
        render_text(info)


SUMMARY_HEAD = 600  # characters of each recorded summary shown beside what it lost (--json: all)


def _inspect_compactions(ds, as_json: bool) -> None:
    from workbench.evaluate.log_retention import compaction_report, dataset_retention
    from workbench.sources.compaction_calls import recorded_compaction_costs
    from workbench.util.tables import emit

    facts, comps = dataset_retention(ds)
    report = compaction_report(facts, comps)
    costs = recorded_compaction_costs(ds)
    for r in report:
        c = r["compaction"]
        r["cost"] = costs.get((c["continuity_id"], c["request"]))
    if as_json:
        import orjson

        say(orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
        return
    if not report:
        say(f"{ds.path}: no recorded compaction (no compaction boundary in any log)")
        return
    for r in report:
        c = r["compaction"]
        kept = "not readable (no recorded summary)" if c["kept"] is None else \
            f"kept {c['kept']}/{c['facts_before']} facts ({c['retention']:.0%})"
        ratio = f", {c['summary_ratio']:.1%} of the span" if c["summary_ratio"] is not None else ""
        say(f"\n{c['continuity_id']} ({c['harness']}) compaction {c['compaction']} at request {c['request']} "
            f"(seq {c['boundary_seq']}, {c['trigger']}): span {c['span_events']:,} events, "
            f"{c['span_tokens']:,} tokens; summary {c['summary_chars'] or 0:,} chars, "
            f"{c['summary_tokens'] or 0:,} tokens{ratio}; {kept}")
        say(_compaction_cost_line(r.get("cost")))
        if c["kept"] is None:
            continue
        rest = len(c["summary_text"]) - SUMMARY_HEAD  # said in words: a "…" would read as a cut table
        say(f"the recorded summary begins (its first {min(SUMMARY_HEAD, len(c['summary_text'])):,} characters):\n  "
            + "\n  ".join(c["summary_text"][:SUMMARY_HEAD].splitlines())
            + (f"\n  [{rest:,} more characters]" if rest > 0 else ""))
        emit(r["by_kind"], ["kind", "facts_before", "kept", "exact", "retention"], title="by kind")
        emit(r["by_recency"], ["recency", "facts_before", "kept", "retention"],
             title="by recency (requests from the last mention to the cut)")
        emit(r["by_mentions"], ["mentions", "facts_before", "kept", "retention"], title="by mention count")
        say(f"task state: open items kept {c['open_items_kept']}/{c['open_items']}, done items kept "
            f"{c['done_items_kept']}/{c['done_items']}, last request "
            f"{_yes_no(c['last_request_kept'])}, next step {_yes_no(c['next_step_kept'])}")
        if r["lost"]:
            emit(r["lost"], ["kind", "value", "mentions", "requests_since", "tokens_since"],
                 title="lost, most mentioned first")


def _compaction_cost_line(cost: dict | None) -> str:
    """What a recorded compaction cost: its call plus the re-write of the new prefix."""
    def usd(v):
        return "$?" if v is None else f"${v:,.4f}"

    if cost is None:
        return "cost: the log recorded no usage for this compaction"
    call = (f"its call {usd(cost['call_usd'])} (read {cost['call_cache_read']:,} cached tokens, wrote "
            f"{cost['call_cache_write']:,}, {cost['call_input']:,} uncached)" if cost["calls"]
            else "its call not recorded")
    rewrite = ("the next request's usage not recorded" if cost["next_prompt"] is None else
               f"the re-write of the new prefix {usd(cost['rewrite_usd'])} (the next request read "
               f"{cost['next_cache_read']:,} of {cost['next_prompt']:,} tokens, wrote {cost['next_cache_write']:,})")
    total = "" if cost["compaction_usd"] is None else f"{usd(cost['compaction_usd'])} = "
    return f"cost: {total}{call} + {rewrite}"


def _inspect_against(run: Path, other: Path, row: int | None, as_json: bool) -> None:
    from workbench.evaluate.summarizer_compare import compaction_pair, compare_runs
    from workbench.util.tables import emit

    compared = compare_runs(run, other)
    pair = compaction_pair(compared, row)
    if as_json:
        import orjson

        doc = {"summary": compared["summary"].to_dicts(), "compactions": compared["compactions"].to_dicts(),
               "compaction": pair}
        print_document(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode())
        return
    pct = lambda v: "—" if v is None else f"{v:.1%}"  # noqa: E731
    emit(compared["summary"].to_dicts(), ["summarizer", "compactions", "facts_in_span", "retention",
                                          "retention_any_form", "secret_copy_rate", "size_ratio", "degenerate",
                                          "headline_retention_spread"],
         title="the same compactions, two summarizers",
         display={"retention": pct, "retention_any_form": pct, "secret_copy_rate": pct, "size_ratio": pct})
    say(f"\ncompaction {pair['compaction']} of {pair['policy']} on {pair['continuity_id']}: "
        f"{pair['dropped_tokens']:,} tokens dropped, {pair['facts_in_span']} facts in the span")
    for side in pair["sides"]:
        flags = ", ".join(side["degenerate"] or []) or "none"
        rest = len(side["text"]) - SUMMARY_HEAD
        say(f"{side['summarizer']}: kept {len(side['kept'])} ({', '.join(side['kept']) or '-'}), lost "
            f"{len(side['lost'])} ({', '.join(side['lost']) or '-'}); degenerate: {flags}\n  "
            + "\n  ".join(side["text"][:SUMMARY_HEAD].splitlines())
            + (f"\n  [{rest:,} more characters]" if rest > 0 else ""))


def _yes_no(kept: bool | None) -> str:
    return "none stated" if kept is None else ("kept" if kept else "lost")


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
    retention_out: Annotated[Path | None, typer.Option(
        help="also fit retention profiles (what each harness's recorded summaries keep) and write "
             "them here (new, or a retention profile file the workbench wrote); the `calibrated` "
             "summarizer reads them")] = None,
    cache_miss_out: Annotated[Path | None, typer.Option(
        help="also fit the provider cache-miss profiles (how often each harness × release line × "
             "provider missed its prompt cache inside the TTL, from the recorded reads) and write them "
             "here (new, or a cache-miss profile file the workbench wrote)")] = None,
    fmt: Format = "table",
) -> None:
    """Fit harness calibration profiles (provider tokens ≈ a + b·counted) on imported logs,
    with each log's in-sample and leave-one-log-out errors; `simulate --calibration FILE`
    uses them. With --retention-out, also the retention profiles of the calibrated
    summarizer, with their leave-one-log-out errors."""
    from workbench.continuity.dataset import load_dataset
    from workbench.sources.profiles import fit_profiles, write_profiles
    from workbench.util.tables import emit

    if retention_out is not None:
        _calibrate_retention(load_dataset(dataset), retention_out, fmt)
    if cache_miss_out is not None:
        _calibrate_cache_misses(load_dataset(dataset), cache_miss_out, tokenizer, fmt)
    doc = fit_profiles(load_dataset(dataset), tokenizer)
    write_profiles(doc, out)
    rows = [{"profile": f"{h}/{fam}", "prefix_tokens": round(p["prefix_tokens"]), "factor": p["factor"],
             "logs": len(p["logs"]), "requests": p["requests"], "ape_median_pct": p["ape_median_pct"],
             "ape_p90_pct": p["ape_p90_pct"]}
            for h, fams in doc["profiles"].items() for fam, p in fams.items()]
    emit(rows, list(rows[0]) if rows else ["profile"], fmt=fmt, title="profiles (in sample)", name="profiles")
    logs = [{"log": cid, "profile": f"{e['harness']}/{e['family']}", "requests": e["requests"],
             "own_ape_median_pct": (e["own"] or {}).get("ape_median_pct"),
             "loo_profile": (e["loo"] or {}).get("profile"),
             "loo_ape_median_pct": (e["loo"] or {}).get("ape_median_pct"),
             "loo_ape_p90_pct": (e["loo"] or {}).get("ape_p90_pct")}
            for cid, e in doc["logs"].items() if e["requests"] >= 3]
    emit(logs, ["log", "profile", "requests", "own_ape_median_pct", "loo_profile", "loo_ape_median_pct",
                "loo_ape_p90_pct"], fmt=fmt, title="each log's prompt error: its own line vs the profile "
         "fitted without it (leave-one-log-out)", name="logs")
    say(f"wrote {out}")


def _calibrate_cache_misses(ds, out: Path, tokenizer: str, fmt: str) -> None:
    from workbench.engine.cache_miss import CLASSES, cold_requests, fit_miss_profiles, resolve, write_miss_profiles
    from workbench.engine.run import prepare_dataset
    from workbench.util.tables import emit

    doc = fit_miss_profiles(prepare_dataset(ds, tokenizer), fitted_from=ds.name, cold=cold_requests(ds.manifest))
    if not doc["logs"]:
        raise fail(f"{ds.path}: no log recorded two cache reads in a row; cache-miss profiles are fitted "
                   "on the reads real logs recorded", 2)
    write_miss_profiles(doc, out)
    rows = []
    for cid, e in doc["logs"].items():
        own = resolve(doc, e["harness"], e["release_line"], e["provider"])
        loo = resolve(doc, e["harness"], e["release_line"], e["provider"], exclude=cid)
        rows.append({"log": cid, "group": f"{e['harness']}@{e['release_line']}/{e['provider']}",
                     **{f"observed_{c}": n for c, n in zip(CLASSES, e["requests"], strict=True)},
                     **{f"missed_{c}": m for c, m in zip(CLASSES, e["misses"], strict=True)},
                     **{f"p_{c}": round(p, 3) for c, p in zip(CLASSES, own.p_miss, strict=True)},
                     **{f"loo_p_{c}": (round(p, 3) if loo else None)
                        for c, p in zip(CLASSES, loo.p_miss if loo else (0.0,) * len(CLASSES), strict=True)},
                     "loo_profile": loo.source if loo else None})
    emit(rows, list(rows[0]), fmt=fmt, title="cache misses inside the TTL per log: observed, missed, the "
         "chance its group's profile gives, and the profile fitted without it (leave-one-log-out)",
         name="cache_misses")


def _calibrate_retention(ds, out: Path, fmt: str) -> None:
    from workbench.evaluate.log_retention import dataset_retention
    from workbench.summarize.retention_profile import (
        LOO_TARGET_PP,
        MIN_KIND_FACTS,
        fit_profiles,
        write_profiles,
    )
    from workbench.util.tables import emit

    facts, comps = dataset_retention(ds)
    doc = fit_profiles(facts, comps, fitted_from=ds.name)
    if not doc["profiles"]:
        raise fail(f"{ds.path}: no recorded compaction with a readable summary; retention profiles are "
                   "fitted on the summaries real logs recorded", 2)
    write_profiles(doc, out)
    rows = [{"profile": h, "logs": len(p["logs"]), "facts": p["keep"]["facts"], "kept": p["keep"]["kept"],
             "summary_ratio": p["size"]["ratio"], "summary_cap": p["size"]["cap"]}
            for h, p in doc["profiles"].items()]
    emit(rows, ["profile", "logs", "facts", "kept", "summary_ratio", "summary_cap"], fmt=fmt,
         title="retention profiles (in sample)")
    s = doc["loo_summary"]
    kinds = [{"kind": k, "facts": v["facts"], "recorded_pct": v["recorded_pct"], "error_pp": v["error_pp"],
              "judged": v["facts"] >= MIN_KIND_FACTS} for k, v in s["kinds"].items()]
    emit(kinds, ["kind", "facts", "recorded_pct", "error_pp", "judged"], fmt=fmt,
         title="expected kept, profile fitted without each log vs its recorded summaries (leave-one-log-out, pp)")
    verdict = "n/a" if s["meets_target"] is None else ("meets" if s["meets_target"] else "misses")
    overall = "–" if s["overall_pp"] is None else f"{s['overall_pp']:+.1f} pp"
    say(f"leave-one-log-out overall {overall} over {s['facts']} facts; {verdict} the target (within "
        f"{LOO_TARGET_PP:.0f} pp overall and for each kind with at least {MIN_KIND_FACTS} facts)")
    say(f"wrote {out}")
