"""Evaluations of simulated runs: leakage, retention, what each compaction kept and its
drift over repeated summaries, summary samples, determinism, conformance, fidelity."""
