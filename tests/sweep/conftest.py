"""Fixtures for the sweep tests: one small generated dataset, a Dask LocalCluster."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory):
    """A 3,000-event coding continuity (two compactions under claude-code)."""
    from workbench.engine.run import simulate
    from workbench.synth.generate import GeneratorConfig, generate_dataset

    path = tmp_path_factory.mktemp("sweep-data") / "coding-3k"
    ds = generate_dataset(GeneratorConfig(profile="coding", events=3000, seed=2), path)
    # compile (or load) the kernels once here, so worker processes find a warm numba cache
    # instead of all compiling at once
    simulate(ds, ["claude-code"], engine="kernel")
    return path


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    distributed = pytest.importorskip("distributed")
    scratch = str(tmp_path_factory.mktemp("dask"))  # not $TMPDIR/dask-scratch-space, left behind
    cluster = distributed.LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                                       dashboard_address=None, host="127.0.0.1", local_directory=scratch,
                                       scheduler_kwargs={"local_directory": scratch})
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def make_spec(small_dataset):
    """A spec dict over the small dataset: claude-code with the reserve swept, two seeds."""

    def make(**over):
        spec = {"name": "t", "dataset": str(small_dataset), "base": "claude-code",
                "parameters": {"trigger.reserve_tokens": [13_000, 33_000, 60_000],
                               "provider.model": "claude-sonnet-4-5"},
                "seeds": [0, 1], "engine": "kernel", "tokenizer": "cl100k"}
        spec.update(over)
        return spec

    return make
