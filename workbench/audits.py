"""The audits as library functions: each returns an :class:`AuditResult` whose ``passed``
says what the audit concluded and whose ``write(directory)`` puts its files where the run
directory layout (:mod:`workbench.rundir`) says. The CLI, the demo and notebooks call these.

>>> import tempfile
>>> from pathlib import Path
>>> from workbench.engine.run import simulate
>>> from workbench.synth.generate import GeneratorConfig, generate_dataset
>>> tmp = Path(tempfile.mkdtemp())
>>> dataset = generate_dataset(GeneratorConfig(profile="coding", events=300, seed=1), tmp / "d")
>>> run = simulate(dataset, ["claude-code", "llm-summary"], engine="reference").write(tmp / "run")
>>> res = conformance_audit(run)
>>> res.passed, res.write(run) == run, (run / "conformance.json").is_file()
(True, True, True)
>>> res.details["checked"]["checkpoints"] > 0
True
>>> import shutil; shutil.rmtree(tmp)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.rundir import names as N


@dataclass
class AuditResult:
    """What one audit found: tables (file name -> polars frame), JSON documents (file name
    -> mapping), the verdict (None: the audit measures, it does not judge) and anything the
    caller prints (``details``: not written)."""

    name: str
    tables: dict[str, Any]
    documents: dict[str, dict]
    passed: bool | None
    details: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        """A table or document by its file's stem: ``result.texts`` is
        ``result.tables["texts.parquet"]``, ``result.evaluation`` the ``evaluation.json``
        document (the dicts stay as they were)."""
        if name.startswith("_"):
            raise AttributeError(name)
        tables, documents = self.__dict__.get("tables", {}), self.__dict__.get("documents", {})
        for files, suffix in ((tables, ".parquet"), (documents, ".json")):
            if name + suffix in files:
                return files[name + suffix]
        raise AttributeError(f"the {self.__dict__.get('name')} audit has no table or document {name!r}; "
                             f"it has {', '.join(self._stems()) or 'none'}")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._stems()})

    def _stems(self) -> list[str]:
        return [Path(f).stem for f in (*self.__dict__.get("tables", {}), *self.__dict__.get("documents", {}))]

    def write(self, directory: str | Path, *, force: bool = False) -> Path:
        """Write the files into ``directory``: a run the workbench wrote, an audit directory,
        or a new/empty one (which becomes an audit directory)."""
        from workbench.rundir import Kind, adding, write_parquet

        with adding(directory, Kind.AUDIT, f"audit {self.name}", accept=(Kind.RUN,), force=force) as d:
            for name, frame in self.tables.items():
                write_parquet(d, name, frame)
            _write_documents(d, self.documents)
        return Path(directory)


def _write_documents(directory: Path, documents: dict[str, dict]) -> None:
    import orjson

    from workbench.rundir import write_file

    for name, doc in documents.items():
        write_file(directory, name, orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def redaction_audit(result, dataset, *, summarizer: str = "modelled",
                    summarizer_options: dict | None = None, baseline: bool = False,
                    summary_samples: int = 1, judge_probes: bool = False,
                    root: str | Path | None = None, into: str | Path | None = None,
                    keep_index: bool = False) -> AuditResult:
    """Summaries and memory entries through SR-1, secret leakage by channel, fact retention,
    what each compaction kept and its drift over later summaries, the spread over
    ``summary_samples`` samples of every summary, and (``judge_probes``, the HTTP
    summarizer only) each dropped fact's probe question asked of its summary (``result``: a
    :class:`~workbench.engine.run.SimulationResult`; ``root``: where policies'
    ``summarizer.prompt`` files are taken from, default the current directory).

    ``into``: the run directory ``result`` was written to, for a one-shot audit (the CLI's
    ``simulate --evaluate``): the files are written there as the audit goes, each table as
    soon as it is final and then dropped, and what only the audit reads of ``result`` is
    freed once read (``evaluate_run(release=True)``; the same files as ``write``, at a
    fraction of the peak memory). The result returned then holds the documents and no
    tables, and ``result`` is not for another evaluation. ``keep_index``: a text index built
    for the audit is stored beside the dataset for its later evaluations (the CLI's audits;
    :func:`workbench.evaluate.pipeline.evaluate_run`)."""
    if into is None:
        return _redaction_audit(result, dataset, summarizer=summarizer, summarizer_options=summarizer_options,
                                baseline=baseline, summary_samples=summary_samples, judge_probes=judge_probes,
                                root=root, sink=None, keep_index=keep_index)
    from workbench.rundir import Kind, adding, write_parquet

    with adding(into, Kind.AUDIT, "audit redaction", accept=(Kind.RUN,)) as d:
        audit = _redaction_audit(result, dataset, summarizer=summarizer, summarizer_options=summarizer_options,
                                 baseline=baseline, summary_samples=summary_samples, judge_probes=judge_probes,
                                 root=root, sink=lambda name, frame: write_parquet(d, name, frame),
                                 keep_index=keep_index)
        _write_documents(d, audit.documents)
    return audit


def _redaction_audit(result, dataset, *, summarizer, summarizer_options, baseline, summary_samples,
                     judge_probes, root, sink, keep_index: bool = False) -> AuditResult:
    """The redaction audit; ``sink(name, frame)``: where each table goes as soon as it is
    final in a one-shot audit (None: every table is kept in the result)."""
    from workbench.evaluate import judge
    from workbench.evaluate.bundles import context_bundles
    from workbench.evaluate.dataset_text import DatasetText
    from workbench.evaluate.pipeline import evaluate_run
    from workbench.evaluate.samples import spread
    from workbench.evaluate.texts import policies_of
    from workbench.summarize.settings import describe

    tables: dict[str, Any] = {}

    def final(name: str, frame) -> None:
        if sink is None:
            tables[name] = frame
        else:
            sink(name, frame)

    if sink is not None:  # first: it reads the prompt records the one-shot evaluation frees
        from workbench.evaluate.dataset_text import return_freed_memory

        final(N.BUNDLES, context_bundles(result))
        return_freed_memory()  # what building the bundles left, before the text work starts
    ev = evaluate_run(result, dataset, summarizer=summarizer, summarizer_options=summarizer_options,
                      baseline=baseline, summary_samples=summary_samples, root=root, release=sink is not None,
                      keep_index=keep_index)
    report = dict(ev["report"])
    settings = {k: v for k, v in (summarizer_options or {}).items() if k != "api_key"}
    if "base_url" in settings:
        settings["base_url"] = _without_userinfo(settings["base_url"])
    report["summarizer_settings"] = settings
    own = {name: d for name, p in policies_of(result).items() if (d := describe(p, root=root))}
    if own:
        report["policy_summarizers"] = own
    report["summary_samples"] = {"samples": summary_samples, "by_policy": spread(ev["samples"])}
    probes = judge.empty_probes()
    if judge_probes:
        from workbench.evaluate.dataset_text import DatasetText

        probes = judge.judge_probes(result, ev["compactions"], ev["texts"], DatasetText.of(dataset),
                                    summarizer=summarizer, summarizer_options=summarizer_options, root=root)
        report["judged_probes"] = judge.judged_share(probes)
    DatasetText.of(dataset).release_derived()  # before the bundles and the writing: the peak
    for name, key in ((N.TEXTS, "texts"), (N.LEAKAGE, "leakage"), (N.OVER_REDACTION, "over_redaction"),
                      (N.RETENTION, "retention"), (N.COMPACTIONS, "compactions"), (N.GENERATIONS, "generations"),
                      (N.SUMMARY_SAMPLES, "samples")):
        final(name, ev[key].drop("text_raw") if key == "texts" else ev[key])
        if sink is not None:
            ev[key] = None  # written: its memory goes to the next one
    final(N.PROBES, probes)
    if sink is None:
        final(N.BUNDLES, context_bundles(result))
    return AuditResult("redaction", tables, {N.EVALUATION: report}, passed=None,
                       details={"report": report, "evaluation": ev})


def _without_userinfo(url: str) -> str:
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def determinism_audit(dataset, policies: Sequence, *, engine: str = "kernel",
                      drift_tokenizer: str = "approx") -> AuditResult:
    """Byte-identical ledgers, checkpoints and compiled contexts; tokenizer drift of cuts."""
    from workbench.engine.run import policy_list
    from workbench.evaluate.determinism import audit_determinism

    res = audit_determinism(dataset, policy_list(policies), engine=engine, drift_tokenizer=drift_tokenizer)
    return AuditResult("determinism", {N.DETERMINISM: res["checks"], N.DRIFT: res["drift"]},
                       {N.DETERMINISM_JSON: {"passed": res["passed"], "hashes": res["hashes"],
                                             "checked": res["checked"]}},
                       passed=bool(res["passed"]), details={"drift_tokenizer": drift_tokenizer,
                                                            "checked": res["checked"]})


def conformance_audit(run_dir: str | Path) -> AuditResult:
    """JSON Schemas, ADR-0011 invariants, the physical bounds of every call (no prompt over its
    window, no cache read over its prompt, no negative tokens: :mod:`workbench.conformance.bounds`),
    the two compaction layers' rules (:mod:`workbench.conformance.two_layer`;
    ``checked["two_layer"]``: what each examined), RFC 0012 scenarios, RFC 0080 degraded projection."""
    import polars as pl

    from workbench.conformance.bounds import bound_findings
    from workbench.conformance.bundle_refs import check_summary_refs
    from workbench.conformance.capability import degraded_matrix
    from workbench.conformance.invariants import check_result
    from workbench.conformance.scenarios import (
        modelled_artifact_store,
        run_scenarios,
        scenarios_frame,
    )
    from workbench.conformance.two_layer import check_two_layers
    from workbench.rundir.artifacts import has_store, read_store
    from workbench.rundir.read import load_run

    result, ds = load_run(run_dir)
    report = check_result(result, ds)
    layers = check_two_layers(result.events, result.ledger, result.summary, result.config)
    bounds = bound_findings(result.ledger, result.summary)
    findings = pl.concat([report.findings, layers.findings, bounds], how="vertical")
    # the run's own artifact store; a run written before there was one: rebuilt from its events
    store = read_store(run_dir) if has_store(run_dir) else None
    texts_file = Path(run_dir) / N.TEXTS  # the redaction audit's derived texts, when it ran
    texts = pl.read_parquet(texts_file) if texts_file.is_file() else None
    scenarios = scenarios_frame(run_scenarios(result, artifacts=store, texts=texts))
    failed_scenarios = scenarios.filter(scenarios["status"] == "fail").height
    checked = {**conformance_checked(result.events, scenarios), "two_layer": layers.examined,
               "calls_bounded": result.ledger.height if result.ledger is not None else 0}
    # the redaction audit's context bundles, when it ran: every summary_ref resolves in the store
    bundles_file = Path(run_dir) / N.BUNDLES
    refs = (check_summary_refs(pl.read_parquet(bundles_file), store or modelled_artifact_store(result.events).get)
            if bundles_file.is_file() else None)
    # a run with no checkpoint exercised none of the ADR-0011 invariants: that is no pass
    invariants_passed = report.passed and layers.passed and bounds.height == 0
    passed = bool(invariants_passed and failed_scenarios == 0 and checked["checkpoints"] > 0
                  and not (refs and refs["unresolved"]))
    return AuditResult("conformance", {N.CONFORMANCE: findings, N.SCENARIOS: scenarios,
                                       N.CAPABILITY: degraded_matrix()},
                       {N.CONFORMANCE_JSON: {"passed": passed, "invariants_passed": invariants_passed,
                                             "scenario_failures": failed_scenarios, "checked": checked,
                                             "artifact_store": "run" if store else "rebuilt from events",
                                             "bundle_summary_refs": refs}},
                       passed=passed, details={"invariants_passed": invariants_passed, "checked": checked,
                                               "bundle_summary_refs": refs})


def conformance_checked(events, scenarios) -> dict[str, int]:
    """What a conformance audit had to check: checkpoint frames, RFC 0012 ``memory.compacted``
    events, and scenarios run (not skipped) over the policies of the run."""
    from workbench.rundir.wire import CHECKPOINT_EVENT, COMPACTED_EVENT

    kinds = events["event_type"]
    per = events.filter(kinds == CHECKPOINT_EVENT)["policy"].value_counts(sort=True) if events.height else None
    return {"policies": events["policy"].n_unique() if events.height else 0,
            "checkpoints": int((kinds == CHECKPOINT_EVENT).sum()),
            "checkpoints_by_policy": dict(per.iter_rows()) if per is not None else {},
            "memory_compacted": int((kinds == COMPACTED_EVENT).sum()),
            "scenarios_run": int((scenarios["status"] != "skip").sum()) if scenarios.height else 0,
            "scenarios_skipped": int((scenarios["status"] == "skip").sum()) if scenarios.height else 0}


def fidelity_audit(dataset, *, engine: str = "kernel", price_as: str | None = None,
                   accounting: str = "provider") -> AuditResult:
    """Replay ``as-recorded`` and compare with the usage and compactions the logs recorded
    (in provider tokens by default); replay each log's own harness preset and say where it
    compacts against where the log did; compare totals and cost in sample and
    leave-one-log-out (:mod:`workbench.evaluate.fidelity_predictive`)."""
    from workbench.continuity.dataset import Dataset, load_dataset
    from workbench.engine.run import prepare_dataset
    from workbench.evaluate.fidelity import fidelity_table, render_summary
    from workbench.evaluate.fidelity_predictive import (
        preset_compactions,
        render_predictive,
        totals_table,
    )
    from workbench.evaluate.fidelity_retention import retention_fidelity
    from workbench.sources.profiles import fit_profiles

    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    res = fidelity_table(ds, engine=engine, price_as=price_as, accounting=accounting)
    if not res["config"]["continuities"]:
        from workbench.errors import WorkbenchError

        raise WorkbenchError(f"{getattr(dataset, 'path', dataset)}: nothing to compare: no continuity "
                             "recorded usage or a compaction (fidelity compares a replay with what real "
                             "logs recorded: import them with `workbench import LOGS --out DIR`)")
    profiles = fit_profiles(ds)
    inputs = prepare_dataset(ds, "cl100k")
    preset = preset_compactions(ds, inputs, profiles, engine=engine, price_as=price_as)
    from workbench.engine.cache_miss import cold_requests, fit_miss_profiles

    miss_profiles = fit_miss_profiles(inputs, fitted_from=ds.name, cold=cold_requests(ds.manifest))
    totals = totals_table(inputs, profiles, engine=engine, price_as=price_as, manifest=ds.manifest,
                          miss_profiles=miss_profiles)
    retention, retention_text = retention_fidelity(ds)
    config = {**res["config"], "profiles_fitted_on": profiles["fitted_from"]}
    return AuditResult("fidelity", {N.FIDELITY_REQUESTS: res["requests"], N.FIDELITY: res["summary"],
                                    N.FIDELITY_COMPACTIONS: res["compactions"],
                                    N.FIDELITY_CONTINUITIES: res["continuities"],
                                    N.FIDELITY_RUN_LEVEL: res["run_level"],
                                    N.FIDELITY_PRESET: preset, N.FIDELITY_TOTALS: totals,
                                    N.FIDELITY_RETENTION: retention},
                       {N.FIDELITY_JSON: config}, passed=None,
                       details={"text": retention_text + "\n\n" + render_predictive(preset, totals) + "\n\n"
                                + render_summary(res)})
