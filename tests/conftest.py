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
