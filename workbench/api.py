"""The front door, ``import workbench as wb``: one function per thing a user does, each a
thin call into the module that owns it (imported when first called).

>>> import tempfile, pathlib
>>> import workbench as wb
>>> ds = wb.generate("coding", events=600, seed=1, out=pathlib.Path(tempfile.mkdtemp()) / "d")
>>> result = wb.simulate(ds, ["claude-code", "observation-masking"])
>>> sorted(result.summary["policy"].to_list())
['claude-code', 'observation-masking']
>>> "claude-code" in wb.policies()
True
>>> import shutil; shutil.rmtree(ds.path.parent)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def load_dataset(path: str | Path):
    """A dataset directory (``workbench generate`` / ``import`` output)."""
    from workbench.continuity.dataset import load_dataset as load

    return load(path)


def generate(profile: str = "coding", *, events: int = 20_000, seed: int = 0, out: str | Path,
             force: bool = False, **options: Any):
    """Generate a seeded synthetic dataset into ``out`` (options: ``text``, ``tokenizers``,
    ``facts``, ``secrets``, ``hard_negatives``, ``continuity_id``)."""
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    if "tokenizers" in options and options["tokenizers"] is not None:
        options["tokenizers"] = tuple(options["tokenizers"])
    return generate_dataset(GeneratorConfig(profile=profile, events=events, seed=seed, **options), out,
                            force=force)


def import_logs(paths: str | Path | Sequence[str | Path], out: str | Path, *, format: str | None = None,
                on_error: str = "fail", force: bool = False):
    """Import real agent logs (files or directories) into a dataset at ``out``."""
    from workbench.sources.importer import import_paths

    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    return import_paths([Path(p) for p in paths], Path(out), fmt=format, on_error=on_error, force=force)


def policies() -> dict[str, Any]:
    """The presets by name (frozen :class:`~workbench.engine.policy.Policy` objects)."""
    from workbench.engine.presets import PRESETS

    return dict(PRESETS)


def get_policy(name: str, overrides: dict[str, Any] | None = None, *, rename: str | None = None):
    """A preset or a ``.yaml``/``.toml`` spec, with dotted overrides
    (``{"trigger.reserve_tokens": 40_000}``)."""
    from workbench.engine.presets import get_policy as get

    return get(name, overrides, rename=rename)


def simulate(dataset, policies: Sequence, **options: Any):
    """Replay every continuity of ``dataset`` under each policy (names, spec paths or
    :class:`Policy` objects); options: ``engine``, ``tokenizer``, ``seed``, ``model``,
    ``price_as``. ``result.write(path)`` writes the run directory."""
    from workbench.engine.run import simulate as run

    return run(dataset, list(policies), **options)


def evaluate(result, dataset=None, *, summarizer: str = "modelled", summarizer_options: dict | None = None,
             baseline: bool = False, summary_samples: int = 1):
    """Summaries and memory entries through SR-1, leakage by channel, fact retention, what
    each compaction kept and its drift, of a simulation (``result``) or a run directory;
    ``summary_samples`` > 1 writes every summary that many times and measures the spread.
    ``.tables`` holds the frames and ``.write(run_dir)`` puts them beside the run."""
    from workbench.audits import redaction_audit

    if isinstance(result, str | Path):
        from workbench.rundir.output import rerunning
        from workbench.rundir.read import load_run

        with rerunning("audit redaction"):  # as the command: it may finish what a killed one began
            result, loaded = load_run(result)
        dataset = dataset or loaded
    if dataset is None:
        dataset = load_dataset(result.config["dataset"]["path"])
    elif isinstance(dataset, str | Path):
        dataset = load_dataset(dataset)
    return redaction_audit(result, dataset, summarizer=summarizer, summarizer_options=summarizer_options,
                           baseline=baseline, summary_samples=summary_samples)


def inspect_compaction(run: str | Path, policy: str, continuity: str | None = None, n: int | str = 0, **options: Any):
    """One compaction of a run side by side: the span it dropped and the summary that
    replaced it, facts and secrets marked (a notebook displays it; ``.row`` is its
    ``compactions.parquet`` row). ``n``: the policy's compaction number in ``continuity``
    (default: the first continuity) from 0, or ``"worst"`` (the most facts lost). Needs
    the redaction audit's files (``wb.evaluate(...).write(run)`` or ``workbench audit
    redaction``); options: ``max_events``, ``event_chars``, ``summary_chars``."""
    from workbench.report.inspector import compaction_view

    return compaction_view(run, policy, continuity, n, **options)


def context_bundle(run: str | Path, policy: str, request: int, continuity: str | None = None) -> dict[str, Any]:
    """The ADR-0011 context bundle (``rip.context_bundle.v1``) of one request of a written
    run: its items in prompt order (raw events by seq, ``summary_ref`` items by artifact
    id) and ``artifacts``, each referenced summary read from the run's store. When the
    run's checkpoint frames or a referenced blob are missing or rewritten, it is compiled
    from a replay of the policy over the continuity instead (``source``: ``run`` or
    ``truth replay``, with ``fallback_reason``). ``continuity``: default the first."""
    from workbench.evaluate.run_bundle import run_bundle

    return run_bundle(run, policy, request, continuity)


def sweep(spec, out: str | Path | None = None, *, executor: str = "process", workers: int | None = None,
          **options: Any):
    """Run a sweep spec (a path or a :class:`~workbench.sweep.spec.SweepSpec`); returns one
    row per configuration (summed over continuities, averaged over seeds)."""
    from workbench.sweep.runner import aggregate, collect, run_sweep

    report = run_sweep(spec, out, executor=executor, workers=workers, **options)
    return aggregate(collect(report.out))


def tune(sweep_dir_or_frame, objective: str = "cost_usd", constraints: Sequence[str] = (),
         direction: str = "min"):
    """The best configuration of a sweep meeting the constraints, and the Pareto front."""
    from workbench.sweep.tune import tune as pick

    frame = sweep_dir_or_frame
    if isinstance(frame, str | Path):
        from workbench.sweep.runner import aggregate, collect

        frame = aggregate(collect(frame))
    return pick(frame, objective, list(constraints), direction)


def report(kind: str, run: str | Path, out: str | Path, **options: Any):
    """Render a report notebook (``policy-comparison``, ``threshold-sweep``,
    ``redaction-audit``, ``determinism-audit``, ``fidelity``) to HTML."""
    from workbench.report.render import render_report

    return render_report(kind, run, out, **options)


def redact(text: str):
    """The redaction harness on one text: ``.text`` redacted, ``.spans`` and ``.kinds`` found."""
    from workbench.redaction.harness import redact as run

    return run(text)
