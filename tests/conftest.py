"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from bundled_logs import BUNDLED_LOGS


@pytest.fixture(scope="session")
def recorded_dir() -> Path:
    """The real agent logs bundled with the repository (``datasets/bundled``)."""
    assert BUNDLED_LOGS.is_dir(), f"bundled logs missing at {BUNDLED_LOGS} (part of the repository)"
    return BUNDLED_LOGS


@pytest.fixture(scope="session")
def imported_bundle(recorded_dir, tmp_path_factory):
    """Every bundled log imported once (a dataset the calibration profiles are fitted on)."""
    from workbench.continuity.dataset import load_dataset
    from workbench.sources.importer import import_paths

    out = tmp_path_factory.mktemp("bundle") / "bundled"
    import_paths([recorded_dir], out)
    return load_dataset(out)
