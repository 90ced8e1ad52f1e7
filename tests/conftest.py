"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

RECORDED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "recorded"


@pytest.fixture(scope="session")
def recorded_dir() -> Path:
    """The real agent logs (../shared/datasets/recorded next to the repository)."""
    if not RECORDED.is_dir():
        pytest.skip(f"recorded logs not found at {RECORDED}")
    return RECORDED
