"""Replay: ``policies``, ``simulate``, ``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import summarizer as S
from workbench.cli._app import Force, Format, command, fail, print_document, say, warn
from workbench.report.console import print_summary


@command()
def policies(fmt: Format = "table",
             json: Annotated[bool, typer.Option("--json", help="full parameters as JSON")] = False,
             harness: Annotated[str | None, typer.Option(help="only the presets of this harness")] = None) -> None:
    """List the policy presets and their parameters (release lines of a versioned preset,
    ``NAME@LINE``, under it: on an imported log the preset follows the log's version)."""
    from workbench.engine.presets import PRESETS, VERSIONS, harness_of, source_of
    from workbench.util.tables import emit

    listed = {}
    for name, p in PRESETS.items():
        listed[name] = p
        listed.update({v.name: v for v in VERSIONS.get(name, {}).values()})
    if harness is not None:
        known = sorted({h for h in map(harness_of, PRESETS.values()) if h})
        if harness not in known:
            raise fail(f"no preset mirrors harness {harness!r}; harnesses: {', '.join(known)}")
        listed = {n: p for n, p in listed.items() if harness_of(p) == harness}
    if json:
        import orjson

        print_document(orjson.dumps({n: p.to_dict() for n, p in listed.items()}, option=orjson.OPT_INDENT_2).decode())
        return
    rows = [{"preset": name, "harness": harness_of(p) or "", "trigger": p.trigger.rule_id(),
             "strategy": p.compaction.kind, "flush": "yes" if p.flush.enabled else "",
             "masking": p.masking.after_turns or (f"all but the newest {p.masking.keep_tokens:,} tokens"
                                                  if p.masking.keep_tokens else ""),
             "at_overflow": p.at_overflow(),
             "description": p.description, "source": source_of(p)} for name, p in listed.items()]
    emit(rows, ["preset", "harness", "trigger", "strategy", "flush", "masking", "at_overflow", "description",
                "source"],
         fmt=fmt, headers={"at_overflow": "at overflow"}, display={"masking": str})


def report_notes(config: dict) -> None:
    """Say what was done otherwise than asked (stand-in prices, defaults), and where."""
    from workbench.report.verdict import scoped_note

    for n in config.get("notes") or []:
        where = n["where"]
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        warn(f"{scoped_note(n, config)}: {shown}")


def report_cost_bands(config: dict) -> None:
    """Per imported log: its cost under the provider's own cache misses (expected, p10-p90)
    beside the cost with every read the cache model allows (``config.json``'s ``cost_bands``)."""
    from workbench.engine.cache_miss import cost_band_frame

    for b in cost_band_frame(config).iter_rows(named=True):
        say(f"{b['policy']} / {b['continuity_id']}: ${b['expected_usd']:,.4f} expected (p10 ${b['p10_usd']:,.4f}, "
            f"p90 ${b['p90_usd']:,.4f}) under the provider's cache misses ({b['profile']}); "
            f"${b['hits_usd']:,.4f} with every cached read")


@command()
def simulate(
    dataset: Annotated[Path, typer.Option(help="dataset directory")],
    policy: Annotated[list[str], typer.Option(help="preset name or .yaml/.toml spec; repeat")],
    out: Annotated[Path, typer.Option(help="run directory, e.g. runs/NAME (new, empty, or a run "
                                           "the workbench wrote)")],
    engine: Annotated[str, typer.Option(help="kernel | reference")] = "kernel",
    tokenizer: Annotated[str, typer.Option(help="token-count column to replay with")] = "cl100k",
    model: Annotated[str | None, typer.Option(help="price every policy as this model")] = None,
    model_price_as: Annotated[str | None, typer.Option(
        help="price a model genai-prices does not know as this one (recorded in config.json)")] = None,
    seed: Annotated[int, typer.Option(help="seed recorded with the run")] = 0,
    accounting: Annotated[str, typer.Option(
        help="auto (provider tokens for imported logs, counted for generated data) | provider | "
             "counted")] = "auto",
    calibration: Annotated[Path | None, typer.Option(
        help="harness profiles file of `workbench calibrate` (default: the packaged profiles)")] = None,
    line_source: Annotated[str, typer.Option(
        help="own: a log's own fitted line first | profile: always its harness profile")] = "own",
    evaluate: Annotated[bool, typer.Option(help="also run the redaction/retention audit")] = False,
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
    force: Force = False,
    fmt: Format = "table",
) -> None:
    """Replay a dataset through policies; write ledger/events/summary Parquet + config."""
    from workbench.engine.run import simulate as run_simulation
    from workbench.rundir import Kind, check_output, exclusive

    check_output(out, Kind.RUN, force=force)  # before any work
    options = S.summarizer_options(summarizer, base_url=summarizer_base_url, model=summarizer_model,
                                   key_env=summarizer_key_env, cassette=summarizer_cassette,
                                   mode=summarizer_mode, baseline=baseline, timeout=summarizer_timeout,
                                   draws=draws, filler=filler)
    with exclusive(out):
        result = run_simulation(dataset, policy, engine=engine, tokenizer=tokenizer, model=model,
                                price_as=model_price_as, seed=seed, progress=True, accounting=accounting,
                                calibration=calibration, line_source=line_source,
                                keep_inputs=evaluate)  # only the audit reads them
        path = result.write(out, force=force)
        report_notes(result.config)
        print_summary(result.summary, fmt)
        report_cost_bands(result.config)
        if evaluate:
            from workbench.audits import redaction_audit
            from workbench.continuity.dataset import load_dataset
            from workbench.report.console import print_evaluation

            # written as it goes, what only the audit reads freed once read: the peak of a
            # million-event run (issue 30)
            audit = redaction_audit(result, load_dataset(dataset), summary_samples=summary_samples,
                                    judge_probes=judge_probes, into=path, keep_index=True, **options)
            print_evaluation(audit.details["report"], fmt)
    say(f"wrote {path} (run {result.run_id})")


@command()
def demo(
    events: Annotated[int, typer.Option(min=1000, help="size of the synthetic continuity")] = 60_000,
) -> None:
    """The main job: import the real logs, generate a synthetic set, replay every preset."""
    from workbench.demo import run_demo

    run_demo(events=events, say=say)
