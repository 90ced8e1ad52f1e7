"""Reading a run directory back: its config, its tables (checked against the columns the
readers need), the audits' documents, the simulation itself.

Every reader names the file it could not use and the command that writes it.

>>> from workbench.rundir.read import load_table
>>> load_table("/nonexistent-run", "summary") is None
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError
from workbench.rundir import names as N


class RunDirError(WorkbenchError):
    """A run directory is missing a file, or a file is damaged or of an older layout."""


# columns a reader may rely on, per table (a file without them was written by something else)
REQUIRED_COLUMNS = {
    "summary": ("policy", "continuity_id", "requests", "cost_usd", "compactions", "overflows", "truncations",
                "prompt_tokens", "cached_input_tokens", "peak_context_tokens", "context_window"),
    "ledger": ("policy", "continuity_id", "call", "request", "call_kind", "prompt_tokens",
               "cached_input_tokens", "context_before", "context_after", "cost_usd"),
    "events": ("policy", "continuity_id", "event_type", "request"),
    "texts": ("policy", "continuity_id", "kind", "text"),
    "leakage": ("policy", "continuity_id", "secret_id", "channel", "leaked"),
    "retention": ("policy", "continuity_id"),
    "compactions": ("policy", "continuity_id", "compaction", "request", "facts_in_span", "facts_kept",
                    "facts_paraphrased", "facts_lost", "dropped_seqs"),
    "generations": ("policy", "continuity_id", "label", "generation", "status", "summarizes_summaries"),
    "summary_samples": ("policy", "sample", "retention", "leaks", "summary_tokens"),
    "probes": ("policy", "compaction", "fact_id", "status", "answerable"),
}
WRITTEN_BY = {"summary": "workbench simulate", "ledger": "workbench simulate", "events": "workbench simulate",
              "texts": "workbench audit redaction", "leakage": "workbench audit redaction",
              "retention": "workbench audit redaction", "over_redaction": "workbench audit redaction",
              "compactions": "workbench audit redaction", "generations": "workbench audit redaction",
              "summary_samples": "workbench audit redaction", "probes": "workbench audit redaction",
              "determinism": "workbench audit determinism", "drift": "workbench audit determinism",
              "conformance": "workbench audit conformance", "scenarios": "workbench audit conformance",
              "capability": "workbench audit conformance"}
# what each writer needs to (re)write a run's table, so that a message's command runs as printed
WRITER_OPTIONS = {"workbench simulate": "--dataset DATASET --policy POLICY --out {run}",
                  "workbench audit redaction": "--run {run}", "workbench audit conformance": "--run {run}",
                  "workbench audit determinism": "--out {run}"}


def writer_command(name: str, run_dir: str | Path) -> str:
    """The command that writes table ``name`` of ``run_dir``, e.g. ``workbench audit redaction
    --run runs/x``."""
    by = WRITTEN_BY.get(name, "workbench simulate")
    return f"{by} {WRITER_OPTIONS[by].format(run=run_dir)}"


def read_json(path: Path) -> dict | None:
    """A JSON document, None when the file is absent."""
    import orjson

    path = Path(path)
    if not path.is_file():
        return None
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc}); re-run the command that wrote it") from exc


def read_parquet(path: Path):
    import polars as pl

    try:
        return pl.read_parquet(path)
    except Exception as exc:  # polars/arrow raise several types for a damaged file
        raise RunDirError(f"{path}: unreadable Parquet ({type(exc).__name__}: {exc}); it is damaged or "
                          "incomplete: re-run the command that wrote it") from exc


def _check_size(path: Path) -> None:
    """A file the marker recorded must still have the size it was written with."""
    from workbench.rundir.markers import read_marker

    marker = read_marker(path.parent)
    rec = (marker.files.get(path.name) if marker is not None else None) or {}
    if rec and path.stat().st_size != rec.get("bytes"):
        by = f"`{writer_command(path.stem, path.parent)}`" if path.stem in WRITTEN_BY else \
            "the command that wrote it"
        raise RunDirError(f"{path} is damaged or incomplete ({path.stat().st_size:,} bytes, written as "
                          f"{rec['bytes']:,}); re-run {by}")


def check_complete(directory: str | Path) -> None:
    """Refuse a directory a command stopped writing halfway (its marker says so)."""
    from workbench.rundir.markers import read_marker
    from workbench.rundir.output import check_complete as check

    marker = read_marker(Path(directory))
    if marker is not None:
        check(Path(directory), marker)


def load_config(run_dir: str | Path) -> dict[str, Any]:
    run_dir = Path(run_dir)
    check_complete(run_dir)
    config = read_json(run_dir / N.CONFIG)
    if config is None:
        raise RunDirError(f"{run_dir}: not a run directory (no {N.CONFIG}); create one with "
                          f"`{writer_command('summary', run_dir)}`")
    return config


def load_table(run_dir: str | Path, name: str, *, required: bool = False):
    """``<run_dir>/<name>.parquet`` as a polars frame, or None when absent (and not required)."""
    path = Path(run_dir) / f"{name}.parquet"
    if not path.is_file():
        if required:
            raise RunDirError(f"{path} is missing; `{writer_command(name, run_dir)}` writes it")
        return None
    _check_size(path)
    frame = read_parquet(path)
    lacking = [c for c in REQUIRED_COLUMNS.get(name, ()) if c not in frame.columns]
    if lacking:
        raise RunDirError(f"{path}: lacks column(s) {', '.join(lacking)} (written by an older "
                          f"workbench?); re-run `{writer_command(name, run_dir)}`")
    return frame


def load_evaluation(run_dir: str | Path) -> dict | None:
    return read_json(Path(run_dir) / N.EVALUATION)


def load_conformance(run_dir: str | Path) -> dict | None:
    return read_json(Path(run_dir) / N.CONFORMANCE_JSON)


def find_determinism(run_dir: str | Path, determinism_dir: str | Path | None = None) -> Path | None:
    """The directory holding ``determinism.json`` (the given one, else the run's), or None."""
    for d in ([Path(determinism_dir)] if determinism_dir else []) + [Path(run_dir)]:
        if (d / N.DETERMINISM_JSON).is_file():
            return d
    if determinism_dir is not None:
        raise RunDirError(f"{determinism_dir}: no {N.DETERMINISM_JSON}; write one with "
                          f"`workbench audit determinism --out {determinism_dir}`")
    return None


def load_determinism(run_dir: str | Path, determinism_dir: str | Path | None = None) -> dict | None:
    d = find_determinism(run_dir, determinism_dir)
    if d is None:
        return None
    meta = read_json(d / N.DETERMINISM_JSON) or {}
    return {"dir": str(d), "passed": bool(meta.get("passed")), "hashes": meta.get("hashes", {}),
            "checks": load_table(d, "determinism"), "drift": load_table(d, "drift")}


def load_secret_values(run_dir: str | Path, config: dict | None = None) -> list[str]:
    """The planted secret values of the run's dataset (hard negatives excluded)."""
    import polars as pl

    config = config or load_config(run_dir)
    path = Path(config.get("dataset", {}).get("path", "")) / N.SECRETS
    if not path.is_file():
        return []
    sec = read_parquet(path)
    if sec.height == 0:
        return []
    return sorted(set(sec.filter(~pl.col("negative"))["value"].to_list()))


def load_run(run_dir: str | Path):
    """``(SimulationResult, Dataset)`` read back from a run directory (inputs re-prepared
    from the dataset the run's config names)."""
    from workbench.continuity.dataset import load_dataset
    from workbench.engine.run import SimulationResult, prepare_dataset

    run_dir = Path(run_dir)
    config = load_config(run_dir)
    ds = load_dataset(config["dataset"]["path"])
    inputs = {inp.continuity_id: inp for inp in prepare_dataset(ds, config["tokenizer"])}
    result = SimulationResult(
        ledger=load_table(run_dir, "ledger", required=True), events=load_table(run_dir, "events", required=True),
        summary=load_table(run_dir, "summary", required=True), config=config, run_id=config["run_id"],
        inputs=inputs)
    return result, ds
