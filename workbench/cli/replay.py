"""Replay: ``policies``, ``simulate``, ``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from workbench.cli import summarizer as S
from workbench.cli._app import Force, Format, command, say, warn
from workbench.report.console import print_summary


@command()
def policies(fmt: Format = "table",
             json: Annotated[bool, typer.Option("--json", help="full parameters as JSON")] = False) -> None:
    """List the policy presets and their parameters."""
    from workbench.engine.presets import PRESETS
    from workbench.util.tables import emit

    if json:
        import orjson

        say(orjson.dumps({n: p.to_dict() for n, p in PRESETS.items()}, option=orjson.OPT_INDENT_2).decode())
        return
    rows = [{"preset": name, "trigger": p.trigger.rule_id(), "strategy": p.compaction.kind,
             "flush": "yes" if p.flush.enabled else "", "masking": p.masking.after_turns or "",
             "description": p.description} for name, p in PRESETS.items()]
    emit(rows, ["preset", "trigger", "strategy", "flush", "masking", "description"], fmt=fmt,
         display={"masking": str})


def report_notes(config: dict) -> None:
    """Say what was done otherwise than asked (stand-in prices, defaults)."""
    for n in config.get("notes") or []:
        where = n["where"]
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        warn(f"{n['note']} ({shown})")


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
    evaluate: Annotated[bool, typer.Option(help="also run the redaction/retention audit")] = False,
    summarizer: S.Summarizer = "modelled",
    summarizer_base_url: S.BaseUrl = None,
    summarizer_model: S.Model = None,
    summarizer_key_env: S.KeyEnv = None,
    summarizer_cassette: S.Cassette = None,
    summarizer_mode: S.Mode = "chat",
    baseline: S.Baseline = False,
    summary_samples: S.Samples = 1,
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
                                   mode=summarizer_mode, baseline=baseline)
    with exclusive(out):
        result = run_simulation(dataset, policy, engine=engine, tokenizer=tokenizer, model=model,
                                price_as=model_price_as, seed=seed, progress=True,
                                keep_inputs=evaluate)  # only the audit reads them
        path = result.write(out, force=force)
        report_notes(result.config)
        print_summary(result.summary, fmt)
        if evaluate:
            from workbench.audits import redaction_audit
            from workbench.continuity.dataset import load_dataset
            from workbench.report.console import print_evaluation

            audit = redaction_audit(result, load_dataset(dataset), summary_samples=summary_samples,
                                    judge_probes=judge_probes, **options)
            audit.write(path)
            print_evaluation(audit.details["report"], fmt)
    say(f"wrote {path} (run {result.run_id})")


@command()
def demo(
    events: Annotated[int, typer.Option(min=1000, help="size of the synthetic continuity")] = 60_000,
) -> None:
    """The main job: import the real logs, generate a synthetic set, replay every preset."""
    from workbench.demo import run_demo

    run_demo(events=events, say=say)
