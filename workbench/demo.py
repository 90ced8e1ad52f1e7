"""The main job behind ``make demo``: real logs and a synthetic set through the presets.

Steps: import the bundled real agent logs, generate a seeded synthetic coding
continuity, inspect both, replay every preset on both, and write the results (Parquet
and config) under ``runs/demo``. Each step prints what it did and where it wrote.
"""

from __future__ import annotations

from pathlib import Path

from workbench.engine.presets import PRESETS

PROJECT = Path(__file__).resolve().parent.parent
RECORDED_CANDIDATES = (
    PROJECT / "datasets" / "bundled",  # shipped with the project (see datasets/README.md)
    PROJECT.parent / "shared" / "datasets" / "recorded",  # the workplace's shared copy
)


def recorded_logs() -> Path | None:
    for path in RECORDED_CANDIDATES:
        if path.is_dir() and any(path.rglob("*.json*")):
            return path
    return None


def run_demo(root: Path = PROJECT, *, events: int = 60_000, say=print) -> dict[str, Path]:
    from workbench.cli import _print_summary
    from workbench.continuity.inspect import inspect_dataset, render_text
    from workbench.engine.run import simulate
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    out: dict[str, Path] = {}
    synthetic = root / "datasets" / "demo-coding"
    say(f"1/4 generating a synthetic coding continuity ({events:,} events, seed 1) -> {synthetic}")
    ds_syn = generate_dataset(GeneratorConfig(profile="coding", events=events, seed=1), synthetic)
    render_text(inspect_dataset(ds_syn.path))
    out["synthetic"] = ds_syn.path

    logs = recorded_logs()
    if logs is not None:
        from workbench.sources.importer import import_paths

        recorded = root / "datasets" / "demo-recorded"
        say(f"2/4 importing the real agent logs in {logs} -> {recorded}")
        ds_rec = import_paths([logs], recorded, on_error="fail", progress=True)
        render_text(inspect_dataset(ds_rec.path))
        out["recorded"] = ds_rec.path
    else:
        say("2/4 no recorded logs found; skipping the import step")

    policies = list(PRESETS)
    for name in ("synthetic", "recorded"):
        if name not in out:
            continue
        run_dir = root / "runs" / f"demo-{name}"
        say(f"3/4 replaying {len(policies)} presets on the {name} dataset -> {run_dir}")
        result = simulate(out[name], policies, progress=True)
        result.write(run_dir)
        _print_summary(result.summary)
        out[f"run-{name}"] = run_dir
    say("4/4 done. Results (Parquet + config.json):")
    for key, path in out.items():
        say(f"  {key:15s} {path}")
    return out
