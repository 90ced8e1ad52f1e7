"""The names of the files the workbench writes, by directory kind: the one list every
writer and reader uses (and what a directory written before markers existed may hold)."""

from __future__ import annotations

# ---- a dataset (workbench/continuity/dataset.py writes it) ------------------------------------
MANIFEST = "manifest.json"
EVENTS = "events.parquet"
CONTINUITIES = "continuities.parquet"
FACTS = "facts.parquet"
SECRETS = "secrets.parquet"
DATASET_FILES = (MANIFEST, EVENTS, CONTINUITIES, FACTS, SECRETS)
# the dataset's text index, written by the first evaluated sweep over it and read by every
# evaluation (workbench/evaluate/text_index.py); the marker claims it when it is written
TEXT_INDEX = "text_index.npz"

# ---- a run (simulate, then the audits add theirs) -------------------------------------------
CONFIG = "config.json"
LEDGER = "ledger.parquet"
RUN_EVENTS = "events.parquet"
SUMMARY = "summary.parquet"
SIMULATION_FILES = (CONFIG, LEDGER, RUN_EVENTS, SUMMARY)
# audit redaction / simulate --evaluate
TEXTS = "texts.parquet"
LEAKAGE = "leakage.parquet"
OVER_REDACTION = "over_redaction.parquet"
RETENTION = "retention.parquet"
COMPACTIONS = "compactions.parquet"  # one row per compaction: what it dropped and kept
GENERATIONS = "generations.parquet"  # each dropped label through the later summaries (drift)
SUMMARY_SAMPLES = "summary_samples.parquet"  # per policy and summary sample (--summary-samples)
PROBES = "probes.parquet"  # LLM-judged probe questions (--judge-probes; empty without)
EVALUATION = "evaluation.json"
EVALUATION_FILES = (TEXTS, LEAKAGE, OVER_REDACTION, RETENTION, COMPACTIONS, GENERATIONS, SUMMARY_SAMPLES,
                    PROBES, EVALUATION)
# audit conformance
CONFORMANCE = "conformance.parquet"
SCENARIOS = "scenarios.parquet"
CAPABILITY = "capability.parquet"
CONFORMANCE_JSON = "conformance.json"
CONFORMANCE_FILES = (CONFORMANCE, SCENARIOS, CAPABILITY, CONFORMANCE_JSON)
# audit determinism (into a run or a directory of its own)
DETERMINISM = "determinism.parquet"
DRIFT = "drift.parquet"
DETERMINISM_JSON = "determinism.json"
DETERMINISM_FILES = (DETERMINISM, DRIFT, DETERMINISM_JSON)
# audit fidelity
FIDELITY = "fidelity.parquet"
FIDELITY_REQUESTS = "fidelity_requests.parquet"
FIDELITY_COMPACTIONS = "fidelity_compactions.parquet"
FIDELITY_CONTINUITIES = "fidelity_continuities.parquet"
FIDELITY_RUN_LEVEL = "fidelity_run_level.parquet"
FIDELITY_PRESET = "fidelity_preset.parquet"  # where each harness preset compacts vs the log
FIDELITY_TOTALS = "fidelity_totals.parquet"  # totals and cost, in sample and leave-one-log-out
FIDELITY_RETENTION = "fidelity_retention.parquet"  # recorded vs modelled summaries' retention
FIDELITY_JSON = "fidelity.json"
FIDELITY_FILES = (FIDELITY, FIDELITY_REQUESTS, FIDELITY_COMPACTIONS, FIDELITY_CONTINUITIES, FIDELITY_RUN_LEVEL,
                  FIDELITY_RETENTION, FIDELITY_JSON)
# audit redaction: each request's context bundle (rip.context_bundle.v1) of the audited continuities
BUNDLES = "bundles.parquet"
AUDIT_FILES = (*EVALUATION_FILES, BUNDLES, *CONFORMANCE_FILES, *DETERMINISM_FILES, *FIDELITY_FILES)
RUN_FILES = (*SIMULATION_FILES, *AUDIT_FILES)

# ---- a sweep ----------------------------------------------------------------------------------
SWEEP = "sweep.json"
SWEEP_RUNS = "runs.parquet"
SWEEP_RESULTS = "results"
SWEEP_FILES = (SWEEP, SWEEP_RUNS, SWEEP_RESULTS)
