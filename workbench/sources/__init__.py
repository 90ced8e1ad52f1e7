"""Importers for real agent logs (one module per source format).

Every format module registers itself with :func:`workbench.sources.base.register` when
imported; :func:`load_formats` imports them all (lazily, on first use).
"""

from __future__ import annotations

import importlib

FORMAT_MODULES = (
    "claude_code",
    "codex",
    "swe_agent",
    "mini_swe_agent",
    "openhands",
    "openhands_sdk",
    "gemini_cli",
    "openai_messages",
    "aider",
)


def load_formats():
    """Import every format module; return the registry (name -> SourceFormat)."""
    from workbench.sources.base import FORMATS

    for mod in FORMAT_MODULES:
        try:
            importlib.import_module(f"workbench.sources.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"workbench.sources.{mod}":
                raise
    return FORMATS
