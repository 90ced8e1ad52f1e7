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

import sys as _sys
import types as _types

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


class _FrontDoor(_types.ModuleType):
    """The package's module type. Three front-door names are also subpackages
    (``workbench.evaluate``, ``workbench.report``, ``workbench.sweep``); importing one of them
    makes the import system bind it on the package, which would turn ``wb.evaluate`` into a
    module after its first call. The binding is declined for those names (the subpackage
    stays in ``sys.modules``: ``from workbench.evaluate import pipeline`` works as always)."""

    def __setattr__(self, name, value):
        if name in _API and isinstance(value, _types.ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _FrontDoor
