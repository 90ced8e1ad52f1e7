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
    ``facts``, ``secrets``, ``hard_negatives``, ``continuity_id``, ``secret_families``,
    ``task_state``)."""
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


def simulate(dataset, policies: str | Path | Any | Sequence, *, engine: str = "kernel",
             tokenizer: str = "cl100k", seed: int = 0, model: str | None = None,
             price_as: str | None = None, run_id: str | None = None, progress: bool = False,
             inputs: list | None = None, accounting: str = "auto", calibration: str | Path | None = None,
             line_source: str = "own", keep_inputs: bool = True):
    """Replay every continuity of ``dataset`` under each policy: one name, spec path or
    :class:`~workbench.engine.policy.Policy`, or a list of them (``wb.simulate(ds,
    "claude-code")``). ``engine``: ``kernel`` or ``reference``; ``model`` prices every
    policy as that model, ``price_as`` names the stand-in for a model genai-prices does not
    know; ``accounting`` (``auto``, ``provider``, ``counted``), ``calibration`` and
    ``line_source`` choose the tokens a replay counts; ``keep_inputs=False`` frees the
    prepared continuities (nothing will evaluate the result). The rest as
    :func:`workbench.engine.run.simulate`. The result has ``.ledger``, ``.events``,
    ``.summary``, ``.config``; ``result.write(path)`` writes the run directory."""
    from workbench.engine.run import simulate as run

    return run(dataset, policies, engine=engine, tokenizer=tokenizer, seed=seed, model=model,
               price_as=price_as, run_id=run_id, progress=progress, inputs=inputs, accounting=accounting,
               calibration=calibration, line_source=line_source, keep_inputs=keep_inputs)


def evaluate(result, dataset=None, *, summarizer: str = "modelled", summarizer_options: dict | None = None,
             baseline: bool = False, summary_samples: int = 1):
    """Summaries and memory entries through SR-1, leakage by channel, fact retention, what
    each compaction kept and its drift, of a simulation (``result``) or a run directory;
    ``summary_samples`` > 1 writes every summary that many times and measures the spread.
    Each table is an attribute named after its file (``evaluation.texts``,
    ``evaluation.leakage``; ``.tables`` maps the file names) and ``.write(run_dir)`` puts
    them beside the run. The same function is ``wb.audit.redaction``."""
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


def _listing_report_kinds(fn):
    """Fill ``{kinds}`` in ``fn``'s docstring from the report registry, so it names every
    kind there is (``workbench.report`` holds only the registry: the import stays cheap)."""
    from workbench.report import KINDS

    fn.__doc__ = fn.__doc__.format(kinds=", ".join(f"``{k}``" for k in KINDS))
    return fn


@_listing_report_kinds
def report(kind: str, run: str | Path, out: str | Path, **options: Any):
    """Render a report notebook to HTML, one of {kinds}; ``options`` go to
    :func:`workbench.report.render.render_report` (``determinism``, ``constraints``, ...)."""
    from workbench.report.render import render_report

    return render_report(kind, run, out, **options)


def redact(text: str):
    """The redaction harness on one text: ``.text`` redacted, ``.spans`` and ``.kinds`` found."""
    from workbench.redaction.harness import redact as run

    return run(text)


class _Audits:
    """The audits, ``wb.audit.NAME(...)``; each returns a result whose tables and documents
    are attributes named after their files (``.passed``: the verdict, None where an audit
    measures without judging) and ``.write(directory)`` writes them."""

    @staticmethod
    def conformance(run_dir: str | Path):
        """JSON Schemas, ADR-0011 invariants, physical bounds, the two compaction layers'
        rules, RFC 0012 scenarios and the RFC 0080 projection, on a written run."""
        from workbench.audits import conformance_audit

        return conformance_audit(run_dir)

    @staticmethod
    def determinism(dataset, policies: str | Path | Any | Sequence, *, engine: str = "kernel",
                    drift_tokenizer: str = "approx"):
        """Byte-identical ledgers, checkpoints and compiled contexts across repeats, worker
        counts and job orders; how many cut points move under ``drift_tokenizer``."""
        from workbench.audits import determinism_audit

        return determinism_audit(dataset, policies, engine=engine, drift_tokenizer=drift_tokenizer)

    @staticmethod
    def fidelity(dataset, *, engine: str = "kernel", price_as: str | None = None,
                 accounting: str = "provider"):
        """Replays of imported logs against the usage and compactions they recorded."""
        from workbench.audits import fidelity_audit

        return fidelity_audit(dataset, engine=engine, price_as=price_as, accounting=accounting)

    redaction = staticmethod(evaluate)

    def __repr__(self) -> str:
        return "wb.audit: conformance, determinism, fidelity, redaction"


audit = _Audits()
