"""Importers for real agent logs (one module per source format).

Every format module registers itself (:func:`workbench.sources.registration.register_format`)
when imported; :func:`load_formats` imports them all (lazily, on first use), in the order
of :data:`FORMAT_MODULES` (a module may register several formats: ``cline`` also registers
``roo_code``). Helpers shared by the formats live in modules that each own one thing:
``checks`` (record structure), ``values`` (timestamps, content, usage), ``builder`` (rows,
requests, pairing), ``lossless`` (raw round trip), ``sniffing``, ``registration``,
``openai_style`` (OpenAI-style messages), ``anthropic_blocks`` (Anthropic content blocks)
and ``run_usage`` (totals recorded for a whole run); ``aider_usage`` reads aider's usage
lines. A log spread over several files (a Cline task, an opencode session) is parsed from
one primary file that reads the others (``SourceFormat.primary_of``,
``ParseContext.read_companion``).
"""

from __future__ import annotations

import importlib

# registry order: detection breaks score ties by it, messages list formats in it
FORMAT_MODULES = (
    "claude_code",
    "codex",
    "openai_messages",
    "swe_agent",
    "mini_swe_agent",
    "openhands",
    "openhands_sdk",
    "gemini_cli",
    "aider",
    "cline",
    "opencode",
    "atif",
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
    # a module imported earlier (a doctest run, a direct import) registered out of turn:
    # the registry order is this tuple's, whatever the import order was
    rank = {name: i for i, name in enumerate(FORMAT_MODULES)}

    def module_rank(item) -> tuple[int, int]:
        name, fmt = item
        module = getattr(getattr(fmt.parse, "__wrapped__", fmt.parse), "__module__", "").rsplit(".", 1)[-1]
        return rank.get(module, len(rank)), name != module  # a module's namesake format first

    ordered = sorted(FORMATS.items(), key=module_rank)
    if list(FORMATS) != [k for k, _ in ordered]:
        FORMATS.clear()
        FORMATS.update(ordered)
    return FORMATS
