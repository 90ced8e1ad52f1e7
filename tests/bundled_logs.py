"""Where the tests find real agent logs: ``datasets/bundled`` in the repository, so a plain
clone runs every test that reads them (provenance and licences: its ``SOURCES.md``).

Import it from any test module (pytest puts ``tests/`` on the path for ``tests/conftest.py``);
the ``recorded_dir`` fixture of ``tests/conftest.py`` hands out the same directory.
"""

from __future__ import annotations

from pathlib import Path

BUNDLED_LOGS = Path(__file__).resolve().parents[1] / "datasets" / "bundled"
