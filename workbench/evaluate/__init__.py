"""Evaluations of simulated runs: leakage, retention, determinism, conformance, fidelity."""
