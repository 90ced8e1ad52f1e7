"""Continuity Workbench: replay agent continuities through compaction policies.

``import workbench as wb`` is the front door (:mod:`workbench.api`): ``wb.load_dataset``,
``wb.generate``, ``wb.import_logs``, ``wb.policies``, ``wb.get_policy``, ``wb.simulate``,
``wb.evaluate``, ``wb.inspect_compaction``, ``wb.sweep``, ``wb.tune``, ``wb.report``,
``wb.redact`` and ``wb.figures``. Importing the package is cheap
on purpose: these names, and numba, polars and pyarrow behind them, are loaded when first
used (PEP 562).

>>> import workbench
>>> workbench.__version__
'0.1.0'
>>> callable(workbench.simulate)
True
"""

__version__ = "0.1.0"

_API = ("load_dataset", "generate", "import_logs", "policies", "get_policy", "simulate", "evaluate",
        "inspect_compaction", "sweep", "tune", "report", "redact")
# modules a notebook reaches through the front door: wb.figures.sawtooth(...)
_MODULES = {"figures": "workbench.report.figures"}

__all__ = ["__version__", *_API, *_MODULES]


def __getattr__(name: str):
    if name in _API:
        from workbench import api

        return getattr(api, name)
    if name in _MODULES:
        import importlib

        return importlib.import_module(_MODULES[name])
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
